import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads files and folders of a store through the file layer's ``SystemCalls``.
///
/// Every read of the store goes through here rather than through Foundation, so that a
/// test can run the whole store on a simulated disk (and crash it at any call).
///
/// A reader confined to a root folder never follows a symbolic link beneath it: a link
/// where a file or folder belongs is reported as ``FileSystemError/Code/symbolicLink``.
/// Only regular files are read, each up to a size limit checked before reading.
public struct FileReader: Sendable {
    let system: System

    /// The system calls this reader makes.
    public var calls: SystemCalls { system.calls }

    /// The largest metadata, tombstone or settings file read: 1 MiB.
    public static let smallFileLimit = 1 << 20
    /// The largest content file read: 256 MiB.
    public static let contentLimit = 256 << 20

    /// - Parameters:
    ///   - root: The folder beneath which no link is ever followed (a store's root, a
    ///     package being imported); `nil` to read paths as given.
    ///   - calls: The system calls to use.
    public init(root: String? = nil, calls: SystemCalls = .live) {
        system = System(calls: calls, root: root)
    }

    /// The bytes of the regular file at `path`, or `nil` when there is no such file.
    ///
    /// The corresponding C functions are `openat`, `fstat`, `read` and `close`.
    /// - Parameters:
    ///   - path: The file, beneath the reader's root when it has one.
    ///   - limit: The largest size read (``smallFileLimit`` unless given).
    /// - Throws: ``FileSystemError`` for any other failure: a folder, a link, a FIFO or
    ///   device (code `notRegularFile`), a file over `limit` (code `tooLarge`), an I/O error.
    public func contents(atPath path: String, limit: Int = FileReader.smallFileLimit) throws -> Data? {
        try contentsAndStatus(atPath: path, limit: limit)?.data
    }

    /// ``contents(atPath:limit:)``, with the status of the file read: taken from the
    /// descriptor the bytes were read through, so it describes that very file even when
    /// another has taken its name since.
    public func contentsAndStatus(
        atPath path: String, limit: Int = FileReader.smallFileLimit
    ) throws -> (data: Data, status: SystemCalls.FileStatus)? {
        do {
            return try system.readAll(path, limit: limit)
        } catch let error as FileSystemError where error.code == .notFound || error.errno == .notDirectory {
            return nil
        }
    }

    /// The entries of the folder at `path`, or `nil` when there is no such folder (a file
    /// or a link stands there, or nothing).
    ///
    /// The corresponding C functions are `openat`, `lseek` and `getdents64` (`readdir` where there is none).
    /// - Throws: ``FileSystemError`` for any other failure.
    public func entries(atPath path: String) throws -> [SystemCalls.DirectoryEntry]? {
        do {
            return try system.list(path)
        } catch let error as FileSystemError where error.isNoFolder {
            return nil
        }
    }

    /// The names in the folder at `path`; empty when there is no such folder.
    public func names(atPath path: String) throws -> [String] {
        try entries(atPath: path)?.map(\.name) ?? []
    }

    /// What is at `path` (a link reported as a link), or `nil` when nothing is.
    ///
    /// The corresponding C function is `fstatat` with `AT_SYMLINK_NOFOLLOW`.
    /// - Throws: ``FileSystemError`` for a failure other than absence.
    public func status(atPath path: String) throws -> SystemCalls.FileStatus? {
        try system.status(path)
    }

    /// Why this process may not write in the folder at `path` (add, rename and remove the
    /// names in it; `writingFile`: open the file at `path` for reading and writing): the
    /// error, `EACCES` or `EPERM` for its permissions, `EROFS` for a read-only file
    /// system; `nil` when it may, or when nothing is there. Follows no link.
    ///
    /// The corresponding C function is `faccessat` with `AT_EACCESS`.
    /// - Throws: ``FileSystemError`` when the question cannot be answered (an I/O error).
    public func writeDenial(atPath path: String, writingFile: Bool = false) throws -> Errno? {
        try system.denial(path, mode: writingFile ? R_OK | W_OK : W_OK | X_OK, isFolder: !writingFile)
    }

    /// Whether a process holds a lock on the lock file at `path` (shared or exclusive),
    /// asked without taking one and without write access; `nil` when nothing is there or
    /// it may not be opened. Follows no link.
    ///
    /// The corresponding C function is `fcntl` with `F_OFD_GETLK`.
    /// - Throws: ``FileSystemError`` when the question cannot be answered (an I/O error).
    public func isLockHeld(atPath path: String) throws -> Bool? {
        try system.isLockHeld(path)
    }

    /// Whether anything is at `path`; a failed look-up counts as absence.
    public func exists(_ path: String) -> Bool {
        ((try? system.status(path)) ?? nil) != nil
    }
}
