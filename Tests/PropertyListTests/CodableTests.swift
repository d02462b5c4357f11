import Foundation
import PropertyList
import Testing

@Suite("PlistEncoder and PlistDecoder")
struct CodableTests {
    enum Kind: String, Codable, CaseIterable { case binary, slider, picker }

    struct Item: Codable, Equatable {
        var id: String
        var title: String
        var kind: Kind
        var options: [String]?
        var minimum: Double?
        var roundToInteger: Bool?
        var answer: Int?
        var created: Date?
        var attachment: Data?
        var flags: [Bool]?
    }

    struct Survey: Codable, Equatable {
        var title: String
        var items: [Item]
        var metadata: [String: Int]
        var nested: [[Int8]]
        var version: UInt64
        var ratio: Float
    }

    static let sample = Survey(
        title: "Visitor feedback & <more>",
        items: [
            Item(
                id: "A", title: "Come again?", kind: .binary, options: ["No", "Yes"], answer: 1,
                created: Date(timeIntervalSince1970: 1_700_000_000), flags: [true, false]),
            Item(
                id: "B", title: "Rate us", kind: .slider, minimum: -2.5, roundToInteger: true,
                attachment: Data([0, 1, 2, 255])),
            Item(id: "C", title: "", kind: .picker),
        ],
        metadata: ["a": 1, "b": -2],
        nested: [[1, 2], [], [-128, 127]],
        version: .max,
        ratio: 0.5
    )

    @Test("A nested model survives encoding and decoding")
    func roundTrip() throws {
        let data = try PlistEncoder().encode(Self.sample)
        #expect(try PlistDecoder().decode(Survey.self, from: data) == Self.sample)
        let tree = try PlistEncoder().encodeToPropertyList(Self.sample)
        #expect(try PlistDecoder().decode(Survey.self, from: tree) == Self.sample)
        #expect(try PropertyList(xml: data) == tree)
    }

    @Test(
        "Our encoder writes what PropertyListSerialization writes for Foundation's encoding of the same model"
    )
    func encoderMatchesFoundation() throws {
        let foundation = PropertyListEncoder()
        foundation.outputFormat = .xml
        let theirTree = try FoundationBridge.read(try foundation.encode(Self.sample))
        let ourTree = try PlistEncoder().encodeToPropertyList(Self.sample)
        #expect(ourTree == theirTree)
        #expect(try PlistEncoder().encode(Self.sample) == FoundationBridge.xml(theirTree))
    }

