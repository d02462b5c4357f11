import CSystemShims
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The system calls the file layer makes, as replaceable functions.
///
/// Every other part of the package goes through a `SystemCalls` value, never libc
/// directly, so tests can install one that fails a chosen call.
/// Each function makes exactly one call and returns its error as is, `EINTR` included;
/// the retry on `EINTR` happens one level up, in `System`, so that it can be tested too.
///
/// A path given with a directory descriptor (rather than `AT_FDCWD`) is resolved beneath
/// that directory and never through a symbolic link, in any of its components: a store's
/// contents come from other machines, and a link found in them must never lead outside.
public struct SystemCalls: Sendable {
    /// `openat(2)`; returns the new descriptor. Beneath a directory descriptor, no
    /// component of `path` may be a symbolic link (`ELOOP`): on Linux this is `openat2(2)`
    /// with `RESOLVE_NO_SYMLINKS`.
    public var openat:
        @Sendable (_ directory: Int32, _ path: String, _ flags: Int32, _ mode: mode_t) -> Result<Int32, Errno>
    /// `close(2)`.
    public var close: @Sendable (_ descriptor: Int32) -> Result<Void, Errno>
    /// `write(2)` of at most `bytes.count` bytes; returns how many were written.
    public var write: @Sendable (_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Result<Int, Errno>
    /// `read(2)` into `buffer`; returns how many bytes were read.
    public var read:
        @Sendable (_ descriptor: Int32, _ buffer: UnsafeMutableRawBufferPointer) -> Result<Int, Errno>
    /// `fsync(2)`: file data and metadata reach stable storage.
    public var fsync: @Sendable (_ descriptor: Int32) -> Result<Void, Errno>
    /// `syncfs(2)`: every file and directory entry written on the file system that holds
    /// the open `descriptor` reaches stable storage. Where the call does not exist
    /// (`ENOSYS`), batched writes fsync each file instead; ``live`` reports `ENOSYS`
    /// without calling it when ``noSyncfsVariable`` is set to `1`.
    public var syncfs: @Sendable (_ descriptor: Int32) -> Result<Void, Errno>
    /// `mkdirat(2)` of one name in an open directory.
    public var mkdirat: @Sendable (_ directory: Int32, _ path: String, _ mode: mode_t) -> Result<Void, Errno>
    /// `renameat2(2)` of one name in an open directory to another, with
    /// `RENAME_NOREPLACE` when `noReplace` is set.
    public var renameat:
        @Sendable (
            _ fromDirectory: Int32, _ from: String, _ toDirectory: Int32, _ to: String, _ noReplace: Bool
        ) -> Result<Void, Errno>
    /// `linkat(2)`.
    public var linkat:
        @Sendable (_ fromDirectory: Int32, _ from: String, _ toDirectory: Int32, _ to: String) -> Result<
            Void, Errno
        >
    /// `unlinkat(2)` of one name in an open directory, with `AT_REMOVEDIR` for
    /// directories. A symbolic link is removed itself, never what it points to.
    public var unlinkat:
        @Sendable (_ directory: Int32, _ path: String, _ isDirectory: Bool) -> Result<Void, Errno>
    /// `renameat2(2)` with `RENAME_NOREPLACE` (plain `renameat(2)` where there is no
    /// `renameat2`) of the entry whose name is the bytes `from`, a name that is not UTF-8
    /// (a `String` cannot hold it: see ``DirectoryEntry/undecodedName``), to the name
    /// `to`, both in the open directory `directory`.
    public var renameUndecodable:
        @Sendable (_ directory: Int32, _ from: [UInt8], _ to: String) -> Result<Void, Errno>
    /// An open-file-description lock (`fcntl(F_OFD_SETLK[W])`): mode 0 unlocks, 1 shares, 2 excludes.
    public var lock: @Sendable (_ descriptor: Int32, _ mode: Int32, _ wait: Bool) -> Result<Void, Errno>
    /// The entries of an open directory from its beginning (`getdents64` on Linux, else
    /// `fdopendir`/`readdir`), without `.` and `..`.
    public var listDirectory: @Sendable (_ descriptor: Int32) -> Result<[DirectoryEntry], Errno>
    /// `fstatat(2)` with `AT_SYMLINK_NOFOLLOW`: what is at `path`, a link reported as a
    /// link. Beneath a directory descriptor, no component of `path` is followed either.
    public var stat: @Sendable (_ directory: Int32, _ path: String) -> Result<FileStatus, Errno>
    /// `fstat(2)` of an open descriptor.
    public var fstat: @Sendable (_ descriptor: Int32) -> Result<FileStatus, Errno>
    /// `faccessat(2)` without flags: whether this process may use the entry `name` of an
    /// open directory (`.` for the directory itself) as `mode` asks (`R_OK`, `W_OK`,
    /// `X_OK`); `EACCES` when it may not, `EROFS` for writing on a read-only file system.
    /// A link as `name` is followed: ask of `.` through a descriptor of the entry itself
    /// where that matters. A table made without it answers that every use is allowed.
    public var access: @Sendable (_ directory: Int32, _ name: String, _ mode: Int32) -> Result<Void, Errno>
    /// Whether a lock that an exclusive lock on the whole of the open file would conflict
    /// with is held through another open file description (`fcntl(F_OFD_GETLK)`): looks,
    /// takes nothing, and needs no write access; `ENOSYS` where it cannot be asked (macOS,
    /// and a table made without it).
    public var lockHeld: @Sendable (_ descriptor: Int32) -> Result<Bool, Errno>

    /// What kind of file an entry or a status describes.
    public enum FileKind: Sendable, Equatable {
        /// A regular file.
        case regular
        /// A folder.
        case directory
        /// A symbolic link (never followed).
        case symbolicLink
        /// A FIFO, a socket or a device.
        case special
        /// The file system did not say (a directory entry only; ask ``SystemCalls/stat``).
        case unknown

        /// The kind as messages name what stands at a path: "a file", "a folder", "a
        /// symbolic link", "a FIFO, socket or device".
        public var inWords: String {
            switch self {
            case .regular: "a file"
            case .directory: "a folder"
            case .symbolicLink: "a symbolic link"
            case .special: "a FIFO, socket or device"
            case .unknown: "an entry of unknown kind"
            }
        }

        /// ``inWords``, with "(never followed)" after a link: what a reader says of an entry
        /// it found in a place it does not read through.
        public var asFound: String { self == .symbolicLink ? inWords + " (never followed)" : inWords }
    }

    /// A directory entry: its name and kind.
    public struct DirectoryEntry: Sendable, Equatable {
        /// The entry's name; for a name that is not UTF-8, its bytes decoded with U+FFFD in
        /// place of each invalid sequence, which names no entry (``undecodedName`` does).
        public var name: String
        /// The entry's kind, as the file system reported it.
        public var kind: FileKind
        /// The bytes of a name that is not UTF-8 (left by a system that names files in
        /// another encoding); `nil` for every other name. Such an entry can be removed only
        /// once renamed (``SystemCalls/renameUndecodable``).
        public var undecodedName: [UInt8]?
        /// Whether the entry is a directory (never true of a link to one).
        public var isDirectory: Bool { kind == .directory }

        /// Creates an entry.
        public init(name: String, kind: FileKind, undecodedName: [UInt8]? = nil) {
            self.name = name
            self.kind = kind
            self.undecodedName = undecodedName
        }

        /// Creates an entry that is a folder or a regular file.
        public init(name: String, isDirectory: Bool) {
            self.init(name: name, kind: isDirectory ? .directory : .regular)
        }
    }

    /// A table of the given functions (the real ones are ``live``).
    public init(
        openat: @escaping @Sendable (Int32, String, Int32, mode_t) -> Result<Int32, Errno>,
        close: @escaping @Sendable (Int32) -> Result<Void, Errno>,
        write: @escaping @Sendable (Int32, UnsafeRawBufferPointer) -> Result<Int, Errno>,
        read: @escaping @Sendable (Int32, UnsafeMutableRawBufferPointer) -> Result<Int, Errno>,
        fsync: @escaping @Sendable (Int32) -> Result<Void, Errno>,
        mkdirat: @escaping @Sendable (Int32, String, mode_t) -> Result<Void, Errno>,
        renameat: @escaping @Sendable (Int32, String, Int32, String, Bool) -> Result<Void, Errno>,
        linkat: @escaping @Sendable (Int32, String, Int32, String) -> Result<Void, Errno>,
        unlinkat: @escaping @Sendable (Int32, String, Bool) -> Result<Void, Errno>,
        lock: @escaping @Sendable (Int32, Int32, Bool) -> Result<Void, Errno>,
        listDirectory: @escaping @Sendable (Int32) -> Result<[DirectoryEntry], Errno>,
        stat: @escaping @Sendable (Int32, String) -> Result<FileStatus, Errno>,
        fstat: @escaping @Sendable (Int32) -> Result<FileStatus, Errno>,
        access: @escaping @Sendable (Int32, String, Int32) -> Result<Void, Errno> = { _, _, _ in .success(())
        },
        lockHeld: @escaping @Sendable (Int32) -> Result<Bool, Errno> = { _ in .failure(.notSupported) },
        syncfs: @escaping @Sendable (Int32) -> Result<Void, Errno> = { _ in .failure(.notSupported) },
        renameUndecodable: @escaping @Sendable (Int32, [UInt8], String) -> Result<Void, Errno> = { _, _, _ in
            .failure(.notSupported)
        }
    ) {
        self.openat = openat
        self.close = close
        self.write = write
        self.read = read
        self.fsync = fsync
        self.mkdirat = mkdirat
        self.renameat = renameat
        self.linkat = linkat
        self.unlinkat = unlinkat
        self.lock = lock
        self.listDirectory = listDirectory
        self.stat = stat
        self.fstat = fstat
        self.access = access
        self.lockHeld = lockHeld
        self.syncfs = syncfs
        self.renameUndecodable = renameUndecodable
    }

    /// What `stat` tells of a file: its kind, size and identity.
    public struct FileStatus: Sendable, Equatable {
        /// The file's kind.
        public var kind: FileKind
        /// The size in bytes.
        public var size: Int
        /// The file system's device number (`st_dev`).
        public var device: UInt64
        /// The inode number (`st_ino`).
        public var inode: UInt64
        /// The modification time, in nanoseconds since 1970 (`st_mtim`).
        public var modified: Int64
        /// The status change time, in nanoseconds since 1970 (`st_ctim`): unlike the
        /// modification time, no one can set it back.
        public var changed: Int64
        /// How many names the file has (`st_nlink`): more than one for a file hard-linked
        /// elsewhere.
        public var links: Int

        /// Whether it is a directory (never true of a link to one).
        public var isDirectory: Bool { kind == .directory }

        /// Creates a status.
        public init(
            kind: FileKind, size: Int, device: UInt64, inode: UInt64, modified: Int64 = 0, changed: Int64 = 0,
            links: Int = 1
        ) {
            self.kind = kind
            self.size = size
            self.device = device
            self.inode = inode
            self.modified = modified
            self.changed = changed
            self.links = links
        }

        /// Creates the status of a folder or a regular file.
        public init(isDirectory: Bool, size: Int, device: UInt64, inode: UInt64) {
            self.init(kind: isDirectory ? .directory : .regular, size: size, device: device, inode: inode)
        }
    }

    /// The real system calls.
    public static let live = SystemCalls(
        openat: { directory, path, flags, mode in
            let result =
                directory == AT_FDCWD
                ? cshim_openat(directory, path, flags, mode)
                : cshim_openat_beneath(directory, path, flags, mode)
            return result >= 0 ? .success(result) : .failure(.current)
        },
        close: { descriptor in
            // close(2) is not retried on EINTR: on Linux the descriptor is gone either way.
            libcClose(descriptor) == 0 ? .success(()) : .failure(.current)
        },
        write: { descriptor, bytes in
            let result = libcWrite(descriptor, bytes.baseAddress, bytes.count)
            return result >= 0 ? .success(result) : .failure(.current)
        },
        read: { descriptor, buffer in
            let result = libcRead(descriptor, buffer.baseAddress, buffer.count)
            return result >= 0 ? .success(result) : .failure(.current)
        },
        fsync: { descriptor in
            libcFsync(descriptor) == 0 ? .success(()) : .failure(.current)
        },
        mkdirat: { directory, path, mode in
            libcMkdirat(directory, path, mode) == 0 ? .success(()) : .failure(.current)
        },
        renameat: { fromDirectory, from, toDirectory, to, noReplace in
            let result =
                noReplace
                ? cshim_renameat2(fromDirectory, from, toDirectory, to, UInt32(CSHIM_RENAME_NOREPLACE))
                : libcRenameat(fromDirectory, from, toDirectory, to)
            return result == 0 ? .success(()) : .failure(.current)
        },
        linkat: { fromDirectory, from, toDirectory, to in
            libcLinkat(fromDirectory, from, toDirectory, to, 0) == 0 ? .success(()) : .failure(.current)
        },
        unlinkat: { directory, path, isDirectory in
            libcUnlinkat(directory, path, isDirectory ? AT_REMOVEDIR : 0) == 0
                ? .success(()) : .failure(.current)
        },
        lock: { descriptor, mode, wait in
            cshim_ofd_lock(descriptor, mode, wait ? 1 : 0) == 0 ? .success(()) : .failure(.current)
        },
        listDirectory: { descriptor in
            final class Collected { var entries: [DirectoryEntry] = [] }
            let collected = Collected()
            let result = withExtendedLifetime(collected) {
                cshim_list_directory(descriptor, Unmanaged.passUnretained(collected).toOpaque()) {
                    context, name, kind in
                    let collected = Unmanaged<Collected>.fromOpaque(context!).takeUnretainedValue()
                    let kind = FileKind(shimKind: kind)
                    let bytes = UnsafeRawBufferPointer(start: name!, count: strlen(name!))
                    if let decoded = String(validating: bytes, as: UTF8.self) {
                        collected.entries.append(DirectoryEntry(name: decoded, kind: kind))
                    } else {
                        collected.entries.append(
                            DirectoryEntry(
                                name: String(decoding: bytes, as: UTF8.self), kind: kind,
                                undecodedName: Array(bytes)))
                    }
                }
            }
            return result == 0 ? .success(collected.entries) : .failure(.current)
        },
        stat: { directory, path in
            var status = cshim_status()
            let result: Int32
            if directory == AT_FDCWD {
                result = cshim_fstatat_nofollow(directory, path, &status)
            } else if let (folderPath, name) = System.splitAtLastSlash(path) {
                // The folder is opened beneath the directory without following links, and
                // the last name is looked up in it without following one either.
                let folder = cshim_openat_beneath(
                    directory, String(folderPath), O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
                guard folder >= 0 else { return .failure(.current) }
                result = cshim_fstatat_nofollow(folder, String(name), &status)
                let saved = errno
                _ = libcClose(folder)
                errno = saved
            } else {
                result = cshim_fstatat_nofollow(directory, path, &status)
            }
            return result == 0 ? .success(FileStatus(status)) : .failure(.current)
        },
        fstat: { descriptor in
            var status = cshim_status()
            return cshim_fstat(descriptor, &status) == 0 ? .success(FileStatus(status)) : .failure(.current)
        },
        access: { directory, name, mode in
            // No flags: the plain faccessat system call, which asks the file system (a
            // read-only one says so, and ACLs count) where faccessat2 may be refused.
            faccessat(directory, name, mode, 0) == 0 ? .success(()) : .failure(.current)
        },
        lockHeld: { descriptor in
            switch cshim_ofd_lock_held(descriptor) {
            case 0: .success(false)
            case 1: .success(true)
            default: .failure(.current)
            }
        },
        syncfs: { descriptor in
            if SystemCalls.syncfsDisabled { return .failure(.notSupported) }
            return cshim_syncfs(descriptor) == 0 ? .success(()) : .failure(.current)
        },
        renameUndecodable: { directory, from, to in
            let result = (from + [0]).withUnsafeBufferPointer { bytes in
                bytes.withMemoryRebound(to: CChar.self) { name in
                    var result = cshim_renameat2(
                        directory, name.baseAddress!, directory, to, UInt32(CSHIM_RENAME_NOREPLACE))
                    if result != 0 && errno == ENOSYS {
                        result = libcRenameat(directory, name.baseAddress!, directory, to)
                    }
                    return result
                }
            }
            return result == 0 ? .success(()) : .failure(.current)
        }
    )

    /// The name of the environment variable that, set to `1`, makes ``live``'s `syncfs`
    /// fail with `ENOSYS` without calling the kernel, so that batched writes take their
    /// fallback (each file and folder fsynced): a diagnostic knob, read once per process,
    /// with which the benchmark times both paths on the same disk.
    public static let noSyncfsVariable = "SURVEYSTORE_NO_SYNCFS"

    /// Whether ``noSyncfsVariable`` is set to `1` in this process's environment.
    public static let syncfsDisabled = ProcessInfo.processInfo.environment[noSyncfsVariable] == "1"
}

extension SystemCalls.FileKind {
    init(shimKind: Int32) {
        switch shimKind {
        case 0: self = .regular
        case 1: self = .directory
        case 2: self = .symbolicLink
        case 3: self = .special
        default: self = .unknown
        }
    }
}

extension SystemCalls.FileStatus {
    init(_ status: cshim_status) {
        self.init(
            kind: SystemCalls.FileKind(shimKind: status.kind), size: Int(status.size),
            device: UInt64(status.device),
            inode: UInt64(status.inode),
            modified: Int64(status.modified_seconds) &* 1_000_000_000 &+ Int64(status.modified_nanoseconds),
            changed: Int64(status.changed_seconds) &* 1_000_000_000 &+ Int64(status.changed_nanoseconds),
            links: Int(clamping: status.links))
    }
}

// The C library's functions under names that the `SystemCalls` members of the same
// names cannot shadow, on Linux and macOS alike.
private func libcClose(_ fd: Int32) -> Int32 { close(fd) }
private func libcWrite(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    write(fd, buffer, count)
}
private func libcRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}
private func libcFsync(_ fd: Int32) -> Int32 { fsync(fd) }
private func libcMkdirat(_ fd: Int32, _ path: String, _ mode: mode_t) -> Int32 { mkdirat(fd, path, mode) }
private func libcRenameat(_ a: Int32, _ from: String, _ b: Int32, _ to: String) -> Int32 {
    renameat(a, from, b, to)
}
private func libcRenameat(_ a: Int32, _ from: UnsafePointer<CChar>, _ b: Int32, _ to: String) -> Int32 {
    renameat(a, from, b, to)
}
private func libcLinkat(_ a: Int32, _ from: String, _ b: Int32, _ to: String, _ flags: Int32) -> Int32 {
    linkat(a, from, b, to, flags)
}
private func libcUnlinkat(_ fd: Int32, _ path: String, _ flags: Int32) -> Int32 { unlinkat(fd, path, flags) }

/// An open descriptor of a store's root folder, opened on first use and closed with the
/// last value that holds it. Every path beneath the root is resolved from it, never
/// through a symbolic link.
final class RootDirectory: @unchecked Sendable {
    let path: String
    /// Whether a file or folder beneath this root refused `O_NOATIME` (another user's),
    /// after which reads here no longer ask for it (``System/keepingAccessTime(_:_:_:)``):
    /// set for every root of the same path made later in this process, too.
    let refusedNoAccessTime: Atomic<Bool>
    private let calls: SystemCalls
    private let lock = NSLock()
    private var descriptor: Int32?

