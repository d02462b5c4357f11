import Diagnostics

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A failed file-system operation: what was being done, to which path, and why.
public struct FileSystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is, for callers that react to it.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        /// Creates a code with this name.
        public init(_ rawValue: String) {
            self.rawValue = rawValue
            limit = nil
        }
        public var description: String { rawValue }

        /// The file or folder does not exist (`ENOENT`).
        public static let notFound = Code("notFound")
        /// Something exists already where a file or folder was to be created (`EEXIST`, `ENOTEMPTY`).
        public static let alreadyExists = Code("alreadyExists")
        /// The caller may not do this (`EACCES`, `EPERM`).
        public static let permissionDenied = Code("permissionDenied")
        /// The disk or the user's quota is full (`ENOSPC`, `EDQUOT`).
        public static let noSpace = Code("noSpace")
        /// The device reported an input/output error (`EIO`).
        public static let io = Code("io")
        /// A name that cannot stand in a store: empty, `.`, `..`, or with a `/` or NUL.
        public static let invalidName = Code("invalidName")
        /// Another process holds the lock (`EAGAIN`).
        public static let locked = Code("locked")
        /// Any other system error; ``FileSystemError/errno`` says which.
        public static let unknown = Code("unknown")
        /// The file system is mounted read-only (`EROFS`).
        public static let readOnly = Code("readOnly")
        /// A symbolic link stood where a file or folder of the store belongs (`ELOOP`).
        public static let symbolicLink = Code("symbolicLink")
        /// A folder stood where a file belongs.
        public static let isDirectory = Code("isDirectory")
        /// A FIFO, socket or device stood where a regular file belongs.
        public static let notRegularFile = Code("notRegularFile")
        /// The file is larger than the limit for its kind.
        public static let tooLarge = Code("tooLarge")
        /// A lock file has more than one name (hard links): a lock on it would lock the
        /// others too, and a command holding two of them would wait for itself.
        public static let hardLinked = Code("hardLinked")
        /// A lock file was found replaced, or given another name, every time it was taken,
        /// as many times as a lock is tried (something keeps copying or replacing it).
        public static let keepsChanging = Code("keepsChanging")
        /// A folder could not be watched: the per-user limit of inotify watches is reached
        /// (`ENOSPC` from `inotify_add_watch`; `fs.inotify.max_user_watches`).
        public static let watchLimit = Code("watchLimit")

        /// `tooLarge`, with the limit that was exceeded.
        public static func tooLarge(_ limit: Int) -> Code { Code("tooLarge", limit: limit) }

        /// The limit a `tooLarge` error exceeded, in bytes.
        public let limit: Int?

        init(_ rawValue: String, limit: Int?) {
            self.rawValue = rawValue
            self.limit = limit
        }

        public static func == (lhs: Code, rhs: Code) -> Bool { lhs.rawValue == rhs.rawValue }
        public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }
    }

    /// The operation that failed, named after its system call.
    public enum Operation: String, Sendable {
        /// Opening a file or folder (`openat`).
        case open
        /// Closing a descriptor.
        case close
        /// Writing bytes.
        case write
        /// Reading bytes.
        case read
        /// Making a file or folder durable (`fsync`, `syncfs`).
        case fsync
        /// Creating a folder.
        case mkdir
        /// Moving into place (`renameat2`).
        case rename
        /// Making a hard link.
        case link
        /// Removing a file.
        case unlink
        /// Removing a folder.
        case rmdir
        /// Listing a folder.
        case list
        /// Taking a lock.
        case lock
        /// Looking up a file's kind and size.
        case stat
    }

    /// What kind of failure this is.
    public var code: Code
    /// The operation that failed.
    public var operation: Operation
    /// The path the operation was about.
    public var path: String
    /// The system's error, when a system call failed.
    public var errno: Errno?
    /// The folder on the way to ``path`` that is a symbolic link, when a call failed
    /// because of one (``Code/symbolicLink``) that is not ``path`` itself: the reason
    /// names it, rather than taking ``path`` for the link.
    public var linkOnTheWay: String?
    /// The Swift source location that raised the error.
    public var sourceFile: String
    /// The line of ``sourceFile`` that raised the error.
    public var sourceLine: Int

    init(
        _ operation: Operation, path: String, errno: Errno, sourceFile: String = #fileID,
        sourceLine: Int = #line
    ) {
        self.operation = operation
        self.path = path
        self.errno = errno
        self.sourceFile = sourceFile
        self.sourceLine = sourceLine
        switch errno {
        case .noEntry: code = .notFound
        case .exists, .notEmpty: code = .alreadyExists
        case .accessDenied, .notPermitted: code = .permissionDenied
        case .noSpace, .quotaExceeded: code = .noSpace
        case .io: code = .io
        case .wouldBlock: code = .locked
        case .readOnlyFileSystem: code = .readOnly
        case .symbolicLinkLoop: code = .symbolicLink
        case .isDirectory: code = .isDirectory
        case .noDevice: code = .notRegularFile  // opening a socket
        default: code = .unknown
        }
    }

    /// An error found by the file layer itself rather than returned by a system call.
    public init(
        _ code: Code, operation: Operation, path: String, sourceFile: String = #fileID,
        sourceLine: Int = #line
    ) {
        self.code = code
        self.operation = operation
        self.path = path
        self.errno = nil
        self.sourceFile = sourceFile
        self.sourceLine = sourceLine
    }

    /// Whether the error says what stands at ``path`` (a symbolic link, a folder, a FIFO,
    /// socket or device, a file over its size limit) rather than that a call failed on a
    /// file that may be sound: a reader skips or refuses such an entry, and an I/O error
    /// is never taken for one.
    public var isAboutTheEntry: Bool {
        [.symbolicLink, .notRegularFile, .isDirectory, .tooLarge].contains(code)
    }

    /// Whether the error is a failure to look at ``path`` (an input/output error, a
    /// permission denied, a full limit) rather than an answer about what stands there
    /// (nothing, or an entry ``isAboutTheEntry`` describes): a reader that falls back on
    /// absence or damage throws this one instead, since it says nothing of the file.
    public var isFailureToLook: Bool { !isAboutTheEntry && code != .notFound }

    /// The value of `body`, read by a reader that falls back on absence or damage: when
    /// `body` throws, a failure to look (``isFailureToLook``) is thrown on, since it says
    /// nothing of what was to be read, and any other error goes to `fallback`, which
    /// gives the value to use instead (or throws an error of its own).
    public static func rethrowingFailureToLook<T>(
        _ body: () throws -> T, otherwise fallback: (any Error) throws -> T
    ) throws -> T {
        do {
            return try body()
        } catch let error as FileSystemError where error.isFailureToLook {
            throw error
        } catch {
            return try fallback(error)
        }
    }

    /// Whether the error says that no folder stands at ``path``: nothing, a symbolic link
    /// (never followed), or something that is not a folder. A reader takes such a path for
    /// a folder that is not there; anything else (an I/O error, a full limit) is a failure.
    public var isNoFolder: Bool {
        code == .notFound || code == .symbolicLink || errno == .notDirectory
    }

    /// Whether a lock could not be taken because of what stands in its place: something
    /// other than a lock file (a folder, a link, a FIFO, a file with a second name), a
    /// lock file this user may not open (another user's, `chmod 000`), an entry that can
    /// be removed, or a file that something keeps replacing. Unlike a lock held elsewhere
    /// or an I/O error, this is about one document's lock alone: a run over many documents
    /// leaves that one, reports it with this error's reason, and goes on.
    public var isUnusableLock: Bool {
        operation == .lock
            && (isAboutTheEntry || code == .hardLinked || code == .keepsChanging || code == .permissionDenied)
    }

    /// `cannot fsync /store/Documents/…: Input/output error`.
    public var description: String { "cannot \(verb) \(ShownText.escaping(path)): \(reason)" }

    /// The description without the path, for a message that names the path already:
    /// `cannot fsync: Input/output error`.
    public var failure: String { "cannot \(verb): \(reason)" }

    /// What could not be done, in words.
    private var verb: String {
        if code == .watchLimit { return "watch" }
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
        return verb
    }

    /// Why the operation failed, in words.
    public var reason: String {
        // A lock file holds nothing: whatever stands in its place can go.
        let removal = "remove it while nothing uses the store (lock files are made again as needed)"
        let lockAdvice = operation == .lock ? "; lock files hold nothing: " + removal : ""
        switch code {
        case .symbolicLink:
            // The link is then that folder, which may hold what the store needs: no advice
            // to remove a lock file.
            if let link = linkOnTheWay {
                return
                    "\(ShownText.escaping(link)), a folder on its way, is a symbolic link, and a link is never followed"
            }
            return "it is a symbolic link, and a link is never followed" + lockAdvice
        case .notRegularFile: return "it is not a regular file (a FIFO, socket or device)" + lockAdvice
        case .isDirectory: return "it is a folder" + lockAdvice
        case .permissionDenied where operation == .lock:
            return "it may not be opened (Permission denied: another user's, or its mode)" + lockAdvice
        case .hardLinked:
            return
                "it has more than one name (hard links, as a copy made with `cp -al` leaves between a store and its copy), so a lock on it would lock the others too, and this name could not be removed to give the store a lock file of its own; "
                + removal
        case .watchLimit:
            return
                "the limit of inotify watches is reached (fs.inotify.max_user_watches; `sysctl fs.inotify.max_user_watches=N` raises it)"
        case .keepsChanging:
            return
                "it was replaced or given another name each time it was taken (something keeps copying or replacing it, such as repeated `cp -al`); try again once that stops"
        case .tooLarge:
            return
                "it is larger than the limit of \(code.limit.map(String.init) ?? "?") bytes for such a file"
        default: return errno?.description ?? code.description
        }
    }

    public static func == (lhs: FileSystemError, rhs: FileSystemError) -> Bool {
        lhs.code == rhs.code && lhs.operation == rhs.operation && lhs.path == rhs.path
            && lhs.errno == rhs.errno
    }
}
