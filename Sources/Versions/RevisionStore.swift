import Diagnostics
import Foundation
import Packages
import PropertyList
import Synchronization

/// The revisions of every document in a store folder, with content as opaque bytes.
///
/// Layout (see `docs/FORMAT.md`): `Documents/<document-uuid>/<revision-id>.survey/` holds
/// a revision's metadata and its content; a pruned revision leaves
/// `<revision-id>.pruned`, a copy of its metadata, so that its place in the graph stays
/// and a copy of the package brought back by a sync engine is removed, not resurrected.
/// All names are lower case. Files under `Documents/` are written once and never changed.
public final class RevisionStore: Sendable {
    /// The store's folder.
    public let root: String
    /// The device this store's new revisions name: the one it was opened with, or, when
    /// its first write made the store's local state and found a device another process
    /// had recorded meanwhile, that one (see ``init(root:device:calls:wallClock:isReadable:makeLocalState:)``).
    public var device: Device { deviceSlot.device }
    private let deviceSlot: DeviceSlot
    /// Makes the store's local state (and takes the device recorded in it); see
    /// ``prepareLocalState()``.
    let makeLocalState: (@Sendable () throws -> Void)?
    let writer: PackageWriter
    /// Reads the store's files through the same system calls as ``writer``.
    let reader: FileReader
    /// The metadata of complete packages and tombstones read so far, by file. Revisions
    /// never change (a name is its content's digest), so what was read once holds for as
    /// long as the name is there; an incomplete package is never remembered.
    private let known = MetadataCache()
    private let wallClock: @Sendable () -> Int64
    /// Whether a revision's content, already checked against its digest, can be read as
    /// what it claims to be (see ``init(root:device:calls:wallClock:isReadable:makeLocalState:)``).
    private let isReadable: @Sendable (_ content: Data, _ revision: RevisionMetadata) -> Bool

    /// The name of a package's metadata file (``StoreLayout/metadataFile``).
    public static let metadataFile = StoreLayout.metadataFile
    /// The name of a package's content file (``StoreLayout/contentFile``).
    public static let contentFile = StoreLayout.contentFile

    /// A writer for the store at `root`, with the store's temporary and lock folders.
    ///
    /// - Parameters:
    ///   - root: The store's folder.
    ///   - calls: The system calls to use.
    ///   - makeLocalState: What makes the store's local folders (and whatever comes with
    ///     them) when the writer's first lock finds them missing (see `PackageWriter`);
    ///     `nil`: they must have been made already.
    public static func writer(
        root: String, calls: SystemCalls, makeLocalState: (@Sendable () throws -> Void)? = nil
    ) -> PackageWriter {
        PackageWriter(
            root: root, temporaryFolder: StoreLayout.temporaryFolder, locksFolder: StoreLayout.locksFolder,
            calls: calls, makeFolders: makeLocalState)
    }

    /// Opens the revisions of the store at `root`; new revisions name `device`, and their timestamps come from `wallClock` (milliseconds since 1970).
    ///
    /// `isReadable` tells whether content that matches its digest can be read (the layer
    /// above decodes it): a copy of a pruned revision is removed only when a revision that
    /// supersedes it has such content (see ``cleanedRead(_:keepingMetadata:)``). By
    /// default any content that matches its digest counts.
    ///
    /// `makeLocalState` makes the store's local folders when the first write finds them
    /// missing (see ``writer(root:calls:makeLocalState:)``); by default they must be there.
    /// It returns the device that another process recorded meanwhile, if one did: new
    /// revisions name that one from then on, so that one replica saves under one id.
    public init(
        root: String, device: Device, calls: SystemCalls = .live,
        wallClock: @escaping @Sendable () -> Int64 = {
            Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        },
        isReadable: @escaping @Sendable (_ content: Data, _ revision: RevisionMetadata) -> Bool = { _, _ in
            true
        },
        makeLocalState: (@Sendable () throws -> Device?)? = nil
    ) {
        self.root = root
        let slot = DeviceSlot(device)
        deviceSlot = slot
        self.isReadable = isReadable
        let making: (@Sendable () throws -> Void)? = makeLocalState.map { make in
            { @Sendable in
                if let recorded = try make() { slot.take(recorded) }
            }
        }
        self.makeLocalState = making
        writer = Self.writer(root: root, calls: calls, makeLocalState: making)
        reader = FileReader(root: root, calls: calls)
        self.wallClock = wallClock
    }

    var documentsFolder: String { root + "/" + StoreLayout.documentsFolder }

    /// The system calls this store makes.
    public var calls: SystemCalls { writer.calls }

    /// Whether `timestamp` lies more than a day ahead of this store's clock.
    public func isFarAhead(_ timestamp: HybridTimestamp) -> Bool {
        HybridClock(wallClock: wallClock).isFarAhead(timestamp)
    }

    /// The folder of `document`, relative to the store's root.
    public func folder(of document: UUID) -> String { StoreLayout.folder(of: document) }

    // MARK: Reading

    /// The documents that have a folder: a real folder (not a link) whose name is a
    /// lower-case UUID. Anything else in `Documents/` is skipped here and reported by
    /// ``documentFolderIssues()``.
    public func documentIDs() throws -> [UUID] {
        try documentFolders().ids
    }

    /// Entries of `Documents/` that are not document folders: links, files, special
    /// files, names that are not lower-case UUIDs.
    public func documentFolderIssues() throws -> [StoreIssue] {
        try documentFolders().issues
    }

    /// ``documentIDs()`` and ``documentFolderIssues()`` from one listing of `Documents/`,
    /// and the paths of its hidden entries (``StoreLayout/isHidden(_:)``), which are
    /// neither documents nor issues.
    public func documentFolders() throws -> (ids: [UUID], issues: [StoreIssue], hidden: [String]) {
        let listing = try documentListing()
        return (listing.ids, listing.issues, listing.hidden)
    }

    /// What one listing of `Documents/` found (see ``documentFolders()``).
    public struct DocumentListing: Sendable {
        /// The document folders, in the order of their names' bytes.
        public var ids: [UUID] = []
        /// Entries that are not document folders, by path.
        public var issues: [StoreIssue] = []
        /// The paths of hidden entries.
        public var hidden: [String] = []
        /// Documents whose folder's name something other than a folder takes (a link, a
        /// FIFO, socket or device, a regular file), with what it is (one of the issues).
        public var blocked: [UUID: SystemCalls.FileKind] = [:]
    }

    /// Throws ``StoreError/documentsFolderBlocked(_:_:)`` when something other than a
    /// folder stands where the documents' folder belongs; nothing there is no error (a
    /// store without documents yet).
    public func checkDocumentsFolder() throws {
        try Self.checkDocumentsFolder(ofStoreAt: root, reader: reader)
    }

    /// ``checkDocumentsFolder()`` for the store at `root`, looked at through `reader`.
    public static func checkDocumentsFolder(ofStoreAt root: String, reader: FileReader) throws {
        let documents = root + "/" + StoreLayout.documentsFolder
        switch try reader.status(atPath: documents)?.kind {
        case nil, .directory?: return
        case let kind?: throw StoreError.documentsFolderBlocked(documents, kind)
        }
    }

    /// Creates the documents' folder of the store `writer` writes, when it is missing;
    /// when that fails, a link or a file standing in the folder's place (looked at
    /// through `reader`) is the error reported.
    public static func createDocumentsFolder(with writer: PackageWriter, reader: FileReader) throws {
        do {
            try writer.createDirectory(StoreLayout.documentsFolder)
        } catch {
            try checkDocumentsFolder(ofStoreAt: writer.root, reader: reader)
            throw error
        }
    }

    /// Runs `write`, which creates the documents' folder when it is missing; when it
    /// fails, a link or a file standing in that folder's place is the error reported.
    private func creatingDocumentsFolder<T>(_ write: () throws -> T) throws -> T {
        do {
            return try write()
        } catch {
            try checkDocumentsFolder()
            throw error
        }
    }

    /// ``documentFolders()``, and the documents whose folder's name is taken by something
    /// else (``DocumentListing/blocked``).
    public func documentListing() throws -> DocumentListing {
        try Self.documentListing(ofStoreAt: root, reader: reader)
    }

