import Diagnostics

/// An error reading, writing, encoding or decoding a property list.
///
/// Errors about XML or JSON input carry the file (when known), the line and the column, and
/// describe themselves as `FILE:LINE:COLUMN: message`, the form compilers use.
public struct PropertyListError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure; extensible without breaking callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The raw name of the code.
        public let rawValue: String
        /// Creates a code with this name.
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The input is not well-formed XML (libxml2 refused it).
        public static let malformedXML = Code("malformedXML")
        /// The XML is well-formed but not a property list (unknown element, stray text,
        /// a key without a value, …).
        public static let invalidStructure = Code("invalidStructure")
        /// A scalar's text is not valid for its type (an integer out of range, a bad
        /// real, date or base64).
        public static let invalidValue = Code("invalidValue")
        /// The input is not well-formed JSON, or holds what a property list cannot
        /// (`null`, a repeated key).
        public static let malformedJSON = Code("malformedJSON")
        /// The document declares entities or other DTD content, which is never read.
        public static let forbiddenDeclaration = Code("forbiddenDeclaration")
        /// Containers are nested deeper than the reader's or writer's limit.
        public static let nestingTooDeep = Code("nestingTooDeep")
        /// A value cannot be written as XML faithfully (a string with characters XML 1.0
        /// cannot carry, a date out of range, …).
        public static let unrepresentableValue = Code("unrepresentableValue")
        /// A `Codable` type did not match the property list.
        public static let typeMismatch = Code("typeMismatch")
        /// A `Codable` key or value was missing.
        public static let valueNotFound = Code("valueNotFound")
    }

    /// The kind of failure.
    public var code: Code
    /// What went wrong, in words a person can act on.
    public var message: String
    /// The file being read, when known.
    public var file: String?
    /// The 1-based line in the XML or JSON input, when the error is about input. In XML,
    /// LF, CR LF and a CR alone each end a line, as XML 1.0 has it.
    public var line: Int?
    /// The 1-based column in the XML or JSON input, when the error is about input.
    public var column: Int?

    /// Creates an error.
    public init(code: Code, message: String, file: String? = nil, line: Int? = nil, column: Int? = nil) {
        self.code = code
        self.message = message
        self.file = file
        self.line = line
        self.column = column
    }

    /// `FILE:LINE:COLUMN: message`, leaving out the parts that are unknown; input that
    /// did not come from a file is called `<input>`.
    public var description: String {
        // A file's name is written with its control characters escaped (a line feed too),
        // so that it never splits the line that names it.
        let shownFile = file.map { ShownText.escaping($0) }
        guard let line else { return shownFile.map { "\($0): \(message)" } ?? message }
        let position = column.map { "\(line):\($0)" } ?? "\(line)"
        return "\(shownFile ?? "<input>"):\(position): \(message)"
    }
}
