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
public struct FileReader {
    private let system: System

    /// The system calls this reader makes.
    public var calls: SystemCalls { system.calls }

    /// - Parameter calls: The system calls to use.
    public init(calls: SystemCalls = .live) {
        system = System(calls: calls)
    }

    /// The bytes of the file at `path`, or `nil` when there is no such file.
    ///
    /// The corresponding C functions are `openat`, `read` and `close`.
    /// - Throws: ``FileSystemError`` for any other failure (a folder, an I/O error).
    public func contents(atPath path: String) throws -> Data? {
        do {
            return try system.readAll(path)
        } catch let error as FileSystemError where error.code == .notFound || error.errno == .notDirectory {
            return nil
        }
    }

    /// The entries of the folder at `path`, or `nil` when there is no such folder.
    ///
    /// The corresponding C functions are `opendir` and `readdir`.
    /// - Throws: ``FileSystemError`` for any other failure.
    public func entries(atPath path: String) throws -> [SystemCalls.DirectoryEntry]? {
        do {
            return try system.list(path)
        } catch let error as FileSystemError where error.code == .notFound || error.errno == .notDirectory {
            return nil
        }
    }

    /// The names in the folder at `path`; empty when there is no such folder.
    public func names(atPath path: String) throws -> [String] {
        try entries(atPath: path)?.map(\.name) ?? []
    }

    /// What is at `path`, or `nil` when nothing is.
    ///
    /// The corresponding C function is `fstatat`.
    /// - Throws: ``FileSystemError`` for a failure other than absence.
    public func status(atPath path: String) throws -> SystemCalls.FileStatus? {
        try system.status(path)
    }

    /// Whether anything is at `path`; a failed look-up counts as absence.
    public func exists(_ path: String) -> Bool {
        ((try? system.status(path)) ?? nil) != nil
    }
}