    /// ``documentListing()`` for the store at `root`, looked at through `reader` (for a
    /// caller that checks a store it has not opened, such as a format check).
    public static func documentListing(ofStoreAt root: String, reader: FileReader) throws -> DocumentListing {
        let documentsFolder = root + "/" + StoreLayout.documentsFolder
        guard let entries = try reader.entries(atPath: documentsFolder) else {
            try checkDocumentsFolder(ofStoreAt: root, reader: reader)
            return DocumentListing()
        }
        var ids: [UUID] = []
        ids.reserveCapacity(entries.count)
        var issues: [StoreIssue] = []
        var hidden: [String] = []
        var blocked: [UUID: SystemCalls.FileKind] = [:]
        for var entry in entries {
            let id = StoreLayout.documentID(folderName: entry.name)
            if entry.kind == .unknown, id != nil {
                // A file system that does not say what an entry is (no `d_type`): looked
                // at, so that a link or file in a document folder's place is known as one.
                entry.kind = try reader.status(atPath: documentsFolder + "/" + entry.name)?.kind ?? .unknown
            }
            let isFolder = entry.kind == .directory || entry.kind == .unknown
            if isFolder, let id {
                ids.append(id)
                continue
            }
            // Issues are rare: only they are described and sorted.
            let path = documentsFolder + "/" + entry.name
            if let id { blocked[id] = entry.kind }
            if StoreLayout.isHidden(entry.name) {
                hidden.append(path)
            } else if entry.kind == .symbolicLink {
                issues.append(StoreIssue(path: path, message: "a symbolic link (never followed; skipped)"))
            } else if !isFolder {
                let what =
                    entry.kind == .special
                    ? "\(entry.kind.inWords) (never opened; skipped)" : "a file (skipped)"
                issues.append(StoreIssue(path: path, message: "not a document folder but \(what)"))
            } else if let id = UUID.parsing(entry.name) {
                issues.append(
                    StoreIssue(
                        path: path,
                        message:
                            "a case variant of document folder \(id.uuidString.lowercased()) (names are lower case; skipped)"
                    ))
            } else {
                issues.append(
                    StoreIssue(
                        path: path, message: "not a document folder (expected a lower-case UUID; skipped)"))
            }
        }
        // By the text of the ids, which is the order of their bytes (lower-case hexadecimal
        // digits sort as the values they stand for; the dashes stand at the same places).
        ids.sort { a, b in
            withUnsafeBytes(of: a.uuid) { x in
                withUnsafeBytes(of: b.uuid) { y in memcmp(x.baseAddress!, y.baseAddress!, 16) < 0 }
            }
        }
        return DocumentListing(
            ids: ids, issues: issues.sorted { $0.path < $1.path }, hidden: hidden.sorted(), blocked: blocked)
    }

    /// A document's revision graph, with the ids of pruned revisions.
    ///
    /// A package whose revision a tombstone in effect names is left out (and removed by
    /// ``cleanUp(_:)``): it is a copy a sync engine brought back.
    public func graph(of document: UUID) throws -> (graph: RevisionGraph, pruned: Set<RevisionID>) {
        let read = try read(document)
        return (read.graph, read.pruned)
    }

    /// Everything a read of a document folder found: the graph, the tombstones in and not
    /// yet in effect, copies of pruned revisions, incomplete packages, and what it skipped.
    ///
    /// The rules that keep a hostile or half-copied folder from costing any content:
    /// - A complete package (its metadata verifies against its name and the document, and
    ///   its content is a regular file) is a revision. Anything that is not (a link, a
    ///   FIFO, a file where a folder belongs, a name that is no revision id, metadata that
    ///   does not verify, a package of another document) is skipped and reported, never
    ///   followed, and affects nothing else.
    /// - A tombstone takes effect only when its revision is an ancestor of a complete
    ///   revision present here: a revision is pruned only once something that supersedes
    ///   it has arrived whole. Until then the tombstone is *pending* and changes nothing,
    ///   whatever order a file-sync engine copies files in and wherever it is interrupted.
    public func read(_ document: UUID) throws -> DocumentRead {
        try read(document, keepingMetadata: false)
    }

    /// ``read(_:)``, and with `keepingMetadata` the bytes of each complete package's
    /// metadata file read on the way (``DocumentRead/metadataBytes``), for a caller that
    /// copies the packages and need not read them twice.
    public func read(_ document: UUID, keepingMetadata: Bool) throws -> DocumentRead {
        try read(document, keepingMetadata: keepingMetadata, checkingContentOf: { _ in false })
    }

    /// ``read(_:)``, and for each complete package whose revision `isSuspect`, the content
    /// read and checked against its digest: a package whose content does not match (still
    /// being written in place by a copy that does not rename, or torn) is counted as
    /// not complete yet (``DocumentRead/incomplete``).
    ///
    /// A watch uses it for packages that were not renamed into place: a package made in
    /// place holds a content file from its first byte, which a plain read takes as whole.
    public func read(_ document: UUID, checkingContentOf isSuspect: (RevisionID) -> Bool) throws
        -> DocumentRead
    {
        try read(document, keepingMetadata: false, checkingContentOf: isSuspect)
    }

    private func read(
        _ document: UUID, keepingMetadata: Bool, checkingContentOf isSuspect: (RevisionID) -> Bool
    ) throws -> DocumentRead {
        let path = root + "/" + folder(of: document)
        // The folder is held open for the whole read: its tombstones are looked up and
        // read through its descriptor, one `fstatat` each when remembered, rather than
        // by their paths from the root (three calls each).
        let found = try reader.withFolder(atPath: path) { folder -> DocumentRead? in
            let entries: [SystemCalls.DirectoryEntry]
            do {
                entries = try folder.entries()
            } catch let error as FileSystemError where error.isNoFolder {
                // Removed between its opening and its listing (a folder removed while
                // open lists as not found): no folder, as if it had gone before.
                return nil
            }
            return try read(
                document, in: folder, entries: entries, keepingMetadata: keepingMetadata,
                checkingContentOf: isSuspect)
        }
        guard let found = found ?? nil else {
            try checkDocumentsFolder()
            throw StoreError.noSuchDocument(document)
        }
        return found
    }

    /// ``read(_:keepingMetadata:)`` of the document folder `folder`, held open, whose
    /// entries are `entries`.
    private func read(
        _ document: UUID, in folder: FileReader.Folder, entries: [SystemCalls.DirectoryEntry],
        keepingMetadata: Bool, checkingContentOf isSuspect: (RevisionID) -> Bool
    ) throws -> DocumentRead {
        let path = folder.path
        var result = DocumentRead()
        var live: [RevisionID: RevisionMetadata] = [:]
        for var entry in entries {
            let name = entry.name
            let file = path + "/" + name
            if entry.kind == .unknown, !StoreLayout.isHidden(name) {
                // A file system that does not say what an entry is (no `d_type`): looked at.
                entry.kind = try folder.status(of: name)?.kind ?? .unknown
            }
            if StoreLayout.isHidden(name) {
                result.hidden.append(file)
            } else if name.hasSuffix(StoreLayout.tombstoneSuffix) {
                guard entry.kind == .regular || entry.kind == .unknown else {
                    let what = entry.kind.asFound
                    // Damaged, and repairable from another store's copy of the tombstone.
                    if let id = StoreLayout.revision(tombstoneName: name) {
                        result.damagedTombstones.insert(id)
                    }
                    result.skipped.append(
                        StoreIssue(path: file, message: "\(what) where a tombstone belongs (skipped)"))
                    continue
                }
                do {
                    if let metadata = try tombstone(name, in: folder, document: document) {
                        result.tombstones[metadata.id] = metadata
                    }
                } catch  where Self.isAboutContents(error) {
                    // Named after a revision, and not a tombstone that verifies (its bytes,
                    // a link, a special file, too large): damaged, and repairable from
                    // another store's copy of the tombstone.
                    if let id = StoreLayout.revision(tombstoneName: name) {
                        result.damagedTombstones.insert(id)
                    }
                    result.skipped.append(
                        StoreIssue(path: file, message: Self.reason(error, file: file) + " (skipped)"))
                }
            } else if name.hasSuffix(StoreLayout.packageSuffix) {
                if let blocked = Self.blockedPackage(entry.kind) {
                    if let id = StoreLayout.revision(packageName: name) {
                        result.blockedPackages[id] = entry.kind
                    }
                    result.skipped.append(StoreIssue(path: file, message: blocked + " (skipped)"))
                    continue
                }
                guard let id = StoreLayout.revision(packageName: name) else {
                    result.skipped.append(
                        StoreIssue(path: file, message: "not named after a revision id (skipped)"))
                    continue
                }
                do {
                    if let metadata = try package(
                        at: file, id: id, document: document,
                        keep: { if keepingMetadata { result.metadataBytes[id] = $0 } })
                    {
                        if isSuspect(id), !metadata.isDeleted, try !contentMatches(metadata, of: document) {
                            result.incomplete.append(id)
                        } else {
                            live[id] = metadata
                        }
                    } else if let metadata = try tombstone(
                        StoreLayout.tombstoneName(id), in: folder, document: document)
                    {
                        // A prune (or arriving tombstones) replaced the package since the
                        // folder was listed: its tombstone is there now.
                        result.tombstones[metadata.id] = metadata
                        // Or a file-sync engine moved the package's metadata onto the
                        // tombstone (the same bytes; Syncthing does) and has not removed the
                        // content yet: the tombstone's metadata, verified like any, stands in
                        // for it, so the revision stays readable until a successor arrives.
                        if !metadata.isDeleted,
                            try reader.status(atPath: file + "/" + Self.contentFile)?.kind == .regular
                        {
                            live[id] = metadata
                        } else if try reader.status(atPath: file)?.kind == .directory {
                            // The package's folder is still here without its content (a
                            // copy of the pruned revision half made, or emptied): incomplete,
                            // and below a copy brought back once the tombstone is in effect.
                            result.incomplete.append(id)
                        }
                    } else {
                        result.incomplete.append(id)
                    }
                } catch let error as FileSystemError where Self.isAboutContents(error) {
                    // A link, a special file, a folder or too large a file where the
                    // package's metadata or content belongs: damaged, and repairable from
                    // another store's copy of the revision. (The package's folder itself
                    // being a link is not: nothing of the revision is here.)
                    if error.path.hasPrefix(file + "/") { result.damagedPackages.insert(id) }
                    result.skipped.append(
                        StoreIssue(path: error.path, message: "cannot be read: \(error.reason) (skipped)"))
                } catch  where Self.isAboutContents(error) {
                    // Its metadata is a regular file that does not verify: damaged, and
                    // repairable from another store's copy of the revision.
                    result.damagedPackages.insert(id)
                    result.skipped.append(
                        StoreIssue(path: file, message: Self.reason(error, file: file) + " (skipped)"))
                }
            } else {
                result.skipped.append(
                    StoreIssue(
                        path: file, message: "\(Self.stray(entry.kind)) in a document folder (skipped)"))
            }
        }
        // Every revision that a complete revision here descends from.
        var known = result.tombstones
        for (id, metadata) in live { known[id] = metadata }
        var superseded = Set<RevisionID>()
        var stack = live.values.flatMap(\.parents)
        while let next = stack.popLast() {
            if superseded.insert(next).inserted, let metadata = known[next] {
                stack.append(contentsOf: metadata.parents)
            }
        }
        var graph = RevisionGraph()
        for (id, metadata) in result.tombstones {
            if superseded.contains(id) {
                result.pruned.insert(id)
                graph.insert(metadata)
            } else {
                result.pending.insert(id)
            }
        }
        for (id, metadata) in live {
            if result.pruned.contains(id) { result.resurrected.insert(id) } else { graph.insert(metadata) }
        }
        // A half-copied package of a pruned revision is a copy brought back too, and so is
        // a damaged one: a damaged copy of content that is gone.
        result.incomplete.removeAll { id in
            guard result.pruned.contains(id) else { return false }
            result.resurrected.insert(id)
            return true
        }
        // So is a link, a FIFO or a file a sync engine (or a person) left where a pruned
        // revision's package belonged: nothing of the revision can be in it, and removing
        // it removes the name alone, never what a link points to.
        let blockedCopies = Set(result.blockedPackages.keys).intersection(result.pruned)
        for id in blockedCopies { result.blockedPackages[id] = nil }
        let damagedCopies = result.damagedPackages.intersection(result.pruned).union(blockedCopies)
        if !damagedCopies.isEmpty {
            result.resurrected.formUnion(damagedCopies)
            result.damagedPackages.subtract(damagedCopies)
            let packages = Set(damagedCopies.map { path + "/" + StoreLayout.packageName($0) })
            result.skipped.removeAll { issue in
                packages.contains { issue.path == $0 || issue.path.hasPrefix($0 + "/") }
            }
        }
        result.graph = graph
        result.live = live
        return result
    }

