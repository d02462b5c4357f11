import Diagnostics

extension FileSystemError: CategorizedError {
    /// The ``Code``'s name, such as `noSpace` or `symbolicLink`.
    public var errorCode: String { code.rawValue }
    /// `ErrorCategory/invalidData` for a file over its size limit (damaged or hostile
    /// content, as content that fails its digest is); `ErrorCategory/failure` for every
    /// other code: a file-system error is never the caller's input.
    public var category: ErrorCategory { code == .tooLarge ? .invalidData : .failure }
    /// The system's error, when a system call failed.
    public var cause: (any Error)? { errno }
    /// Where the file layer raised the error.
    public var sourceLocation: ErrorSourceLocation? {
        ErrorSourceLocation(file: sourceFile, line: sourceLine)
    }
}