    @Test("Our decoder reads what Foundation's encoder writes, and Foundation's decoder reads ours")
    func decoderMatchesFoundation() throws {
        let foundation = PropertyListEncoder()
        foundation.outputFormat = .xml
        #expect(try PlistDecoder().decode(Survey.self, from: foundation.encode(Self.sample)) == Self.sample)
        #expect(
            try PropertyListDecoder().decode(Survey.self, from: PlistEncoder().encode(Self.sample))
                == Self.sample)
    }

    @Test("Optionals of every kind are written when present and left out when nil, as Foundation does")
    func optionalsOfEveryKind() throws {
        struct Child: Codable, Equatable { var name: String }
        struct Holder: Codable, Equatable {
            var date: Date?, data: Data?, strings: [String]?, flags: [Bool]?, ints: [Int]?, reals: [Double]?
            var kind: Kind?, child: Child?, nested: [[Int8]]?, children: [Child]?, text: String?
        }
        let full = Holder(
            date: Date(timeIntervalSince1970: 1_700_000_000), data: Data([1, 2]), strings: ["a", "<b>"],
            flags: [false], ints: [-1, 2], reals: [0.5, 0.1], kind: .picker, child: Child(name: "c"),
            nested: [[1], []], children: [Child(name: "d")], text: "e")
        let foundation = PropertyListEncoder()
        foundation.outputFormat = .xml
        for value in [full, Holder()] {
            let ours = try PlistEncoder().encode(value)
            #expect(ours == (try FoundationBridge.xml(FoundationBridge.read(foundation.encode(value)))))
            #expect(try PlistDecoder().decode(Holder.self, from: ours) == value)
        }
    }

    @Test("Containers stay valid while nested values make and drop their own, in any order of use")
    func interleavedContainers() throws {
        struct Leaf: Codable, Equatable { var name: String, weight: Int }
        struct Node: Decodable, Equatable {
            enum Outer: String, CodingKey { case title, leaves, inner, count }
            enum Inner: String, CodingKey { case label, more }
            var title = "", label = "", leaves: [Leaf] = [], more: [Leaf] = [], count = 0

            init(title: String, label: String, leaves: [Leaf], more: [Leaf], count: Int) {
                (self.title, self.label, self.leaves, self.more, self.count) = (
                    title, label, leaves, more, count
                )
            }

            init(from decoder: any Decoder) throws {
                let outer = try decoder.container(keyedBy: Outer.self)
                let again = try decoder.container(keyedBy: Outer.self)
                let inner = try outer.nestedContainer(keyedBy: Inner.self, forKey: .inner)
                // Children with containers of their own come and go between the uses.
                more = try inner.decode([Leaf].self, forKey: .more)
                title = try outer.decode(String.self, forKey: .title)
                leaves = try again.decode([Leaf].self, forKey: .leaves)
                label = try inner.decode(String.self, forKey: .label)
                count =
                    try outer.decode(Int.self, forKey: .count) + (try again.decode(Int.self, forKey: .count))
            }
        }
        let leaves: PropertyList = .array(
            (0..<20).map {
                .dictionary([
                    "name": .string("leaf \($0)"), "weight": .integer(PropertyList.Integer(Int64($0))),
                ])
            })
        let value = PropertyList.array([
            .dictionary([
                "title": "first", "count": 2, "leaves": leaves,
                "inner": .dictionary([
                    "label": "in", "more": .array([.dictionary(["name": "m", "weight": 1])]),
                ]),
            ]),
            .dictionary([
                "title": "second", "count": 5, "leaves": .array([]),
                "inner": .dictionary(["label": "x", "more": .array([])]),
            ]),
        ])
        let decoded = try PlistDecoder().decode([Node].self, from: value.xmlData())
        let expectedLeaves = (0..<20).map { Leaf(name: "leaf \($0)", weight: $0) }
        #expect(
            decoded == [
                Node(
                    title: "first", label: "in", leaves: expectedLeaves, more: [Leaf(name: "m", weight: 1)],
                    count: 4),
                Node(title: "second", label: "x", leaves: [], more: [], count: 10),
            ])
    }

    @Test("Dictionaries at the same depth read with different key types in turn each get their own keys")
    func alternatingKeyTypes() throws {
        struct Point: Codable, Equatable { var x: Int, y: Int }
        struct Label: Codable, Equatable { var text: String, x: String }
        struct Pair: Codable, Equatable { var point: Point, label: Label, again: Point, labels: [Label] }
        let pairs = (0..<5).map {
            Pair(
                point: Point(x: $0, y: -$0), label: Label(text: "t\($0)", x: "x\($0)"),
                again: Point(x: $0 * 2, y: 7),
                labels: [Label(text: "a", x: "b"), Label(text: "c", x: "\($0)")])
        }
        let data = try PlistEncoder().encode(pairs)
        #expect(try PlistDecoder().decode([Pair].self, from: data) == pairs)
        #expect(try PropertyListDecoder().decode([Pair].self, from: data) == pairs)
    }

    @Test("Strings of every length, ASCII or not, anywhere in the document, decode to equal strings")
    func stringsOfEveryLength() throws {
        var strings = [""]
        for length in 1...20 {
            for last in ["a", "~", "\u{7F}", "é", "日"] {
                strings.append(String(repeating: "x", count: length - 1) + last)
            }
        }
        struct Named: Codable, Equatable { var name: String, names: [String] }
        let records = strings.map { Named(name: $0, names: [$0, $0 + "y"]) }
        let decoded = try PlistDecoder().decode([Named].self, from: PlistEncoder().encode(records))
        #expect(decoded == records)
        for (string, expected) in zip(decoded.map(\.name), strings) {
            #expect(Array(string.utf8) == Array(expected.utf8))
            #expect(string.hashValue == expected.hashValue)
            #expect(string.count == expected.count && string + "!" == expected + "!")
        }
        // Alone in a document, a string's bytes are the last the reader stored.
        for string in strings {
            #expect(try PlistDecoder().decode(String.self, from: PlistEncoder().encode(string)) == string)
        }
    }

    @Test("Integers decode into every width at its limits and fail outside them, naming the coding path")
    func integerWidths() throws {
        struct Limits: Codable, Equatable {
            var i8 = Int8.min, u8 = UInt8.max, i16 = Int16.min, u16 = UInt16.max
            var i32 = Int32.min, u32 = UInt32.max, i64 = Int64.min, u64 = UInt64.max, i = Int.max,
                u = UInt.max
        }
        let data = try PlistEncoder().encode(Limits())
        #expect(try PlistDecoder().decode(Limits.self, from: data) == Limits())

        struct Small: Codable { var value: Int8 }
        let tooBig = PropertyList.dictionary(["value": 128])
        #expect {
            try PlistDecoder().decode(Small.self, from: tooBig)
        } throws: { error in
            guard case DecodingError.dataCorrupted(let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["value"]
                && context.debugDescription.contains("Int8")
        }
        struct Unsigned: Codable { var value: UInt }
        #expect(throws: DecodingError.self) {
            try PlistDecoder().decode(Unsigned.self, from: .dictionary(["value": -1]))
        }
        // A whole real decodes as an integer, as Foundation allows; a fraction does not.
        #expect(try PlistDecoder().decode(Small.self, from: .dictionary(["value": .real(2)])).value == 2)
        #expect(throws: DecodingError.self) {
            try PlistDecoder().decode(Small.self, from: .dictionary(["value": .real(2.5)]))
        }
    }

    @Test("Type mismatches and missing keys are DecodingErrors with the full coding path")
    func errorsCarryPaths() throws {
        var tree = try PlistEncoder().encodeToPropertyList(Self.sample)
        guard case .dictionary(var root) = tree, case .array(var items) = root["items"],
            case .dictionary(var item) = items[1]
        else { Issue.record("unexpected shape"); return }
        item["title"] = .integer(7)
        items[1] = .dictionary(item)
        root["items"] = .array(items)
        tree = .dictionary(root)
        #expect {
            try PlistDecoder().decode(Survey.self, from: tree)
        } throws: { error in
            guard case DecodingError.typeMismatch(_, let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["items", "Index 1", "title"]
        }

        root.removeValue(forKey: "title")
        #expect {
            try PlistDecoder().decode(Survey.self, from: .dictionary(root))
        } throws: { error in
            guard case DecodingError.keyNotFound(let key, _) = error else { return false }
            return key.stringValue == "title"
        }

        struct Flags: Codable { var flags: [Bool] }
        #expect {
            try PlistDecoder().decode(Flags.self, from: .dictionary(["flags": [true, "no"]]))
        } throws: { error in
            guard case DecodingError.typeMismatch(_, let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["flags", "Index 1"]
        }
    }

    @Test("Malformed XML is a dataCorrupted error whose underlying error has the line and column")
    func malformedXML() {
        let xml = Data("<plist>\n<dict>\n<key>a</key>\n<integer>x</integer></dict></plist>".utf8)
        #expect {
            try PlistDecoder().decode([String: Int].self, from: xml)
        } throws: { error in
            guard case DecodingError.dataCorrupted(let context) = error,
                let underlying = context.underlyingError as? PropertyListError
            else { return false }
            return underlying.line == 4 && underlying.column != nil
        }
    }

    @Test("nil is written as $null when encoded explicitly, and decodes back as nil")
    func explicitNil() throws {
        struct Explicit: Codable, Equatable {
            var value: String?
            enum CodingKeys: CodingKey { case value }
            init(value: String?) { self.value = value }
            init(from decoder: any Decoder) throws {
                value = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(
                    String.self, forKey: .value)
            }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(value, forKey: .value)
            }
        }
        let tree = try PlistEncoder().encodeToPropertyList(Explicit(value: nil))
        #expect(tree == .dictionary(["value": "$null"]))
        #expect(try PlistDecoder().decode(Explicit.self, from: tree) == Explicit(value: nil))
        let foundation = PropertyListEncoder()
        foundation.outputFormat = .xml
        #expect(try FoundationBridge.read(foundation.encode(Explicit(value: nil))) == tree)
    }

    class Base: Codable {
        var name: String
        init(name: String) { self.name = name }
    }

    final class Derived: Base {
        var extra: Int
        enum CodingKeys: CodingKey { case extra }
        init(name: String, extra: Int) {
            self.extra = extra
            super.init(name: name)
        }
        required init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            extra = try container.decode(Int.self, forKey: .extra)
            try super.init(from: container.superDecoder())
        }
        override func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(extra, forKey: .extra)
            try super.encode(to: container.superEncoder())
        }
    }

    @Test("superEncoder and superDecoder nest the superclass under \"super\", as Foundation does")
    func superclass() throws {
        let tree = try PlistEncoder().encodeToPropertyList(Derived(name: "n", extra: 3))
        #expect(tree == .dictionary(["extra": 3, "super": .dictionary(["name": "n"])]))
        let back = try PlistDecoder().decode(Derived.self, from: tree)
        #expect(back.name == "n" && back.extra == 3)
        let foundation = PropertyListEncoder()
        foundation.outputFormat = .xml
        #expect(try FoundationBridge.read(foundation.encode(Derived(name: "n", extra: 3))) == tree)
    }

    @Test("Nested keyed and unkeyed containers, and dictionaries with many keys")
    func nestedContainers() throws {
        struct Manual: Codable, Equatable {
            var numbers: [Int]
            var names: [String: String]
            enum Outer: CodingKey { case inner, list }
            enum Inner: CodingKey { case names }
            init(numbers: [Int], names: [String: String]) {
                self.numbers = numbers
                self.names = names
            }
            init(from decoder: any Decoder) throws {
                let outer = try decoder.container(keyedBy: Outer.self)
                var list = try outer.nestedUnkeyedContainer(forKey: .list)
                var numbers: [Int] = []
                while !list.isAtEnd { numbers.append(try list.decode(Int.self)) }
                self.numbers = numbers
                names = try outer.nestedContainer(keyedBy: Inner.self, forKey: .inner).decode(
                    [String: String].self, forKey: .names)
            }
            func encode(to encoder: any Encoder) throws {
                var outer = encoder.container(keyedBy: Outer.self)
                var list = outer.nestedUnkeyedContainer(forKey: .list)
                for number in numbers { try list.encode(number) }
                var inner = outer.nestedContainer(keyedBy: Inner.self, forKey: .inner)
                try inner.encode(names, forKey: .names)
            }
        }
        let names = Dictionary(uniqueKeysWithValues: (0..<100).map { ("key\($0)", "value\($0)") })
        let value = Manual(numbers: [3, 1, 2], names: names)
        let data = try PlistEncoder().encode(value)
        #expect(try PlistDecoder().decode(Manual.self, from: data) == value)
        #expect(try PropertyListDecoder().decode(Manual.self, from: data) == value)
    }

    @Test(
        "Values nested in arrays and dictionaries, with hand-made containers, are written as Foundation writes them"
    )
    func nestedValuesMatchFoundation() throws {
        // Each element is assembled as soon as it is encoded, and its encoder and
        // dictionary are used again for the next; hand-made nested containers and
        // super-encoders stay in pieces until the end.
        struct Manual: Encodable {
            var number: Int
            enum Outer: CodingKey { case zeta, inner, list, alpha }
            enum Inner: CodingKey { case b, a }
            func encode(to encoder: any Encoder) throws {
                var outer = encoder.container(keyedBy: Outer.self)
                try outer.encode("z\(number)", forKey: .zeta)
                var list = outer.nestedUnkeyedContainer(forKey: .list)
                var inner = outer.nestedContainer(keyedBy: Inner.self, forKey: .inner)
                try list.encode(number)
                try inner.encode(number, forKey: .b)
                var nested = list.nestedContainer(keyedBy: Inner.self)
                try nested.encode(true, forKey: .a)
                try inner.encode("a & <b>", forKey: .a)
                try list.encode(number * 2)
                try "super \(number)".encode(to: outer.superEncoder(forKey: .alpha))
            }
        }
        struct Plain: Encodable {
            var name: String
            var when: Date
            var flags: [Bool]
        }
        struct Holder: Encodable {
            var manual: [Manual]
            var plain: [Plain]
            var byName: [String: Plain]
            var none: [Plain]
            var deep: [[Plain]]
        }
        let plain = (0..<5).map {
            Plain(
                name: "p\($0)", when: Date(timeIntervalSince1970: 1_700_000_000 + Double($0)),
                flags: [$0 % 2 == 0])
        }
        let value = Holder(
            manual: (0..<4).map { Manual(number: $0) }, plain: plain,
            byName: ["b": plain[1], "a": plain[0], "c": plain[2]], none: [], deep: [plain, [], [plain[3]]])
        let foundation = PropertyListEncoder()
        foundation.outputFormat = .xml
        let theirTree = try FoundationBridge.read(try foundation.encode(value))
        #expect(try PlistEncoder().encodeToPropertyList(value) == theirTree)
        #expect(try PlistEncoder().encode(value) == FoundationBridge.xml(theirTree))
    }

    @Test(
        "Writes into an enclosing value's container, or into a container kept after its value, reach the output"
    )
    func containersHeldElsewhere() throws {
        // Containers share their storage, as Foundation's do: a value may write into a
        // container it was handed by other means than its encoder, or keep its own
        // container and write into it later. Neither may be lost or overwritten by the
        // early assembly of finished values.
        final class Shared: @unchecked Sendable {
            var outer: KeyedEncodingContainer<PlistTestKey>?
            var kept: KeyedEncodingContainer<PlistTestKey>?
        }
        struct Child: Encodable {
            let shared: Shared
            let number: Int
            let keep: Bool
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: PlistTestKey.self)
                try container.encode("child \(number)", forKey: PlistTestKey(stringValue: "name"))
                try shared.outer?.encode(
                    "written by child \(number)", forKey: PlistTestKey(stringValue: "from\(number)"))
                if keep { shared.kept = container }
            }
        }
        struct Parent: Encodable {
            let shared: Shared
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: PlistTestKey.self)
                shared.outer = container
                let children = (0..<3).map { Child(shared: shared, number: $0, keep: false) }
                try container.encode(children, forKey: PlistTestKey(stringValue: "children"))
                try container.encode(
                    Child(shared: shared, number: 9, keep: true), forKey: PlistTestKey(stringValue: "kept"))
                try shared.kept?.encode("written late", forKey: PlistTestKey(stringValue: "late"))
                try container.encode("last", forKey: PlistTestKey(stringValue: "end"))
            }
        }
        let foundation = PropertyListEncoder()
        foundation.outputFormat = .xml
        let theirTree = try FoundationBridge.read(try foundation.encode(Parent(shared: Shared())))
        #expect(try PlistEncoder().encodeToPropertyList(Parent(shared: Shared())) == theirTree)
        #expect(try PlistEncoder().encode(Parent(shared: Shared())) == FoundationBridge.xml(theirTree))
    }

    @Test("A value that encodes nothing is refused at the top level")
    func emptyTopLevel() {
        struct Nothing: Encodable { func encode(to encoder: any Encoder) throws {} }
        #expect(throws: EncodingError.self) { try PlistEncoder().encode(Nothing()) }
    }
}