    /// The metadata of the tombstone `name` in the document folder `folder`, verified
    /// against its name and document; `nil` when it vanished while being read.
    private func tombstone(_ name: String, in folder: FileReader.Folder, document: UUID) throws
        -> RevisionMetadata?
    {
        try verifiedMetadata(
            at: folder.path + "/" + name, of: "tombstone",
            nameMatches: { name == StoreLayout.tombstoneName($0) },
            document: document, subject: "it", status: { try folder.status(of: name) },
            read: { try folder.contentsAndStatus(of: name) })
    }

    /// The metadata in `file`: remembered while the file there is unchanged; else read,
    /// verified to be the revision the name of its `holder` (package or tombstone) says
    /// and to belong to `document`, and remembered. `nil` when the file is absent: only
    /// absence makes a package incomplete, and any other failure to read is reported,
    /// never a reason to take a revision as something else.
    ///
    /// `status` and `read` look at the file and read it (by its path, or through its
    /// folder's descriptor).
    private func verifiedMetadata(
        at file: String, of holder: String, nameMatches: (RevisionID) -> Bool, document: UUID,
        subject: String, cached: Bool = true,
        keep: (Data) -> Void = { _ in },
        status: () throws -> SystemCalls.FileStatus?,
        read: () throws -> (data: Data, status: SystemCalls.FileStatus)?
    ) throws -> RevisionMetadata? {
        if cached, let known = try known.metadata(of: file, status: status) { return known }
        guard let (data, stamp) = try read() else { return nil }
        let metadata = try RevisionMetadata(plist: data, file: file)
        guard nameMatches(metadata.id) else {
            throw VersionsError.malformedMetadata(
                file, "the \(holder)'s name does not match its revision id \(metadata.id)")
        }
        guard metadata.documentID == document else {
            throw VersionsError.malformedMetadata(
                file, "\(subject) belongs to document \(metadata.documentID.uuidString.lowercased())")
        }
        if cached { known.remember(metadata, of: file, stamp: stamp) }
        keep(data)
        return metadata
    }

    /// A package's metadata when the package is complete (its metadata verifies against
    /// its name and document, and its content is a regular file); `nil` while it is
    /// incomplete (a copy in progress, or interrupted).
    ///
    /// `keep` is given the metadata file's bytes when they were read now (not remembered)
    /// and verified. With `cached` false the metadata file is read whatever this store
    /// remembers of it, and is not remembered.
    ///
    /// The package's folder is opened once (beneath the root, never through a link; a link
    /// in its place is an error, code `symbolicLink`), and both files are looked at
    /// through its descriptor: one resolution of the path where each file took its own.
    func package(
        at path: String, id: RevisionID, document: UUID, cached: Bool = true, keep: (Data) -> Void = { _ in }
    ) throws
        -> RevisionMetadata?
    {
        let found = try reader.withFolder(atPath: path, linkIsError: true) { folder -> RevisionMetadata? in
            guard
                let metadata = try verifiedMetadata(
                    at: path + "/" + Self.metadataFile, of: "package", nameMatches: { $0 == id },
                    document: document,
                    subject: "the revision", cached: cached, keep: keep,
                    status: { try folder.status(of: Self.metadataFile) },
                    read: { try folder.contentsAndStatus(of: Self.metadataFile) })
            else { return nil }
            // The content is looked at on every read, remembered metadata or not: it may
            // have gone, or been replaced, since.
            if !metadata.isDeleted {
                guard let status = try folder.status(of: Self.contentFile) else { return nil }
                guard status.kind == .regular else {
                    let code: FileSystemError.Code =
                        status.kind == .symbolicLink
                        ? .symbolicLink : status.kind == .directory ? .isDirectory : .notRegularFile
                    throw FileSystemError(code, operation: .read, path: path + "/" + Self.contentFile)
                }
            }
            return metadata
        }
        return found ?? nil
    }

    /// What to say of `document` when `error`, thrown while reading it, says that its
    /// folder, or a package or file in it, may not be read (permission denied: another
    /// user's files, `chmod 000`) or gives an input/output error: its folder, and
    /// "cannot be read, so it is not `outcome`: " with the system's reason; `nil` for any
    /// other error (one about another file, or about a write).
    ///
    /// A command over many documents passes over such a document, names it with this, and
    /// does everything it can for the others.
    public func unreadable(_ error: any Error, of document: UUID, so outcome: String) -> StoreIssue? {
        guard let error = error as? FileSystemError, error.code == .permissionDenied || error.code == .io,
            [.open, .read, .list, .stat].contains(error.operation),
            self.document(containing: error.path) == document
        else { return nil }
        let folder = root + "/" + folder(of: document)
        return StoreIssue(
            path: folder,
            message: "cannot be read, so it is not \(outcome): " + Self.reason(error, file: folder),
            isFailureToLook: true)
    }

    /// The document whose folder `path` is, or is inside: `nil` for a path anywhere else.
    public func document(containing path: String) -> UUID? {
        let documents = root + "/" + StoreLayout.documentsFolder + "/"
        guard path.hasPrefix(documents) else { return nil }
        let name = path.dropFirst(documents.count).prefix { $0 != "/" }
        return StoreLayout.documentID(folderName: String(name))
    }

