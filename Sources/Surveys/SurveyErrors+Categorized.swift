import Diagnostics

extension SurveyError: CategorizedError {
    /// `invalidSurvey`; the broken rule is ``rule``.
    public var errorCode: String { "invalidSurvey" }
    /// `ErrorCategory/invalidData`.
    public var category: ErrorCategory { .invalidData }
}

extension SurveyFileError: CategorizedError {
    /// `invalidSurvey`.
    public var errorCode: String { "invalidSurvey" }
    /// `ErrorCategory/invalidData`.
    public var category: ErrorCategory { .invalidData }
    /// The file, line and column, when known.
    public var inputLocation: InputLocation? {
        file == nil && line == nil ? nil : InputLocation(file: file, line: line, column: column)
    }
}

extension FormatError: CategorizedError {
    /// `newerFormat` for a format newer than this build's, else `unsupportedFormat`.
    public var errorCode: String {
        switch self {
        case .newer: "newerFormat"
        case .unknown: "unsupportedFormat"
        }
    }
    /// `ErrorCategory/invalidData`.
    public var category: ErrorCategory { .invalidData }
}