    /// The root paths beneath which `O_NOATIME` was refused in this process. A command
    /// reads a store through several readers (its description, its device, its
    /// revisions): the first refusal spares all of them.
    private static let refusedPaths = Locked<Set<String>>([])

    init(path: String, calls: SystemCalls) {
        self.path = path
        self.calls = calls
        refusedNoAccessTime = Atomic(Self.refusedPaths.withLock { $0.contains(path) })
    }

    /// Notes that `O_NOATIME` was refused beneath this root.
    func noteRefusedNoAccessTime() {
        refusedNoAccessTime.store(true, ordering: .relaxed)
        _ = Self.refusedPaths.withLock { $0.insert(path) }
    }

    /// The root's descriptor. The root itself is the caller's choice and may be reached
    /// through links; only what lies beneath it is untrusted.
    func open() throws -> Int32 {
        try lock.withLock {
            if let descriptor { return descriptor }
            var result: Result<Int32, Errno>
            repeat {
                result = calls.openat(AT_FDCWD, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
            } while result == .failure(.interrupted)
            let opened = try result.mapError { FileSystemError(.open, path: path, errno: $0) }.get()
            descriptor = opened
            return opened
        }
    }

    deinit {
        if let descriptor { _ = calls.close(descriptor) }
    }
}

extension Result where Success == Int32, Failure == Errno {
    static func == (lhs: Result, rhs: Result) -> Bool {
        switch (lhs, rhs) {
        case (.success(let a), .success(let b)): a == b
        case (.failure(let a), .failure(let b)): a == b
        default: false
        }
    }
}

extension SystemCalls {
    /// The most file descriptors this process may hold open (the soft `RLIMIT_NOFILE`),
    /// or `nil` when there is no limit or it cannot be read. Work that runs many pieces at
    /// once sizes itself by it (256 by default on macOS, often 1,024 on Linux).
    public static var openFileLimit: Int? {
        let limit = cshim_open_file_limit()
        return limit < 0 ? nil : Int(clamping: limit)
    }
}

extension SystemCalls {
    /// Writes all of `data` to the open `descriptor` (standard output, say): again after a
    /// call a signal interrupted and after a short write, as every file of a store is
    /// written.
    ///
    /// - Parameters:
    ///   - data: The bytes to write.
    ///   - descriptor: An open file descriptor.
    ///   - name: What `descriptor` is, for the error (`standard output`).
    /// - Throws: ``FileSystemError`` with the call's `errno` (`EPIPE` for a pipe whose
    ///   reader has gone, while SIGPIPE is ignored).
    public func writeAll(_ data: Data, to descriptor: Int32, name: String) throws {
        try data.withUnsafeBytes { try System(calls: self).writeAll(descriptor, $0, path: name) }
    }
}

/// The calls of a ``SystemCalls`` table, with `EINTR` retried and errors made typed.
///
/// Paths are given whole, as people read them. A path beneath the confining root (when
/// there is one) is resolved from the root's descriptor without following any symbolic
/// link; operations on a name (create, rename, remove, look up) are made on its parent
/// folder's descriptor, opened the same way. Any other path is used as given.
///
/// `fsync` is retried only on `EINTR`; any other failure is reported, never retried and
/// then trusted, since the kernel may already have dropped the dirty pages.
struct System {
    let calls: SystemCalls
    let root: RootDirectory?