    /// What `error` says, without the file's path when it starts with it, or with a
    /// path that ends `file`'s (the issue names the file already): `LINE:COLUMN: …` stays,
    /// so that the issue reads `PATH:LINE:COLUMN: …`. A file inside `file` (a package's
    /// metadata) is named by its path within it; a file-system error about the file
    /// itself reads `cannot read: …`.
    public static func reason(_ error: any Error, file: String) -> String {
        if let error = error as? FileSystemError {
            if error.path == file { return error.failure }
            if error.path.hasPrefix(file + "/") {
                return error.path.dropFirst(file.count + 1) + ": " + error.failure
            }
        }
        let text = "\(error)"
        if text.hasPrefix(file + ":") {
            return String(text.dropFirst(file.count + 1).drop { $0 == " " })
        }
        if text.hasPrefix(file + "/") { return String(text.dropFirst(file.count + 1)) }
        if let colon = text.firstIndex(of: ":"), colon > text.startIndex,
            file.hasSuffix("/" + text[..<colon])
        {
            return String(text[text.index(after: colon)...].drop { $0 == " " })
        }
        return text
    }

    /// What stands where a revision package belongs, when an entry of `kind` is no folder
    /// (a link, never followed, or anything else): the read skips it. `nil` for a folder,
    /// or an entry whose kind the listing did not say.
    public static func blockedPackage(_ kind: SystemCalls.FileKind) -> String? {
        guard kind != .directory && kind != .unknown else { return nil }
        return (kind == .symbolicLink ? kind.asFound : "not a folder") + " where a revision package belongs"
    }

    /// Whether `error` says something about what is in the store (a link, a special or
    /// oversized file, metadata that does not verify), which makes a reader skip the item,
    /// rather than a failure to read it (an I/O error), which must never be mistaken for
    /// absence and is thrown.
    public static func isAboutContents(_ error: any Error) -> Bool {
        switch error {
        case is VersionsError, is PropertyListError: true
        case let error as FileSystemError: error.isAboutTheEntry
        default: false
        }
    }

    /// Whether the content of a complete package is there and matches its digest; a file
    /// too large, or anything but a regular file, in its place throws, as a read does.
    public func contentMatches(_ revision: RevisionMetadata, of document: UUID) throws -> Bool {
        do {
            _ = try content(of: document, revision: revision)
            return true
        } catch StoreError.noContent(_), VersionsError.contentMismatch(_, _) {
            return false
        }
    }

    /// The content of a revision, checked against its digest.
    public func content(of document: UUID, revision: RevisionMetadata) throws -> Data {
        let file = root + "/" + StoreLayout.package(revision.id, of: document) + "/" + Self.contentFile
        guard let data = try reader.contents(atPath: file, limit: FileReader.contentLimit) else {
            throw StoreError.noContent(revision.id)
        }
        guard RevisionID.sha256Hex(data) == revision.contentDigest else {
            throw VersionsError.contentMismatch(file, revision.id)
        }
        return data
    }

    // MARK: Writing

    /// Writes a new revision of `document` with `parents` and `content` (`nil` deletes).
    ///
    /// - Returns: The new revision's metadata; writing a revision that already exists
    ///   (the same bytes made twice) is not an error.
    /// - Parameters:
    ///   - document: The document.
    ///   - parents: The revisions the new one is made from; none for a first revision.
    ///   - content: The content's bytes, or `nil` for a deletion.
    ///   - formatVersion: The format of `content`.
    ///   - known: The document's graph when the caller has just read it, so that it is
    ///     not read again; it only advances the clock past the timestamps seen.
    ///   - contentDigest: The SHA-256 of `content` when the caller has computed it.
    public func write(
        document: UUID, parents: [RevisionMetadata], content: Data?, formatVersion: Int,
        known: RevisionGraph? = nil,
        contentDigest: String? = nil
    ) throws -> RevisionMetadata {
        let (metadata, files) = try newRevision(
            document: document, parents: parents, content: content, formatVersion: formatVersion,
            known: try known ?? seenGraph(of: document), contentDigest: contentDigest)
        try publish(files, of: metadata.id, in: document)
        return metadata
    }

    /// The graph of `document` whose timestamps a new revision's clock observes, `nil`
    /// when there is none to read (no folder yet, or nothing in it that can be read).
    ///
    /// - Throws: A failure to look (an I/O error, too many open files): never taken for a
    ///   document with no revisions, whose timestamps the new revision would not follow.
    private func seenGraph(of document: UUID) throws -> RevisionGraph? {
        try FileSystemError.rethrowingFailureToLook {
            try graph(of: document).graph
        } otherwise: { _ in
            nil
        }
    }

    /// The metadata and package files of a new revision, as
    /// ``write(document:parents:content:formatVersion:known:contentDigest:)`` makes them,
    /// without writing anything (for ``writeBatch(_:)``).
    ///
    /// - Parameters:
    ///   - document: The document.
    ///   - parents: The revisions it supersedes.
    ///   - content: The content's bytes, or `nil` for a deletion.
    ///   - formatVersion: The format of `content`.
    ///   - known: The document's graph as read by the caller, whose timestamps advance the clock.
    ///   - contentDigest: The SHA-256 of `content` when the caller has computed it.
    public func newRevision(
        document: UUID, parents: [RevisionMetadata], content: Data?, formatVersion: Int,
        known: RevisionGraph?, contentDigest: String? = nil
    ) throws -> (metadata: RevisionMetadata, files: [PackageFile]) {
        // Timestamps seen on other devices advance this device's clock, except those too
        // far in the future to trust.
        var clock = HybridClock(wallClock: wallClock)
        for timestamp in known?.revisions.values.map(\.timestamp) ?? [] { clock.observe(timestamp) }
        let metadata = try RevisionMetadata.make(
            documentID: document, parents: parents, content: content, formatVersion: formatVersion,
            device: device,
            clock: &clock, contentDigest: contentDigest)
        return (metadata, try Self.packageFiles(metadata, content: content))
    }

    /// A revision's package files: its metadata, and its content unless it is a deletion.
    /// Every revision this store writes is made here.
    ///
    /// - Throws: ``StoreError/revisionTooLarge(_:_:limit:)`` when either file would be
    ///   larger than its readers take (`FileReader.contentLimit` for the content,
    ///   `FileReader.smallFileLimit` for the metadata), so that no revision is written
    ///   that cannot then be read.
    static func packageFiles(_ metadata: RevisionMetadata, content: Data?) throws -> [PackageFile] {
        if let content, content.count > FileReader.contentLimit {
            throw StoreError.revisionTooLarge(Self.contentFile, content.count, limit: FileReader.contentLimit)
        }
        var files = [PackageFile(name: Self.metadataFile, contents: try metadata.plistData())]
        if let content { files.append(PackageFile(name: Self.contentFile, contents: content)) }
        return files
    }

    /// Writes many revisions' packages in one batch (`PackageWriter.writeBatch`): written
    /// under the temporary folder, made durable at once, each renamed into place, the
    /// renames made durable at once (a batch of one package is fsynced file by file, as
    /// ``publish(_:of:in:)`` writes it). At any crash each package is absent or complete;
    /// when this returns, all are durable. The caller holds the lock of every document in the
    /// batch; a package found already there (or half there) is completed as
    /// ``publish(_:of:in:)`` does.
    ///
    /// - Parameter packages: Each package's document, revision and files (metadata first).
    /// - Throws: `FileSystemError` when the batch cannot be written; packages renamed
    ///   into place before the failure stay, complete.
    public func writeBatch(_ packages: [(document: UUID, revision: RevisionID, files: [PackageFile])]) throws
    {
        try publish(batch: packages)
    }

    /// Writes a migration of `parent`: a revision whose metadata depends only on the
    /// parent and the content (timestamp one tick after the parent's, the migration's own
    /// device), so that replicas migrating the same revision write the same revision.
    public func writeMigration(
        document: UUID, parent: RevisionMetadata, content: Data, formatVersion: Int
    ) throws -> RevisionMetadata {
        let (metadata, files) = try Self.migration(
            document: document, parent: parent, content: content, formatVersion: formatVersion)
        try publish(files, of: metadata.id, in: document)
        return metadata
    }

    /// Writes migrations of many documents' revisions (as
    /// ``writeMigration(document:parent:content:formatVersion:)`` does one) in one batch:
    /// written together, made durable at once, each package atomic (see
    /// `PackageWriter.writeBatch(_:creatingFolders:)`).
    ///
    /// - Parameter migrations: Each document, the revision migrated, its new content and format.
    /// - Returns: The migrations' metadata, in the order given.
    public func writeMigrations(
        _ migrations: [(document: UUID, parent: RevisionMetadata, content: Data, formatVersion: Int)]
    ) throws -> [RevisionMetadata] {
        let made = try migrations.map {
            try Self.migration(
                document: $0.document, parent: $0.parent, content: $0.content, formatVersion: $0.formatVersion
            )
        }
        try publish(batch: zip(migrations, made).map { ($0.document, $1.metadata.id, $1.files) })
        return made.map(\.metadata)
    }

