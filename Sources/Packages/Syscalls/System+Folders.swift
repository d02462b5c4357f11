import Foundation

/// Calls made relative to a folder opened once, for writers that make many entries in a
/// few folders (a batch): each name is resolved in its folder, never through a link,
/// without opening the folder again for each call.
extension System {
    /// Opens the folder at `path` (never through a link) for calls relative to it; the
    /// caller closes it.
    func openFolder(atPath path: String) throws -> Int32 {
        try open(path, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
    }

    /// Creates the folder `name` in the open `folder`; `path` names it in errors.
    func mkdir(_ name: String, in folder: Int32, path: String, mode: mode_t = 0o755) throws {
        try retrying { calls.mkdirat(folder, name, mode) }.mapError {
            FileSystemError(.mkdir, path: path, errno: $0)
        }.get()
    }

    /// Creates `name` (a path beneath the open `folder`) exclusively, never through a
    /// link, writes `contents` and closes it, without fsyncing: the caller makes it
    /// durable (``syncFileSystem(_:)``). `path` names it in errors.
    func writeWithoutSync(_ contents: Data, to name: String, in folder: Int32, path: String) throws {
        let descriptor = try retrying {
            calls.openat(folder, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        }
        .mapError { FileSystemError(.open, path: path, errno: $0) }.get()
        do {
            try contents.withUnsafeBytes { try writeAll(descriptor, $0, path: path) }
        } catch {
            _ = calls.close(descriptor)
            throw error
        }
        try close(descriptor, path: path)
    }

    /// Renames the entry `from` of the open folder `fromFolder` to `to` in `toFolder`
    /// without ever replacing what is there, as ``moveWithoutReplacing(_:to:isDirectory:)``
    /// does for whole paths (with the same fallback where `RENAME_NOREPLACE` is unknown).
    /// `path` names the destination in errors.
    func moveWithoutReplacing(
        _ from: String, in fromFolder: Int32, to: String, in toFolder: Int32, isDirectory: Bool, path: String
    ) throws -> Result<Void, Errno> {
        var result = retrying { calls.renameat(fromFolder, from, toFolder, to, true) }
        if case .failure(let errno) = result, errno == .invalid || errno == .notSupported {
            if isDirectory {
                result = retrying { calls.renameat(fromFolder, from, toFolder, to, false) }
            } else {
                result = retrying { calls.linkat(fromFolder, from, toFolder, to) }
                if case .success = result {
                    try retrying { calls.unlinkat(fromFolder, from, false) }
                        .mapError { FileSystemError(.unlink, path: path, errno: $0) }.get()
                }
            }
        }
        return result
    }
}