    init(calls: SystemCalls, root: String? = nil) {
        self.calls = calls
        self.root = root.map { RootDirectory(path: $0, calls: calls) }
    }

    @inline(__always)
    func retrying<T>(_ body: () -> Result<T, Errno>) -> Result<T, Errno> {
        while true {
            let result = body()
            if case .failure(.interrupted) = result { continue }
            return result
        }
    }

    /// Where `path` is: the root's descriptor and the path beneath it, or `AT_FDCWD` and
    /// the path as given (the root itself, and anything outside it).
    ///
    /// Compared byte by byte, as the file system compares names: `String`'s own
    /// comparison would take a differently normalised spelling of the root for the root,
    /// and costs far more (every file read and look-up passes here).
    private func locate(_ path: String) throws -> (directory: Int32, path: String) {
        if let root, let relative = Self.relative(path, beneath: root.path) {
            return (try root.open(), relative)
        }
        return (AT_FDCWD, path)
    }

    /// `path` without `root` and the slashes after it (`.` when nothing is left), when
    /// `path` is `root` followed by a slash (or `root` ends in one) and perhaps more;
    /// `nil` otherwise, and so for `root` itself written without a final slash.
    static func relative(_ path: String, beneath root: String) -> String? {
        var path = path
        var root = root
        return root.withUTF8 { rootBuffer in
            path.withUTF8 { pathBuffer -> String? in
                let root = rootBuffer.span
                let bytes = pathBuffer.span
                guard bytes.count >= root.count else { return nil }
                for index in 0..<root.count where bytes[index] != root[index] { return nil }
                var start = root.count
                if root.isEmpty || root[root.count - 1] != UInt8(ascii: "/") {
                    guard start < bytes.count, bytes[start] == UInt8(ascii: "/") else { return nil }
                }
                while start < bytes.count && bytes[start] == UInt8(ascii: "/") { start += 1 }
                guard start < bytes.count else { return "." }
                return String(decoding: UnsafeBufferPointer(rebasing: pathBuffer[start...]), as: UTF8.self)
            }
        }
    }

