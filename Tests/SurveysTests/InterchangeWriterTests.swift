import Foundation
import PropertyList
import Surveys
import TestSupport
import Testing

/// `Survey.plistData()` writes the interchange form straight to XML; these tests hold it
/// to the bytes (and the errors) of the tree it stands for, `interchange.xmlData()`. The
/// seed comes from `SURVEYSTORE_SEED` (default 29), and every failure message names it.
@Suite("The survey's XML writer against its interchange tree")
struct InterchangeWriterTests {
    static var seed: UInt64 { SeededRandom.seed(fallback: 29) }

    /// Texts that exercise escaping and every width of UTF-8.
    static let texts = [
        "Tea", "Tea & cake", "<b>bold</b>", "a > b", "quote \" and '", "café", "日本語のテキスト",
        "😀 and 👩‍👩‍👧", "e\u{301}", "tab\there", "line\nbreak", "   spaced   ", "]]>", "&amp;",
        String(repeating: "long text ", count: 40),
    ]
    /// Reals the writer's short path takes and those it leaves to `%.17g`.
    static let reals: [Double] = [
        0, 1, -1, 0.5, 0.1, 1.0 / 3, 2.0 / 3, 100, 1e15, 1e16, 1e17, 123_456.789, -0.000_125, 1e-7,
        .leastNonzeroMagnitude, .greatestFiniteMagnitude, -1e300, 0.3, 4.35, 1e21, 1e22,
    ]

    struct Generator {
        var random: SeededRandom

        mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }
        mutating func bool() -> Bool { Bool.random(using: &random) }
        mutating func text() -> String {
            InterchangeWriterTests.texts[int(0...InterchangeWriterTests.texts.count - 1)]
        }
        mutating func real() -> Double {
            InterchangeWriterTests.reals[int(0...InterchangeWriterTests.reals.count - 1)]
        }

        mutating func labels(_ count: ClosedRange<Int>) -> [String] {
            (0..<int(count)).map { text() + " \($0)" }
        }

        mutating func item() -> Item {
            let answered = bool()
            let kind: Item.Kind
            var answer: Answer?
            switch int(0...6) {
            case 0:
                kind = .binary(options: labels(2...2))
                if answered { answer = .choice(int(0...1)) }
            case 1: kind = .textOnly(text: bool() ? text() : nil)
            case 2:
                kind = .textField(subtitle: bool() ? text() : nil)
                if answered { answer = .text(text()) }
            case 3:
                kind = .datePicker
                if answered {
                    // The far past and future, in whole seconds: XML dates keep no fraction.
                    let seconds: Double = [0, 1_700_000_000, -2_000_000_000, 4_000_000_000, 978_307_200][
                        int(0...4)]
                    answer = .date(Date(timeIntervalSince1970: seconds + Double(int(0...86_400))))
                }
            case 4:
                // Finite bounds with the minimum below the maximum, however large.
                var minimum = real()
                if minimum == .greatestFiniteMagnitude { minimum = -1e308 }
                let maximum = Swift.max(minimum.nextUp, minimum + abs(real()).squareRoot() + 1)
                let round = bool()
                kind = .slider(minimum: minimum, maximum: maximum, roundToInteger: round)
                if answered { answer = .number(round ? minimum.rounded(.up) : minimum) }
            case 5:
                let options = labels(1...5)
                kind = .picker(options: options)
                if answered { answer = .text(options[int(0...options.count - 1)]) }
            default:
                let options = labels(1...5)
                kind = .multiTF(options: options)
                if answered { answer = .flags(options.map { _ in bool() }) }
            }
            return Item(title: text(), kind: kind, answer: answer)
        }
    }

    @Test("Random surveys of every kind: plistData() writes exactly the bytes of interchange.xmlData()")
    func sameBytesAsTheTree() throws {
        let seed = Self.seed
        var generator = Generator(random: SeededRandom(seed: seed))
        var compared = 0
        for index in 0..<300 {
            let items = (0..<generator.int(0...12)).map { _ in generator.item() }
            // A case the model refuses (a rule of a kind the generator does not keep) is
            // left out; nearly all are valid.
            guard let survey = try? Survey(title: generator.text(), items: items) else { continue }
            let context = "seed \(seed), case \(index); replay with SURVEYSTORE_SEED=\(seed)"
            let direct = try survey.plistData()
            let tree = try survey.interchange.xmlData()
            #expect(direct == tree, "\(context)")
            #expect(try Survey(interchange: PropertyList(xml: direct)) == survey, "\(context)")
            compared += 1
        }
        #expect(compared >= 250, "seed \(seed): only \(compared) of 300 surveys were valid")
    }

    @Test("A text XML cannot carry fails with the same error, naming the same path, as the tree")
    func sameErrorsAsTheTree() throws {
        let bad = "bell \u{7} here"
        let options = ["Yes", "No"]
        var cases: [(String, Survey)] = []
        var survey = try Survey(
            title: "Survey", items: [Item(title: "Question", kind: .binary(options: options))])
        survey.title = bad
        cases.append(("the survey's title", survey))
        // New content with such a text is refused (`unwritableText`); the stored form is
        // read without that rule, so a survey read from it can still hold one.
        let placeholder = "PLACEHOLDER"
        func replacing(_ value: PropertyList) -> PropertyList {
            switch value {
            case .string(placeholder): .string(bad)
            case .array(let elements): .array(elements.map(replacing))
            case .dictionary(let entries): .dictionary(entries.mapValues(replacing))
            default: value
            }
        }
        let items: [(String, Item)] = [
            ("an item's title", Item(title: placeholder, kind: .datePicker)),
            ("an option", Item(title: "Q", kind: .picker(options: ["fine", placeholder]))),
            ("a subtitle", Item(title: "Q", kind: .textField(subtitle: placeholder))),
            ("a text", Item(title: "Q", kind: .textOnly(text: placeholder))),
            ("an answer", Item(title: "Q", kind: .textField(subtitle: nil), answer: .text(placeholder))),
        ]
        for (what, item) in items {
            let valid = try Survey(title: "Survey", items: [Item(title: "First", kind: .datePicker), item])
            #expect(throws: SurveyError.self, "\(what)") {
                try Survey(
                    json: Data(try valid.jsonData()).replacing(
                        Data(placeholder.utf8), with: Data("bell \\u0007 here".utf8)))
            }
            guard let survey = try? Survey(interchange: replacing(valid.interchange)) else { continue }
            cases.append((what, survey))
        }
        #expect(cases.count == 6, "every bad text reaches the writer through the stored form")
        for (what, survey) in cases {
            var direct: PropertyListError?
            var tree: PropertyListError?
            do { _ = try survey.plistData() } catch let error as PropertyListError { direct = error }
            do { _ = try survey.interchange.xmlData() } catch let error as PropertyListError { tree = error }
            #expect(direct != nil, "\(what): refused")
            #expect(direct.map { "\($0)" } == tree.map { "\($0)" }, "\(what)")
        }
    }
}
