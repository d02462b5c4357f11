import Foundation
import PropertyList
import Surveys
import Testing

@Suite("Format 1 to 2 migration")
struct FormatMigrationTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/formats")

    static func content(_ package: String) throws -> Data {
        try Data(contentsOf: fixtures.appendingPathComponent(package + "/Survey.plist"))
    }

    /// The expected format-2 content, written out by hand from the design's rules; ids
    /// are checked separately.
    static let answeredExpected: [[String: PropertyList]] = [
        ["title": "Would you come again?", "kind": "binary", "options": ["No", "Yes"], "answer": 1],
        ["title": "Thank you", "kind": "textOnly", "text": "Your answers stay on this device."],
        ["title": "Your name", "kind": "textField", "subtitle": "First and last", "answer": "Ada"],
        [
            "title": "Date of visit", "kind": "datePicker",
            "answer": .date(Date(timeIntervalSince1970: 1_559_381_400)),
        ],
        [
            "title": "Rate us", "kind": "slider", "minimum": 0.0, "maximum": 10.0, "roundToInteger": true,
            "answer": 8.0,
        ],
        [
            "title": "Favourite dish", "kind": "picker", "options": ["Soup", "Fish", "Cake"],
            "answer": "Cake",
        ],
        [
            "title": "What did you try?", "kind": "multiTF", "options": ["Soup", "Fish", "Cake", "Tea"],
            "answer": [true, false, true, false],
        ],
    ]

    static let unansweredExpected: [[String: PropertyList]] = [
        ["title": "Would you come again?", "kind": "binary", "options": ["No", "Yes"]],
        ["title": "Thank you", "kind": "textOnly"],
        ["title": "Your name", "kind": "textField"],
        ["title": "Date of visit", "kind": "datePicker"],
        [
            "title": "Temperature", "kind": "slider", "minimum": -5.5, "maximum": 40.0,
            "roundToInteger": false,
        ],
        ["title": "Favourite dish", "kind": "picker", "options": ["Soup"]],
        ["title": "What did you try?", "kind": "multiTF", "options": ["Soup", "Fish"]],
    ]

    func check(_ package: String, title: String, expected: [[String: PropertyList]]) throws {
        let survey = try FormatMigrator.survey(from: Self.content(package), version: 1, seed: "1-seed")
        #expect(survey.title == title)
        guard case .array(let items)? = survey.interchange["items"] else {
            Issue.record("no items")
            return
        }
        #expect(items.count == expected.count)
        for (item, want) in zip(items, expected) {
            var got = item.dictionaryValue ?? [:]
            #expect(got.removeValue(forKey: "id")?.stringValue.flatMap(UUID.init(uuidString:)) != nil)
            #expect(got == want, "\(want["title"]!)")
        }
    }

    @Test("Every kind, answered, migrates to exactly the expected format-2 content")
    func answered() throws {
        try check(
            "format1/answered.survey", title: "Visitor feedback (2019)", expected: Self.answeredExpected)
    }

    @Test("Every kind, unanswered, migrates to exactly the expected format-2 content")
    func unanswered() throws {
        try check("format1/unanswered.survey", title: "Blank form", expected: Self.unansweredExpected)
    }

    @Test(
        "Migration is deterministic: the same revision gives byte-identical content; ids derive from it and the position"
    )
    func deterministic() throws {
        let data = try Self.content("format1/answered.survey")
        let first = try FormatMigrator.survey(from: data, version: 1, seed: "3-abc").plistData()
        let second = try FormatMigrator.survey(from: data, version: 1, seed: "3-abc").plistData()
        #expect(first == second)
        let other = try FormatMigrator.survey(from: data, version: 1, seed: "3-abd")
        let ids = try FormatMigrator.survey(from: data, version: 1, seed: "3-abc").items.map(\.id)
        #expect(Set(ids).count == ids.count)
        #expect(other.items.map(\.id) != ids)
    }

    @Test(
        "Stored format-2 content whose items have no id reads the same every time: ids derive from the revision and position, as format 1's do; an id present is kept"
    )
    func storedWithoutIDs() throws {
        let kept = UUID(uuidString: "6F0D3C0E-8B0A-4D0E-9C51-2D43A3C47B11")!
        let data = try PropertyList.dictionary([
            "title": "No ids",
            "items": [
                ["kind": "textOnly", "title": "a"], ["kind": "textField", "title": "b", "answer": "x"],
                ["kind": "textOnly", "title": "c", "id": .string(kept.uuidString)],
            ],
        ]).xmlData()
        let first = try FormatMigrator.survey(from: data, version: 2, seed: "3-abc")
        let second = try FormatMigrator.survey(from: data, version: 2, seed: "3-abc")
        #expect(first == second)
        #expect(try first.plistData() == second.plistData())
        let ids = first.items.map(\.id)
        #expect(Set(ids).count == 3 && ids[2] == kept)
        let other = try FormatMigrator.survey(from: data, version: 2, seed: "3-abd").items.map(\.id)
        #expect(other[0] != ids[0] && other[1] != ids[1] && other[2] == kept)
        // The ids a format-1 revision's items get at the same positions.
        let formatOne = try FormatMigrator.survey(
            from: Self.content("format1/answered.survey"), version: 1, seed: "3-abc")
        #expect(Array(formatOne.items.prefix(2).map(\.id)) == Array(ids.prefix(2)))
    }

    @Test(
        "Broken format-1 content is refused naming the file, the item and the rule",
        arguments: [
            ("broken/slider-bounds-not-numbers.survey", SurveyError.Rule.sliderBounds),
            ("broken/multitf-wrong-length.survey", .answerLength),
            ("broken/unknown-type.survey", .unknownKind),
        ])
    func broken(package: String, rule: SurveyError.Rule) throws {
        let error = #expect(throws: SurveyError.self) {
            try FormatMigrator.survey(from: Self.content(package), version: 1, seed: "x")
        }
        #expect(error?.rule == rule)
        #expect(error?.position == 1)
        // A rule found while migrating names the file, as one of the current format does.
        let file = package + "/Survey.plist"
        let named = #expect(throws: SurveyError.self) {
            try FormatMigrator.survey(from: Self.content(package), version: 1, seed: "x", file: file)
        }
        #expect(named?.file == file)
        #expect(named?.description.hasPrefix(file + ": item 1 ") == true, "\(String(describing: named))")
    }

    /// Format-1 content of one Slider with these bounds and result.
    static func slider(_ minimum: String, _ maximum: String, result: String? = nil) throws -> Data {
        var item: [String: PropertyList] = [
            "title": "Rate us", "type": "Slider", "value1": .string(minimum), "value2": .string(maximum),
        ]
        if let result { item["result"] = ["text": .string(result)] }
        return try PropertyList.dictionary(["title": "S", "items": [.dictionary(item)]]).xmlData()
    }

    @Test(
        "Format-1 Slider bounds and results are decimal strings: hexadecimal, inf and nan are refused, spaces around a number are not",
        arguments: [
            ("0x10", "20", nil, SurveyError.Rule?.some(.sliderBounds)),
            ("0", "0x1p4", nil, .sliderBounds),
            ("0", "inf", nil, .sliderBounds),
            ("nan", "1", nil, .sliderBounds),
            ("0", "10", "0x5", .answerType),
            (" 1", "1e1 ", " 2.5", nil),
            ("-1.5", "+10", "3", nil),
        ])
    func sliderDecimals(minimum: String, maximum: String, result: String?, rule: SurveyError.Rule?) throws {
        let data = try Self.slider(minimum, maximum, result: result)
        if let rule {
            let error = #expect(throws: SurveyError.self) {
                try FormatMigrator.survey(from: data, version: 1, seed: "x")
            }
            #expect(error?.rule == rule)
        } else {
            let survey = try FormatMigrator.survey(from: data, version: 1, seed: "x")
            #expect(survey.items.count == 1)
        }
    }

    @Test("A newer format is refused with the design's message")
    func newer() {
        let error = #expect(throws: FormatError.self) {
            try FormatMigrator.survey(from: Data(), version: 3, seed: "x")
        }
        #expect(error?.description == "format 3 is newer than this build supports (2)")
    }
}
