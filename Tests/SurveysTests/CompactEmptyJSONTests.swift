import Foundation
import Surveys
import Testing

/// JSON printed for people: an empty array or object on one line, and nothing else
/// changed.
@Suite("Empty JSON containers on one line")
struct CompactEmptyJSONTests {
    /// Empty containers at every depth, next to strings that look like them.
    static var value: [String: Any] {
        [
            "empty": [Any](),
            "none": [String: Any](),
            "nested": [[Any](), [String: Any](), ["inner": [Any]()], [[[Any]()]]],
            "texts": ["[ ]", "{  }", "[\n\n]", "a \"[ ]\" b", "back\\slash\\", "\\\"{ }", "]", "{"],
            "kept": [1, 2],
        ]
    }

    @Test("Empty arrays and objects become [] and {}; the document means the same; strings are untouched")
    func compacting() throws {
        let pretty = try JSONSerialization.data(
            withJSONObject: Self.value, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        let compact = CompactEmptyJSON.compacting(pretty)
        let text = String(decoding: compact, as: UTF8.self)
        #expect(
            !text.split(separator: "\n", omittingEmptySubsequences: false).contains {
                $0.allSatisfy(\.isWhitespace)
            })
        #expect(text.contains("\"empty\" : []") && text.contains("\"none\" : {}"), "\(text)")
        #expect(text.contains("\"inner\" : []"), "\(text)")
        let before = try JSONSerialization.jsonObject(with: pretty) as? NSDictionary
        let after = try JSONSerialization.jsonObject(with: compact) as? NSDictionary
        #expect(before != nil && before == after, "\(text)")
        // Only white space went: every other byte is where it was, in order.
        #expect(
            pretty.filter { ![0x20, 0x0A].contains($0) } == compact.filter { ![0x20, 0x0A].contains($0) })
        let texts = try #require(after?["texts"] as? [String])
        #expect(texts == Self.value["texts"] as? [String])
    }

    @Test("A survey's interchange JSON writes its empty item list as []")
    func surveyJSON() throws {
        let json = String(decoding: try Survey(title: "Empty", items: []).jsonData(), as: UTF8.self)
        #expect(json == "{\n  \"items\" : [],\n  \"title\" : \"Empty\"\n}\n", "\(json)")
    }
}
