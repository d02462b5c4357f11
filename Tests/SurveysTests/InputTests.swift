import Foundation
import PropertyList
import Surveys
import TestSupport
import Testing

/// Reading survey files: one date rule, strict JSON, format detection, limits, and the
/// envelope `survey show --json` adds.
@Suite("Survey input: dates, strict JSON, formats, limits, envelope")
struct InputTests {
    static func survey(items: String, title: String = "T", extra: String = "") -> Data {
        Data(#"{"title": "\#(title)", "items": [\#(items)]\#(extra)}"#.utf8)
    }

    static func plist(answer: String) -> Data {
        Data(
            """
            <plist version="1.0"><dict><key>title</key><string>T</string><key>items</key><array>
            <dict><key>title</key><string>D</string><key>kind</key><string>datePicker</string>
            <key>answer</key>\(answer)</dict></array></dict></plist>
            """.utf8)
    }

    @Test(
        "An impossible date is refused the same way in JSON, in a plist and as typed text",
        arguments: [
            "2026-02-30T00:00:00Z", "2026-01-01T24:00:00Z", "2026-13-01T00:00:00Z",
        ])
    func impossibleDates(text: String) {
        let json = #expect(throws: SurveyError.self) {
            try Survey(
                json: Self.survey(items: #"{"title": "D", "kind": "datePicker", "answer": "\#(text)"}"#))
        }
        #expect(json?.rule == .invalidDate)
        #expect(json?.position == 1)
        #expect(json?.description.contains(text) == false, "an answer is never quoted")
        let typed = #expect(throws: SurveyError.self) {
            try Item(title: "D", kind: .datePicker).dateAnswer(from: text, position: 4)
        }
        #expect(typed?.rule == .invalidDate)
        #expect(typed?.position == 4)
        #expect(typed?.message == json?.message)
        let plist = #expect(throws: PropertyListError.self) {
            try Survey(plist: Self.plist(answer: "<date>\(text)</date>"), file: "s.plist")
        }
        #expect(plist?.line == 3)
        #expect(plist?.message.contains("date '\(text)'") == true)
    }

