#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A cross-process lock on a file (in a store, under its folder of lock files).
///
/// It is an open-file-description lock (`fcntl(F_OFD_SETLK)`), so it excludes other
/// processes and other `FileLock`s in the same process alike, and the kernel releases it
/// when the process dies. Lock files are created once and never renamed or deleted.
///
/// `FileLock` owns a file descriptor and is deliberately not `Sendable`: the lock belongs
/// to one owner, who releases it by letting go of the value (or calling ``unlock()``).
public final class FileLock {
    /// Whether others may hold the lock at the same time.
    public enum Mode: Int32, Sendable {
        /// Many holders at once; excludes an exclusive holder.
        case shared = 1
        /// One holder; excludes every other.
        case exclusive = 2
    }

    private let system: System
    private var descriptor: Int32?
    /// The lock file.
    public let path: String

    /// Opens (creating if needed) the lock file at `path` and takes the lock.
    ///
    /// - Parameters:
    ///   - path: The lock file.
    ///   - mode: Shared or exclusive.
    ///   - wait: Whether to wait for the lock, or fail at once when it is held.
    ///   - root: The store folder `path` lies beneath; the lock file is never created
    ///     through a symbolic link.
    ///   - calls: The system calls to use.
    /// - Throws: ``FileSystemError`` with code `locked` when `wait` is false and the lock
    ///   is held elsewhere. The corresponding C function is `fcntl`.
    ///   - root: The store's root: the lock file is opened beneath it without following
    ///     any link (a linked lock file is refused, never created through).
    public convenience init(
        path: String, mode: Mode, wait: Bool = true, root: String? = nil, calls: SystemCalls = .live
    )
        throws
    {
        try self.init(path: path, mode: mode, wait: wait, system: System(calls: calls, root: root))
    }

    /// Opens the lock file at `path` through `system`, whose root descriptor, when it has
    /// one open, is used again rather than the root opened anew.
    init(path: String, mode: Mode, wait: Bool, system: System) throws {
        self.path = path
        self.system = system
        let calls = system.calls
        let descriptor: Int32
        do {
            descriptor = try system.open(path, flags: O_RDWR | O_CREAT | O_NOFOLLOW, mode: 0o644)
        } catch let error as FileSystemError where error.isAboutTheEntry {
            // A link or a folder where the lock file belongs: never a lock, and named as one.
            throw FileSystemError(error.code, operation: .lock, path: path)
        }
        // A lock file with another name (a hard link, as `cp -al` leaves between a store
        // and its copy) is one lock under two names: a command holding both would wait
        // for itself. It is refused before it is waited on.
        if case .success(let status) = calls.fstat(descriptor), status.kind != .regular || status.links > 1 {
            _ = calls.close(descriptor)
            throw FileSystemError(
                status.kind != .regular ? .notRegularFile : .hardLinked, operation: .lock, path: path)
        }
        var result: Result<Void, Errno>
        repeat {
            result = calls.lock(descriptor, mode.rawValue, wait)
        } while result == .failure(.interrupted)
        if case .failure(let errno) = result {
            _ = calls.close(descriptor)
            throw FileSystemError(.lock, path: path, errno: errno == .accessDenied ? .wouldBlock : errno)
        }
        self.descriptor = descriptor
    }

    /// Releases the lock now.
    public func unlock() {
        guard let descriptor else { return }
        _ = system.calls.lock(descriptor, 0, false)
        _ = system.calls.close(descriptor)
        self.descriptor = nil
    }

    deinit {
        unlock()
    }
}

extension Result where Success == Void, Failure == Errno {
    static func == (lhs: Result, rhs: Result) -> Bool {
        switch (lhs, rhs) {
        case (.success, .success): true
        case (.failure(let a), .failure(let b)): a == b
        default: false
        }
    }
}
