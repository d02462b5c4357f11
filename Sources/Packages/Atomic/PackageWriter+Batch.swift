import Foundation

extension PackageWriter {
    /// One destination of a batch (see ``PackageWriter/writeBatch(_:creatingFolders:)``):
    /// a package (a folder of files) or a single file.
    public struct BatchItem: Sendable, Equatable {
        /// Where it goes, relative to the store's root.
        public var path: String
        /// The package's files, or the file's bytes as one element.
        public var files: [PackageFile]
        /// Whether ``path`` is a package folder (or a single file).
        public var isPackage: Bool

        /// A package of `files` at `path`.
        public static func package(_ files: [PackageFile], at path: String) -> BatchItem {
            BatchItem(path: path, files: files, isPackage: true)
        }

        /// A single file of `contents` at `path`.
        public static func file(_ contents: Data, at path: String) -> BatchItem {
            BatchItem(path: path, files: [PackageFile(name: "", contents: contents)], isPackage: false)
        }
    }

    /// Writes many packages and files with one flush to disk for all of them, each still
    /// atomic: at any crash every destination is absent or complete, and when this returns
    /// every destination it created is durable.
    ///
    /// The protocol, in order:
    /// 1. Every item is written under the temporary folder, without fsyncs
    ///    (``stage(_:)``).
    /// 2. The missing `folders` are created (`mkdirat`), each after its parent.
    /// 3. The batch is made durable at once: `syncfs(2)` on the store's file system, which
    ///    flushes every file and directory entry written so far.
    /// 4. Each item is renamed into place with `renameat2(RENAME_NOREPLACE)`.
    /// 5. The renames are made durable: a second `syncfs`, which flushes every parent
    ///    folder at once.
    ///
    /// A batch of at most ``largestBatchSyncedItemByItem`` items (one) is made durable
    /// item by item instead, as a single package is: at step 3 each of its files and each
    /// temporary package folder is fsynced, then the parent of each folder created; at
    /// step 5 the parent folder of every destination created is fsynced, once each.
    /// `syncfs` flushes everything dirty on the file system, other programs' writes too,
    /// so its cost has no bound that the batch sets, while a package's own fsyncs cost
    /// what it wrote. Larger batches take the same item-by-item path where `syncfs` does
    /// not exist (`ENOSYS`).
    ///
    /// A crash before step 4 leaves only temporaries (removed by ``removeLeftovers()``); a
    /// rename can only publish an item whose bytes are already durable.
    ///
    /// - Parameters:
    ///   - items: What to write; destinations must not exist yet (those that do are left
    ///     as they are and reported `.alreadyExists`).
    ///   - folders: Folders, relative to the root, to create first when missing (parents
    ///     before children).
    /// - Returns: Each item's outcome, in the order of `items`.
    /// - Throws: ``FileSystemError``; the temporaries not published are removed.
    public func writeBatch(_ items: [BatchItem], creatingFolders folders: [String] = []) throws -> [Outcome] {
        guard !items.isEmpty else { return [] }
        let writing = try writerLock()
        defer { writing.unlock() }
        return try publish(try stage(items), creatingFolders: folders)
    }

    /// The largest batch that ``publish(_:creatingFolders:refusing:)`` makes durable item by item
    /// (each file and package folder fsynced before its rename, each parent after it)
    /// rather than with `syncfs`: a batch of one, whose own fsyncs cost what it wrote,
    /// while `syncfs` also waits for everything else dirty on the file system (see
    /// `docs/FORMAT.md` for the figures).
    public static let largestBatchSyncedItemByItem = 1

    /// An item of a batch written under the temporary folder and not yet published (see
    /// ``stage(_:)``).
    public struct StagedItem: Sendable {
        /// What was written, and where it goes.
        public let item: BatchItem
        /// The temporary package folder or file that holds it.
        let temporary: String
    }

    /// Step 1 of ``writeBatch(_:creatingFolders:)`` on its own: writes `items` under the
    /// temporary folder, without fsyncs, to be published later by
    /// ``publish(_:creatingFolders:refusing:)`` or removed by ``discard(_:)``. Safe to call from
    /// several threads at once. The caller holds ``lockForWriting()`` from before this
    /// call until they are published or discarded, so that no writer opening the store
    /// takes them for leftovers.
    ///
    /// - Throws: ``FileSystemError``; what this call wrote is removed.
    public func stage(_ items: [BatchItem]) throws -> [StagedItem] {
        guard !items.isEmpty else { return [] }
        let folder = try system.openFolder(atPath: temporaryFolder)
        defer { _ = system.calls.close(folder) }
        var staged: [StagedItem] = []
        do {
            for item in items {
                let name = Self.temporaryName()
                let temporary = temporaryFolder + "/" + name
                if item.isPackage {
                    try system.mkdir(name, in: folder, path: temporary)
                    staged.append(StagedItem(item: item, temporary: temporary))
                    for file in item.files {
                        guard SafeName.isValidComponent(file.name) else {
                            throw FileSystemError(
                                .invalidName, operation: .open, path: temporary + "/" + file.name)
                        }
                        try system.writeWithoutSync(
                            file.contents, to: name + "/" + file.name, in: folder,
                            path: temporary + "/" + file.name)
                    }
                } else {
                    staged.append(StagedItem(item: item, temporary: temporary))
                    try system.writeWithoutSync(
                        item.files.first?.contents ?? Data(), to: name, in: folder, path: temporary)
                }
            }
        } catch {
            discard(staged)
            throw error
        }
        return staged
    }

    /// Removes staged items that will not be published.
    public func discard(_ staged: [StagedItem]) {
        for item in staged { try? removeTemporary(item.temporary) }
    }