    /// The metadata and files of a migration of `parent` to `content`.
    private static func migration(document: UUID, parent: RevisionMetadata, content: Data, formatVersion: Int)
        throws -> (metadata: RevisionMetadata, files: [PackageFile])
    {
        let generation = try RevisionMetadata.nextGeneration(after: [parent.id])
        var metadata = RevisionMetadata(
            documentID: document, id: RevisionID(generation: generation, digest: ""), parents: [parent.id],
            timestamp: HybridClock.tick(after: parent.timestamp),
            device: Device(id: "format-migration", name: "format migration"), formatVersion: formatVersion,
            isDeleted: false,
            contentDigest: RevisionID.sha256Hex(content))
        try metadata.checkRanges(file: nil)
        metadata.id = RevisionID(generation: generation, digest: try metadata.computedDigest())
        return (metadata, try packageFiles(metadata, content: content))
    }

    /// Writes a resolution of `parents` (a document's heads): a revision whose metadata
    /// depends only on the parents and the content, so that replicas resolving the same
    /// heads to the same content write the same revision.
    ///
    /// The timestamp is one counter tick after the newest parent's (the next millisecond
    /// when the counter is at its limit); the device is the
    /// fixed ``resolutionDevice``; the parents are sorted as in every revision.
    ///
    /// - Parameters:
    ///   - document: The document.
    ///   - parents: The heads being resolved.
    ///   - content: The resolved content, or `nil` for a deletion.
    ///   - formatVersion: The content's format version.
    /// - Returns: The resolution's metadata; writing one that already exists is not an error.
    /// - Throws: `FileSystemError` when the package cannot be written.
    public func writeResolution(
        document: UUID, parents: [RevisionMetadata], content: Data?, formatVersion: Int
    ) throws -> RevisionMetadata {
        let newest = parents.map(\.timestamp).max() ?? HybridTimestamp(milliseconds: 0)
        let generation = try RevisionMetadata.nextGeneration(after: parents.map(\.id))
        var metadata = RevisionMetadata(
            documentID: document, id: RevisionID(generation: generation, digest: ""),
            parents: parents.map(\.id).sorted(),
            timestamp: HybridClock.tick(after: newest),
            device: Self.resolutionDevice, formatVersion: formatVersion, isDeleted: content == nil,
            contentDigest: content.map(RevisionID.sha256Hex))
        try metadata.checkRanges(file: nil)
        metadata.id = RevisionID(generation: generation, digest: try metadata.computedDigest())
        try publish(try Self.packageFiles(metadata, content: content), of: metadata.id, in: document)
        return metadata
    }

    /// Writes a revision's package atomically and durably, or completes it when a copy
    /// left it half there (the files it lacks are added; nothing there is replaced).
    public func publish(_ files: [PackageFile], of revision: RevisionID, in document: UUID) throws {
        try Self.createDocumentsFolder(with: writer, reader: reader)
        let documentFolder = folder(of: document)
        let made = try writer.createDirectory(documentFolder)
        let path = StoreLayout.package(revision, of: document)
        do {
            if try writer.writePackage(files, at: path) == .alreadyExists {
                // The same revision is there already, or half of it from an interrupted copy.
                try writer.completePackage(files, at: path)
            }
        } catch {
            // A document folder made for this write is not left behind empty when the write
            // fails (a full disk): it would name a document that has no revision.
            if made { writer.removeIfEmpty(documentFolder) }
            throw error
        }
    }

    /// Writes many revisions' packages in one batch (`PackageWriter.writeBatch`):
    /// written under the temporary folder, made durable at once (one package: file by
    /// file), each renamed into place and the renames made durable; a package already
    /// there, or half there from an interrupted copy, is completed as
    /// ``publish(_:of:in:)`` does.
    ///
    /// - Parameter lockingCompletions: Whether the caller holds no document locks, so that a
    ///   package found already there is completed under its document's lock (sync, whose
    ///   batch is written between two locked steps); a package a prune has meanwhile
    ///   replaced by a tombstone, or removed, is then left as it is.
    func publish(
        batch: [(document: UUID, revision: RevisionID, files: [PackageFile])],
        lockingCompletions: Bool = false
    ) throws {
        let items = batch.map {
            PackageWriter.BatchItem.package($0.files, at: StoreLayout.package($0.revision, of: $0.document))
        }
        let outcomes = try creatingDocumentsFolder {
            try writer.writeBatch(items, creatingFolders: Self.folders(of: batch.map(\.document)))
        }
        try complete(
            zip(batch, items).map { ($0.document, $0.revision, $1) }, outcomes,
            lockingCompletions: lockingCompletions)
    }

    /// Writes `packages` of `document` under the temporary folder, to be published by
    /// ``publish(staged:lockingCompletions:)`` (see `PackageWriter.stage(_:)`); the caller
    /// holds the writer's `lockForWriting()` until then.
    func stage(_ packages: [(revision: RevisionID, files: [PackageFile])], of document: UUID) throws
        -> [PackageWriter.StagedItem]
    {
        try writer.stage(
            packages.map { .package($0.files, at: StoreLayout.package($0.revision, of: document)) })
    }

    /// Publishes packages staged by ``stage(_:of:)`` as one batch, as
    /// ``publish(batch:lockingCompletions:)`` writes and publishes them; with
    /// `refusingDenied`, a document's folder that may not be written (permission denied, a
    /// read-only file system) refuses its packages and the others are published
    /// (`PackageWriter.publish(_:creatingFolders:refusing:)`).
    ///
    /// - Returns: Each package's outcome, in the order of `staged`.
    @discardableResult
    func publish(
        staged: [(document: UUID, revision: RevisionID, item: PackageWriter.StagedItem)],
        lockingCompletions: Bool, refusingDenied: Bool = false
    ) throws -> [PackageWriter.Outcome] {
        let outcomes = try creatingDocumentsFolder {
            try writer.publish(
                staged.map(\.item), creatingFolders: Self.folders(of: staged.map(\.document)),
                refusing: { refusingDenied && Self.isDenied($0) })
        }
        try complete(
            staged.map { ($0.document, $0.revision, $0.item.item) }, outcomes,
            lockingCompletions: lockingCompletions)
        return outcomes
    }

    /// Whether `error` is a write that the file system refuses for good (permission
    /// denied, a read-only file system) rather than a failure (an input/output error, no
    /// space left): a person must change something before it can succeed.
    public static func isDenied(_ error: FileSystemError) -> Bool {
        error.code == .permissionDenied || error.code == .readOnly
    }

    /// The documents folder, then each document's folder once, in order.
    private static func folders(of documents: [UUID]) -> [String] {
        var folders = [StoreLayout.documentsFolder]
        var seen = Set<UUID>()
        for document in documents where seen.insert(document).inserted {
            folders.append(StoreLayout.folder(of: document))
        }
        return folders
    }

    /// Completes each package of a batch found already there (see
    /// ``publish(batch:lockingCompletions:)``).
    private func complete(
        _ batch: [(document: UUID, revision: RevisionID, item: PackageWriter.BatchItem)],
        _ outcomes: [PackageWriter.Outcome], lockingCompletions: Bool
    ) throws {
        for ((document, revision, item), outcome) in zip(batch, outcomes) where outcome == .alreadyExists {
            guard lockingCompletions else {
                try writer.completePackage(item.files, at: item.path)
                continue
            }
            let lock = try documentLock(document)
            defer { lock.unlock() }
            if try reader.status(atPath: root + "/" + StoreLayout.tombstone(revision, of: document)) != nil {
                continue
            }
            do {
                try writer.completePackage(item.files, at: item.path)
            } catch let error as FileSystemError where error.code == .notFound {
                continue  // removed by a prune since the batch was written
            }
        }
    }

    /// The device every resolution names, whoever makes it (see ``writeResolution(document:parents:content:formatVersion:)``).
    public static let resolutionDevice = Device(id: "resolution", name: "resolution")

    /// Replaces the content of revisions that are not heads by tombstones, keeping the
    /// ancestors of the winner `keepHistory` generations back (its parents are the first)
    /// and the revisions in `alsoKeep`.
    /// Heads are never pruned.
    ///
    /// - Returns: The revisions pruned now.
    public func prune(
        _ document: UUID, keepHistory: Int = 0, dryRun: Bool = false, alsoKeep: Set<RevisionID> = []
    ) throws -> [RevisionID] {
        let (graph, pruned) = try graph(of: document)
        return try prune(
            document, graph: graph, pruned: pruned, keepHistory: keepHistory, dryRun: dryRun,
            alsoKeep: alsoKeep)
    }

