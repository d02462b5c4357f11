import Foundation
import PropertyList
import TestSupport
import Testing

/// The encoder assembles the document inside the storage its values were rendered
/// into, moving the finished pieces to their places; these documents put the pieces in
/// every order that storage can hold them in.
@Suite("PlistEncoder assembles the document in place")
struct EncoderAssemblyTests {
    /// A value of any shape, encoded in the order it holds its entries.
    indirect enum Node: Encodable {
        case string(String)
        case integer(Int)
        case real(Double)
        case boolean(Bool)
        case date(Date)
        case data(Data)
        case array([Node])
        /// Entries in the order they are encoded (keys may repeat; the last one wins).
        /// `byHand`: a keyed container that holds this dictionary under a key it uses
        /// once makes it with `nestedContainer(keyedBy:forKey:)` rather than encoding it
        /// as a value.
        case dictionary([(String, Node)], byHand: Bool)

        func encode(to encoder: any Encoder) throws {
            switch self {
            case .array(let elements):
                var container = encoder.unkeyedContainer()
                for element in elements { try container.encode(element) }
            case .dictionary(let entries, _):
                var container = encoder.container(keyedBy: PlistTestKey.self)
                try Self.encode(entries, into: &container)
            default:
                var container = encoder.singleValueContainer()
                switch self {
                case .string(let value): try container.encode(value)
                case .integer(let value): try container.encode(value)
                case .real(let value): try container.encode(value)
                case .boolean(let value): try container.encode(value)
                case .date(let value): try container.encode(value)
                case .data(let value): try container.encode(value)
                case .array, .dictionary: break
                }
            }
        }

        static func encode(
            _ entries: [(String, Node)], into container: inout KeyedEncodingContainer<PlistTestKey>
        )
            throws
        {
            // Foundation's encoder stops the program when a nested container is asked
            // for a key that has a value, so only a key used once is made by hand.
            var uses: [String: Int] = [:]
            for (key, _) in entries { uses[key, default: 0] += 1 }
            for (key, value) in entries {
                let codingKey = PlistTestKey(stringValue: key)
                if case .dictionary(let nested, byHand: true) = value, uses[key] == 1 {
                    var inner = container.nestedContainer(keyedBy: PlistTestKey.self, forKey: codingKey)
                    try encode(nested, into: &inner)
                } else {
                    try container.encode(value, forKey: codingKey)
                }
            }
        }
    }

    struct Generator {
        var random: SeededRandom
        static let keys = ["a", "b", "id", "items", "title", "Zeta", "é", "z😀", "value", "created", "x y"]

        mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }

        mutating func text() -> String {
            let pieces = ["survey", " ", "&", "<b>", "é", "😀", "42", "\t", "line\n", "]]>"]
            return (0..<int(0...6)).map { _ in pieces[int(0...(pieces.count - 1))] }.joined()
        }

        mutating func scalar() -> Node {
            switch int(0...5) {
            case 0: return .string(text())
            case 1: return .integer(int(-1_000_000...1_000_000))
            case 2: return .real(Double(int(-4000...4000)) / 16 + (int(0...1) == 0 ? 0 : 0.1))
            case 3: return .boolean(int(0...1) == 0)
            case 4: return .date(Date(timeIntervalSince1970: Double(int(0...2_000_000_000))))
            default:
                return .data(Data((0..<int(0...40)).map { _ in UInt8(truncatingIfNeeded: int(0...255)) }))
            }
        }

        /// A value of at most `depth` levels of containers, with up to `width` entries each.
        mutating func node(depth: Int, width: Int) -> Node {
            if depth == 0 || int(0...3) == 0 { return scalar() }
            let count = int(0...width)
            if int(0...1) == 0 {
                return .array((0..<count).map { _ in node(depth: depth - 1, width: width) })
            }
            let entries = (0..<count).map { _ in
                (Self.keys[int(0...(Self.keys.count - 1))], node(depth: depth - 1, width: width))
            }
            return .dictionary(entries, byHand: int(0...3) == 0)
        }
    }

    @Test(
        "Documents of random shape and key order come out as PropertyListSerialization writes them"
    )
    func randomDocumentsMatchFoundation() throws {
        let seed = SeededRandom.seed(fallback: 0x5EED_C0DE_C3)
        print("EncoderAssemblyTests seed: \(seed) (replay with SURVEYSTORE_SEED=\(seed))")
        var generator = Generator(random: SeededRandom(seed: seed))
        let foundation = PropertyListEncoder()
        foundation.outputFormat = .xml
        for round in 0..<300 {
            // Mostly small documents; now and then one of about a megabyte,
            // and top-level dictionaries of many scalars written out of order.
            var value: Node
            switch round % 10 {
            case 0 where round % 50 == 0: value = generator.node(depth: 2, width: 300)
            case 1:
                let entries = (0..<generator.int(1...200)).map { index in
                    (
                        "k\(generator.int(0...150))",
                        index % 7 == 0 ? generator.node(depth: 2, width: 8) : generator.scalar()
                    )
                }
                value = .dictionary(entries, byHand: false)
            case 2: value = .array([generator.scalar()])
            default: value = generator.node(depth: 4, width: 6)
            }
            // Foundation's encoder refuses a scalar at the top level.
            switch value {
            case .array, .dictionary: break
            default: value = .array([value])
            }
            // `PropertyListEncoder` writes reals in their shortest form, and
            // `PropertyListSerialization` (which ours matches) as `%.17g` does: its tree is
            // written again by the latter.
            let ours = try PlistEncoder().encode(value)
            let theirs = try FoundationBridge.xml(FoundationBridge.read(foundation.encode(value)))
            #expect(ours == theirs, "round \(round), seed \(seed)")
            if ours != theirs { return }
        }
    }
}