    /// Steps 2 to 5 of ``writeBatch(_:creatingFolders:)`` for items staged by
    /// ``stage(_:)`` (from any threads, all of them finished): creates the missing
    /// `folders`, makes every staged item durable (at once, or item by item for a batch
    /// of at most ``largestBatchSyncedItemByItem``), renames each into place and makes
    /// the renames durable. The caller holds ``lockForWriting()``.
    ///
    /// With `refusing`, a folder that cannot be made, or an item that cannot be renamed
    /// into place, with an error that `refusing` accepts (a folder another user owns, a
    /// read-only file system) does not fail the batch: each item bound for that folder, or
    /// that item, is `.refused` and removed from the temporary folder, and the others are
    /// published. Any other failure fails the batch, as it always does.
    ///
    /// - Returns: Each item's outcome, in the order of `staged`.
    /// - Throws: ``FileSystemError``; the staged items not published are removed.
    public func publish(
        _ staged: [StagedItem], creatingFolders folders: [String] = [],
        refusing isRefusal: (FileSystemError) -> Bool = { _ in false }
    ) throws -> [Outcome] {
        guard !staged.isEmpty else { return [] }
        var unpublished = staged.map { Optional($0.temporary) }
        var created: [String] = []
        var finished = false
        defer {
            for case let temporary? in unpublished { try? removeTemporary(temporary) }
            // A folder made for a batch that failed is not left behind while it is empty
            // (a document folder with no revision in it), innermost first.
            if !finished {
                for folder in created.reversed() { removeIfEmpty(folder) }
            }
        }
        // Folders that refused to be made, and why: what goes into them is refused too.
        var refusedFolders: [(folder: String, error: FileSystemError)] = []
        for folder in folders {
            do {
                if try makeFolder(root + "/" + folder) { created.append(folder) }
            } catch let error as FileSystemError where isRefusal(error) {
                refusedFolders.append((folder, error))
            }
        }
        // A small batch, or a file system without syncfs: each item fsynced on its own.
        let flushed =
            staged.count > Self.largestBatchSyncedItemByItem
            ? try system.syncFileSystem(temporaryFolder) : false
        if !flushed {
            for entry in staged {
                if entry.item.isPackage {
                    for file in entry.item.files {
                        try system.fsyncPath(entry.temporary + "/" + file.name, isDirectory: false)
                    }
                }
                try system.fsyncPath(entry.temporary, isDirectory: entry.item.isPackage)
            }
            for parent in Set(created.map { Self.parent(of: root + "/" + $0) }).sorted() {
                try system.fsyncDirectory(parent)
            }
        }
        // The temporary folder is opened once for the batch, and a destination's parent
        // while items go into it (a document's packages come one after another): a batch
        // holds two descriptors, however many folders it writes into, so that a process
        // with a low limit of open files (256 by default on macOS) can publish any batch.
        let temporaryDescriptor = try system.openFolder(atPath: temporaryFolder)
        defer { _ = system.calls.close(temporaryDescriptor) }
        var parentFolder: (path: String, descriptor: Int32)?
        defer { if let parentFolder { _ = system.calls.close(parentFolder.descriptor) } }
        func opened(_ path: String) throws -> Int32 {
            if let parentFolder {
                if parentFolder.path == path { return parentFolder.descriptor }
                _ = system.calls.close(parentFolder.descriptor)
            }
            parentFolder = nil
            let descriptor = try system.openFolder(atPath: path)
            parentFolder = (path, descriptor)
            return descriptor
        }
        var outcomes: [Outcome] = []
        var parents = Set<String>()
        for (index, entry) in staged.enumerated() {
            if let refusal = refusedFolders.first(where: { entry.item.path.hasPrefix($0.folder + "/") }) {
                outcomes.append(.refused(refusal.error))
                continue
            }
            let destination = root + "/" + entry.item.path
            let name = System.lastComponent(of: destination)
            guard !name.isEmpty, name != ".", name != ".." else {
                throw FileSystemError(.invalidName, operation: .rename, path: destination)
            }
            switch try system.moveWithoutReplacing(
                System.lastComponent(of: entry.temporary), in: temporaryDescriptor, to: name,
                in: opened(Self.parent(of: destination)), isDirectory: entry.item.isPackage, path: destination
            )
            {
            case .success:
                unpublished[index] = nil
                parents.insert(Self.parent(of: destination))
                outcomes.append(.created)
            case .failure(let errno) where errno == .exists || errno == .notEmpty:
                outcomes.append(.alreadyExists)
            case .failure(let errno):
                let error = FileSystemError(.rename, path: destination, errno: errno)
                guard isRefusal(error) else { throw error }
                outcomes.append(.refused(error))
            }
        }
        // The renames' entries: every parent at once by a second flush, or each fsynced.
        if !parents.isEmpty, try !flushed || !system.syncFileSystem(temporaryFolder) {
            for parent in parents.sorted() { try system.fsyncDirectory(parent) }
        }
        finished = true
        return outcomes
    }

    /// Holds the store's writers' lock (shared) until unlocked: temporaries written
    /// meanwhile are never taken for leftovers (see ``stage(_:)``).
    public func lockForWriting() throws -> FileLock {
        try writerLock()
    }

    /// Creates the folder at `path` without fsyncing its parent; `false` when a folder is
    /// there already.
    private func makeFolder(_ path: String) throws -> Bool {
        do {
            try system.mkdir(path)
            return true
        } catch let error as FileSystemError where error.code == .alreadyExists {
            try Self.requireFolder(try system.status(path)?.kind, at: path)
            return false
        }
    }

    private func removeTemporary(_ path: String) throws {
        guard let kind = try system.status(path)?.kind else { return }
        try removeEntry(path, kind)
    }
}