    /// ``prune(_:keepHistory:dryRun:alsoKeep:)`` given the document's graph and its pruned
    /// revisions as a read made under the document's lock gave them, for a caller that
    /// has just read them: the folder is not read again.
    public func prune(
        _ document: UUID, graph: RevisionGraph, pruned: Set<RevisionID>, keepHistory: Int = 0,
        dryRun: Bool = false, alsoKeep: Set<RevisionID> = []
    ) throws -> [RevisionID] {
        let heads = Set(graph.heads.map(\.id))
        var keep = heads.union(alsoKeep)
        if let winner = graph.winner, keepHistory > 0 {
            // Breadth first, each revision once: stops when the history does, however
            // large `keepHistory` is.
            var frontier: Set<RevisionID> = [winner.id]
            var depth = 0
            while depth < keepHistory, !frontier.isEmpty {
                frontier = Set(frontier.flatMap { graph.revisions[$0]?.parents ?? [] }).subtracting(keep)
                keep.formUnion(frontier)
                depth += 1
            }
        }
        let victims = graph.revisions.values.filter { !keep.contains($0.id) && !pruned.contains($0.id) }
            .sorted { $0.id < $1.id }
        if dryRun || victims.isEmpty { return victims.map(\.id) }
        try disowning(document, by: victims.map(\.id)) {
            for victim in victims {
                // The tombstone first: from then on the package is a leftover, whatever happens.
                try publishTombstone(victim, of: document)
                try removePackage(StoreLayout.package(victim.id, of: document))
            }
        }
        try writer.remove(pruneNote(document))
        try removeStateIfNoContent(document, graph: graph, pruned: pruned.union(victims.map(\.id)))
        return victims.map(\.id)
    }

    /// What messages call an entry of `kind` found where nothing of that kind belongs: "an
    /// unexpected file", "a folder", "a symbolic link (never followed)", "a FIFO, socket or
    /// device (never opened)".
    static func stray(_ kind: SystemCalls.FileKind) -> String {
        switch kind {
        case .symbolicLink: kind.asFound
        case .special: kind.inWords + " (never opened)"
        case .directory: kind.inWords
        case .regular, .unknown: "an unexpected file"
        }
    }

    /// Writes the tombstone of `metadata`, a revision of `document`, atomically and
    /// durably. A file already in its place that does not hold those very bytes (a copy
    /// torn by a file-sync engine, or something else left under that name) is replaced, as
    /// a repair replaces a damaged file: a package is removed once its tombstone is there,
    /// and a torn tombstone would leave the revision's metadata intact nowhere.
    public func publishTombstone(_ metadata: RevisionMetadata, of document: UUID) throws {
        let bytes = try metadata.plistData()
        let file = StoreLayout.tombstone(metadata.id, of: document)
        guard try writer.writeFile(bytes, at: file) == .alreadyExists else { return }
        // Read as any file of the store is (never through a link, a FIFO without
        // waiting); what is no regular file within the size limit is replaced too. An
        // input/output error fails the write, as it fails any other.
        let existing: Data?
        do {
            existing = try reader.contents(atPath: root + "/" + file)
        } catch  where Self.isAboutContents(error) {
            existing = nil
        }
        if existing != bytes { try writer.replaceFile(bytes, at: file) }
    }

    /// Writes a durable note that packages of `document` are about to be disowned by
    /// tombstones (a prune, or tombstones arriving by sync), so that the next open
    /// finishes their removal if a crash interrupts it (see ``pruneNotes()``).
    public func notePrune(_ document: UUID) throws {
        try writer.createDirectory(Self.pruningFolder)
        _ = try writer.writeFile(Data(), at: pruneNote(document))
    }

    /// Runs `publish`, which publishes the tombstones of `revisions` of `document` (and may
    /// go on to remove what they disown), behind a prune note (``notePrune(_:)``).
    ///
    /// When noting or `publish` fails before any of those tombstones is there (a full
    /// disk, an I/O error), nothing is disowned: the note this call made is removed again,
    /// so that the failed command leaves the store as it was, and `verify` finds no
    /// interrupted prune. Once a tombstone is there, or when whether it is cannot be told,
    /// the note stays for the next open to finish the removal. A note that was there
    /// before always stays.
    public func disowning<T>(_ document: UUID, by revisions: [RevisionID], _ publish: () throws -> T) throws
        -> T
    {
        let note = pruneNote(document)
        let noted = try reader.status(atPath: root + "/" + note) != nil
        do {
            if !noted { try notePrune(document) }
            return try publish()
        } catch {
            if !noted,
                (try? revisions.allSatisfy({ try isAbsent(StoreLayout.tombstone($0, of: document)) })) == true
            {
                try? writer.remove(note)
            }
            throw error
        }
    }

    /// Whether nothing is at `relativePath`; throws when that cannot be told.
    private func isAbsent(_ relativePath: String) throws -> Bool {
        try reader.status(atPath: root + "/" + relativePath) == nil
    }

    private func pruneNote(_ document: UUID) -> String {
        StoreLayout.pruneNote(of: document)
    }

    /// Where prune notes which documents it is pruning (local state, never synced).
    public static let pruningFolder = StoreLayout.pruningFolder

    /// The documents the pruning folder notes, whose prune was interrupted (a crash, a
    /// kill: their tombstones may stand beside packages that were not yet removed), and the names in
    /// it that are no note this store writes, which notes name a document's UUID in lower
    /// case: a file left there by hand, a note in upper case (whose document is among
    /// `documents` all the same). ``finishPrune(_:)`` never removes those:
    /// ``removeStrayPruneNote(_:)`` does.
    public func pruneNotes() throws -> (documents: [UUID], stray: [String]) {
        var documents: [UUID] = []
        var stray: [String] = []
        for name in try reader.names(atPath: root + "/" + Self.pruningFolder) {
            if let id = UUID.parsing(name) { documents.append(id) }
            // A note names its document as the document's folder does: in lower case.
            if StoreLayout.documentID(folderName: name) == nil { stray.append(name) }
        }
        return (documents, stray)
    }

    /// Removes `name` from the pruning folder (what stands there, a folder with what it
    /// holds, a link itself): a name ``pruneNotes()`` found stray.
    public func removeStrayPruneNote(_ name: String) throws {
        try writer.remove(Self.pruningFolder + "/" + name)
    }

    /// Finishes an interrupted prune of `document`: removes what its tombstones disown and
    /// then the note.
    public func finishPrune(_ document: UUID) throws {
        try cleanUp(document)
        try writer.remove(pruneNote(document))
    }

    /// Removes packages that a tombstone says were pruned (brought back by a sync engine).
    public func cleanUp(_ document: UUID) throws {
        _ = try cleanedGraph(of: document)
    }

    /// A document's graph, read once, after removing the packages that a tombstone says
    /// were pruned. The graph never counted those packages, so it is the graph a second
    /// read would give.
    ///
    /// A copy is removed only when a revision that supersedes it is here with its content
    /// intact (its digest checked now) and readable (the store's `isReadable`), or is a
    /// deletion: never on a tombstone's word alone, and never for a successor that cannot
    /// be read in its place.
    public func cleanedGraph(of document: UUID) throws -> (graph: RevisionGraph, pruned: Set<RevisionID>) {
        let read = try cleanedRead(document)
        return (read.graph, read.pruned)
    }

    /// ``read(_:)`` after removing the copies of pruned revisions that a revision present
    /// here supersedes intact: what a second read would give, without making one.
    ///
    /// With `keepingMetadata`, the read keeps the metadata bytes it read
    /// (``read(_:keepingMetadata:)``).
    public func cleanedRead(_ document: UUID, keepingMetadata: Bool = false) throws -> DocumentRead {
        var read = try read(document, keepingMetadata: keepingMetadata)
        try clean(&read, of: document)
        return read
    }

    /// Removes from the store, and from `read` (a read of `document` made under its lock),
    /// what ``cleanedRead(_:keepingMetadata:)`` removes: the copies of pruned revisions that
    /// a revision present supersedes intact, and the document's per-device state once its
    /// content is gone. `read.graph` stays as it is (those copies were never in it), so a
    /// write may decide on the read first and clean only when it goes on to write: one
    /// that refuses or finds nothing to do then removes nothing.
    ///
    /// What the file system refuses to remove (permission denied, a read-only file system)
    /// is left: a copy that stays is disowned by its tombstone, which every read honours,
    /// and `verify` notes it; state that stays is never read for a document without
    /// content. Nothing that writes is kept from going ahead by it.
    public func clean(_ read: inout DocumentRead, of document: UUID) throws {
        for id in read.resurrected.sorted() where try hasIntactSuccessor(of: id, in: read, document: document)
        {
            do {
                try removePackage(StoreLayout.package(id, of: document))
            } catch let error as FileSystemError where Self.isDenied(error) {
                continue
            }
            read.resurrected.remove(id)
            read.live[id] = nil
        }
        try removeStateIfNoContent(document, graph: read.graph, pruned: read.pruned)
    }

    /// Whether a complete revision here that descends from `id` has content matching its
    /// digest that can be read (or is a deletion, which has none).
    func hasIntactSuccessor(of id: RevisionID, in read: DocumentRead, document: UUID) throws -> Bool {
        let candidates = read.live.values.filter { !read.pruned.contains($0.id) }.sorted(
            by: RevisionGraph.precedes)
        var known = read.tombstones
        for (key, metadata) in read.live { known[key] = metadata }
        for candidate in candidates {
            var seen = Set<RevisionID>()
            var stack = candidate.parents
            var descends = false
            while let next = stack.popLast(), !descends {
                if next == id { descends = true }
                if seen.insert(next).inserted, let metadata = known[next] {
                    stack.append(contentsOf: metadata.parents)
                }
            }
            guard descends else { continue }
            if candidate.isDeleted { return true }
            // An I/O error says nothing of the successor: never taken for one that cannot
            // be read (which would keep the copy in silence).
            let data: Data? = try FileSystemError.rethrowingFailureToLook {
                try content(of: document, revision: candidate)
            } otherwise: { _ in
                nil
            }
            if let data, isReadable(data, candidate) { return true }
        }
        return false
    }

