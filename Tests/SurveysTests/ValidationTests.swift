import Foundation
import PropertyList
import Surveys
import Testing

@Suite("Survey model rules, table-driven")
struct ValidationTests {
    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var json: String
        var position: Int?
        var rule: SurveyError.Rule
        var message: String
        var description: String { name }
    }

    /// Wraps one item after a valid first item, so the bad one is item 2.
    static func survey(_ item: String) -> String {
        #"{"title": "T", "items": [{"title": "Fine", "kind": "textOnly"}, "# + item + "]}"
    }

    static let cases: [Case] = [
        Case(
            name: "unknown kind", json: survey(#"{"title": "Q", "kind": "rating"}"#), position: 2,
            rule: .unknownKind,
            message: "unknown kind 'rating'"),
        Case(
            name: "binary with 3 options",
            json: survey(#"{"title": "Q", "kind": "binary", "options": ["a", "b", "c"]}"#),
            position: 2, rule: .binaryOptions, message: "exactly 2 options, not 3"),
        Case(
            name: "binary with 1 option",
            json: survey(#"{"title": "Q", "kind": "binary", "options": ["a"]}"#),
            position: 2, rule: .binaryOptions, message: "exactly 2 options, not 1"),
        Case(
            name: "binary answer 2",
            json: survey(#"{"title": "Q", "kind": "binary", "options": ["a", "b"], "answer": 2}"#),
            position: 2, rule: .answerOutOfRange, message: "0 or 1, not 2"),
        // Too large for an Int: the number written (it said "not 9223372036854775807").
        Case(
            name: "binary answer 2^64 - 1",
            json: survey(
                #"{"title": "Q", "kind": "binary", "options": ["a", "b"], "answer": 18446744073709551615}"#),
            position: 2, rule: .answerOutOfRange, message: "0 or 1, not 18446744073709551615"),
        Case(
            name: "binary answer 2^63",
            json: survey(
                #"{"title": "Q", "kind": "binary", "options": ["a", "b"], "answer": 9223372036854775808}"#),
            position: 2, rule: .answerOutOfRange, message: "0 or 1, not 9223372036854775808"),
        Case(
            name: "binary answer as text",
            json: survey(#"{"title": "Q", "kind": "binary", "options": ["a", "b"], "answer": "b"}"#),
            position: 2, rule: .answerType, message: "not answered by a string"),
        Case(
            name: "answer on textOnly", json: survey(#"{"title": "Q", "kind": "textOnly", "answer": "x"}"#),
            position: 2, rule: .answerNotAllowed, message: "takes no answer"),
        Case(
            name: "textField answered by a number",
            json: survey(#"{"title": "Q", "kind": "textField", "answer": 3}"#),
            position: 2, rule: .answerType, message: "not answered by an integer"),
        Case(
            name: "datePicker with a bad date",
            json: survey(#"{"title": "Q", "kind": "datePicker", "answer": "next Tuesday"}"#),
            position: 2, rule: .invalidDate, message: "is not a possible date: it is malformed"),
        Case(
            name: "datePicker with 30 February",
            json: survey(#"{"title": "Q", "kind": "datePicker", "answer": "2026-02-30T00:00:00Z"}"#),
            position: 2, rule: .invalidDate, message: "has day 30, which month 2 of 2026 does not have"),
        Case(
            name: "datePicker with hour 24",
            json: survey(#"{"title": "Q", "kind": "datePicker", "answer": "2026-01-01T24:00:00Z"}"#),
            position: 2, rule: .invalidDate, message: "has a time of day out of range"),
        Case(
            name: "datePicker answered in year 0",
            json: survey(#"{"title": "Q", "kind": "datePicker", "answer": "0000-12-31T23:59:59Z"}"#),
            position: 2, rule: .invalidDate,
            message: "the answer 0000-12-31T23:59:59Z lies outside the years 1 to 9999"),
        Case(
            name: "datePicker answered in year 10000",
            json: survey(#"{"title": "Q", "kind": "datePicker", "answer": "10000-01-01T00:00:00Z"}"#),
            position: 2, rule: .invalidDate,
            message: "the answer 10000-01-01T00:00:00Z lies outside the years 1 to 9999"),
        Case(
            name: "datePicker answered before year 0",
            json: survey(#"{"title": "Q", "kind": "datePicker", "answer": "-044-03-15T12:00:00Z"}"#),
            position: 2, rule: .invalidDate, message: "the answer -044-03-15T12:00:00Z lies outside"),
        Case(
            name: "binary with two equal options",
            json: survey(#"{"title": "Q", "kind": "binary", "options": ["Yes", "Yes"]}"#),
            position: 2, rule: .duplicateOptions, message: "two options are different labels"),
        Case(
            name: "picker with a repeated option",
            json: survey(#"{"title": "Q", "kind": "picker", "options": ["Soup", "Fish", "Soup"]}"#),
            position: 2, rule: .duplicateOptions, message: "option 3 has the same label as option 1"),
        Case(
            name: "multiTF with a repeated option",
            json: survey(#"{"title": "Q", "kind": "multiTF", "options": ["a", "a"]}"#),
            position: 2, rule: .duplicateOptions, message: "option 2 has the same label as option 1"),
        Case(
            name: "empty survey title", json: #"{"title": "", "items": []}"#, position: nil,
            rule: .emptyTitle,
            message: "the title is empty"),
        Case(
            name: "survey title of spaces only", json: #"{"title": " \t ", "items": []}"#, position: nil,
            rule: .emptyTitle,
            message: "the title is only white space"),
        Case(
            name: "slider minimum not below maximum",
            json: survey(#"{"title": "Q", "kind": "slider", "minimum": 5, "maximum": 5}"#),
            position: 2, rule: .sliderBounds, message: "must be below its maximum"),
        Case(
            name: "slider answer above maximum",
            json: survey(#"{"title": "Q", "kind": "slider", "minimum": 0, "maximum": 10, "answer": 11}"#),
            position: 2, rule: .answerOutOfRange, message: "between 0.0 and 10.0"),
        Case(
            name: "slider answer below minimum",
            json: survey(#"{"title": "Q", "kind": "slider", "minimum": 0, "maximum": 10, "answer": -0.5}"#),
            position: 2, rule: .answerOutOfRange, message: "between 0.0 and 10.0"),
        Case(
            name: "slider fraction when rounding",
            json: survey(
                #"{"title": "Q", "kind": "slider", "minimum": 0, "maximum": 10, "roundToInteger": true, "answer": 2.5}"#
            ),
            position: 2, rule: .answerNotWhole, message: "must be whole"),
        Case(
            name: "slider without maximum", json: survey(#"{"title": "Q", "kind": "slider", "minimum": 0}"#),
            position: 2, rule: .missingKey, message: "'maximum' is missing"),
        Case(
            name: "picker without options", json: survey(#"{"title": "Q", "kind": "picker", "options": []}"#),
            position: 2, rule: .emptyOptions, message: "at least one option"),
        Case(
            name: "picker answer not an option",
            json: survey(#"{"title": "Q", "kind": "picker", "options": ["Soup", "Fish"], "answer": "Cake"}"#),
            position: 2, rule: .answerNotAnOption, message: "one of the 2 options"),
        Case(
            name: "multiTF answer of the wrong length",
            json: survey(
                #"{"title": "Q", "kind": "multiTF", "options": ["a", "b", "c"], "answer": [true, false]}"#),
            position: 2, rule: .answerLength, message: "2 flags for 3 options"),
        Case(
            name: "multiTF answer with a non-boolean",
            json: survey(#"{"title": "Q", "kind": "multiTF", "options": ["a"], "answer": ["yes"]}"#),
            position: 2, rule: .answerType, message: "flag 1 of the answer must be a boolean, not a string"),
        Case(
            name: "multiTF answer of the wrong type",
            json: survey(#"{"title": "Q", "kind": "multiTF", "options": ["a"], "answer": "T"}"#),
            position: 2, rule: .answerType, message: "a multiTF item is not answered by a string"),
        Case(
            name: "multiTF without options",
            json: survey(#"{"title": "Q", "kind": "multiTF", "options": []}"#),
            position: 2, rule: .emptyOptions, message: "at least one option"),
        Case(
            name: "duplicate id",
            json:
                #"{"title": "T", "items": [{"id": "6F1C2B8E-3D4A-4C1B-9E2F-1A2B3C4D5E01", "title": "A", "kind": "datePicker"}, {"id": "6F1C2B8E-3D4A-4C1B-9E2F-1A2B3C4D5E01", "title": "B", "kind": "datePicker"}]}"#,
            position: 2, rule: .duplicateID, message: "already used by item 1"),
        Case(
            name: "invalid id", json: survey(#"{"id": "not-a-uuid", "title": "Q", "kind": "datePicker"}"#),
            position: 2, rule: .invalidID, message: "is not a UUID"),
        Case(
            name: "unknown item key", json: survey(#"{"title": "Q", "kind": "textField", "colour": "red"}"#),
            position: 2, rule: .unknownKey, message: "'colour' is not part of a textField item"),
        Case(
            name: "a setting of another kind",
            json: survey(#"{"title": "Q", "kind": "textField", "options": ["a"]}"#),
            position: 2, rule: .unknownKey, message: "'options' is not part of a textField item"),
        Case(
            name: "item without a title", json: survey(#"{"kind": "datePicker"}"#),
            position: 2, rule: .missingKey, message: "'title' is missing"),
        Case(
            name: "item without a kind", json: survey(#"{"title": "Q"}"#),
            position: 2, rule: .missingKey, message: "'kind' is missing"),
        Case(
            name: "item that is not a dictionary", json: survey(#""just text""#),
            position: 2, rule: .wrongType, message: "not a string"),
        Case(
            name: "unknown survey key", json: #"{"title": "T", "items": [], "author": "me"}"#,
            position: nil, rule: .unknownKey, message: "unknown key 'author'"),
        Case(
            name: "survey without items", json: #"{"title": "T"}"#, position: nil, rule: .missingKey,
            message: "'items' is missing"),
        Case(
            name: "title of the wrong type", json: #"{"title": 5, "items": []}"#, position: nil,
            rule: .wrongType,
            message: "'title' must be a string, not an integer"),
        Case(
            name: "a control character in the title", json: #"{"title": "a\u0001b", "items": []}"#,
            position: nil, rule: .unwritableText,
            message: "the title cannot be saved: the string contains the control character U+0001"),
        Case(
            name: "a carriage return in a text answer",
            json: survey(#"{"title": "Q", "kind": "textField", "answer": "x\ry"}"#), position: 2,
            rule: .unwritableText,
            message: "its answer cannot be saved: the string contains a carriage return"),
        Case(
            name: "U+FFFF in a picker option",
            json: survey(#"{"title": "Q", "kind": "picker", "options": ["a", "b\uffff"]}"#), position: 2,
            rule: .unwritableText, message: "its option 2 cannot be saved: the string contains U+FFFF"),
        Case(
            name: "a NUL in an item's title", json: survey(#"{"title": "Q\u0000", "kind": "textOnly"}"#),
            position: 2, rule: .unwritableText, message: "its title cannot be saved"),
    ]

    @Test("Each broken rule is refused, naming the item (position and title) and the rule", arguments: cases)
    func refused(_ testCase: Case) throws {
        let error = #expect(throws: SurveyError.self) { try Survey(json: Data(testCase.json.utf8)) }
        #expect(error?.rule == testCase.rule, "\(error?.description ?? "no error")")
        #expect(error?.position == testCase.position)
        #expect(error?.message.contains(testCase.message) == true, "\(error?.message ?? "")")
        if testCase.position == 2, testCase.rule != .missingKey || !testCase.message.contains("title"),
            testCase.rule != .wrongType
        {
            // (A text XML cannot carry is located in the JSON too: `<input>:LINE:COLUMN: ` first.)
            #expect(
                error?.leavingOutFile.description.hasPrefix("item 2 (") == true, "\(error?.description ?? "")"
            )
        }
    }

    @Test(
        "A multiTF answer holding a flag that is no boolean names that flag and its type (it said the answer was not an array)"
    )
    func multiTFFlagOfTheWrongType() {
        let json =
            #"{"title":"t","items":[{"kind":"multiTF","title":"m","options":["a","b"],"answer":[true,1]}]}"#
        let error = #expect(throws: SurveyError.self) { try Survey(data: Data(json.utf8), file: "m.json") }
        #expect(
            error?.description
                == "m.json: item 1 (\"m\"): flag 2 of the answer must be a boolean, not an integer (a multiTF item is answered by one boolean per option) [answerType]",
            "\(error?.description ?? "no error")")
        // Stored content is read by the same rule.
        let stored = PropertyList.dictionary([
            "title": "t",
            "items": [
                ["kind": "multiTF", "title": "m", "options": ["a", "b"], "answer": [false, .date(Date())]]
            ],
        ])
        let storedError = #expect(throws: SurveyError.self) { try Survey(interchange: stored) }
        #expect(storedError?.rule == .answerType)
        #expect(storedError?.message.hasPrefix("flag 2 of the answer must be a boolean, not a date") == true)
    }

    @Test("Messages never quote the answer")
    func answersStayPrivate() {
        let json = Self.survey(
            #"{"title": "Q", "kind": "picker", "options": ["Soup"], "answer": "my secret"}"#)
        let error = #expect(throws: SurveyError.self) { try Survey(json: Data(json.utf8)) }
        #expect(error?.description.contains("my secret") == false)
    }

    @Test(
        "A slider bound that is infinite or NaN is called not finite, naming the bound (it said the minimum must be below the maximum)",
        arguments: [
            (0, Double.infinity, "maximum (inf)"), (-Double.infinity, 10, "minimum (-inf)"),
            (Double.nan, 10, "minimum (nan)"), (0, Double.nan, "maximum (nan)"),
            (Double.infinity, Double.infinity, "minimum (inf)"),
        ])
    func nonFiniteSliderBounds(minimum: Double, maximum: Double, named: String) {
        let item = Item(
            title: "Rate us", kind: .slider(minimum: minimum, maximum: maximum, roundToInteger: false))
        let error = #expect(throws: SurveyError.self) { try Survey(title: "T", items: [item]) }
        #expect(error?.rule == .sliderBounds)
        #expect(
            error?.description
                == "item 1 (\"Rate us\"): a slider's \(named) must be a finite number [sliderBounds]",
            "\(error?.description ?? "no error")")
    }

    @Test(
        "A slider integer a double cannot hold exactly is refused, in JSON and XML alike, naming the item and the rule; stored content is read rounded as before",
        arguments: [
            ("minimum", "-9223372036854775807", "0", nil),
            ("maximum", "0", "18446744073709551615", nil),
            ("maximum", "0", "9007199254740993", nil),
            ("answer", "0", "18446744073709549568", "18446744073709549569"),
            ("answer", "-9007199254740994", "0", "-9007199254740993"),
        ] as [(String, String, String, String?)])
    func inexactSliderIntegers(named: String, minimum: String, maximum: String, answer: String?) throws {
        let answerJSON = answer.map { #", "answer": \#($0)"# } ?? ""
        let json =
            #"{"title": "T", "items": [{"title": "Rate us", "kind": "slider", "minimum": \#(minimum), "maximum": \#(maximum)\#(answerJSON)}]}"#
        let answerXML = answer.map { "<key>answer</key><integer>\($0)</integer>" } ?? ""
        let xml = """
            <plist version="1.0"><dict><key>title</key><string>T</string><key>items</key><array><dict>\
            <key>title</key><string>Rate us</string><key>kind</key><string>slider</string>\
            <key>minimum</key><integer>\(minimum)</integer><key>maximum</key><integer>\(maximum)</integer>\
            \(answerXML)</dict></array></dict></plist>
            """
        let rule =
            "a slider's minimum, maximum and answer are doubles, exact for every integer up to 2^53 (9007199254740992) in magnitude but only for some beyond"
        let expected =
            named == "answer"
            ? "item 1 (\"Rate us\"): the answer is an integer a double cannot hold exactly; \(rule) [answerOutOfRange]"
            : "item 1 (\"Rate us\"): a slider's \(named) (\(named == "minimum" ? minimum : maximum)) is an integer a double cannot hold exactly; \(rule) [sliderBounds]"
        for data in [Data(json.utf8), Data(xml.utf8)] {
            let error = #expect(throws: SurveyError.self) { try Survey(data: data) }
            #expect(error?.description == expected, "\(error?.description ?? "no error")")
            // The answer itself is never quoted.
            if let answer { #expect(error?.description.contains(answer) == false) }
        }
        // Stored content (written by another tool) still opens, its number rounded.
        let stored = try PropertyList(xml: Data(xml.utf8))
        #expect(try Survey(interchange: stored).items.count == 1)
    }

    @Test("A slider integer a double holds exactly is taken, however large")
    func exactLargeSliderIntegers() throws {
        let json =
            #"{"title": "T", "items": [{"title": "R", "kind": "slider", "minimum": -9223372036854775808, "maximum": 18446744073709549568, "answer": 9007199254740992}]}"#
        let survey = try Survey(data: Data(json.utf8))
        #expect(
            survey.items[0].kind
                == .slider(minimum: -0x1p63, maximum: 18446744073709549568, roundToInteger: false))
        #expect(survey.items[0].answer == .number(9007199254740992))
    }

    @Test(
        "A slider answer that is infinite or NaN is called not finite (it said the answer must lie between the bounds)",
        arguments: [Double.nan, Double.infinity, -Double.infinity])
    func nonFiniteSliderAnswer(answer: Double) {
        let item = Item(
            title: "Rate us", kind: .slider(minimum: 0, maximum: 10, roundToInteger: false),
            answer: .number(answer))
        let error = #expect(throws: SurveyError.self) { try Survey(title: "T", items: [item]) }
        #expect(error?.rule == .answerOutOfRange)
        #expect(
            error?.description
                == "item 1 (\"Rate us\"): the answer must be a finite number [answerOutOfRange]",
            "\(error?.description ?? "no error")")
    }

    @Test("A format-1 Slider bound of inf is called not finite; one of text, not a number")
    func nonFiniteFormatOneBounds() throws {
        func migrating(_ minimum: String) throws -> SurveyError? {
            let content = PropertyList.dictionary([
                "title": "Old",
                "items": [
                    [
                        "title": "Rate us", "type": "Slider", "value1": .string(minimum), "value2": "10",
                    ]
                ],
            ])
            return #expect(throws: SurveyError.self) {
                try FormatMigrator.survey(from: content.xmlData(), version: 1, seed: "x")
            }
        }
        let infinite = try migrating("inf")
        #expect(infinite?.rule == .sliderBounds)
        #expect(
            infinite?.message == "the Slider's minimum (value1) 'inf' is not a finite number",
            "\(infinite?.message ?? "")")
        #expect(try migrating("low")?.message == "the Slider's minimum (value1) 'low' is not a number")
    }

    @Test(
        "problems() lists every rule for new content that stored content breaks, in order; validate() throws the first"
    )
    func everyProblem() throws {
        func item(_ title: String, _ kind: String, _ options: [PropertyList]) -> PropertyList {
            [
                "id": .string(UUID().uuidString), "title": .string(title), "kind": .string(kind),
                "options": .array(options),
            ]
        }
        let stored = try Survey(
            interchange: [
                "title": " ",
                "items": [
                    item("Fine", "picker", ["A", "B"]), item("Come again?", "binary", ["Yes", "Yes"]),
                    item("Dish\u{1}", "picker", ["Soup", "Fish", "Soup"]),
                ],
            ])
        let problems = stored.problems()
        #expect(
            problems.map(\.rule) == [.emptyTitle, .duplicateOptions, .unwritableText, .duplicateOptions],
            "\(problems)")
        #expect(problems.map(\.position) == [nil, 2, 3, 3])
        let first = #expect(throws: SurveyError.self) { try stored.validate() }
        #expect(first == problems.first)
        #expect(try Survey(json: Data(Self.designExample.utf8)).problems().isEmpty)
    }

    @Test(
        "A date answer is new content's only within the years 1 to 9999 (Python's plistlib reads no others); stored content beyond them still reads, and problems() names it"
    )
    func answerDateRange() throws {
        func survey(_ answer: String) -> Data {
            Data(Self.survey(#"{"title": "Q", "kind": "datePicker", "answer": ""# + answer + #""}"#).utf8)
        }
        for edge in ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "9999-12-31T23:59:59.999Z"] {
            let read = try Survey(json: survey(edge))
            #expect(read.items[1].answer?.text == edge.replacingOccurrences(of: ".999", with: ""))
        }
        let stored = try Survey(
            interchange: [
                "title": "T",
                "items": [
                    [
                        "id": .string(UUID().uuidString), "title": "When", "kind": "datePicker",
                        "answer": .date(try ISO8601Date.date(from: "0000-06-01T00:00:00Z")),
                    ]
                ],
            ])
        #expect(stored.problems().map(\.rule) == [.invalidDate])
        #expect(stored.problems().first?.position == 1)
        #expect(throws: SurveyError.self) { try stored.validate() }
        #expect(Survey.answerDates.lowerBound == (try ISO8601Date.date(from: "0001-01-01T00:00:00Z")))
        #expect(Survey.answerDates.contains(try ISO8601Date.date(from: "9999-12-31T23:59:59Z")))
        #expect(!Survey.answerDates.contains(try ISO8601Date.date(from: "10000-01-01T00:00:00Z")))
    }

    static let designExample = Survey.exampleJSON

    @Test("The design's example reads, gets ids, and survives JSON and plist round trips")
    func designExampleRoundTrips() throws {
        let survey = try Survey(json: Data(Self.designExample.utf8))
        #expect(survey.items.count == 7)
        #expect(Set(survey.items.map(\.id)).count == 7)
        #expect(survey.items[3].answer == .date(Date(timeIntervalSince1970: 1_795_168_800)))
        #expect(survey.items[4].answer == .number(8))
        #expect(try Survey(json: survey.jsonData()) == survey)
        #expect(try Survey(plist: survey.plistData()) == survey)
        let xml = String(decoding: try survey.plistData(), as: UTF8.self)
        #expect(xml.contains("<date>2026-11-20T10:00:00Z</date>"))
    }

    @Test("The example fixture is a valid survey")
    func exampleFixture() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures/examples/visitor-feedback.plist")
        let survey = try Survey(plist: try Data(contentsOf: url))
        #expect(
            survey.items.map(\.kind.name) == [
                "binary", "textOnly", "textField", "datePicker", "slider", "picker", "multiTF",
            ])
    }

    @Test("Setting an answer checks it against the item")
    func setAnswer() throws {
        var survey = try Survey(json: Data(Self.designExample.utf8))
        let slider = survey.items[4].id
        try survey.setAnswer(.number(3), forItem: slider)
        #expect(survey.items[4].answer == .number(3))
        #expect(throws: SurveyError.self) { try survey.setAnswer(.number(3.5), forItem: slider) }
        #expect(survey.items[4].answer == .number(3), "a refused answer leaves the survey as it was")
        #expect(throws: SurveyError.self) { try survey.setAnswer(.text("x"), forItem: UUID()) }
    }

    @Test(
        "Malformed JSON and null are refused with a message, as the property-list reader refuses them (they were a SurveyFileError)"
    )
    func malformedJSON() {
        let malformed = #expect(throws: PropertyListError.self) {
            try Survey(json: Data("{\"title\": ".utf8))
        }
        #expect(malformed?.code == .malformedJSON)
        let error = #expect(throws: PropertyListError.self) {
            try Survey(json: Data(#"{"title": "T", "items": [{"title": null, "kind": "datePicker"}]}"#.utf8))
        }
        #expect(error?.code == .malformedJSON)
        #expect(error?.message.contains("null is not allowed") == true)
        #expect(error?.line == 1)
        #expect(error?.column == 36)
    }
}
