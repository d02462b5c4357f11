/// A survey that breaks a rule of the model: which item (position and title), which rule,
/// and why. Answers are named only by their kind, never quoted, so that error messages
/// can be logged without leaking what a person answered.
public struct SurveyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The rules of the survey model.
    public struct Rule: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let unknownKind = Rule("unknownKind")
        public static let binaryOptions = Rule("binaryOptions")
        public static let emptyOptions = Rule("emptyOptions")
        public static let sliderBounds = Rule("sliderBounds")
        public static let answerNotAllowed = Rule("answerNotAllowed")
        public static let answerType = Rule("answerType")
        public static let answerOutOfRange = Rule("answerOutOfRange")
        public static let answerNotWhole = Rule("answerNotWhole")
        public static let answerNotAnOption = Rule("answerNotAnOption")
        public static let answerLength = Rule("answerLength")
        public static let duplicateID = Rule("duplicateID")
        public static let unknownKey = Rule("unknownKey")
        public static let missingKey = Rule("missingKey")
        public static let wrongType = Rule("wrongType")
        public static let invalidID = Rule("invalidID")
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
    }

    /// The 1-based position of the item, or `nil` when the problem is the survey's own.
    public var position: Int?
    /// The item's title, when known.
    public var title: String?
    /// The rule that was broken.
    public var rule: Rule
    /// What is wrong, in words.
    public var message: String

    public init(position: Int?, title: String?, rule: Rule, message: String) {
        self.position = position
        self.title = title
        self.rule = rule
        self.message = message
    }

    /// `item 3 ("Rate us"): message [rule]`, or `survey: message [rule]`.
    public var description: String {
        let subject: String
        if let position {
            subject = title.map { "item \(position) (\($0.debugDescription))" } ?? "item \(position)"
        } else {
            subject = "survey"
        }
        return "\(subject): \(message) [\(rule)]"
    }
}
