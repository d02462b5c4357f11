import Foundation
import PropertyList

/// A survey: a title and an ordered list of items.
///
/// A `Survey` built by ``init(title:items:)`` or read from a file is valid: every rule of
/// the model is checked (see ``SurveyError``). Stored content is read by
/// ``init(interchange:)`` without the rules added later (a non-empty title, distinct
/// option labels, texts XML can carry, date answers within ``answerDates``), so that a
/// document written before them still opens and can be fixed; ``validate()`` applies
/// every rule, and the store applies it before every write.
public struct Survey: Sendable, Equatable {
    /// The most items a survey may have (100,000): readers refuse a longer survey before
    /// building its items.
    public static let maximumItemCount = 100_000

    /// The date answers new content may hold: 0001-01-01T00:00:00Z to
    /// 9999-12-31T23:59:59Z, the years every property-list reader can read (Python's
    /// `plistlib` refuses year 0, years before it and years of five digits, which the
    /// format and this codec allow). Stored content outside them still reads.
    public static let answerDates: ClosedRange<Date> =
        Date(timeIntervalSince1970: -62_135_596_800)...Date(timeIntervalSince1970: 253_402_300_799.999)

    /// The survey's title, never empty or only whitespace.
    public var title: String
    /// The items, in display order. Item ids are unique.
    public private(set) var items: [Item]

    /// Creates a survey after checking every item.
    ///
    /// - Parameters:
    ///   - title: The title.
    ///   - items: The items, in order.
    /// - Throws: ``SurveyError`` naming the first item that breaks a rule, and the rule.
    public init(title: String, items: [Item]) throws {
        try self.init(title: title, items: items, strict: true)
    }

    /// Creates a survey after checking every item; `strict: false` leaves out the rules
    /// added after content was first stored (a non-empty title, distinct option labels,
    /// texts XML can carry, date answers within ``answerDates``).
    init(title: String, items: [Item], strict: Bool) throws {
        self.title = title
        self.items = items
        try validate(strict: strict)
    }

    /// Creates a survey from items already known to be valid, with unique ids (the
    /// merge's items), without checking them again.
    init(checkedTitle title: String, items: [Item]) {
        self.title = title
        self.items = items
    }

    /// Replaces the answer of the item with `id`, checking it against the item's kind.
    ///
    /// - Parameters:
    ///   - answer: The new answer, or `nil` to clear it.
    ///   - id: The item's id.
    /// - Throws: ``SurveyError`` when there is no such item or the answer breaks a rule.
    public mutating func setAnswer(_ answer: Answer?, forItem id: UUID) throws {
        guard let index = items.firstIndex(where: { $0.id == id }) else {
            throw SurveyError(
                position: nil, title: nil, rule: .unknownItem,
                message: "there is no item with id \(id.uuidString)")
        }
        var item = items[index]
        item.answer = answer
        try item.validate(position: index + 1, strict: false)
        items[index] = item
    }

    /// Checks every rule of the model.
    ///
    /// - Throws: ``SurveyError`` for the first item that breaks a rule.
    public func validate() throws {
        try validate(strict: true)
    }

    /// Every rule of the model that the survey breaks, in the order ``validate()`` checks
    /// them, which throws the first: the survey's own (its title), then item by item each
    /// text an XML property list cannot carry, the first other rule the item breaks, and
    /// an id used before. Empty when the survey is valid.
    ///
    /// Content read in the stored form (``init(interchange:)``) keeps the rules for
    /// stored content, so for it these are the rules for new content it breaks: what to
    /// fix before a file of it is taken as new content.
    public func problems() -> [SurveyError] {
        var found: [SurveyError] = []
        check(strict: true) { found.append($0) }
        return found
    }

    func validate(strict: Bool) throws {
        try check(strict: strict) { problem throws(SurveyError) in throw problem }
    }

    /// Checks the rules (without those for new content unless `strict`), handing each
    /// problem to `report`, which throws to stop at the first.
    private func check<Failure: Error>(
        strict: Bool, _ report: (SurveyError) throws(Failure) -> Void
    ) throws(Failure) {
        if strict, title.allSatisfy(\.isWhitespace) {
            try report(
                SurveyError(
                    position: nil, title: nil, rule: .emptyTitle,
                    message: title.isEmpty
                        ? "the title is empty; a survey has a title"
                        : "the title is only white space; a survey has a title"))
        }
        do { try Self.checkItemCount(items.count) } catch { try report(error) }
        if strict, let reason = XMLPlistWriter.unwritableReason(title) {
            try report(
                SurveyError(
                    position: nil, title: nil, rule: .unwritableText,
                    message: "the title cannot be saved: \(reason)"))
        }
        var seen = [UUID: Int](minimumCapacity: items.count)
        for (offset, item) in items.enumerated() {
            let position = offset + 1
            if strict {
                for problem in item.textProblems(position: position) { try report(problem) }
            }
            do { try item.validate(position: position, strict: strict) } catch { try report(error) }
            if let first = seen[item.id] {
                try report(
                    SurveyError(
                        position: position, title: item.title, rule: .duplicateID,
                        message: "its id \(item.id.uuidString) is already used by item \(first)"))
            } else {
                seen[item.id] = position
            }
        }
    }
}

/// One question or text block of a survey.
public struct Item: Sendable, Equatable, Identifiable {
    /// The stable identity of the item, kept across edits and revisions.
    public var id: UUID
    /// The title shown for the item.
    public var title: String
    /// What kind of item it is, with the settings of that kind.
    public var kind: Kind
    /// The answer given, if any.
    public var answer: Answer?

    /// Creates an item. Its rules are checked when it becomes part of a ``Survey``.
    public init(id: UUID = UUID(), title: String, kind: Kind, answer: Answer? = nil) {
        self.id = id
        self.title = title
        self.kind = kind
        self.answer = answer
    }

    /// The seven kinds of item and their settings.
    public enum Kind: Sendable, Equatable {
        /// A choice between exactly two labels (a segmented control); answered by index.
        case binary(options: [String])
        /// Text shown under the title; never answered.
        case textOnly(text: String?)
        /// A text field with an optional hint; answered by a string.
        case textField(subtitle: String?)
        /// A date picker; answered by a date.
        case datePicker
        /// A slider from `minimum` to `maximum`; answered by a number in that range,
        /// a whole one when `roundToInteger` is set.
        case slider(minimum: Double, maximum: Double, roundToInteger: Bool)
        /// A choice of one of one or more options; answered by the option's label.
        case picker(options: [String])
        /// Check boxes, one per option; answered by one boolean per option.
        case multiTF(options: [String])

        /// The kind's name in the interchange form (`binary`, `textOnly`, …).
        public var name: String {
            switch self {
            case .binary: "binary"
            case .textOnly: "textOnly"
            case .textField: "textField"
            case .datePicker: "datePicker"
            case .slider: "slider"
            case .picker: "picker"
            case .multiTF: "multiTF"
            }
        }
    }
}

/// An answer to an item; which case fits depends on the item's kind.
public enum Answer: Sendable, Equatable {
    /// `binary`: the index of the chosen label, 0 or 1.
    case choice(Int)
    /// `textField`: the text entered. `picker`: the chosen option.
    case text(String)
    /// `datePicker`: the date chosen (UTC).
    case date(Date)
    /// `slider`: the value chosen.
    case number(Double)
    /// `multiTF`: one flag per option.
    case flags([Bool])
}