    private func removePackage(_ relativePath: String) throws {
        try writer.remove(relativePath)
    }
}

/// What a read of one document folder found (see ``RevisionStore/read(_:)``).
public struct DocumentRead: Sendable {
    /// The complete revisions and the tombstones in effect.
    public var graph = RevisionGraph()
    /// Revisions whose tombstone is in effect: their content is gone (or going).
    public var pruned: Set<RevisionID> = []
    /// Revisions with a tombstone not yet in effect: nothing here supersedes them yet.
    public var pending: Set<RevisionID> = []
    /// Every tombstone that verified, in effect or pending.
    public var tombstones: [RevisionID: RevisionMetadata] = [:]
    /// Every complete package, pruned or not.
    public var live: [RevisionID: RevisionMetadata] = [:]
    /// Packages (complete or not) of pruned revisions: copies a sync engine brought back,
    /// and whatever else stands in such a package's place (a link, a FIFO, a file).
    public var resurrected: Set<RevisionID> = []
    /// Packages not complete yet (a copy in progress or interrupted).
    public var incomplete: [RevisionID] = []
    /// The bytes of complete packages' metadata files, as read and verified, when the read
    /// was asked to keep them (``RevisionStore/read(_:keepingMetadata:)``); a package
    /// whose metadata was remembered from an earlier read has none here.
    public var metadataBytes: [RevisionID: Data] = [:]
    /// What was skipped, and why.
    public var skipped: [StoreIssue] = []
    /// Packages named after a revision id that are damaged: their metadata does not
    /// verify (garbled, or another revision's), or a link, a FIFO, socket or device, a
    /// folder or too large a file stands where their metadata or content belongs.
    /// Skipped, and repairable from a store that holds the revision (its metadata's bytes
    /// are the only ones that verify, and its content's digest is in them).
    public var damagedPackages: Set<RevisionID> = []
    /// Entries named after a revision's tombstone that are not one that verifies (a
    /// regular file whose bytes do not, a link, a special file, a folder): skipped, and
    /// repairable from a store that holds the tombstone.
    public var damagedTombstones: Set<RevisionID> = []
    /// The paths of the folder's hidden entries (``StoreLayout/isHidden(_:)``): left by
    /// the system or a file-sync engine, never part of the document, never a warning.
    public var hidden: [String] = []
    /// Names of revisions' packages taken by something that is not a folder (a link, a
    /// FIFO, socket or device, a regular file), with what it is: skipped. A sync that
    /// brings the revision removes a link or special file first (nothing is lost with it:
    /// a link is removed itself, never followed) and leaves a regular file, naming it.
    public var blockedPackages: [RevisionID: SystemCalls.FileKind] = [:]

    /// Revisions whose packages the folder holds but this read could not count: not
    /// complete yet, damaged, or taken by something that is not a folder.
    public var unseen: Set<RevisionID> {
        Set(incomplete).union(damagedPackages).union(blockedPackages.keys)
    }

    /// An empty read.
    public init() {}
}

/// Something found in a store that a reader skipped or that `verify` reports: the path
/// and what is wrong with it.
public struct StoreIssue: Sendable, Hashable, CustomStringConvertible {
    /// The file or folder concerned.
    public var path: String
    /// What is wrong, in words (the ``remedy``'s advice apart).
    public var message: String
    /// A note rather than a problem: something harmless that the store handles by
    /// itself (a copy of a pruned revision that the next write removes, a tombstone
    /// that arrived before the revision superseding it). Notes do not make a store
    /// unclean.
    public var isNote: Bool
    /// Whether the issue is that something could not be looked at (permission denied, an
    /// input/output error), rather than something found wrong: what it holds is unknown,
    /// so a listing or report with such an issue is incomplete.
    public var isFailureToLook: Bool
    /// What mends it, where the store knows; its ``Remedy/advice`` follows the
    /// ``message`` in the ``description``.
    public var remedy: Remedy?

    /// `PATH: message`, or `PATH:LINE:COLUMN: message` when the message starts with a
    /// position in the file; `PATH: note: message` for a note; then the remedy's
    /// ``Remedy/advice``.
    public var description: String { described(advice: remedy?.advice ?? "") }

    /// The ``description`` with `advice` in place of the ``remedy``'s own words: for a
    /// tool or app that says what mends the issue in terms of its own.
    public func described(advice: String) -> String {
        // A name in a store can hold a line feed: shown escaped, it cannot split the line.
        let path = ShownText.escaping(path)
        let message = message + advice
        if isNote { return "\(path): note: \(message)" }
        return message.first?.isNumber == true
            && message.prefix(while: { $0.isNumber || $0 == ":" }).contains(":")
            ? "\(path):\(message)" : "\(path): \(message)"
    }

    /// Creates an issue, or a note.
    public init(
        path: String, message: String, isNote: Bool = false, isFailureToLook: Bool = false,
        remedy: Remedy? = nil
    ) {
        self.path = path
        self.message = message
        self.isNote = isNote
        self.isFailureToLook = isFailureToLook
        self.remedy = remedy
    }
}

/// Metadata files this store has read and verified, each with the status of the file it
/// was read from; shared by the threads that read the store.
///
/// An entry is used only while the file at its path has that same status (inode, size,
/// modification and change times): a file removed, replaced, or written over since is
/// read again, so that a store held open reads a folder exactly as a fresh one would.
///
/// The entries are spread over shards by the path's hash, each behind its own lock: the
/// threads of a sync or a listing read thousands of files at once, and one lock over one
/// dictionary made them queue (its slow path took 7% of a fresh sync's processor time).
private final class MetadataCache: Sendable {
    private typealias Entry = (stamp: SystemCalls.FileStatus, metadata: RevisionMetadata)

    /// A path with its hash, computed once: it picks the shard and is the dictionary's.
    private struct Key: Hashable {
        let path: String
        let hash: Int

        init(_ path: String) {
            self.path = path
            hash = path.hashValue
        }

        static func == (lhs: Key, rhs: Key) -> Bool { lhs.hash == rhs.hash && lhs.path == rhs.path }
        func hash(into hasher: inout Hasher) { hasher.combine(hash) }
    }

    private final class Shard: Sendable {
        let entries = Locked<[Key: Entry]>([:])
    }

    private static let shardCount = 64
    private let shards = (0..<MetadataCache.shardCount).map { _ in Shard() }

    private func shard(of key: Key) -> Shard {
        shards[Int(UInt(bitPattern: key.hash) % UInt(Self.shardCount))]
    }

    /// The metadata read from `file`, when the file there now (`status`) is the one it
    /// was read from.
    func metadata(of file: String, status: () throws -> SystemCalls.FileStatus?) throws -> RevisionMetadata? {
        let key = Key(file)
        let shard = shard(of: key)
        guard let entry = shard.entries.withLock({ $0[key] }) else { return nil }
        guard let status = try status(), status == entry.stamp else {
            shard.entries.withLock { _ = $0.removeValue(forKey: key) }
            return nil
        }
        return entry.metadata
    }

    func remember(_ metadata: RevisionMetadata, of file: String, stamp: SystemCalls.FileStatus) {
        let key = Key(file)
        shard(of: key).entries.withLock { $0[key] = (stamp, metadata) }
    }
}

