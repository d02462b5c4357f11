import Diagnostics

extension FileSystemError: CategorizedError {
    /// The ``Code``'s name, such as `noSpace` or `symbolicLink`.
    public var errorCode: String { code.rawValue }
    /// `ErrorCategory/failure`: a file-system error is never the caller's input.
    public var category: ErrorCategory { .failure }
    /// The system's error, when a system call failed.
    public var cause: (any Error)? { errno }
    /// Where the file layer raised the error.
    public var sourceLocation: ErrorSourceLocation? {
        ErrorSourceLocation(file: sourceFile, line: sourceLine)
    }
}
