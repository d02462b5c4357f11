import Diagnostics
import Foundation
import Packages

/// A lower layer's error, with what the store was doing and to which document.
///
/// The file layer names only the path it failed on, which for a save is a temporary
/// file; this error says which operation on which document failed, and keeps the file
/// layer's error as its ``cause``. Its code and category are the cause's.
public struct OperationError: CategorizedError {
    /// What the store was doing.
    public enum Operation: String, Sendable, Hashable {
        /// Creating a document.
        case create
        /// Saving a revision.
        case save
        /// Deleting a document.
        case delete
        /// Resolving a conflict.
        case resolve
        /// Pruning history.
        case prune
        /// Migrating a winner to the current format.
        case migrate
        /// Importing a package.
        case `import`
        /// Exporting a package.
        case export
        /// Syncing with another store.
        case sync
        /// Merging heads item by item.
        case merge
    }

    /// What the store was doing.
    public var operation: Operation
    /// The document it was about, if one.
    public var document: UUID?
    /// The lower layer's error.
    public var underlying: any CategorizedError

    /// Wraps `underlying`.
    public init(_ operation: Operation, document: UUID?, underlying: any CategorizedError) {
        self.operation = operation
        self.document = document
        self.underlying = underlying
    }

    /// The cause's code.
    public var errorCode: String { underlying.errorCode }
    /// The cause's category.
    public var category: ErrorCategory { underlying.category }
    /// The lower layer's error.
    public var cause: (any Error)? { underlying }
    /// Where the lower layer raised the error.
    public var sourceLocation: ErrorSourceLocation? { underlying.sourceLocation }

    /// `cannot save document 0f8e…: cannot flush to disk (fsync) …: Input/output error`.
    public var description: String {
        let subject = document.map { " document \($0.uuidString.lowercased())" } ?? ""
        return "cannot \(operation.rawValue)\(subject): \(underlying)"
    }
}

extension SurveyStore {
    /// Runs `body`, wrapping the file layer's errors in an ``OperationError`` that names
    /// `operation` and `document`; the store's own errors, which name what they are
    /// about, pass through.
    func wrapping<T>(_ operation: OperationError.Operation, _ document: UUID?, _ body: () throws -> T) throws
        -> T
    {
        do {
            return try body()
        } catch let error as FileSystemError {
            throw OperationError(operation, document: document, underlying: error)
        }
    }
}