    @Test("A fraction of a second is accepted and dropped in all three forms")
    func fractionalSeconds() throws {
        let expected = Answer.date(Date(timeIntervalSince1970: 1_795_168_800))
        let json = try Survey(
            json: Self.survey(
                items: #"{"title": "D", "kind": "datePicker", "answer": "2026-11-20T10:00:00.987Z"}"#))
        #expect(json.items[0].answer == expected)
        let plist = try Survey(plist: Self.plist(answer: "<date>2026-11-20T10:00:00.987Z</date>"))
        #expect(plist.items[0].answer == expected)
        let plistString = try Survey(plist: Self.plist(answer: "<string>2026-11-20T10:00:00.987Z</string>"))
        #expect(plistString.items[0].answer == expected)
        #expect(
            try Item(title: "D", kind: .datePicker).dateAnswer(from: "2026-11-20T10:00:00.987Z", position: 1)
                == expected)
        #expect(try Survey(plist: json.plistData()) == json, "what is read equals what is stored")
    }

    @Test("Dates before 1582 are written in the proleptic Gregorian calendar")
    func oldDatesInJSON() throws {
        let survey = try Survey(
            json: Self.survey(
                items: #"{"title": "D", "kind": "datePicker", "answer": "0009-09-15T00:00:00Z"}"#))
        let json = String(decoding: try survey.jsonData(), as: UTF8.self)
        #expect(json.contains(#""answer" : "0009-09-15T00:00:00Z""#), "\(json)")
    }

    @Test(
        "Every number a slider accepts can be shown",
        arguments: [
            (1e19, "1e+19"), (-1e300, "-1e+300"), (8, "8"), (-0.5, "-0.5"),
            (9_007_199_254_740_992, "9007199254740992"),
        ])
    func largeSliderNumbers(number: Double, text: String) throws {
        let survey = try Survey(
            json: Self.survey(
                items:
                    #"{"title": "S", "kind": "slider", "minimum": -1e301, "maximum": 1e20, "answer": \#(number)}"#
            ))
        #expect(survey.items[0].answer == .number(number))
        #expect(survey.items[0].answer?.text == text)
    }

    @Test(
        "An integer answer above 2^63 keeps its value; one a double cannot hold exactly is refused (18446744073709551615 was taken as 2^64)"
    )
    func hugeIntegerAnswer() throws {
        let survey = try Survey(
            json: Self.survey(
                items:
                    #"{"title": "S", "kind": "slider", "minimum": 0, "maximum": 1e20, "answer": 18446744073709549568}"#
            ))
        #expect(survey.items[0].answer == .number(18_446_744_073_709_549_568))
        let error = #expect(throws: SurveyError.self) {
            try Survey(
                json: Self.survey(
                    items:
                        #"{"title": "S", "kind": "slider", "minimum": 0, "maximum": 1e20, "answer": 18446744073709551615}"#
                ))
        }
        #expect(error?.rule == .answerOutOfRange)
    }

    @Test(
        "JSON that JSONSerialization would accept is refused with the line and column",
        arguments: [
            (
                "{\"title\": \"T\",\n \"items\": [],\n \"title\": \"U\"}", 3, 2,
                #"the key "title" appears twice in one object"#
            ),
            (
                "{\"title\": \"T\", \"items\": [{\"title\": \"A\", \"kind\": \"textField\", \"kind\": \"picker\"}]}",
                1, 62,
                #"the key "kind" appears twice in one object"#
            ),
            (
                "{\"title\": \"T\", \"items\": [], \"x\": null}", 1, 34,
                "null is not allowed; leave the key out instead"
            ),
            ("{\"title\": \"\\ud800\", \"items\": []}", 1, 12, "a \\u escape holds a lone surrogate"),
            ("{\"title\": \"T\", \"items\": [01]}", 1, 26, "a number does not start with 0 unless it is 0"),
            ("{\"title\": \"T\", \"items\": []} x", 1, 29, "unexpected text after the JSON value"),
            ("{\"title\": \"T\", \"items\": [] ", 1, 28, "the document ends inside an object"),
        ])
    func strictJSON(json: String, line: Int, column: Int, message: String) {
        let error = #expect(throws: PropertyListError.self) {
            try Survey(json: Data(json.utf8), file: "in.json")
        }
        #expect(error?.code == .malformedJSON)
        // What `PropertyList(json:file:)` throws for the same bytes.
        if let error {
            #expect(throws: error) { try PropertyList(json: Data(json.utf8), file: "in.json") }
        }
        #expect(error?.message == message)
        #expect(error?.line == line)
        #expect(error?.column == column)
        #expect(error?.description == "in.json:\(line):\(column): \(message)")
    }

    @Test(
        "A text XML cannot carry in a JSON survey is refused naming the item, the field and the rule, at the line and column of its character",
        arguments: [
            (
                "{\"items\": [\n  {\"kind\": \"textOnly\", \"title\": \"ok\"}\n ],\n \"title\": \"bad\\u0007\"}",
                4, 15, "survey: the title cannot be saved: the string contains the control character U+0007"
            ),
            // The item's first such text, though a later item has one too.
            (
                """
                {"title": "T", "items": [
                  {"kind": "textOnly", "title": "first"},
                  {"options": ["a", "b\\u001f"], "kind": "picker", "title": "pick"},
                  {"kind": "textOnly", "title": "x\\u0000"}
                ]}
                """,
                3, 23,
                "item 2 (\"pick\"): its option 2 cannot be saved: the string contains the control character U+001F"
            ),
            // The hint is checked before the answer, which comes first in the file.
            (
                """
                {"title": "T", "items": [
                  {"answer": "x\\ry", "subtitle": "h\\u0001", "kind": "textField", "title": "Q"}
                ]}
                """,
                2, 36,
                "item 1 (\"Q\"): its hint cannot be saved: the string contains the control character U+0001"
            ),
            (
                "{\"title\": \"T\", \"items\": [{\"kind\": \"textOnly\", \"text\": \"t\", \"title\": \"a\u{FFFF}\"}]}",
                1,
                71, "item 1 (\"a\u{FFFF}\"): its title cannot be saved: the string contains U+FFFF"
            ),
            (
                "{\"title\": \"T\", \"items\": [\n{\"kind\": \"textField\", \"title\": \"Q\", \"answer\": \"a\\r\\nb\"}]}",
                2,
                49,
                "item 1 (\"Q\"): its answer cannot be saved: the string contains a carriage return (U+000D)"
            ),
        ])
    func unwritableTextLocated(json: String, line: Int, column: Int, message: String) {
        let error = #expect(throws: SurveyError.self) { try Survey(json: Data(json.utf8), file: "in.json") }
        #expect(error?.rule == .unwritableText)
        #expect(
            error?.file == "in.json" && error?.line == line && error?.column == column,
            "\(String(describing: error))")
        #expect(
            error?.description.hasPrefix("in.json:\(line):\(column): \(message)") == true,
            "\(error?.description ?? "no error")")
    }

    @Test("Invalid UTF-8 and nesting deeper than the plist limit are refused")
    func encodingAndDepth() {
        var bytes = Array(#"{"title": ""#.utf8)
        bytes += [0xC0, 0xAF]
        bytes += Array(#"", "items": []}"#.utf8)
        let utf8 = #expect(throws: PropertyListError.self) { try Survey(json: Data(bytes)) }
        #expect(utf8?.message == "the string is not valid UTF-8")
        let deep = String(repeating: "[", count: 200) + String(repeating: "]", count: 200)
        let depth = #expect(throws: PropertyListError.self) {
            try Survey(json: Data(#"{"title": "T", "items": \#(deep)}"#.utf8))
        }
        #expect(depth?.message.contains("nested deeper than 128") == true)
    }

    @Test("The form is told by content: BOMs, UTF-16 XML, binary plists, JSON")
    func formatDetection() throws {
        let xml =
            #"<?xml version="1.0" encoding="UTF-16"?><plist version="1.0"><dict><key>title</key><string>U</string><key>items</key><array/></dict></plist>"#
        var utf16LE = Data([0xFF, 0xFE])
        utf16LE.append(xml.data(using: .utf16LittleEndian)!)
        #expect(try Survey(data: utf16LE).title == "U")
        var utf16BE = Data([0xFE, 0xFF])
        utf16BE.append(xml.data(using: .utf16BigEndian)!)
        #expect(try Survey(data: utf16BE).title == "U")
        #expect(
            try Survey(
                data: Data("\u{FEFF}".utf8) + Data(xml.replacingOccurrences(of: "UTF-16", with: "UTF-8").utf8)
            ).title == "U")
        #expect(try Survey(data: Data("\u{FEFF}{\"title\": \"J\", \"items\": []}".utf8)).title == "J")
        let json16 = #expect(throws: PropertyListError.self) {
            try Survey(
                data: Data([0xFF, 0xFE]) + "{\"title\": \"J\", \"items\": []}".data(
                    using: .utf16LittleEndian)!, file: "j.json")
        }
        #expect(
            json16?.description
                == "j.json:1:1: the document is UTF-16 text but not an XML property list (JSON must be UTF-8)"
        )
        let binary = #expect(throws: PropertyListError.self) {
            try Survey(data: Data("bplist00\u{0}".utf8), file: "b.plist")
        }
        #expect(binary?.message.hasPrefix("binary property lists are not supported") == true)
    }

    @Test("More items than the limit are refused before they are built")
    func itemLimit() {
        let item = #"{"title": "Q", "kind": "textOnly"}"#
        let items = Array(repeating: item, count: Survey.maximumItemCount + 1).joined(separator: ",\n")
        let clock = ContinuousClock()
        let start = clock.now
        // The same error as XML with as many items gets (it was a SurveyFileError of
        // another message), with the place where the reader stopped.
        let error = #expect(throws: SurveyError.self) {
            try Survey(json: Self.survey(items: items), file: "big.json")
        }
        #expect(error?.rule == .tooManyItems && error?.position == nil)
        #expect(error?.message == "it has more than 100000 items; a survey has at most 100000")
        #expect(error?.line == Survey.maximumItemCount + 1)
        #expect(error?.column != nil)
        #expect(
            error?.description
                == "big.json:\(Survey.maximumItemCount + 1):\(error?.column ?? 0): survey: it has more than 100000 items; a survey has at most 100000 [tooManyItems]"
        )
        #expect(clock.now - start < .seconds(20))
        let plistError = #expect(throws: SurveyError.self) {
            try Survey(
                interchange: .dictionary([
                    "title": .string("T"),
                    "items": .array(
                        Array(repeating: .string("not even an item"), count: Survey.maximumItemCount + 1)),
                ]))
        }
        #expect(plistError?.rule == .tooManyItems)
    }

    @Test("A file larger than the limit is refused without being parsed")
    func sizeLimit() {
        let data = Data(count: Survey.maximumFileSize + 1)
        let error = #expect(throws: SurveyFileError.self) { try Survey(data: data, file: "big.json") }
        #expect(error?.message == "the file is larger than 128 MiB, the most a survey file may be")
    }

    @Test("The envelope show --json prints is accepted; another document's id and unknown keys are not")
    func envelope() throws {
        let document = UUID()
        let extra =
            #", "id": "\#(document.uuidString.lowercased())", "revision": "1-abc", "formatVersion": 2, "conflicts": ["2-def"]"#
        let data = Self.survey(items: #"{"title": "Q", "kind": "textOnly"}"#, extra: extra)
        #expect(try Survey(json: data).title == "T")
        #expect(try Survey(json: data, document: document).items.count == 1)
        let other = UUID()
        let error = #expect(throws: SurveyError.self) { try Survey(json: data, document: other) }
        #expect(error?.rule == .otherDocument)
        #expect(error?.message.contains(other.uuidString.lowercased()) == true)
        let unknown = #expect(throws: SurveyError.self) {
            try Survey(
                json: Self.survey(items: "", extra: #", "id": "\#(document.uuidString)", "comment": "x""#))
        }
        #expect(unknown?.message == "unknown key 'comment'")
        let badConflicts = #expect(throws: SurveyError.self) {
            try Survey(json: Self.survey(items: "", extra: #", "conflicts": [1]"#))
        }
        #expect(badConflicts?.rule == .wrongType)
        // The stored form (Survey.plist) stays strict: only title and items.
        let stored = #expect(throws: SurveyError.self) {
            try Survey(
                interchange: .dictionary([
                    "title": .string("T"), "items": .array([]), "revision": .string("1-abc"),
                ]))
        }
        #expect(stored?.message == "unknown key 'revision'")
    }

    @Test(
        "3,000 seeded corruptions of a valid JSON survey are read or refused with a position, never a crash")
    func corruptedJSON() {
        let seed = SeededRandom.seed(fallback: 0x4A50_2026)
        var random = SeededRandom(seed: seed)
        func next(_ bound: Int) -> Int { Int.random(in: 0..<bound, using: &random) }
        let original = Array(Survey.exampleJSON.utf8)
        let alphabet = Array(#"{}[]",:\ue0-.+9tfn\#n\#t "#.utf8) + [0xC3, 0xFF, 0x00]
        for round in 0..<3000 {
            var bytes = original
            for _ in 0..<(1 + next(4)) {
                let place = next(bytes.count)
                switch next(3) {
                case 0: bytes[place] = alphabet[next(alphabet.count)]
                case 1: bytes.remove(at: place)
                default: bytes.insert(alphabet[next(alphabet.count)], at: place)
                }
            }
            do {
                _ = try Survey(json: Data(bytes))
            } catch let error as PropertyListError {
                #expect(
                    error.code == .malformedJSON,
                    "seed \(seed), round \(round); replay with SURVEYSTORE_SEED=\(seed): \(error)")
                #expect(
                    error.line.map { $0 >= 1 } == true && error.column.map { $0 >= 1 } == true,
                    "seed \(seed), round \(round); replay with SURVEYSTORE_SEED=\(seed): \(error)")
            } catch is SurveyError {
                // Well-formed JSON that breaks a rule of the model.
            } catch {
                Issue.record(
                    "seed \(seed), round \(round); replay with SURVEYSTORE_SEED=\(seed): unexpected \(error)")
            }
        }
    }

    @Test("Stored content from before the newer rules still reads; validate() applies every rule")
    func storedContentFromBeforeTheRules() throws {
        let stored = PropertyList.dictionary([
            "title": .string(""),
            "items": .array([
                .dictionary([
                    "id": .string(UUID().uuidString), "title": .string("P"), "kind": .string("picker"),
                    "options": .array([.string("A"), .string("A")]), "answer": .string("A"),
                ])
            ]),
        ])
        let survey = try Survey(interchange: stored)
        #expect(survey.title.isEmpty)
        let error = #expect(throws: SurveyError.self) { try survey.validate() }
        #expect(error?.rule == .emptyTitle)
        var fixed = survey
        fixed.title = "Fixed"
        #expect((#expect(throws: SurveyError.self) { try fixed.validate() })?.rule == .duplicateOptions)
        let file = #expect(throws: SurveyError.self) { try Survey(plist: try survey.plistData()) }
        #expect(file?.rule == .emptyTitle, "a file is read with every rule")
    }
}
