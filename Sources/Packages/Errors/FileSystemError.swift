/// A failed file-system operation: what was being done, to which path, and why.
public struct FileSystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is, for callers that react to it.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let notFound = Code("notFound")
        public static let alreadyExists = Code("alreadyExists")
        public static let permissionDenied = Code("permissionDenied")
        public static let noSpace = Code("noSpace")
        public static let io = Code("io")
        public static let invalidName = Code("invalidName")
        public static let locked = Code("locked")
        public static let unknown = Code("unknown")
    }

    /// The operation that failed, named after its system call.
    public enum Operation: String, Sendable {
        case open, close, write, read, fsync, mkdir, rename, link, unlink, rmdir, list, lock, stat
    }

    public var code: Code
    public var operation: Operation
    /// The path the operation was about.
    public var path: String
    /// The system's error, when a system call failed.
    public var errno: Errno?
    /// The Swift source location that raised the error.
    public var sourceFile: String
    public var sourceLine: Int

    init(_ operation: Operation, path: String, errno: Errno, sourceFile: String = #fileID, sourceLine: Int = #line) {
        self.operation = operation
        self.path = path
        self.errno = errno
        self.sourceFile = sourceFile
        self.sourceLine = sourceLine
        switch errno {
        case .noEntry: code = .notFound
        case .exists, .notEmpty: code = .alreadyExists
        case .accessDenied, Errno(1): code = .permissionDenied
        case .noSpace, Errno(122): code = .noSpace
        case .io: code = .io
        case .wouldBlock: code = .locked
        default: code = .unknown
        }
    }

    init(_ code: Code, operation: Operation, path: String, sourceFile: String = #fileID, sourceLine: Int = #line) {
        self.code = code
        self.operation = operation
        self.path = path
        self.errno = nil
        self.sourceFile = sourceFile
        self.sourceLine = sourceLine
    }

    /// `cannot fsync /store/Documents/…: Input/output error`.
    public var description: String {
        let verb: String
        switch operation {
        case .open: verb = "open"
        case .close: verb = "close"
        case .write: verb = "write to"
        case .read: verb = "read"
        case .fsync: verb = "flush to disk (fsync)"
        case .mkdir: verb = "create the directory"
        case .rename: verb = "move into place"
        case .link: verb = "link"
        case .unlink: verb = "remove"
        case .rmdir: verb = "remove the directory"
        case .list: verb = "list the directory"
        case .lock: verb = "lock"
        case .stat: verb = "look up"
        }
        return "cannot \(verb) \(path): \(errno?.description ?? code.description)"
    }

    public static func == (lhs: FileSystemError, rhs: FileSystemError) -> Bool {
        lhs.code == rhs.code && lhs.operation == rhs.operation && lhs.path == rhs.path && lhs.errno == rhs.errno
    }
}