    /// The error of a call on `path` that failed with `errno`: for `ELOOP` beneath the
    /// root, naming the folder on the way that is a symbolic link when that is not `path`
    /// itself (``FileSystemError/linkOnTheWay``), looked for only on this failure path.
    func failure(_ operation: FileSystemError.Operation, path: String, errno: Errno) -> FileSystemError {
        var error = FileSystemError(operation, path: path, errno: errno)
        if errno == .symbolicLinkLoop { error.linkOnTheWay = linkOnTheWay(of: path) }
        return error
    }

    /// The first folder on the way to `path`, beneath the root, that is a symbolic link
    /// (as `path` names it); `nil` when none is, when `path` is not beneath the root, or
    /// when one cannot be looked at.
    func linkOnTheWay(of path: String) -> String? {
        guard let root, let relative = Self.relative(path, beneath: root.path),
            let directory = try? root.open()
        else { return nil }
        let bytes = Array(relative.utf8)
        let outside = path.utf8.count - bytes.count
        for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "/") && index > 0 {
            guard bytes[index - 1] != UInt8(ascii: "/") else { continue }
            let folder = String(decoding: bytes[..<index], as: UTF8.self)
            switch retrying({ calls.stat(directory, folder) }) {
            case .success(let status) where status.kind == .symbolicLink:
                return String(decoding: Array(path.utf8)[..<(outside + index)], as: UTF8.self)
            case .success: continue
            case .failure: return nil
            }
        }
        return nil
    }

