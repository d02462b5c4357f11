/// What kind of failure an error reports, for callers that react to kinds rather than to
/// error types. The `survey` command maps each category to one exit code.
public enum ErrorCategory: String, Sendable, Hashable, CaseIterable {
    /// The input or a file read is not valid: a malformed property list, an invalid
    /// survey, an unsupported format, a damaged store file.
    case invalidData
    /// What was named does not exist: a store, document, revision, item, file or folder.
    case notFound
    /// The operation was refused to protect data, and nothing was written: a save whose
    /// base is no longer current, a merge that contests fields.
    case refused
    /// The request itself is wrong: an ambiguous prefix, a name that cannot be used, a
    /// store given as its own sync partner.
    case usage
    /// Anything else: input/output errors, a read-only store, a document in conflict.
    case failure
}

/// Where in the Swift sources an error was raised.
public struct ErrorSourceLocation: Sendable, Hashable, CustomStringConvertible {
    /// The file, as `#fileID` gives it (`Module/File.swift`).
    public var file: String
    /// The line.
    public var line: Int

    /// Creates a location; the defaults are the caller's own.
    public init(file: String = #fileID, line: Int = #line) {
        self.file = file
        self.line = line
    }

    /// `Module/File.swift:LINE`.
    public var description: String { "\(file):\(line)" }
}

/// A position in a file the user gave or the store holds: what the message is about.
public struct InputLocation: Sendable, Hashable {
    /// The file, when known.
    public var file: String?
    /// The 1-based line, when known.
    public var line: Int?
    /// The 1-based column, when known.
    public var column: Int?

    /// Creates a location.
    public init(file: String?, line: Int? = nil, column: Int? = nil) {
        self.file = file
        self.line = line
        self.column = column
    }
}

/// The one shape every error of the package has: a code, a category, a message, an
/// optional cause, and where known the input position and the source location.
///
/// `description` is the full text a person reads; ``message`` is the same without the
/// position it is about (`FILE:LINE:COLUMN`, or the item of a survey), which other
/// properties carry.
///
/// Each module's errors conform; a caller handles them all through this protocol instead
/// of a catch clause per type:
///
/// ```swift
/// do {
///     try store.save(survey, to: id)
/// } catch let error as any CategorizedError {
///     print(error.errorCode, error.category, error.message)
/// }
/// ```
public protocol CategorizedError: Error, Sendable, CustomStringConvertible {
    /// A short machine-readable name of the failure, such as `noSuchDocument`; stable
    /// across releases.
    var errorCode: String { get }
    /// What kind of failure this is.
    var category: ErrorCategory { get }
    /// What went wrong, in words a person can act on, without the position it is about.
    var message: String { get }
    /// The lower-level error this one wraps, if any.
    var cause: (any Error)? { get }
    /// The file, line and column the error is about, if it is about input.
    var inputLocation: InputLocation? { get }
    /// Where in the sources the error was raised, where the error records it.
    var sourceLocation: ErrorSourceLocation? { get }
}

extension CategorizedError {
    /// The description, by default.
    public var message: String { description }
    /// None, by default.
    public var cause: (any Error)? { nil }
    /// None, by default.
    public var inputLocation: InputLocation? { nil }
    /// None, by default.
    public var sourceLocation: ErrorSourceLocation? { nil }
}
