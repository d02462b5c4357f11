import Foundation
import PropertyList
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The writer prints reals with short exact decimal values (integers, halves,
/// sixteenths…) by itself rather than through C's `printf`; these tests hold it to
/// `%.17g` on both sides of every boundary of that path.
@Suite("Reals are written as %.17g writes them")
struct RealFormattingTests {
    /// C's own `%.17g` of `real`, which CoreFoundation uses.
    static func printf(_ real: Double) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        let length = buffer.withUnsafeMutableBufferPointer { buffer in
            withVaList([real]) { vsnprintf(buffer.baseAddress!, buffer.count, "%.17g", $0) }
        }
        return String(decoding: buffer[0..<Int(length)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// What the writer puts between `<real>` and `</real>` for `real`.
    static func written(_ real: Double) throws -> String {
        let xml = String(decoding: try PropertyList.real(real).xmlData(), as: UTF8.self)
        guard let start = xml.range(of: "<real>"), let end = xml.range(of: "</real>") else { return xml }
        return String(xml[start.upperBound..<end.lowerBound])
    }

    static let boundaries: [Double] = [
        1, -1, 0.5, 3, 62.4375, 99.5, 1e16, 99_999_999_999_999_984, 1e17, 2e17,
        // 2^56 (the last power of two below 10^17) and 2^57 (the first above).
        72_057_594_037_927_936, 144_115_188_075_855_872,
        // 2^-13 ≥ 10^-4 is written without an exponent; 2^-14 < 10^-4 with one.
        0.0001220703125, 0.00006103515625,
        // 5^24 · 2^-24 has 17 digits; an odd multiple of 2^-25 has 18.
        0.000_000_059_604_644_775_390_625, 2.98023223876953125e-08, 1.000_000_000_000_000_2,
        0x1.fffffffffffffp-1, 0x1p-1022, 0.1, 0.3, 1.0 / 3, 123_456.789, -0.0078125,
        Double(Int64.max), 9_007_199_254_740_992, 4_503_599_627_370_497.5,
    ]

    @Test("Boundary values of the writer's own path", arguments: boundaries)
    func boundary(real: Double) throws {
        #expect(try Self.written(real) == Self.printf(real))
        #expect(try Self.written(-real) == Self.printf(-real))
    }

    @Test("Random integers, dyadic fractions and bit patterns (seeded)")
    func randomReals() throws {
        let seed = SeededRandom.seed(fallback: 0x7EA1_5EED)
        print("RealFormattingTests seed: \(seed) (replay with SURVEYSTORE_SEED=\(seed))")
        var generator = SeededRandom(seed: seed)
        var failures: [String] = []
        for index in 0..<60_000 {
            let real: Double
            switch index % 4 {
            case 0:
                // An integer of up to 60 bits.
                real = Double(Int64.random(in: -(1 << 60)...(1 << 60), using: &generator))
            case 1:
                // A fraction over a power of two up to 2^30.
                let numerator = Double(Int64.random(in: -(1 << 40)...(1 << 40), using: &generator))
                real = numerator / Double(1 << Int.random(in: 1...30, using: &generator))
            case 2:
                // Halves to sixteenths of small numbers, as sliders give.
                real = Double(Int.random(in: -100_000...100_000, using: &generator)) / 16
            default:
                real = Double(bitPattern: generator.next())
            }
            guard real.isFinite else { continue }
            let ours = try Self.written(real)
            // Zero is CoreFoundation's one exception to `%.17g`: it writes both zeros as
            // `0.0` (RoundTripTests.negativeZero), and so does the writer.
            let theirs = real == 0 ? "0.0" : Self.printf(real)
            if ours != theirs {
                failures.append("\(real.debugDescription): wrote \(ours), %.17g gives \(theirs)")
            }
            if failures.count >= 5 { break }
        }
        #expect(
            failures.isEmpty,
            "seed \(seed); replay with SURVEYSTORE_SEED=\(seed)\n\(failures.joined(separator: "\n"))")
    }

    @Test("The bytes equal PropertyListSerialization's for short reals in a dictionary")
    func foundationAgrees() throws {
        var entries: [String: PropertyList] = [:]
        for (index, real) in (Self.boundaries + (0..<200).map { Double($0) * 0.4375 - 40 }).enumerated() {
            entries["r\(index)"] = .real(real)
        }
        let value = PropertyList.dictionary(entries)
        #expect(try value.xmlData() == (try FoundationBridge.xml(value)))
    }

    /// What `<real>text</real>` reads as.
    static func read(_ text: String) throws -> Double? {
        try PropertyList(xml: Data("<plist><real>\(text)</real></plist>".utf8)).realValue
    }

    @Test("Reals are read as strtod reads them, on both sides of the exact short path (seeded)")
    func readAsStrtod() throws {
        var texts = [
            "0", "-0", "+0.0", ".5", "2.", "9007199254740992", "9007199254740993", "-9007199254740993.0",
            "1234567890123456789", "12345678901234567890", "0.0000000000000000000001",
            "0.00000000000000000000001",
            "4.35", "0.1", "0.3", "99.5", "1e22", "1.5e-3", "00000000000000000000.5",
        ]
        let seed = SeededRandom.seed(fallback: 0x0DEC_1A15)
        var generator = SeededRandom(seed: seed)
        for _ in 0..<20_000 {
            let digits = Int.random(in: 1...24, using: &generator)
            var text = String(
                (0..<digits).map { _ in Character(String(Int.random(in: 0...9, using: &generator))) })
            let point = Int.random(in: 0...digits, using: &generator)
            if point < digits { text.insert(".", at: text.index(text.startIndex, offsetBy: point)) }
            if Bool.random(using: &generator) { text = "-" + text }
            texts.append(text)
        }
        var failures: [String] = []
        for text in texts {
            let expected = text.withCString { strtod($0, nil) }
            let ours = try Self.read(text)
            if ours?.bitPattern != expected.bitPattern {
                failures.append("\(text): read \(String(describing: ours)), strtod gives \(expected)")
            }
            if failures.count >= 5 { break }
        }
        #expect(
            failures.isEmpty,
            "seed \(seed); replay with SURVEYSTORE_SEED=\(seed)\n\(failures.joined(separator: "\n"))")
    }
}
