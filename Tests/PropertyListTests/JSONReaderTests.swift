import Foundation
import PropertyList
import Testing

@Suite("Property lists written as JSON")
struct JSONReaderTests {
    @Test("Each JSON type reads as its property-list type; integers and reals stay apart")
    func types() throws {
        let json = """
            {"s": "x \\u00e9 \\ud83d\\ude00", "i": -9223372036854775808, "u": 18446744073709551615,
             "r": 1.0, "e": 1e3, "big": 18446744073709551616, "t": true, "f": false,
             "a": [[], {}], "date": "2001-01-01T00:00:00Z"}
            """
        let value = try PropertyList(json: Data(json.utf8))
        let expected: PropertyList = [
            "s": "x é 😀", "i": .integer(.min), "u": .integer(.max), "r": .real(1), "e": .real(1000),
            "big": .real(18_446_744_073_709_551_616), "t": true, "f": false,
            "a": [.array([]), .dictionary([:])], "date": "2001-01-01T00:00:00Z",
        ]
        #expect(value == expected)
    }

    @Test(
        "Refusals name the file, line and column",
        arguments: [
            ("{\"a\": null}", 1, 7, "null is not allowed"),
            ("{\"a\": 1,\n \"a\": 2}", 2, 2, "the key \"a\" appears twice in one object"),
            (
                "{\"\u{E9}\": 1, \"e\u{301}\": 2}", 1, 10,
                "appears twice in one object (two keys are the same text in different Unicode normal forms)"
            ),
            ("[1,\n  2,]", 2, 5, "expected a JSON value"),
            ("[\"\\ud800\"]", 1, 3, "lone surrogate"),
            ("{\"a\": tru}", 1, 7, "true"),
        ])
    func refusals(json: String, line: Int, column: Int, message: String) {
        do {
            _ = try PropertyList(json: Data(json.utf8), file: "in.json")
            Issue.record("\(json) was read")
        } catch {
            #expect(error.code == .malformedJSON)
            #expect(error.file == "in.json")
            #expect(error.line == line && error.column == column, "\(error)")
            #expect(error.message.contains(message), "\(error.message)")
            #expect(error.description.hasPrefix("in.json:\(line):\(column): "))
        }
    }

    /// A document, where the first character XML cannot carry is (line, column and the
    /// writer's reason), and where it is in the string at a path (`nil`: none there).
    struct Unwritable: Sendable, CustomTestStringConvertible {
        var json: String
        var place: (line: Int, column: Int)?
        var reason: String
        var path: [JSONReader.PathComponent] = []
        var atPath: (line: Int, column: Int)?
        var testDescription: String { json.debugDescription }
    }

    static let control = "which XML 1.0 cannot carry"

    static let unwritable: [Unwritable] = [
        Unwritable(
            json: "{\"a\": 1,\n \"b\": [\"x\", \"y\\u0000z\"]}", place: (2, 15),
            reason: "the string contains the control character U+0000, \(control)",
            path: [.key("b"), .index(1)], atPath: (2, 15)),
        Unwritable(
            json: "{\"a\": 1,\n \"b\": [\"x\", \"y\\u0000z\"]}", place: (2, 15),
            reason: "U+0000", path: [.key("b"), .index(0)], atPath: nil),
        // In a key; a later string's character is not the first.
        Unwritable(
            json: "{\n  \"k\\u0001\": \"\\u0002\"}", place: (2, 5), reason: "the control character U+0001",
            path: [.key("k\u{1}")], atPath: (2, 15)),
        Unwritable(json: "[\"\\b\"]", place: (1, 3), reason: "the control character U+0008"),
        Unwritable(json: "[\"\\f\"]", place: (1, 3), reason: "the control character U+000C"),
        Unwritable(json: "[1,\n\n \"\\u001F\"]", place: (3, 3), reason: "the control character U+001F"),
        Unwritable(
            json: "[\"a\\rb\"]", place: (1, 4),
            reason: "a carriage return (U+000D), which XML readers turn into a line feed"),
        Unwritable(json: "[\"\\u000d\"]", place: (1, 3), reason: "a carriage return (U+000D)"),
        Unwritable(json: "[\"\\uFFFE\"]", place: (1, 3), reason: "the string contains U+FFFE, \(control)"),
        Unwritable(json: "[\"\\uffff\"]", place: (1, 3), reason: "the string contains U+FFFF, \(control)"),
        // Not escaped: U+FFFE and U+FFFF as UTF-8; columns count characters.
        Unwritable(json: "[\"é\u{FFFE}\"]", place: (1, 4), reason: "the string contains U+FFFE"),
        Unwritable(
            json: "{\"t\": \"😀\",\n\"u\": \"\u{FFFF}\"}", place: (2, 7), reason: "U+FFFF",
            path: [.key("u")], atPath: (2, 7)),
        // What XML carries: tab, line feed, U+FFFD, a pair of surrogates, an escaped backslash
        // before text that looks like an escape, U+FFFE as text.
        Unwritable(
            json: #"["\t\n\u0009\u000A\uFFFD\ud83d\ude00\\u0000 \\b", ""# + "\u{FFFD}" + #"", "\\\\uFFFE"]"#,
            place: nil,
            reason: "", path: [.index(0)], atPath: nil),
    ]

