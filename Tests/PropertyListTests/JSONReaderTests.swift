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
