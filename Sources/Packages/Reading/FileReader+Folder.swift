import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension FileReader {
    /// A folder held open while its entries are looked at by name, so that each look-up
    /// costs one system call on the folder's descriptor instead of resolving the whole
    /// path again.
    ///
    /// The folder is opened beneath the reader's root without following a link, and every
    /// look-up in it names one entry, never followed either: nothing reached through a
    /// `Folder` passes through a symbolic link, even one put in place meanwhile.
    public struct Folder {
        fileprivate let system: System
        fileprivate let descriptor: Int32
        /// The folder's path, for messages.
        public let path: String

        /// The folder's entries, with the kinds the file system gives them.
        ///
        /// The corresponding C functions are `lseek` and `getdents64` (`readdir` where there is none).
        /// - Throws: ``FileSystemError`` when the folder cannot be read.
        public func entries() throws -> [SystemCalls.DirectoryEntry] {
            try system.list(descriptor: descriptor, path: path)
        }

        /// What the entry `name` is (a link reported as a link), or `nil` when there is none.
        ///
        /// The corresponding C function is `fstatat` with `AT_SYMLINK_NOFOLLOW`.
        /// - Throws: ``FileSystemError`` for a failure other than absence, and for a name
        ///   that is not a single path component.
        public func status(of name: String) throws -> SystemCalls.FileStatus? {
            try system.status(of: try checked(name), in: descriptor, path: path + "/" + name)
        }

        /// The bytes of the regular file `name` in this folder, with its status taken from
        /// the descriptor they were read through; `nil` when there is no such entry.
        ///
        /// The corresponding C functions are `openat` with `O_NOFOLLOW`, `fstat`, `read` and
        /// `close`.
        /// - Parameters:
        ///   - name: A single path component.
        ///   - limit: The largest size read (``FileReader/smallFileLimit`` unless given).
        /// - Throws: ``FileSystemError`` for any other failure, as
        ///   ``FileReader/contents(atPath:limit:)``: a link (code `symbolicLink`), a folder,
        ///   a FIFO or device, a file over `limit`, an I/O error; and for a name that is not a
        ///   single path component.
        public func contentsAndStatus(
            of name: String, limit: Int = FileReader.smallFileLimit
        ) throws -> (data: Data, status: SystemCalls.FileStatus)? {
            do {
                return try system.readAll(
                    try checked(name), in: descriptor, path: path + "/" + name, limit: limit)
            } catch let error as FileSystemError where error.code == .notFound || error.errno == .notDirectory
            {
                return nil
            }
        }

        /// Calls `body` with the entry `name` opened as a folder; `nil` when there is no
        /// such folder (nothing is there, or a file or a link is).
        ///
        /// The corresponding C functions are `openat` with `O_DIRECTORY | O_NOFOLLOW`, and `close`.
        /// - Throws: ``FileSystemError`` for any other failure, and what `body` throws.
        public func withSubfolder<T>(_ name: String, _ body: (Folder) throws -> T) throws -> T? {
            let full = path + "/" + name
            guard
                let opened = try system.openFolder(
                    try checked(name), in: descriptor, path: full)
            else { return nil }
            defer { _ = system.calls.close(opened) }
            return try body(Folder(system: system, descriptor: opened, path: full))
        }

        private func checked(_ name: String) throws -> String {
            guard SafeName.isValidComponent(name) else {
                throw FileSystemError(.invalidName, operation: .stat, path: path + "/" + name)
            }
            return name
        }
    }

    /// Calls `body` with the folder at `path` held open (see ``Folder``); `nil` when there
    /// is no such folder (nothing is there, or a file or a link is).
    ///
    /// With `linkIsError`, a symbolic link at `path` is reported (code `symbolicLink`)
    /// rather than taken as absence.
    ///
    /// The corresponding C functions are `openat` (beneath the reader's root, never through
    /// a link) and `close`; with `linkIsError`, also `fstatat` when the open finds no folder.
    /// - Throws: ``FileSystemError`` for any other failure, and what `body` throws.
    public func withFolder<T>(
        atPath path: String, linkIsError: Bool = false, _ body: (Folder) throws -> T
    ) throws -> T? {
        let descriptor: Int32
        do {
            descriptor = try system.openForReading(path, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
        } catch let error as FileSystemError
            where error.code == .notFound || (error.code == .symbolicLink && !linkIsError)
            || error.errno == .notDirectory
        {
            // Linux refuses a link opened with `O_DIRECTORY | O_NOFOLLOW` as "not a
            // directory", as it refuses a file: which it was is looked at only then.
            if linkIsError, error.errno == .notDirectory, try system.status(path)?.kind == .symbolicLink {
                throw FileSystemError(.symbolicLink, operation: .open, path: path)
            }
            return nil
        }
        defer { _ = system.calls.close(descriptor) }
        return try body(Folder(system: system, descriptor: descriptor, path: path))
    }
}

extension System {
    /// The entries of the open folder `descriptor`.
    func list(descriptor: Int32, path: String) throws -> [SystemCalls.DirectoryEntry] {
        try retrying { calls.listDirectory(descriptor) }.mapError {
            FileSystemError(.list, path: path, errno: $0)
        }.get()
    }

    /// The status of the entry `name` of the open folder `folder`, never followed; `nil`
    /// when there is none.
    func status(of name: String, in folder: Int32, path: String) throws -> SystemCalls.FileStatus? {
        switch retrying({ calls.stat(folder, name) }) {
        case .success(let status): return status
        case .failure(let errno) where errno == .noEntry || errno == .notDirectory: return nil
        case .failure(let errno): throw FileSystemError(.stat, path: path, errno: errno)
        }
    }

    /// Opens the entry `name` of the open folder `folder` as a folder, never through a
    /// link and keeping its access time (``keepingAccessTime(_:_:_:)``); `nil` when it is
    /// absent, a file or a link.
    func openFolder(_ name: String, in folder: Int32, path: String) throws -> Int32? {
        switch keepingAccessTime(folder, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW) {
        case .success(let descriptor): return descriptor
        case .failure(let errno)
        where errno == .noEntry || errno == .notDirectory || errno == .symbolicLinkLoop:
            return nil
        case .failure(let errno): throw FileSystemError(.open, path: path, errno: errno)
        }
    }
}