    @Test(
        "The first character XML cannot carry is found at its escape or its bytes, in keys too, on any line, and in the string at a path",
        arguments: unwritable)
    func unwritableCharacter(_ testCase: Unwritable) throws {
        let json = Data(testCase.json.utf8)
        #expect(throws: Never.self) { try PropertyList(json: json) }
        for data in [json, Data([0xEF, 0xBB, 0xBF]) + json] {
            let found = JSONReader.unwritableCharacter(in: data, at: nil)
            #expect(
                found?.line == testCase.place?.line && found?.column == testCase.place?.column,
                "\(String(describing: found))")
            if let found { #expect(found.message.contains(testCase.reason), "\(found.message)") }
            let atPath = JSONReader.unwritableCharacter(in: data, at: testCase.path)
            #expect(
                atPath?.line == testCase.atPath?.line && atPath?.column == testCase.atPath?.column,
                "\(testCase.path): \(String(describing: atPath))")
        }
    }

    @Test("LF, CR LF and a CR alone each end a line: a refusal is placed alike in all three")
    func lineEnds() {
        let lines = ["{", "  \"a\": 1,", "  \"b\": [true,", "    nul]", "}"]
        for end in ["\n", "\r\n", "\r"] {
            let json = lines.joined(separator: end)
            let error = #expect(throws: PropertyListError.self) { try PropertyList(json: Data(json.utf8)) }
            #expect(
                error?.line == 4 && error?.column == 5,
                "\(json.debugDescription): \(String(describing: error))")
        }
    }

    @Test("A UTF-8 byte order mark is not a column: positions on the first line are those without it")
    func byteOrderMarkIsNoColumn() {
        for json in ["{\"a\": nul}", "{\"a\": 1,\n \"b\": nul}", "  [1,]"] {
            let plain = #expect(throws: PropertyListError.self) { try PropertyList(json: Data(json.utf8)) }
            let marked = #expect(throws: PropertyListError.self) {
                try PropertyList(json: Data([0xEF, 0xBB, 0xBF]) + Data(json.utf8))
            }
            #expect(
                marked?.line == plain?.line && marked?.column == plain?.column,
                "\(json): \(String(describing: marked)) \(String(describing: plain))")
        }
    }

    @Test("Invalid UTF-8 and nesting past the reader's limit are refused")
    func limits() {
        var bytes = Data("[\"".utf8)
        bytes.append(0xFF)
        bytes.append(contentsOf: "\"]".utf8)
        #expect(throws: PropertyListError.self) { try PropertyList(json: bytes) }
        let deep =
            String(repeating: "[", count: PropertyList.maximumDepth + 1)
            + String(repeating: "]", count: PropertyList.maximumDepth + 1)
        #expect(throws: PropertyListError.self) { try PropertyList(json: Data(deep.utf8)) }
        let deepest =
            String(repeating: "[", count: PropertyList.maximumDepth)
            + String(repeating: "]", count: PropertyList.maximumDepth)
        #expect(throws: Never.self) { try PropertyList(json: Data(deepest.utf8)) }
    }

    @Test("What looks like JSON: an object or an array first, after white space and a byte order mark")
    func sniffing() {
        #expect(PropertyList.looksLikeJSON(Data(" \n\t{}".utf8)))
        #expect(PropertyList.looksLikeJSON(Data([0xEF, 0xBB, 0xBF]) + Data("[1]".utf8)))
        #expect(!PropertyList.looksLikeJSON(Data("<plist/>".utf8)))
        #expect(!PropertyList.looksLikeJSON(Data("  ".utf8)))
        #expect(!PropertyList.looksLikeJSON(Data()))
    }
}
