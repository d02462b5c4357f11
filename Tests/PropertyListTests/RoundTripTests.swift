import Foundation
import PropertyList
import TestSupport
import Testing

@Suite("Round trips of edge values")
struct RoundTripTests {
    static let edgeValues: [(String, PropertyList)] = [
        ("Int64.min", .integer(.min)),
        ("UInt64.max", .integer(.max)),
        ("Int64.max", .integer(PropertyList.Integer(Int64.max))),
        ("Int64.max + 1", .integer(PropertyList.Integer(UInt64(Int64.max) + 1))),
        ("zero", .integer(0)),
        ("minus one", .integer(-1)),
        ("nan", .real(.nan)),
        ("+infinity", .real(.infinity)),
        ("-infinity", .real(-.infinity)),
        ("smallest subnormal", .real(.leastNonzeroMagnitude)),
        ("largest double", .real(.greatestFiniteMagnitude)),
        ("smallest normal", .real(.leastNormalMagnitude)),
        ("0.1", .real(0.1)),
        ("negative real", .real(-1234.5678e-9)),
        ("1e-324 (reads as 0)", .real(Double("1e-324")!)),
        ("date 1970", .date(Date(timeIntervalSince1970: 0))),
        ("date before 1970", .date(Date(timeIntervalSince1970: -1))),
        ("date in 1601", .date(Date(timeIntervalSince1970: -11_644_473_600))),
        ("date after 2100", .date(Date(timeIntervalSince1970: 4_102_444_801))),
        ("date in year 9999", .date(Date(timeIntervalSince1970: 253_402_300_799))),
        ("first second of year 1000", .date(Date(timeIntervalSince1970: -30_610_224_000))),
        ("last second of year 999", .date(Date(timeIntervalSince1970: -30_610_224_001))),
        ("first second of year 10000", .date(Date(timeIntervalSince1970: 253_402_300_800))),
        ("date in year 0", .date(Date(timeIntervalSince1970: -62_167_219_200))),
        ("date before year 0", .date(Date(timeIntervalSince1970: -62_200_000_000))),
        ("date in year 12000", .date(Date(timeIntervalSince1970: 316_504_000_000))),
        ("leap day", .date(Date(timeIntervalSince1970: 951_782_400))),
        ("empty data", .data(Data())),
        ("one byte", .data(Data([0xFF]))),
        ("two bytes", .data(Data([0x00, 0x01]))),
        ("1 MB of data", .data(Data((0..<1_048_576).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }))),
        ("empty string", .string("")),
        ("non-BMP string", .string("😀𝄞𠀀 and 🇺🇳")),
        ("markup characters", .string("<a href=\"x\">&amp;</a> ' ]]>")),
        ("tab and newline", .string("a\tb\nc\n")),
        ("combining marks", .string("e\u{301} n\u{303}")),
        ("private use and BMP end", .string("\u{E000}\u{FFFD}")),
        ("whitespace only", .string("  \n\t ")),
        ("empty array", .array([])),
        ("empty dictionary", .dictionary([:])),
        ("empty key", .dictionary(["": "empty"])),
        ("true and false", .array([true, false])),
        ("nested empties", .array([.array([]), .dictionary([:]), .array([.dictionary([:])])])),
    ]

    @Test(
        "Writing and reading back gives the same value, and the bytes equal Foundation's",
        arguments: edgeValues)
    func roundTrip(name: String, value: PropertyList) throws {
        let bytes = try value.xmlData()
        let back = try PropertyList(xml: bytes)
        #expect(back == value, "\(name) did not survive a round trip")
        #expect(
            bytes == (try FoundationBridge.xml(value)), "\(name): bytes differ from PropertyListSerialization"
        )
        #expect(try FoundationBridge.read(bytes) == value, "\(name): Foundation reads something else")
    }

    @Test("Negative zero is written as 0.0, as CoreFoundation writes it, and so reads back as +0")
    func negativeZero() throws {
        let bytes = try PropertyList.real(-0.0).xmlData()
        #expect(String(decoding: bytes, as: UTF8.self).contains("<real>0.0</real>"))
        #expect(bytes == (try FoundationBridge.xml(.real(-0.0))))
        let back = try #require(try PropertyList(xml: bytes).realValue)
        #expect(back == 0 && back.sign == .plus)
        // A "-0" written by another tool keeps its sign.
        let other = try PropertyList(xml: Data("<plist><real>-0.0</real></plist>".utf8))
        #expect(other.realValue?.sign == .minus)
    }

    @Test("1e-324 is below the smallest subnormal and reads as zero")
    func belowSubnormal() throws {
        let value = try PropertyList(xml: Data("<plist><real>1e-324</real></plist>".utf8))
        #expect(value == .real(0))
        let subnormal = try PropertyList(
            xml: Data("<plist><real>4.9406564584124654e-324</real></plist>".utf8))
        #expect(subnormal == .real(.leastNonzeroMagnitude))
    }

    @Test("Dates keep whole seconds; fractions are dropped downwards as CoreFoundation does")
    func dateFractions() throws {
        for interval in [0.7, -0.3, 1e9 + 0.999, -1e9 - 0.5] {
            let value = PropertyList.date(Date(timeIntervalSince1970: interval))
            let bytes = try value.xmlData()
            #expect(bytes == (try FoundationBridge.xml(value)))
            let back = try #require(try PropertyList(xml: bytes).dateValue)
            #expect(back.timeIntervalSince1970 == interval.rounded(.down))
        }
    }

    @Test(
        "Deep but legal nesting round-trips; one level more, an empty container too, is refused by the writer and the reader"
    )
    func deepNesting() throws {
        var value = PropertyList.string("bottom")
        for level in 0..<PropertyList.maximumDepth {
            value = level.isMultiple(of: 2) ? .array([value]) : .dictionary(["k": value])
        }
        let bytes = try value.xmlData()
        #expect(try PropertyList(xml: bytes) == value)
        #expect(bytes == (try FoundationBridge.xml(value)))

        let tooDeep = PropertyList.array([value])
        let writeError = #expect(throws: PropertyListError.self) { try tooDeep.xmlData() }
        #expect(writeError?.code == .nestingTooDeep)

        // An empty array or dictionary is a level too: at the 129th it is refused, as the
        // reader refuses it, rather than written as <array/> that the reader cannot read.
        for empty in [PropertyList.array([]), .dictionary([:])] {
            var emptyAtTheBottom = empty
            for level in 1..<PropertyList.maximumDepth {
                emptyAtTheBottom =
                    level.isMultiple(of: 2) ? .array([emptyAtTheBottom]) : .dictionary(["": emptyAtTheBottom])
            }
            let bytes = try emptyAtTheBottom.xmlData()
            #expect(try PropertyList(xml: bytes) == emptyAtTheBottom)
            let emptyTooDeep = PropertyList.array([emptyAtTheBottom])
            let emptyError = #expect(throws: PropertyListError.self) { try emptyTooDeep.xmlData() }
            #expect(emptyError?.code == .nestingTooDeep)
            #expect(throws: PropertyListError.self) {
                try PropertyList(xml: FoundationBridge.xml(emptyTooDeep))
            }
        }

        // The same through PlistEncoder: 64 levels of Level are 128 containers, the last
        // an empty array; in one more array, 129.
        struct Level: Encodable { var next: [Level] }
        var chain = Level(next: [])
        for _ in 1..<(PropertyList.maximumDepth / 2) { chain = Level(next: [chain]) }
        #expect(throws: Never.self) { try PropertyList(xml: PlistEncoder().encode(chain)) }
        #expect(throws: (any Error).self) { try PlistEncoder().encode([chain]) }

        let xml =
            "<plist>" + String(repeating: "<array>", count: PropertyList.maximumDepth + 1)
            + String(repeating: "</array>", count: PropertyList.maximumDepth + 1) + "</plist>"
        let readError = #expect(throws: PropertyListError.self) { try PropertyList(xml: Data(xml.utf8)) }
        #expect(readError?.code == .nestingTooDeep)
        #expect(readError?.line == 1)
    }

    @Test("Keys are sorted by UTF-16 code units, as CoreFoundation sorts them")
    func keyOrder() throws {
        let keys = [
            "b", "B", "a", "é", "Z", "_", "aa", "ä", "z", "\u{FF5E}", "😀", "e\u{301}x", "\u{E000}", "𝄞",
        ]
        let value = PropertyList.dictionary(
            Dictionary(uniqueKeysWithValues: keys.map { ($0, PropertyList.integer(1)) }))
        let text = String(decoding: try value.xmlData(), as: UTF8.self)
        let written = text.split(separator: "\n").compactMap { line -> String? in
            guard let start = line.range(of: "<key>"), let end = line.range(of: "</key>") else { return nil }
            return String(line[start.upperBound..<end.lowerBound])
        }
        #expect(written == keys.sorted { $0.utf16.lexicographicallyPrecedes($1.utf16) })
        #expect(try value.xmlData() == FoundationBridge.xml(value))
    }

    @Test("Keys that share their first bytes, or differ past them, are sorted by UTF-16 code units")
    func keyOrderPastThePrefix() throws {
        let seed = SeededRandom.seed(fallback: 0x5eed_0e4d)
        var generator = SeededRandom(seed: seed)
        // Pieces of one to four UTF-8 bytes, and a long one, so that keys share prefixes
        // of every length and differ at every byte position, on every kind of lead byte.
        let pieces = ["a", "b", "aaaaaaa", "é", "\u{7FF}", "\u{D7FF}", "\u{E000}", "\u{FF5E}", "😀", "𝄞"]
        for round in 0..<50 {
            var keys = Set<String>()
            for _ in 0..<Int.random(in: 1...40, using: &generator) {
                let count = Int.random(in: 0...6, using: &generator)
                keys.insert((0..<count).map { _ in pieces.randomElement(using: &generator)! }.joined())
            }
            let value = PropertyList.dictionary(
                Dictionary(uniqueKeysWithValues: keys.map { ($0, PropertyList.integer(1)) }))
            let ours = try value.xmlData()
            let written = String(decoding: ours, as: UTF8.self).split(separator: "\n").compactMap {
                line -> String? in
                guard let start = line.range(of: "<key>"), let end = line.range(of: "</key>") else {
                    return nil
                }
                return String(line[start.upperBound..<end.lowerBound])
            }
            let expected = keys.sorted { $0.utf16.lexicographicallyPrecedes($1.utf16) }
            #expect(written == expected, "round \(round), seed \(seed); replay with SURVEYSTORE_SEED=\(seed)")
            #expect(ours == (try FoundationBridge.xml(value)), "round \(round), seed \(seed)")
        }
    }

    @Test(
        "Strings XML 1.0 cannot carry are refused, naming the path of the value",
        arguments: ["\u{0}", "\u{1}", "a\u{8}b", "\u{B}", "\u{C}", "\r", "x\u{1F}", "\u{FFFE}", "\u{FFFF}"])
    func unrepresentableStrings(_ string: String) throws {
        let value = PropertyList.dictionary(["items": .array([.string(string)])])
        let error = #expect(throws: PropertyListError.self) { try value.xmlData() }
        #expect(error?.code == .unrepresentableValue)
        #expect(error?.message.contains("items[0]") == true)
        let keyError = #expect(throws: PropertyListError.self) {
            try PropertyList.dictionary([string: 1]).xmlData()
        }
        #expect(keyError?.code == .unrepresentableValue)
    }

    @Test("Dates that are not finite or absurdly far away are refused")
    func unrepresentableDates() {
        for interval in [Double.nan, .infinity, 1e14, -1e14] {
            #expect(throws: PropertyListError.self) {
                try PropertyList.date(Date(timeIntervalSinceReferenceDate: interval)).xmlData()
            }
        }
    }
}
