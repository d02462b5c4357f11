import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One file of a package: its name and its bytes.
public struct PackageFile: Sendable, Equatable {
    /// The file's name inside the package.
    public var name: String
    /// The file's bytes.
    public var contents: Data

    /// Creates a file to write.
    public init(name: String, contents: Data) {
        self.name = name
        self.contents = contents
    }
}

/// Creates files and file packages in a store atomically and durably.
///
/// Everything is first written under the temporary folder it is given (one a sync engine
/// never copies, so that it never copies an in-flight write), every file is fsynced, the package directory is fsynced, it is
/// renamed into place with `renameat2(RENAME_NOREPLACE)`, and the destination's parent
/// directory is fsynced; only then does a write return. A crash at any instant leaves
/// the destination absent or complete, plus at most a temporary that
/// ``removeLeftovers()`` deletes.
///
/// Where the file system refuses `RENAME_NOREPLACE` (`EINVAL`, `ENOSYS`), files are moved
/// with `link` and `unlink` (which fail rather than replace), and packages with a plain
/// `rename`, which cannot replace an existing package either, since a package is never
/// an empty directory.
public struct PackageWriter: Sendable {
    /// The outcome of a write.
    public enum Outcome: Sendable, Equatable {
        /// The destination was created.
        case created
        /// Something already had the destination's name; nothing was changed.
        case alreadyExists
        /// The destination's folder refused it (the error, which the caller's `refusing`
        /// accepted as such: permission denied, say); nothing was changed there. Only
        /// ``publish(_:creatingFolders:refusing:)`` gives it.
        case refused(FileSystemError)
    }

    /// The store's root folder.
    public let root: String
    let system: System
    private let temporaryPath: String
    private let locksPath: String
    /// Makes the temporary and lock folders when a lock finds them missing (see
    /// ``lock(at:mode:wait:)``); `nil`: such a lock fails.
    private let makeFolders: (@Sendable () throws -> Void)?

    /// The system calls this writer makes.
    public var calls: SystemCalls { system.calls }

    /// The folder for temporary files, never synced.
    public var temporaryFolder: String { root + "/" + temporaryPath }
    /// The folder for lock files.
    public var locksFolder: String { root + "/" + locksPath }

    /// - Parameters:
    ///   - root: The store's root folder, which must exist.
    ///   - temporaryFolder: The folder for writes in progress, relative to `root`: one a
    ///     file-sync engine never copies.
    ///   - locksFolder: The folder for lock files, relative to `root`.
    ///   - calls: The system calls to use.
    ///   - makeFolders: What makes the temporary and lock folders, and whatever must come
    ///     with them, when a lock finds them missing: a store that came without them has
    ///     them made by its first write, never before. `nil`: the writer expects them made
    ///     by ``prepare()``, and a lock that finds them missing fails.
    public init(
        root: String, temporaryFolder: String, locksFolder: String, calls: SystemCalls = .live,
        makeFolders: (@Sendable () throws -> Void)? = nil
    ) {
        self.root = root
        temporaryPath = temporaryFolder
        locksPath = locksFolder
        system = System(calls: calls, root: root)
        self.makeFolders = makeFolders
    }

    /// Creates the temporary and lock folders (and the folders that hold them) if they
    /// are missing.
    ///
    /// - Throws: ``FileSystemError``, also when one of them is a link or a file (code
    ///   `symbolicLink` or `notRegularFile`): nothing is ever written through a link.
    public func prepare() throws {
        for folder in [temporaryPath, locksPath] {
            var path = ""
            for component in folder.split(separator: "/") {
                path += (path.isEmpty ? "" : "/") + component
                try createDirectory(path)
            }
        }
    }

    /// Makes the temporary and lock folders when either is missing, as a lock that finds
    /// them missing does: through `makeFolders` when the writer was given it (with what
    /// comes with them), else with ``prepare()``. For a write that needs them before it
    /// takes a lock.
    ///
    /// - Throws: ``FileSystemError``, also when one of them is a link or a file.
    public func prepareIfMissing() throws {
        let present = try [temporaryFolder, locksFolder].allSatisfy {
            try system.status($0)?.kind == .directory
        }
        guard !present else { return }
        if let makeFolders { try makeFolders() } else { try prepare() }
    }

    /// Creates the root folder and any missing parents, fsyncing each parent whose
    /// entries changed.
    ///
    /// The corresponding C functions are `mkdirat` and `fsync`.
    /// - Throws: ``FileSystemError``. A failed fsync names the folder made, whose
    ///   creation could not be made durable, as the root names it (`a/b` for a root
    ///   `a/b/store`), not the parent fsynced (which is `.` for the first folder of a
    ///   relative root).
    public func createRoot() throws {
        var missing: [String] = []
        // `new/` names the folder `new`: a name is made without the slashes after it.
        var path = SafeName.withoutTrailingSlashes(root)
        while !path.isEmpty, path != "/", path != ".", try system.status(path) == nil {
            missing.append(path)
            path = Self.parent(of: path)
        }
        for folder in missing.reversed() {
            do {
                try system.mkdir(folder)
            } catch let error as FileSystemError where error.code == .alreadyExists {
                continue
            }
            try system.fsyncParent(of: folder)
        }
    }

