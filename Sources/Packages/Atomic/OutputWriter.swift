import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes files and packages a person asked for outside any store (exports), durably,
/// and never in place of something that is not theirs to replace.
///
/// - A new file or package is written under a temporary name beside it, fsynced, renamed
///   into place and its folder fsynced. Missing parent folders are never created.
/// - An existing regular file is replaced the same way, atomically.
/// - A folder, or a package destination that exists already, is refused.
/// - A FIFO, a terminal or another device, or a symbolic link (`/dev/stdout`), is
///   written through, as a shell's `>` would: opened for writing without creating or
///   replacing anything.
public struct OutputWriter {
    private let system: System

    /// - Parameter calls: The system calls to use.
    public init(calls: SystemCalls = .live) {
        system = System(calls: calls)
    }

    /// Writes `contents` to the file at `path`.
    ///
    /// The corresponding C functions are `openat`, `write`, `fsync`, `renameat2`.
    /// - Throws: ``FileSystemError``: code `notFound` when the parent folder is missing,
    ///   `isDirectory` for a folder; any failure of the calls underneath (a failed fsync
    ///   of the folder after the rename names `path`).
    public func writeFile(_ contents: Data, to path: String) throws {
        switch try system.status(path)?.kind {
        case .directory?:
            throw FileSystemError(.isDirectory, operation: .open, path: path)
        case .symbolicLink?, .special?:
            // Written through, never replaced: a device, a FIFO, or a link the caller named.
            let descriptor = try system.open(path, flags: O_WRONLY | O_TRUNC | O_NOCTTY)
            defer { _ = system.calls.close(descriptor) }
            try contents.withUnsafeBytes { try system.writeAll(descriptor, $0, path: path) }
        case .regular?, .unknown?, nil:
            try requireParent(of: path)
            let temporary = temporaryName(beside: path)
            do {
                try system.writeDurably(contents, to: temporary)
                try system.rename(temporary, to: path, noReplace: false)
                    .mapError { FileSystemError(.rename, path: path, errno: $0) }.get()
            } catch {
                try? system.unlink(temporary, isDirectory: false)
                throw error
            }
            try system.fsyncParent(of: path)
        }
    }

    /// Writes a package of `files` as the new folder `path`, which must not exist.
    ///
    /// - Throws: ``FileSystemError`` with code `alreadyExists` when something has the
    ///   name already (nothing is changed), `notFound` when the parent folder is missing.
    public func writePackage(_ files: [PackageFile], at path: String) throws {
        let path = Self.folderPath(path)
        try requireParent(of: path)
        if try system.status(path) != nil {
            throw FileSystemError(.alreadyExists, operation: .mkdir, path: path)
        }
        let temporary = temporaryName(beside: path)
        try system.mkdir(temporary)
        do {
            try system.writeFiles(files, into: temporary)
            try system.fsyncDirectory(temporary)
            if case .failure(let errno) = try system.moveWithoutReplacing(
                temporary, to: path, isDirectory: true)
            {
                throw errno == .exists || errno == .notEmpty
                    ? FileSystemError(.alreadyExists, operation: .rename, path: path)
                    : FileSystemError(.rename, path: path, errno: errno)
            }
        } catch {
            for file in files { try? system.unlink(temporary + "/" + file.name, isDirectory: false) }
            try? system.unlink(temporary, isDirectory: true)
            throw error
        }
        try system.fsyncParent(of: path)
    }

    /// `path` without the slashes that end it: `DIR/` names the folder `DIR`, as a
    /// shell's completion writes it (`/` stays `/`).
    public static func folderPath(_ path: String) -> String {
        var path = path
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        return path
    }

    private func requireParent(of path: String) throws {
        let parent = System.parent(of: path)
        guard let status = try system.status(parent),
            status.kind == .directory || status.kind == .symbolicLink
        else {
            throw FileSystemError(.notFound, operation: .open, path: parent)
        }
    }

    private func temporaryName(beside path: String) -> String {
        System.parent(of: path) + "/." + System.lastComponent(of: path) + "." + PackageWriter.temporaryName()
    }

}
