import Diagnostics

extension PropertyListError: CategorizedError {
    /// `invalidPropertyList`, whatever the ``code``.
    public var errorCode: String { "invalidPropertyList" }
    /// `ErrorCategory/invalidData`.
    public var category: ErrorCategory { .invalidData }
    /// The file, line and column, when known.
    public var inputLocation: InputLocation? {
        file == nil && line == nil ? nil : InputLocation(file: file, line: line, column: column)
    }
}