    /// Creates the folder at `relativePath` (if missing) and fsyncs its parent.
    ///
    /// A folder already there (nearly always: a document's folder at each save) is
    /// found by its status alone, without a `mkdirat` that fails.
    ///
    /// The corresponding C functions are `fstatat`, `mkdirat` and `fsync`.
    /// - Throws: ``FileSystemError``, also when something other than a folder has the
    ///   name (a link: code `symbolicLink`; a regular file: `alreadyExists`, "File exists";
    ///   a FIFO, socket or device: `notRegularFile`).
    /// - Returns: Whether this call made the folder.
    @discardableResult
    public func createDirectory(_ relativePath: String) throws -> Bool {
        let path = root + "/" + relativePath
        if let kind = try system.status(path)?.kind {
            try Self.requireFolder(kind, at: path)
            return false
        }
        do {
            try system.mkdir(path)
        } catch let error as FileSystemError where error.code == .alreadyExists {
            // Made by another writer since the status was read.
            try Self.requireFolder(try system.status(path)?.kind, at: path)
            return false
        }
        do {
            try system.fsyncDirectory(Self.parent(of: path))
        } catch {
            // Not made durable: not left behind either, while it is still empty.
            removeIfEmpty(relativePath)
            throw error
        }
        return true
    }

    /// Removes the folder at `relativePath` if it is empty, and does nothing otherwise (a
    /// folder with anything in it, a missing one, or a failure to remove it).
    ///
    /// The corresponding C function is `unlinkat` with `AT_REMOVEDIR`, which removes only
    /// an empty folder.
    public func removeIfEmpty(_ relativePath: String) {
        try? system.unlink(root + "/" + relativePath, isDirectory: true)
    }

    /// Accepts a folder of `kind` at `path`, where a folder was to be made; throws why
    /// not for anything else: a link (code `symbolicLink`), a regular file
    /// (`alreadyExists`, "File exists"), a FIFO, socket or device (`notRegularFile`).
    static func requireFolder(_ kind: SystemCalls.FileKind?, at path: String) throws {
        switch kind {
        case .directory?: return
        case .symbolicLink?: throw FileSystemError(.symbolicLink, operation: .mkdir, path: path)
        case .regular?: throw FileSystemError(.mkdir, path: path, errno: .exists)
        default: throw FileSystemError(.notRegularFile, operation: .mkdir, path: path)
        }
    }

    /// Writes a package of `files` at `relativePath` (a folder that must not exist yet;
    /// its parent must).
    ///
    /// - Returns: `.created`, or `.alreadyExists` when the name was taken, in which case
    ///   nothing changed.
    /// - Throws: ``FileSystemError``; after a failure the destination is absent.
    public func writePackage(_ files: [PackageFile], at relativePath: String) throws -> Outcome {
        let destination = root + "/" + relativePath
        let writing = try writerLock()
        defer { writing.unlock() }
        let temporary = temporaryFolder + "/" + Self.temporaryName()
        try system.mkdir(temporary)
        do {
            try system.writeFiles(files, into: temporary)
            try system.fsyncDirectory(temporary)
            let outcome = try moveIntoPlace(temporary, destination, isDirectory: true)
            if outcome == .alreadyExists { try removeTree(temporary) }
            return outcome
        } catch {
            try? removeTree(temporary)
            throw error
        }
    }

    /// Completes a package that a file-sync engine left half copied: each of `files`
    /// missing from the folder at `relativePath` is added atomically and durably; files
    /// already there are left as they are (they are never modified).
    ///
    /// - Returns: The names of the files added.
    /// - Throws: ``FileSystemError``.
    @discardableResult
    public func completePackage(_ files: [PackageFile], at relativePath: String) throws -> [String] {
        var added: [String] = []
        for file in files where try writeFile(file.contents, at: relativePath + "/" + file.name) == .created {
            added.append(file.name)
        }
        return added
    }

    /// Writes one file at `relativePath` atomically and durably, never replacing an
    /// existing file.
    ///
    /// - Returns: `.created` or `.alreadyExists`.
    /// - Throws: ``FileSystemError``; after a failure the destination is absent.
    public func writeFile(_ contents: Data, at relativePath: String) throws -> Outcome {
        let destination = root + "/" + relativePath
        return try withDurableTemporary(contents) { temporary in
            let outcome = try moveIntoPlace(temporary, destination, isDirectory: false)
            if outcome == .alreadyExists { try system.unlink(temporary, isDirectory: false) }
            return outcome
        }
    }

