import Diagnostics

/// A survey that breaks a rule of the model: which item (position and title), which rule,
/// and why. Answers are named only by their kind, never quoted, so that error messages
/// can be logged without leaking what a person answered.
public struct SurveyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The rules of the survey model.
    public struct Rule: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        /// Creates a rule with this name.
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// An item kind the model does not have.
        public static let unknownKind = Rule("unknownKind")
        /// A binary item without exactly two options.
        public static let binaryOptions = Rule("binaryOptions")
        /// A picker or multi-field item without options.
        public static let emptyOptions = Rule("emptyOptions")
        /// A slider whose minimum is not below its maximum, or whose bounds are not finite
        /// numbers, or a bound given as an integer that a double cannot hold exactly.
        public static let sliderBounds = Rule("sliderBounds")
        /// An answer on an item that takes none.
        public static let answerNotAllowed = Rule("answerNotAllowed")
        /// An answer of the wrong kind for its item.
        public static let answerType = Rule("answerType")
        /// A number outside the item's range, or a slider answer given as an integer that a
        /// double cannot hold exactly.
        public static let answerOutOfRange = Rule("answerOutOfRange")
        /// A fraction where the item takes whole numbers.
        public static let answerNotWhole = Rule("answerNotWhole")
        /// A choice that is not one of the item's options.
        public static let answerNotAnOption = Rule("answerNotAnOption")
        /// An answer with not one flag per option.
        public static let answerLength = Rule("answerLength")
        /// Two items with the same id.
        public static let duplicateID = Rule("duplicateID")
        /// A key the interchange form does not have.
        public static let unknownKey = Rule("unknownKey")
        /// A key the interchange form requires is missing.
        public static let missingKey = Rule("missingKey")
        /// A value of the wrong type in the interchange form.
        public static let wrongType = Rule("wrongType")
        /// An item id that is not a UUID.
        public static let invalidID = Rule("invalidID")
        /// An item id that names no item of the survey.
        public static let unknownItem = Rule("unknownItem")
        /// A date answer that is not a possible date, or not in the one date form
        /// (PropertyList's `ISO8601Date`).
        public static let invalidDate = Rule("invalidDate")
        /// Two options of one item with the same label (binary, picker, multiTF).
        public static let duplicateOptions = Rule("duplicateOptions")
        /// A survey title that is empty or only whitespace.
        public static let emptyTitle = Rule("emptyTitle")
        /// More items than ``Survey/maximumItemCount``.
        public static let tooManyItems = Rule("tooManyItems")
        /// A file saved to a document whose `id` names another document.
        public static let otherDocument = Rule("otherDocument")
        /// A text (the title, an item's title, text, hint, option or answer) holds a
        /// character that an XML property list cannot carry: a control character other
        /// than tab and line feed, a carriage return, U+FFFE or U+FFFF.
        public static let unwritableText = Rule("unwritableText")
    }

    /// The 1-based position of the item, or `nil` when the problem is the survey's own.
    public var position: Int?
    /// The item's title, when known.
    public var title: String?
    /// The rule that was broken.
    public var rule: Rule
    /// What is wrong, in words.
    public var message: String
    /// The file the survey was read from, when known: an input file, or a stored
    /// revision's content (`DOCUMENT/REVISION.survey/Survey.plist`), so that a message
    /// about one of two revisions (`diff`, `resolve --merge`) says which.
    public var file: String?
    /// The 1-based line in ``file`` of the problem, when known: a reader that stops
    /// where a rule is broken (the JSON reader at the first item too many) says where.
    public var line: Int?
    /// The 1-based column (in Unicode scalars) of the problem, when ``line`` is known.
    public var column: Int?

    /// Creates an error about the item at `position` (1-based), or the survey's own when `nil`.
    public init(position: Int?, title: String?, rule: Rule, message: String) {
        self.position = position
        self.title = title
        self.rule = rule
        self.message = message
    }

    /// `item 3 ("Rate us"): message [rule]`, or `survey: message [rule]`; after
    /// `FILE: ` when the file is known, `FILE:LINE:COLUMN: ` when the place in it is too.
    public var description: String {
        let subject: String
        if let position {
            subject = title.map { "item \(position) (\($0.debugDescription))" } ?? "item \(position)"
        } else {
            subject = "survey"
        }
        var place = file.map { ShownText.escaping($0) } ?? ""
        if let line { place = "\(file == nil ? "<input>" : place):\(line):\(column ?? 1)" }
        return "\(place.isEmpty ? "" : place + ": ")\(subject): \(message) [\(rule)]"
    }

    /// This error without its file (and the place in it), for a message that names the
    /// file (or the revision) already.
    public var leavingOutFile: SurveyError {
        var copy = self
        copy.file = nil
        copy.line = nil
        copy.column = nil
        return copy
    }

    /// This error, naming `file` as where the survey came from unless it names one already.
    public func read(from file: String?) -> SurveyError {
        var located = self
        if located.file == nil { located.file = file }
        return located
    }

    /// What `body` returns; a ``SurveyError`` it throws names `file` (see ``read(from:)``).
    static func reading<T>(from file: String?, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SurveyError {
            throw error.read(from: file)
        }
    }
}