    /// Calls `body` with the descriptor of the folder that holds `path` and the last name.
    private func inParent<T>(
        of path: String, operation: FileSystemError.Operation, _ body: (Int32, String) throws -> T
    ) throws -> T {
        let (directory, relative) = try locate(path)
        guard directory != AT_FDCWD else {
            // Outside any root: the parent is opened as given, the name is never followed.
            let folder = Self.parent(of: path)
            let descriptor = try open(folder, flags: O_RDONLY | O_DIRECTORY)
            defer { _ = calls.close(descriptor) }
            return try body(descriptor, Self.lastComponent(of: path))
        }
        guard let (folderPath, lastName) = Self.splitAtLastSlash(relative) else {
            guard relative != "." && relative != ".." else {
                throw FileSystemError(.invalidName, operation: operation, path: path)
            }
            return try body(directory, relative)
        }
        let name = String(lastName)
        guard !name.isEmpty, name != ".", name != ".." else {
            throw FileSystemError(.invalidName, operation: operation, path: path)
        }
        let folder = try retrying {
            calls.openat(directory, String(folderPath), O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
        }
        .mapError { failure(.open, path: Self.parent(of: path), errno: $0) }.get()
        defer { _ = calls.close(folder) }
        return try body(folder, name)
    }

    func open(_ path: String, flags: Int32, mode: mode_t = 0o644) throws -> Int32 {
        let (directory, relative) = try locate(path)
        return try retrying { calls.openat(directory, relative, flags | O_CLOEXEC, mode) }
            .mapError { failure(.open, path: path, errno: $0) }.get()
    }

    func close(_ descriptor: Int32, path: String) throws {
        try calls.close(descriptor).mapError { FileSystemError(.close, path: path, errno: $0) }.get()
    }

    /// Writes all of `bytes`, continuing after short writes.
    func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws {
        var offset = 0
        while offset < bytes.count {
            let written = try retrying {
                calls.write(descriptor, UnsafeRawBufferPointer(rebasing: bytes[offset...]))
            }
            .mapError { FileSystemError(.write, path: path, errno: $0) }.get()
            guard written > 0 else { throw FileSystemError(.write, path: path, errno: .noSpace) }
            offset += written
        }
    }

    func fsync(_ descriptor: Int32, path: String) throws {
        try retrying { calls.fsync(descriptor) }.mapError { FileSystemError(.fsync, path: path, errno: $0) }
            .get()
    }

    func mkdir(_ path: String, mode: mode_t = 0o755) throws {
        try inParent(of: path, operation: .mkdir) { folder, name in
            try retrying { calls.mkdirat(folder, name, mode) }.mapError {
                FileSystemError(.mkdir, path: path, errno: $0)
            }.get()
        }
    }

    /// Renames `from` to `to`; after a successful rename, `then` is given the descriptor
    /// of the folder that holds `to`, which the rename used.
    func rename(
        _ from: String, to: String, noReplace: Bool, then: (Int32) throws -> Void = { _ in }
    ) throws -> Result<Void, Errno> {
        try inParent(of: from, operation: .rename) { fromFolder, fromName in
            try inParent(of: to, operation: .rename) { toFolder, toName in
                let renamed = retrying { calls.renameat(fromFolder, fromName, toFolder, toName, noReplace) }
                if case .success = renamed { try then(toFolder) }
                return renamed
            }
        }
    }

    func link(_ from: String, to: String) throws -> Result<Void, Errno> {
        try inParent(of: from, operation: .link) { fromFolder, fromName in
            try inParent(of: to, operation: .link) { toFolder, toName in
                retrying { calls.linkat(fromFolder, fromName, toFolder, toName) }
            }
        }
    }

    /// Removes the name `path`; a symbolic link is removed itself, never followed.
    func unlink(_ path: String, isDirectory: Bool) throws {
        try inParent(of: path, operation: isDirectory ? .rmdir : .unlink) { folder, name in
            try retrying { calls.unlinkat(folder, name, isDirectory) }
                .mapError { FileSystemError(isDirectory ? .rmdir : .unlink, path: path, errno: $0) }.get()
        }
    }

    /// The name of `entry` of the folder at `folder`, to be named by: its own, or, for a
    /// name that is not UTF-8 (``SystemCalls/DirectoryEntry/undecodedName``), which no
    /// `String` names, a new temporary name the entry is first given (`renameat2` with
    /// `RENAME_NOREPLACE`, in the folder opened beneath the root, never through a link).
    func nameable(_ entry: SystemCalls.DirectoryEntry, in folder: String) throws -> String {
        guard let bytes = entry.undecodedName else { return entry.name }
        let descriptor = try openForReading(folder, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
        defer { _ = calls.close(descriptor) }
        let name = PackageWriter.temporaryName()
        try retrying { calls.renameUndecodable(descriptor, bytes, name) }.mapError {
            FileSystemError(.rename, path: folder + "/" + entry.name, errno: $0)
        }.get()
        return name
    }

    /// The entries of the folder at `path`, which must be a real folder (not a link).
    func list(_ path: String) throws -> [SystemCalls.DirectoryEntry] {
        let descriptor = try openForReading(path, flags: O_RDONLY | O_DIRECTORY)
        defer { _ = calls.close(descriptor) }
        return try retrying { calls.listDirectory(descriptor) }.mapError {
            FileSystemError(.list, path: path, errno: $0)
        }.get()
    }

    /// The status of `path` (a link reported as a link), or `nil` when nothing is there.
    func status(_ path: String) throws -> SystemCalls.FileStatus? {
        if let root, path == root.path {
            // The root itself, followed if it is a link (the caller chose it).
            let descriptor: Int32
            do {
                descriptor = try root.open()
            } catch let error as FileSystemError where error.code == .notFound || error.errno == .notDirectory
            {
                return nil
            }
            return try retrying { calls.fstat(descriptor) }.mapError {
                FileSystemError(.stat, path: path, errno: $0)
            }.get()
        }
        let (directory, relative) = try locate(path)
        switch retrying({ calls.stat(directory, relative) }) {
        case .success(let status): return status
        case .failure(let errno) where errno == .noEntry || errno == .notDirectory: return nil
        case .failure(let errno): throw failure(.stat, path: path, errno: errno)
        }
    }

    /// Why this process may not use the entry at `path` as `mode` asks (`W_OK | X_OK`
    /// of a folder: add and remove names in it): `EACCES` or `EPERM` (its permissions),
    /// `EROFS` (a read-only file system); `nil` when it may, or when nothing is there (a
    /// folder: nor anything but a folder). A folder is asked of through a descriptor of
    /// its own, opened beneath the root without following any link; a file through its
    /// folder's, by name.
    func denial(_ path: String, mode: Int32, isFolder: Bool) throws -> Errno? {
        func asked(_ folder: Int32, _ name: String) throws -> Errno? {
            switch retrying({ calls.access(folder, name, mode) }) {
            case .success: return nil
            case .failure(let errno) where errno == .noEntry || errno == .notDirectory: return nil
            case .failure(let errno)
            where errno == .accessDenied || errno == .notPermitted || errno == .readOnlyFileSystem:
                return errno
            case .failure(let errno): throw FileSystemError(.stat, path: path, errno: errno)
            }
        }
        // The root itself, through its descriptor (the caller's choice, links followed).
        if let root, path == root.path { return try asked(try root.open(), ".") }
        guard isFolder else {
            do {
                return try inParent(of: path, operation: .stat, asked)
            } catch let error as FileSystemError where error.code == .notFound {
                return nil  // the folder it would be in is not there either
            }
        }
        let (directory, relative) = try locate(path)
        let opened = retrying {
            calls.openat(directory, relative, cshim_path_only_flag() | O_DIRECTORY | O_CLOEXEC, 0)
        }
        switch opened {
        case .success(let folder):
            defer { _ = calls.close(folder) }
            return try asked(folder, ".")
        case .failure(let errno) where errno == .noEntry || errno == .notDirectory: return nil
        case .failure(let errno) where errno == .accessDenied || errno == .notPermitted: return errno
        case .failure(let errno): throw FileSystemError(.open, path: path, errno: errno)
        }
    }

    /// Whether a lock is held on the lock file at `path` (one an exclusive lock would
    /// conflict with: a writer's, shared or exclusive), looked at through a descriptor
    /// opened for reading, never through a link; `nil` when nothing is there, the file
    /// may not be opened (permission denied), or the system has no way to ask without
    /// disturbing this process's own locks (`ENOSYS`: macOS).
    func isLockHeld(_ path: String) throws -> Bool? {
        let descriptor: Int32
        do {
            descriptor = try open(path, flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
        } catch let error as FileSystemError where error.code == .notFound || error.code == .permissionDenied
        {
            return nil
        }
        defer { _ = calls.close(descriptor) }
        switch retrying({ calls.lockHeld(descriptor) }) {
        case .success(let held): return held
        case .failure(let errno) where errno == .notSupported: return nil
        case .failure(let errno): throw FileSystemError(.lock, path: path, errno: errno)
        }
    }

    /// Reads the whole regular file at `path`: open, check, read until the end, close.
    ///
    /// Only a regular file of at most `limit` bytes is read: a FIFO, a socket or a device
    /// is refused before any read (it is opened without blocking, so a FIFO cannot hang
    /// the caller), and so is a file larger than `limit`, or one that grows past it.
    /// Reads go straight into the returned buffer, which is allocated uninitialised at
    /// the file's size at opening plus one byte (so a file that has not grown is read in
    /// one call) and doubles as needed; a read shorter than asked, once the file has given
    /// at least its size at opening, is taken as its end (a regular file reads short only
    /// there), which spares the read that would return nothing.
    /// Returns the bytes with the file's status, taken from the descriptor they were read
    /// through, so it is the status of the very file whose bytes these are.
    func readAll(_ path: String, limit: Int) throws -> (data: Data, status: SystemCalls.FileStatus) {
        let descriptor = try openForReading(path, flags: O_RDONLY | O_NONBLOCK | O_NOCTTY)
        defer { _ = calls.close(descriptor) }
        return try readAll(descriptor: descriptor, path: path, limit: limit)
    }

    /// ``readAll(_:limit:)`` of the entry `name` of the open folder `folder`, never
    /// followed (`O_NOFOLLOW`).
    func readAll(
        _ name: String, in folder: Int32, path: String, limit: Int
    ) throws -> (data: Data, status: SystemCalls.FileStatus) {
        let descriptor = try keepingAccessTime(folder, name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW)
            .mapError { FileSystemError(.open, path: path, errno: $0) }.get()
        defer { _ = calls.close(descriptor) }
        return try readAll(descriptor: descriptor, path: path, limit: limit)
    }

    /// The rest of ``readAll(_:limit:)``, once the file is open.
    private func readAll(
        descriptor: Int32, path: String, limit: Int
    ) throws -> (data: Data, status: SystemCalls.FileStatus) {
        let status = try retrying { calls.fstat(descriptor) }.mapError {
            FileSystemError(.stat, path: path, errno: $0)
        }.get()
        guard status.kind == .regular else {
            throw FileSystemError(
                status.kind == .directory ? .isDirectory : .notRegularFile, operation: .read, path: path)
        }
        guard status.size <= limit else {
            throw FileSystemError(.tooLarge(limit), operation: .read, path: path)
        }
        var capacity = min(status.size + 1, limit + 1)
        guard var buffer = malloc(capacity) else {
            throw FileSystemError(.read, path: path, errno: Errno(ENOMEM))
        }
        var handedOver = false
        defer { if !handedOver { free(buffer) } }
        var count = 0
        while true {
            if count == capacity {
                guard capacity <= limit else {
                    throw FileSystemError(.tooLarge(limit), operation: .read, path: path)
                }
                capacity = min(capacity * 2, limit + 1)
                guard let grown = realloc(buffer, capacity) else {
                    throw FileSystemError(.read, path: path, errno: Errno(ENOMEM))
                }
                buffer = grown
            }
            let asked = capacity - count
            let read = try retrying {
                calls.read(descriptor, UnsafeMutableRawBufferPointer(start: buffer + count, count: asked))
            }
            .mapError { FileSystemError(.read, path: path, errno: $0) }.get()
            if read == 0 { break }
            count += read
            // A regular file reads short only at its end: once it has given at least the
            // size it had when opened, a short read ends it without a read of nothing.
            if read < asked && count >= status.size { break }
        }
        guard count <= limit else { throw FileSystemError(.tooLarge(limit), operation: .read, path: path) }
        guard count > 0 else { return (Data(), status) }
        handedOver = true
        return (Data(bytesNoCopy: buffer, count: count, deallocator: .free), status)
    }

    /// Opens the file or folder at `path` with `flags` to read it (its bytes, or its
    /// entries) and, on Linux, without updating its access time where that is allowed
    /// (`O_NOATIME`, for the owner's files), as git opens its objects: a store's files
    /// never change once written, and a read that updated the access time (the first read
    /// after a write, then one a day under `relatime`) would make the file system write
    /// the inode. Another user's file or folder refuses the flag (`EPERM`) and is opened
    /// plainly; once the flag has been refused beneath a store's root, later opens
    /// beneath that root (the same path) in this process do not ask for it (a store is
    /// nearly always one user's files: another user's store would cost a refused open
    /// per file).
    func openForReading(_ path: String, flags: Int32) throws -> Int32 {
        let (directory, relative) = try locate(path)
        return try keepingAccessTime(directory, relative, flags).mapError {
            failure(.open, path: path, errno: $0)
        }.get()
    }

    /// `openat(directory, name, flags)` for reading, with `O_NOATIME` where the owner may
    /// (see ``openForReading(_:flags:)``), without it after `EPERM`, and without it at all
    /// once this root has refused it.
    func keepingAccessTime(_ directory: Int32, _ name: String, _ flags: Int32) -> Result<Int32, Errno> {
        let flags = flags | O_CLOEXEC
        guard Self.noAccessTime != 0, root?.refusedNoAccessTime.load(ordering: .relaxed) != true else {
            return retrying { calls.openat(directory, name, flags, 0) }
        }
        let opened = retrying { calls.openat(directory, name, flags | Self.noAccessTime, 0) }
        guard opened == .failure(.notPermitted) else { return opened }
        root?.noteRefusedNoAccessTime()
        return retrying { calls.openat(directory, name, flags, 0) }
    }

    #if os(Linux)
        /// `O_NOATIME`, which Glibc's module does not export (the same value on every Linux
        /// architecture Swift supports).
        static let noAccessTime: Int32 = 0o1_000_000
    #else
        /// No such flag here: a read may update the access time.
        static let noAccessTime: Int32 = 0
    #endif

    /// Creates `path` exclusively (never through a link), writes `contents`, fsyncs and
    /// closes it.
    func writeDurably(_ contents: Data, to path: String) throws {
        let descriptor = try open(path, flags: O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o644)
        do {
            try contents.withUnsafeBytes { try writeAll(descriptor, $0, path: path) }
            try fsync(descriptor, path: path)
        } catch {
            _ = calls.close(descriptor)
            throw error
        }
        try close(descriptor, path: path)
    }

    /// Writes each of `files` durably into the existing folder `folder`.
    func writeFiles(_ files: [PackageFile], into folder: String) throws {
        for file in files {
            guard SafeName.isValidComponent(file.name) else {
                throw FileSystemError(.invalidName, operation: .open, path: folder + "/" + file.name)
            }
            try writeDurably(file.contents, to: folder + "/" + file.name)
        }
    }

    /// Renames `from` to `to` without ever replacing what is there (`RENAME_NOREPLACE`).
    /// Where the file system does not know that flag (`EINVAL`, `ENOSYS`), a file is
    /// linked and unlinked (which fails rather than replace) and a folder renamed plainly
    /// (which cannot replace a package either, since a package is never empty).
    ///
    /// With `syncingDestinationFolder`, a successful move is made durable: the folder
    /// that holds `to` is fsynced, through the descriptor the rename used.
    func moveWithoutReplacing(
        _ from: String, to: String, isDirectory: Bool, syncingDestinationFolder: Bool = false
    ) throws -> Result<Void, Errno> {
        var synced = false
        var result = try rename(from, to: to, noReplace: true) { toFolder in
            guard syncingDestinationFolder else { return }
            try fsync(toFolder, path: Self.parent(of: to))
            synced = true
        }
        if case .failure(let errno) = result, errno == .invalid || errno == .notSupported {
            if isDirectory {
                result = try rename(from, to: to, noReplace: false)
            } else {
                result = try link(from, to: to)
                if case .success = result { try unlink(from, isDirectory: false) }
            }
        }
        if case .success = result, syncingDestinationFolder, !synced {
            try fsyncDirectory(Self.parent(of: to))
        }
        return result
    }

    /// Opens the file or folder at `path` and fsyncs it.
    func fsyncPath(_ path: String, isDirectory: Bool) throws {
        let descriptor = try open(path, flags: isDirectory ? O_RDONLY | O_DIRECTORY : O_RDONLY | O_NOFOLLOW)
        defer { _ = calls.close(descriptor) }
        try fsync(descriptor, path: path)
    }

    /// `syncfs` on the file system that holds the folder `path`: everything written on it
    /// so far reaches stable storage. Returns `false` when the call does not exist here.
    func syncFileSystem(_ path: String) throws -> Bool {
        let descriptor = try open(path, flags: O_RDONLY | O_DIRECTORY)
        defer { _ = calls.close(descriptor) }
        switch retrying({ calls.syncfs(descriptor) }) {
        case .success: return true
        case .failure(let errno) where errno == .notSupported: return false
        case .failure(let errno): throw FileSystemError(.fsync, path: path, errno: errno)
        }
    }

    /// Opens the directory at `path` and fsyncs it: its entries reach stable storage.
    func fsyncDirectory(_ path: String) throws {
        let descriptor = try open(path, flags: O_RDONLY | O_DIRECTORY)
        defer { _ = calls.close(descriptor) }
        try fsync(descriptor, path: path)
    }

    /// Fsyncs the folder holding `entry` (just made or renamed into place), so that its
    /// arrival reaches stable storage. A failed fsync names `entry`, whose arrival it could
    /// not make durable, rather than the folder (which is `.` for an entry of a relative
    /// path without a slash); a folder that cannot be opened is named itself.
    func fsyncParent(of entry: String) throws {
        do {
            try fsyncDirectory(Self.parent(of: entry))
        } catch var error as FileSystemError where error.operation == .fsync {
            error.path = entry
            throw error
        }
    }

    /// `path` split at its last slash: what comes before it and the name after it; `nil`
    /// without a slash. The slash is found among the bytes, as the file system finds it: a
    /// combining mark after a slash belongs to the name, where a search by characters
    /// would take the two for one character and miss the slash.
    static func splitAtLastSlash(_ path: String) -> (folder: Substring, name: Substring)? {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return nil }
        return (path[..<slash], path[path.utf8.index(after: slash)...])
    }

    static func parent(of path: String) -> String {
        guard let (folder, _) = splitAtLastSlash(path) else { return "." }
        return folder.isEmpty ? "/" : String(folder)
    }

    static func lastComponent(of path: String) -> String {
        guard let (_, name) = splitAtLastSlash(path) else { return path }
        return String(name)
    }
}