    /// Replaces the file at `relativePath` (or creates it) atomically and durably.
    ///
    /// For this replica's local state, which is never synced, and for a repair: a file
    /// under `Documents/` is replaced only when its bytes are damaged, by the only bytes
    /// that verify. The new bytes are written and fsynced under a temporary name, renamed
    /// over the old file, and the parent is fsynced. What stands in the file's place is
    /// replaced itself, never followed: a link, a FIFO, socket or device; an empty folder
    /// is removed first (a crash right after leaves the file absent, a package not complete
    /// yet, which a sync completes).
    ///
    /// - Throws: ``FileSystemError``; after a failure the old file is unchanged. A folder
    ///   in its place that is not empty stays, and the error's `errno` is `notEmpty`.
    public func replaceFile(_ contents: Data, at relativePath: String) throws {
        let destination = root + "/" + relativePath
        try withDurableTemporary(contents) { temporary in
            var renamed = try system.rename(temporary, to: destination, noReplace: false)
            if case .failure(.isDirectory) = renamed {
                try system.unlink(destination, isDirectory: true)
                renamed = try system.rename(temporary, to: destination, noReplace: false)
            }
            try renamed.mapError { FileSystemError(.rename, path: destination, errno: $0) }.get()
            try system.fsyncDirectory(Self.parent(of: destination))
        }
    }

    /// Holding the writers' lock, writes `contents` durably under a new temporary name
    /// and hands that name to `publish`; the temporary is removed if `publish` fails.
    private func withDurableTemporary<T>(_ contents: Data, _ publish: (String) throws -> T) throws -> T {
        let writing = try writerLock()
        defer { writing.unlock() }
        let temporary = temporaryFolder + "/" + Self.temporaryName()
        do {
            try system.writeDurably(contents, to: temporary)
            return try publish(temporary)
        } catch {
            try? system.unlink(temporary, isDirectory: false)
            throw error
        }
    }

    /// Removes temporaries left by writes that never finished (a crash, a kill).
    ///
    /// Writers hold the shared writers' lock while they write; this takes it exclusively
    /// without waiting, so it removes nothing while any process is writing, and returns
    /// whether it could clean up.
    ///
    /// - Throws: ``FileSystemError`` when a leftover cannot be removed.
    @discardableResult
    public func removeLeftovers() throws -> Bool {
        let cleaning: FileLock
        do {
            cleaning = try lock(at: writersLock, mode: .exclusive, wait: false)
        } catch let error as FileSystemError where error.code == .locked {
            return false
        }
        defer { cleaning.unlock() }
        for entry in try system.list(temporaryFolder) {
            try removeEntry(temporaryFolder + "/" + system.nameable(entry, in: temporaryFolder), entry.kind)
        }
        return true
    }

    /// Removes the name `relativePath` when it is not a folder (a file, a link, a FIFO,
    /// socket or device; a link is removed itself, never followed), and fsyncs its parent.
    ///
    /// - Throws: ``FileSystemError``; a folder there stays, and the error's `errno` is
    ///   `isDirectory`.
    public func removeNonFolder(_ relativePath: String) throws {
        try unlinkDurably(root + "/" + relativePath)
    }

    /// Removes the name `path` (never a folder, never following a link) and fsyncs its parent.
    private func unlinkDurably(_ path: String) throws {
        try system.unlink(path, isDirectory: false)
        try system.fsyncDirectory(Self.parent(of: path))
    }

    /// Removes the package (or file) at `relativePath`, if it is there, and fsyncs its
    /// parent. Files are removed before their folder, so a crash leaves at worst an
    /// incomplete package that the caller's tombstone already disowns.
    ///
    /// The corresponding C functions are `unlinkat` and `fsync`.
    /// - Throws: ``FileSystemError``.
    public func remove(_ relativePath: String) throws {
        let path = root + "/" + relativePath
        let entries: [SystemCalls.DirectoryEntry]
        do {
            entries = try system.list(path)
        } catch let error as FileSystemError where error.code == .notFound {
            return
        } catch let error as FileSystemError where error.errno == .notDirectory || error.code == .symbolicLink
        {
            // A file, or a link: the name is removed, never what a link points to.
            try unlinkDurably(path)
            return
        }
        // Another process may be removing the same package at the same moment (two
        // commands cleaning up one resurrected copy): what it removed first is done.
        for entry in entries {
            try Self.ignoringNotFound {
                try removeEntry(path + "/" + system.nameable(entry, in: path), entry.kind)
            }
        }
        try Self.ignoringNotFound { try system.unlink(path, isDirectory: true) }
        try system.fsyncDirectory(Self.parent(of: path))
    }

