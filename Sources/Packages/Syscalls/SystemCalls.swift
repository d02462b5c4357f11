import CSystemShims
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The system calls the file layer makes, as replaceable functions.
///
/// Every other part of the package goes through a `SystemCalls` value, never libc
/// directly, so tests can install one that fails a chosen call (``SystemCalls/failing(_:)``).
/// Each function makes exactly one call and returns its error as is, `EINTR` included;
/// the retry on `EINTR` happens one level up, in ``System``, so that it can be tested too.
public struct SystemCalls: Sendable {
    /// `openat(2)`; returns the new descriptor.
    public var openat: @Sendable (_ directory: Int32, _ path: String, _ flags: Int32, _ mode: mode_t) -> Result<Int32, Errno>
    /// `close(2)`.
    public var close: @Sendable (_ descriptor: Int32) -> Result<Void, Errno>
    /// `write(2)` of at most `bytes.count` bytes; returns how many were written.
    public var write: @Sendable (_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Result<Int, Errno>
    /// `read(2)` into `buffer`; returns how many bytes were read.
    public var read: @Sendable (_ descriptor: Int32, _ buffer: UnsafeMutableRawBufferPointer) -> Result<Int, Errno>
    /// `fsync(2)`: file data and metadata reach stable storage.
    public var fsync: @Sendable (_ descriptor: Int32) -> Result<Void, Errno>
    /// `mkdirat(2)`.
    public var mkdirat: @Sendable (_ directory: Int32, _ path: String, _ mode: mode_t) -> Result<Void, Errno>
    /// `renameat2(2)`, with `RENAME_NOREPLACE` when `noReplace` is set.
    public var renameat: @Sendable (_ fromDirectory: Int32, _ from: String, _ toDirectory: Int32, _ to: String, _ noReplace: Bool) -> Result<Void, Errno>
    /// `linkat(2)`.
    public var linkat: @Sendable (_ fromDirectory: Int32, _ from: String, _ toDirectory: Int32, _ to: String) -> Result<Void, Errno>
    /// `unlinkat(2)`, with `AT_REMOVEDIR` for directories.
    public var unlinkat: @Sendable (_ directory: Int32, _ path: String, _ isDirectory: Bool) -> Result<Void, Errno>
    /// An open-file-description lock (`fcntl(F_OFD_SETLK[W])`): mode 0 unlocks, 1 shares, 2 excludes.
    public var lock: @Sendable (_ descriptor: Int32, _ mode: Int32, _ wait: Bool) -> Result<Void, Errno>
    /// The entries of a directory (`opendir`/`readdir`), without `.` and `..`.
    public var listDirectory: @Sendable (_ path: String) -> Result<[DirectoryEntry], Errno>
    /// `fstatat(2)` of `path` (relative to the current directory), following symbolic links.
    public var stat: @Sendable (_ path: String) -> Result<FileStatus, Errno>

    /// A directory entry: its name and whether it is a directory.
    public struct DirectoryEntry: Sendable, Equatable {
        public var name: String
        public var isDirectory: Bool

        public init(name: String, isDirectory: Bool) {
            self.name = name
            self.isDirectory = isDirectory
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
        listDirectory: @escaping @Sendable (String) -> Result<[DirectoryEntry], Errno>,
        stat: @escaping @Sendable (String) -> Result<FileStatus, Errno>
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
    }

    /// What `stat` tells of a file: its kind, size and identity.
    public struct FileStatus: Sendable, Equatable {
        public var isDirectory: Bool
        public var size: Int
        /// The file system's device number (`st_dev`).
        public var device: UInt64
        /// The inode number (`st_ino`).
        public var inode: UInt64

        public init(isDirectory: Bool, size: Int, device: UInt64, inode: UInt64) {
            self.isDirectory = isDirectory
            self.size = size
            self.device = device
            self.inode = inode
        }
    }

    /// The real system calls.
    public static let live = SystemCalls(
        openat: { directory, path, flags, mode in
            let result = cshim_openat(directory, path, flags, mode)
            return result >= 0 ? .success(result) : .failure(.current)
        },
        close: { descriptor in
            // close(2) is not retried on EINTR: on Linux the descriptor is gone either way.
            libc_close(descriptor) == 0 ? .success(()) : .failure(.current)
        },
        write: { descriptor, bytes in
            let result = libc_write(descriptor, bytes.baseAddress, bytes.count)
            return result >= 0 ? .success(result) : .failure(.current)
        },
        read: { descriptor, buffer in
            let result = libc_read(descriptor, buffer.baseAddress, buffer.count)
            return result >= 0 ? .success(result) : .failure(.current)
        },
        fsync: { descriptor in
            libc_fsync(descriptor) == 0 ? .success(()) : .failure(.current)
        },
        mkdirat: { directory, path, mode in
            libc_mkdirat(directory, path, mode) == 0 ? .success(()) : .failure(.current)
        },
        renameat: { fromDirectory, from, toDirectory, to, noReplace in
            let result =
                noReplace
                ? cshim_renameat2(fromDirectory, from, toDirectory, to, UInt32(CSHIM_RENAME_NOREPLACE))
                : libc_renameat(fromDirectory, from, toDirectory, to)
            return result == 0 ? .success(()) : .failure(.current)
        },
        linkat: { fromDirectory, from, toDirectory, to in
            libc_linkat(fromDirectory, from, toDirectory, to, 0) == 0 ? .success(()) : .failure(.current)
        },
        unlinkat: { directory, path, isDirectory in
            libc_unlinkat(directory, path, isDirectory ? AT_REMOVEDIR : 0) == 0 ? .success(()) : .failure(.current)
        },
        lock: { descriptor, mode, wait in
            cshim_ofd_lock(descriptor, mode, wait ? 1 : 0) == 0 ? .success(()) : .failure(.current)
        },
        listDirectory: { path in
            guard let directory = opendir(path) else { return .failure(.current) }
            defer { closedir(directory) }
            var entries: [DirectoryEntry] = []
            while true {
                errno = 0
                guard let entry = readdir(directory) else {
                    return errno == 0 ? .success(entries) : .failure(.current)
                }
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
                }
                if name == "." || name == ".." { continue }
                entries.append(DirectoryEntry(name: name, isDirectory: entry.pointee.d_type == UInt8(DT_DIR)))
            }
        },
        stat: { path in
            libc_fstatat(path).map { .success($0) } ?? .failure(.current)
        }
    )
}

// The C library's functions under names that the `SystemCalls` members of the same
// names cannot shadow, on Linux and macOS alike.
private func libc_close(_ fd: Int32) -> Int32 { close(fd) }
private func libc_write(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int { write(fd, buffer, count) }
private func libc_read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { read(fd, buffer, count) }
private func libc_fsync(_ fd: Int32) -> Int32 { fsync(fd) }
private func libc_mkdirat(_ fd: Int32, _ path: String, _ mode: mode_t) -> Int32 { mkdirat(fd, path, mode) }
private func libc_renameat(_ a: Int32, _ from: String, _ b: Int32, _ to: String) -> Int32 { renameat(a, from, b, to) }
private func libc_linkat(_ a: Int32, _ from: String, _ b: Int32, _ to: String, _ flags: Int32) -> Int32 {
    linkat(a, from, b, to, flags)
}
private func libc_fstatat(_ path: String) -> SystemCalls.FileStatus? {
    var status = stat()
    guard fstatat(AT_FDCWD, path, &status, 0) == 0 else { return nil }
    return SystemCalls.FileStatus(
        isDirectory: UInt32(status.st_mode) & UInt32(S_IFMT) == UInt32(S_IFDIR), size: Int(status.st_size),
        device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
}
private func libc_unlinkat(_ fd: Int32, _ path: String, _ flags: Int32) -> Int32 { unlinkat(fd, path, flags) }

/// The calls of a ``SystemCalls`` table, with `EINTR` retried and errors made typed.
///
/// `fsync` is retried only on `EINTR`; any other failure is reported, never retried and
/// then trusted, since the kernel may already have dropped the dirty pages.
struct System {
    let calls: SystemCalls

    @inline(__always)
    private func retrying<T>(_ body: () -> Result<T, Errno>) -> Result<T, Errno> {
        while true {
            let result = body()
            if case .failure(.interrupted) = result { continue }
            return result
        }
    }

    func open(_ path: String, in directory: Int32 = AT_FDCWD, flags: Int32, mode: mode_t = 0o644) throws -> Int32 {
        try retrying { calls.openat(directory, path, flags | O_CLOEXEC, mode) }
            .mapError { FileSystemError(.open, path: path, errno: $0) }.get()
    }

    func close(_ descriptor: Int32, path: String) throws {
        try calls.close(descriptor).mapError { FileSystemError(.close, path: path, errno: $0) }.get()
    }

    /// Writes all of `bytes`, continuing after short writes.
    func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws {
        var offset = 0
        while offset < bytes.count {
            let written = try retrying { calls.write(descriptor, UnsafeRawBufferPointer(rebasing: bytes[offset...])) }
                .mapError { FileSystemError(.write, path: path, errno: $0) }.get()
            guard written > 0 else { throw FileSystemError(.write, path: path, errno: .noSpace) }
            offset += written
        }
    }

    func fsync(_ descriptor: Int32, path: String) throws {
        try retrying { calls.fsync(descriptor) }.mapError { FileSystemError(.fsync, path: path, errno: $0) }.get()
    }

    func mkdir(_ path: String, in directory: Int32 = AT_FDCWD, mode: mode_t = 0o755) throws {
        try retrying { calls.mkdirat(directory, path, mode) }.mapError { FileSystemError(.mkdir, path: path, errno: $0) }.get()
    }

    func rename(_ from: String, to: String, noReplace: Bool) -> Result<Void, Errno> {
        retrying { calls.renameat(AT_FDCWD, from, AT_FDCWD, to, noReplace) }
    }

    func link(_ from: String, to: String) -> Result<Void, Errno> {
        retrying { calls.linkat(AT_FDCWD, from, AT_FDCWD, to) }
    }

    func unlink(_ path: String, isDirectory: Bool) throws {
        try retrying { calls.unlinkat(AT_FDCWD, path, isDirectory) }
            .mapError { FileSystemError(isDirectory ? .rmdir : .unlink, path: path, errno: $0) }.get()
    }

    func list(_ path: String) throws -> [SystemCalls.DirectoryEntry] {
        try retrying { calls.listDirectory(path) }.mapError { FileSystemError(.list, path: path, errno: $0) }.get()
    }

    /// The status of `path`, or `nil` when nothing is there.
    func status(_ path: String) throws -> SystemCalls.FileStatus? {
        switch retrying({ calls.stat(path) }) {
        case .success(let status): return status
        case .failure(let errno) where errno == .noEntry || errno == .notDirectory: return nil
        case .failure(let errno): throw FileSystemError(.stat, path: path, errno: errno)
        }
    }

    /// Reads the whole file at `path`: open, read until the end, close.
    ///
    /// Reads go straight into the returned buffer, which starts at 4 KiB (a revision's
    /// metadata fits in one read) and doubles as needed.
    func readAll(_ path: String) throws -> Data {
        let descriptor = try open(path, flags: O_RDONLY)
        defer { _ = calls.close(descriptor) }
        var data = Data(count: 4096)
        var count = 0
        while true {
            if count == data.count { data.count *= 2 }
            let read = try data.withUnsafeMutableBytes { buffer in
                try retrying { calls.read(descriptor, UnsafeMutableRawBufferPointer(rebasing: buffer[count...])) }
                    .mapError { FileSystemError(.read, path: path, errno: $0) }.get()
            }
            if read == 0 { break }
            count += read
        }
        data.count = count
        return data
    }

    /// Opens the directory at `path` and fsyncs it: its entries reach stable storage.
    func fsyncDirectory(_ path: String) throws {
        let descriptor = try open(path, flags: O_RDONLY | O_DIRECTORY)
        defer { _ = calls.close(descriptor) }
        try fsync(descriptor, path: path)
    }
}