extension CodableTests {
    @Test("A string XML cannot carry is refused at encoding time, with its coding path")
    func unrepresentableString() {
        struct Holder: Encodable { var items: [Item] }
        let bad = Holder(items: [Item(id: "x", title: "bell \u{7}", kind: .picker)])
        #expect {
            try PlistEncoder().encode(bad)
        } throws: { error in
            guard case EncodingError.invalidValue(_, let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["items", "Index 0", "title"]
                && context.debugDescription.contains("U+0007")
        }
        struct BadKey: Encodable {
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: PlistTestKey.self)
                try container.encode(1, forKey: PlistTestKey(stringValue: "a\rb"))
            }
        }
        #expect(throws: EncodingError.self) { try PlistEncoder().encode(BadKey()) }
    }

    @Test("Keys encoded twice keep the last value, and dictionaries come out sorted")
    func duplicateKeysAndOrder() throws {
        struct Twice: Encodable {
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: PlistTestKey.self)
                try container.encode("first", forKey: PlistTestKey(stringValue: "b"))
                try container.encode("z", forKey: PlistTestKey(stringValue: "a"))
                try container.encode("second", forKey: PlistTestKey(stringValue: "b"))
            }
        }
        let tree = try PlistEncoder().encodeToPropertyList(Twice())
        #expect(tree == .dictionary(["a": "z", "b": "second"]))
        #expect(try PlistEncoder().encode(Twice()) == FoundationBridge.xml(tree))
    }
}

struct PlistTestKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