/// Errors about the store's documents and revisions.
public enum StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What ``documentsFolderBlocked(_:_:)`` says after the path, given what stands there.
    public static func blockedDocuments(_ kind: SystemCalls.FileKind) -> String {
        kind == .symbolicLink
            ? "a symbolic link where the documents' folder belongs: a link in a store is never followed, so"
                + " no document can be read or written (to keep documents elsewhere, move or link the whole"
                + " store folder, which is followed)"
            : "\(kind.inWords) where the documents' folder belongs: no document can be read or written (move it"
                + " aside)"
    }

    /// The folder holds no store.
    case noSuchStore(String)
    /// The store's folder was removed, moved away or replaced while its changes were
    /// watched: the watch ends, since nothing at its path is the store it read.
    case storeGone(String)
    /// The store has no such document.
    case noSuchDocument(UUID)
    /// No revision of the document is, or starts with, the text.
    case noSuchRevision(String)
    /// The revision was pruned: its place in the history remains, its content does not.
    case noContent(RevisionID)
    /// The revision records the document's deletion: it has no content.
    case deletion(RevisionID)
    /// The base of a save is no longer the document's only head: the heads, and those of
    /// them that are deletions.
    case notCurrent(base: RevisionID, heads: [RevisionID], deletions: Set<RevisionID> = [])
    /// A document's winner cannot be read, so its history is kept.
    case unreadableWinner(UUID, String)
    /// A document's folder holds packages of revisions it cannot read yet (half-copied,
    /// damaged, or a link or file in their place): they may be heads whose history a
    /// prune would remove, so the document is not pruned.
    case unseenRevisions(UUID, [RevisionID])
    /// A document in conflict whose folder holds packages of revisions it cannot read yet
    /// (half-copied, damaged, or a link or file in their place): each may be a head or a
    /// merge base, and a merge made without it would differ from the one a replica that
    /// reads it makes, so the heads are not merged.
    case unseenForMerge(UUID, [RevisionID])
    /// A document whose winner is in an older format, and whose folder holds packages of
    /// revisions it cannot read yet (half-copied, damaged, or a link or file in their
    /// place): one may supersede the winner, and a migration of the winner made now would
    /// be in conflict with it, so the winner is not migrated.
    case unseenForMigration(UUID, [RevisionID])
    /// The document's folder holds no revision that can be read, and items in it were
    /// skipped (the count, packages not complete yet among them), each for a reason that
    /// ``RevisionStore/read(_:)`` gives.
    case noReadableRevision(UUID, skipped: Int)
    /// The revision named is in the document's folder, but its package cannot be read
    /// here, and why (not complete yet, damaged, or something else in its place): a
    /// sync with a replica that holds it intact completes or repairs it.
    case unreadableRevision(RevisionID, String)
    /// The store was opened for reading only.
    case readOnly(String)
    /// `Store.plist` names a layout this build does not know.
    case newerLayout(String, UInt64, supported: Int)
    /// `Store.plist` is not a store's layout file.
    case damagedStore(String, String)
    /// `Store.plist` is not a store's layout file, and it is as an interrupted write leaves
    /// one (empty, the start of one, zero bytes in place of some of it) beside the
    /// documents' folder: creating the store again writes it (``Remedy/writeLayoutAgain(_:)``).
    /// Its ``errorCode`` is `damagedStore`, as for any other layout file that is not one.
    case tornLayout(String, String)
    /// The revision's content is in a format newer than this build supports (the version,
    /// and the newest supported): it can be listed, synced, kept and exported as it is,
    /// never read.
    case newerFormat(RevisionID, Int, supported: Int)
    /// Nothing is at the path given as a revision package to import.
    case noSuchPackage(String)
    /// What was given as a revision package to import (the path, or the file in it that
    /// is at fault) is not one that can be read, and why: the reason on its own, which the
    /// description puts after `PATH: cannot be imported: `, so that a caller can say it in
    /// words of its own without taking the description apart.
    case unimportablePackage(String, String)
    /// Something other than a folder (the path, and what it is) stands where the store's
    /// documents' folder belongs: no document can be read or written.
    case documentsFolderBlocked(String, SystemCalls.FileKind)
    /// A document was to be created under an id the store already holds a document for
    /// (its revisions, or anything a read of its folder finds): nothing was written.
    case documentExists(UUID)
    /// A revision's file (its name, its size) would be larger than its readers take (the
    /// limit): nothing was written, since the revision could not then be read.
    case revisionTooLarge(String, Int, limit: Int)
    /// A store was to be made at the path inside another store's `Documents/` or
    /// `Local.nosync/` folder (the other store, and that folder's name), links followed:
    /// that store's sync, verify and prune would take the new store's files for their own.
    /// Nothing was written.
    case insideStore(String, store: String, folder: String)

    /// What is wrong: the description without the ``remedy``'s ``Remedy/advice``.
    public var problem: String {
        switch self {
        case .noSuchStore(let path): "there is no store at \(ShownText.escaping(path))"
        case .storeGone(let path):
            "the store at \(ShownText.escaping(path)) was removed, moved away or replaced while it was watched"
        case .noSuchDocument(let id): "there is no document \(id.uuidString.lowercased())"
        case .documentExists(let id):
            "there is a document \(id.uuidString.lowercased()) already: a new one needs an id of its own"
        case .noSuchRevision(let text):
            text.isEmpty
                ? "no revision named: give a revision id or a prefix of one"
                : "there is no revision \(ShownText.escaping(text))"
        case .insideStore(let path, let store, let folder):
            "cannot create a store at \(ShownText.escaping(path)): it is inside the store at \(ShownText.escaping(store)) (in its \(folder) folder), whose sync, verify and prune would take the new store's files for their own; choose a folder outside it"
        case .revisionTooLarge(let name, let size, let limit):
            "the revision's \(name) would be \(size) bytes, more than the \(limit) its readers take; nothing was written"
        case .noContent(let id): "revision \(id) has been pruned; only its place in the history remains"
        case .deletion(let id): "revision \(id) records a deletion: it has no content"
        case .notCurrent(let base, let heads, let deletions):
            "revision \(base) is not the only current revision (current: \(heads.map { $0.description + (deletions.contains($0) ? " (a deletion)" : "") }.joined(separator: ", ")))"
        case .unreadableWinner(let id, let why):
            "document \(id.uuidString.lowercased()) is not pruned: its current revision cannot be read (\(why)), and its history may be all that is left to read"
        case .unseenRevisions(let id, let revisions):
            "document \(id.uuidString.lowercased()) is not pruned: its folder holds \(revisions.count == 1 ? "a revision" : "\(revisions.count) revisions") it cannot read yet (\(revisions.map(\.description).joined(separator: ", ")): half-copied, damaged, or something else in its place), which may need the history a prune would remove"
        case .unseenForMerge(let id, let revisions):
            "document \(id.uuidString.lowercased()) is not merged: its folder holds \(revisions.count == 1 ? "a revision" : "\(revisions.count) revisions") it cannot read yet (\(revisions.map(\.description).joined(separator: ", ")): half-copied, damaged, or something else in its place), which may be a head or the merge base, so a merge now could differ from the one a replica that reads it makes"
        case .unseenForMigration(let id, let revisions):
            "document \(id.uuidString.lowercased()) is not migrated: its folder holds \(revisions.count == 1 ? "a revision" : "\(revisions.count) revisions") it cannot read yet (\(revisions.map(\.description).joined(separator: ", ")): half-copied, damaged, or something else in its place), which may supersede its winner, and a migration made now would be in conflict with \(Remedy.them(revisions.count))"
        case .noReadableRevision(let id, let skipped):
            "document \(id.uuidString.lowercased()) has no revision that can be read: \(skipped == 1 ? "1 item in its folder was" : "\(skipped) items in its folder were") skipped"
        case .unreadableRevision(let id, let why):
            "revision \(id) is in the document's folder but cannot be read here: \(why)"
        case .readOnly(let path): "the store at \(ShownText.escaping(path)) was opened for reading only"
        case .newerLayout(let file, let version, let supported):
            "\(ShownText.escaping(file)): store layout \(version) is newer than this build supports (\(supported)); it can be read but not changed"
        case .damagedStore(let file, let why), .tornLayout(let file, let why):
            "\(ShownText.escaping(file)): not a store's layout file: \(why)"
        case .newerFormat(let id, let version, let supported):
            "\(id): format \(version) is newer than this build supports (\(supported))"
        case .noSuchPackage(let path): "there is no revision package at \(ShownText.escaping(path))"
        case .unimportablePackage(let path, let why):
            "\(ShownText.escaping(path)): cannot be imported: \(why)"
        case .documentsFolderBlocked(let path, let kind):
            "\(ShownText.escaping(path)): \(Self.blockedDocuments(kind))"
        }
    }

    /// What mends it, where the store knows: a torn layout file, revisions that cannot be
    /// read yet, a document with no revision that can be read.
    public var remedy: Remedy? {
        switch self {
        case .tornLayout(let file, _):
            // The store is the folder the layout file is in.
            .writeLayoutAgain(
                file.hasSuffix("/" + StoreLayout.layoutFile)
                    ? String(file.dropLast(StoreLayout.layoutFile.count + 1)) : ".")
        case .unseenRevisions(_, let revisions): .finishCopyThenPrune(count: revisions.count)
        case .unseenForMerge(_, let revisions): .finishCopyThenMerge(count: revisions.count)
        case .unseenForMigration(_, let revisions): .finishCopyThenMigrate(count: revisions.count)
        case .noReadableRevision, .unreadableRevision: .verifyThenRepair
        default: nil
        }
    }

    /// The ``problem``, then the ``remedy``'s ``Remedy/advice``.
    public var description: String { problem + (remedy?.advice ?? "") }
}

/// The device a store's new revisions name (``RevisionStore/device``): set when the store
/// is opened, and taken over once from another process's record (see
/// ``RevisionStore/init(root:device:calls:wallClock:isReadable:makeLocalState:)``).
private final class DeviceSlot: Sendable {
    private let current: Locked<Device>

    init(_ device: Device) { current = Locked(device) }

    var device: Device { current.withLock { $0 } }

    func take(_ device: Device) { current.withLock { $0 = device } }
}
