#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A cross-process lock on a file (in a store, under its folder of lock files).
///
/// It is an open-file-description lock (`fcntl(F_OFD_SETLK)`), so it excludes other
/// processes and other `FileLock`s in the same process alike, and the kernel releases it
/// when the process dies. Lock files hold nothing; a lock file is created when first
/// needed and never renamed.
///
/// A lock file with a second name (a hard link, as `cp -al` leaves between a store and
/// its copy) would be one lock under two names, so that a command holding both (a
/// `sync` between the two) waited for itself. It is replaced instead: its name is
/// removed while its lock is held exclusively, and a file of its own is created under
/// that name. So that no holder of the old file's lock and holder of the new file's
/// lock ever run at once, every lock is taken in two steps: the file is opened and
/// locked, then the name is checked to still be that file; when it is not (replaced
/// meanwhile), the lock is let go and the file under the name now is locked instead.
/// The holder that removed the old name held it exclusively, so no one held the old
/// file then, and no one can take it for the name's file after.
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
        // Each pass ends holding the lock of the file under the name, or with that file
        // replaced or gone, which only a second name's removal or another process's
        // removal of the store does: a handful of passes at most, bounded all the same
        // (generously: a pass that waited for the lock may find the name changed again).
        for _ in 0..<Self.maximumPasses {
            switch try take(mode: mode, wait: wait) {
            case .held(let descriptor):
                self.descriptor = descriptor
                return
            case .tryAgain: continue
            }
        }
        throw FileSystemError(.keepsChanging, operation: .lock, path: path)
    }

    /// How many times a lock is tried before a lock file that keeps changing is given up.
    static var maximumPasses: Int { 1024 }

    private enum Pass {
        case held(Int32)
        case tryAgain
    }

    /// Opens the file under the name and locks it; held when the name is still that file
    /// afterwards. A file with a second name is taken exclusively and its name removed.
    private func take(mode: Mode, wait: Bool) throws -> Pass {
        let calls = system.calls
        let descriptor: Int32
        do {
            descriptor = try system.open(path, flags: O_RDWR | O_CREAT | O_NOFOLLOW, mode: 0o644)
        } catch let error as FileSystemError where error.isAboutTheEntry {
            // A link or a folder where the lock file belongs: never a lock, and named as one
            // (or the folder on its way that is a link, named as that).
            var failure = FileSystemError(error.code, operation: .lock, path: path)
            failure.linkOnTheWay = error.linkOnTheWay
            throw failure
        } catch let error as FileSystemError
            where error.code == .permissionDenied && (try? system.status(path)) != nil
        {
            // A lock file there that this user may not open (another user's, its mode):
            // named as a lock file that can be removed. One that cannot be made (a folder
            // of locks that may not be written) stays the failure it is, for every lock.
            throw FileSystemError(.permissionDenied, operation: .lock, path: path)
        }
        var holding = false
        defer {
            if !holding { _ = calls.close(descriptor) }
        }
        let opened = try system.retrying { calls.fstat(descriptor) }
            .mapError { FileSystemError(.stat, path: path, errno: $0) }.get()
        guard opened.kind == .regular else {
            throw FileSystemError(.notRegularFile, operation: .lock, path: path)
        }
        let hasSecondName = opened.links > 1
        var result: Result<Void, Errno>
        repeat {
            result = calls.lock(descriptor, hasSecondName ? Mode.exclusive.rawValue : mode.rawValue, wait)
        } while result == .failure(.interrupted)
        if case .failure(let errno) = result {
            throw FileSystemError(.lock, path: path, errno: errno == .accessDenied ? .wouldBlock : errno)
        }
        // The name may have been given to another file while this one was waited for.
        guard let named = try system.status(path), named.device == opened.device, named.inode == opened.inode
        else { return .tryAgain }
        if hasSecondName {
            let now = try system.retrying { calls.fstat(descriptor) }
                .mapError { FileSystemError(.stat, path: path, errno: $0) }.get()
            if now.links > 1 {
                // Held exclusively: no one holds this file's lock, and once its name is
                // gone no one takes it for the name's file.
                do {
                    try system.unlink(path, isDirectory: false)
                } catch let error as FileSystemError where error.code != .notFound {
                    throw FileSystemError(.hardLinked, operation: .lock, path: path)
                }
            }
            // Taken exclusively for the removal; the lock asked for is taken afresh.
            return .tryAgain
        }
        holding = true
        return .held(descriptor)
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