    private static func ignoringNotFound(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as FileSystemError where error.code == .notFound {}
    }

    // MARK: Steps

    func writerLock() throws -> FileLock {
        try lock(at: writersLock, mode: .shared)
    }

    /// The writers' lock file, relative to the root: writers hold it shared, the removal
    /// of leftovers exclusively.
    private var writersLock: String { locksPath + "/" + Self.writersLockName }

    /// The name of the lock file every writer takes (in the folder of lock files).
    public static let writersLockName = "writers.lock"

    /// Takes the lock of the file at `relativePath` (beneath the root, created if
    /// missing, never through a link), opened through the descriptor of the root this
    /// writer holds rather than the root opened anew.
    ///
    /// Every write takes a lock first (the writers' lock, a document's), so this is where
    /// a writer given `makeFolders` makes its folders when they are missing: the lock is
    /// taken again once they are made.
    public func lock(at relativePath: String, mode: FileLock.Mode, wait: Bool = true) throws -> FileLock {
        let path = root + "/" + relativePath
        do {
            return try FileLock(path: path, mode: mode, wait: wait, system: system)
        } catch let error as FileSystemError where error.code == .notFound {
            // The lock file is created when missing, so what is missing is its folder.
            guard let makeFolders else { throw error }
            try makeFolders()
            return try FileLock(path: path, mode: mode, wait: wait, system: system)
        }
    }

    /// Renames `temporary` to `destination` without replacing anything, then fsyncs the
    /// destination's parent.
    private func moveIntoPlace(_ temporary: String, _ destination: String, isDirectory: Bool) throws
        -> Outcome
    {
        switch try system.moveWithoutReplacing(
            temporary, to: destination, isDirectory: isDirectory, syncingDestinationFolder: true)
        {
        case .success:
            return .created
        case .failure(let errno) where errno == .exists || errno == .notEmpty:
            return .alreadyExists
        case .failure(let errno):
            throw FileSystemError(.rename, path: destination, errno: errno)
        }
    }

    /// Removes a folder and everything in it; links and special files in it are removed
    /// themselves, never followed.
    func removeTree(_ path: String) throws {
        // Parts of a tree nested too deep are moved up and removed after it, one after
        // another: neither the recursion nor a path grows with the tree's depth.
        var movedUp = [path]
        while let next = movedUp.popLast() {
            try removeTree(next, depth: 0, movingUp: &movedUp)
        }
    }

    private func removeTree(_ path: String, depth: Int, movingUp movedUp: inout [String]) throws {
        for entry in try system.list(path) {
            let child = path + "/" + (try system.nameable(entry, in: path))
            guard try resolvedKind(child, entry.kind) == .directory else {
                try system.unlink(child, isDirectory: false)
                continue
            }
            if depth >= Self.deepestRemoval || child.utf8.count > Self.deepestRemovalPath {
                // Moved up into the temporary folder, where its own path is short (a path
                // may not exceed `PATH_MAX`), and removed from there.
                let shallow = temporaryFolder + "/" + Self.temporaryName()
                if case .success = try system.rename(child, to: shallow, noReplace: true) {
                    movedUp.append(shallow)
                    continue
                }
            }
            try removeTree(child, depth: depth + 1, movingUp: &movedUp)
        }
        try system.unlink(path, isDirectory: true)
    }

    /// How many folders deep, and how long a path, ``removeTree(_:)`` goes before it moves
    /// the rest of a tree up.
    static let deepestRemoval = 64
    static let deepestRemovalPath = 2048

    func removeEntry(_ path: String, _ kind: SystemCalls.FileKind) throws {
        if try resolvedKind(path, kind) == .directory {
            try removeTree(path)
        } else {
            try system.unlink(path, isDirectory: false)
        }
    }

    /// `kind` as a listing gave it, looked up when the file system did not say.
    private func resolvedKind(_ path: String, _ kind: SystemCalls.FileKind) throws -> SystemCalls.FileKind {
        kind == .unknown ? try system.status(path)?.kind ?? .regular : kind
    }

    static func parent(of path: String) -> String { System.parent(of: path) }

    /// A unique, lower-case temporary name: the process id and random bits, both taken
    /// once per process, then a counter (a sync names tens of thousands of files, and
    /// each `getpid` and `getrandom` was a system call).
    static func temporaryName() -> String {
        let serial = temporaryNames.wrappingAdd(1, ordering: .relaxed).newValue
        return temporaryPrefix + String(serial, radix: 16) + ".tmp"
    }

    private static let temporaryPrefix =
        "\(getpid())-\(String(UInt64.random(in: 0...UInt64.max), radix: 16))-"
    private static let temporaryNames = Atomic<UInt64>(0)
}
