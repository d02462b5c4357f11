import Diagnostics
import Foundation
import Packages
import PropertyList
import Surveys
import Versions

/// A device name that a store cannot record.
public struct DeviceNameError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The name given.
    public var name: String
    /// Why it cannot be recorded.
    public var reason: String
    public var description: String {
        "the device name \(ShownText.escaping(ShownText.quoted(name))) cannot be used: \(reason)"
    }
}

/// A folder of survey documents, each kept as revisions: the library's entry point.
///
/// ```swift
/// let store = try SurveyStore.create(at: "/path/Surveys", deviceName: "Laptop")
/// let (id, _) = try store.create(survey)
/// var document = try store.open(id)
/// try document.survey.setAnswer(.choice(1), forItem: itemID)
/// document = try store.save(document)
/// ```
///
/// Every save writes a new revision atomically and durably; concurrent saves from the
/// same base are all kept, and the newest is nominated the winner on every replica.
///
/// ## Thread safety
///
/// A store is `Sendable`: its configuration (root, device, read-only flag, the system
/// calls it makes) is immutable, and every call that changes a document takes that
/// document's lock (an open-file-description lock, which excludes other threads and
/// other processes alike), so one store may be used from many tasks and threads at
/// once. Reads take no lock: every revision is published by an atomic rename.
///
/// The calls block on the file system (a save waits for `fsync`). From Swift
/// concurrency, use the `async` forms of those that write or fsync (opening a store;
/// create, save, delete, deleteDocument, resolve, resolveMerge, prune,
/// pruneEveryDocument, importPackage, importPackages, exportPackage, migrate, sync,
/// syncMerging, repair, setLocalState) and of those that read a document or the whole
/// store (open, documents, documentsReport, mergePlan, verify, localState): they run the work on a Dispatch queue of the
/// library's (see `SurveyStore+Async.swift`) instead of the caller's executor.
public final class SurveyStore: Sendable {
    /// The current format of `Survey.plist`.
    public static let formatVersion = FormatMigrator.current
    /// The layout version written to `Store.plist`.
    public static let layoutVersion = 1

    /// The store folder.
    public let root: String
    /// This device: the identity new revisions are stamped with. For a store opened
    /// without local state, the identity its first write records, or finds recorded by
    /// another process that wrote first (which it then takes).
    public var device: Device { revisions.device }
    /// Whether the store was opened for reading only: nothing is created, cleaned up or
    /// locked, and every call that would write throws `StoreError/readOnly(_:)`.
    public let isReadOnly: Bool
    /// Whether listing documents may rewrite the summary cache (see
    /// `documentsReport()`): only for a store opened with
    /// `openForReading(at:calls:refreshingSummaryCache:)` asking for it. Every other
    /// store uses a valid cache and never writes it, so that a command that changes the
    /// store writes nothing but what it set out to write.
    public let writesSummaryCache: Bool
    let revisions: RevisionStore
    /// Whether this replica's local state (`Local.nosync/`) is there; see
    /// ``hasLocalState``.
    private let localStateFlag: LocalStateFlag

    init(
        root: String, device: Device, calls: SystemCalls, wallClock: (@Sendable () -> Int64)? = nil,
        readOnly: Bool = false, writesSummaryCache: Bool = false, hasLocalState: Bool = true
    ) {
        self.root = root
        isReadOnly = readOnly
        self.writesSummaryCache = writesSummaryCache
        let flag = LocalStateFlag(hasLocalState)
        localStateFlag = flag
        // A copy of a pruned revision goes only once a successor can be read in its place.
        let isReadable: @Sendable (Data, RevisionMetadata) -> Bool = { content, revision in
            Self.canRead(content, of: revision)
        }
        // The first write of a store without local state makes it: its folders, and the
        // identity of the device its revisions name. A store opened for reading makes none.
        var makeLocalState: (@Sendable () throws -> Device?)?
        if !readOnly {
            makeLocalState = { @Sendable in
                let writer = RevisionStore.writer(root: root, calls: calls)
                try writer.prepare()
                // Another process that made the local state first recorded its own device:
                // this store's revisions name that one too.
                let recorded = try DeviceIdentity.create(device, writer: writer)
                flag.isMade = true
                return recorded
            }
        }
        revisions =
            if let wallClock {
                RevisionStore(
                    root: root, device: device, calls: calls, wallClock: wallClock, isReadable: isReadable,
                    makeLocalState: makeLocalState)
            } else {
                RevisionStore(
                    root: root, device: device, calls: calls, isReadable: isReadable,
                    makeLocalState: makeLocalState)
            }
    }

    /// Whether this replica's local state (`Local.nosync/`: device identity, temporaries,
    /// locks) is there. A store opened without it (copied with `*.nosync` excluded, as
    /// sync engines are told to, or checked out) has it made by its first write, which
    /// also records ``device``; until then, a write that may refuse or find nothing to do
    /// decides that on a read made without the document's lock, so that it leaves such a
    /// store exactly as it was.
    var hasLocalState: Bool { localStateFlag.isMade }

    /// Whether `content` (already checked against its digest) reads as a survey of
    /// `revision`'s format: content in a format newer than this build counts, as it cannot
    /// be checked here.
    static func canRead(_ content: Data, of revision: RevisionMetadata) -> Bool {
        guard revision.formatVersion <= formatVersion else { return true }
        return (try? decode(content, of: revision, file: nil)) != nil
    }

    /// `content` read as a survey of `revision`'s format: older formats are migrated in
    /// memory, item ids deriving from the revision id.
    static func decode(_ content: Data, of revision: RevisionMetadata, file: String?) throws -> Survey {
        try FormatMigrator.survey(
            from: content, version: revision.formatVersion, seed: revision.id.description, file: file)
    }

    /// The system calls the store makes: the real ones, or a test's simulated disk.
    @_spi(Testing) public var calls: SystemCalls { revisions.calls }

    /// Creates the store if needed (idempotent) and opens it.
    ///
    /// - Parameters:
    ///   - path: The store folder; created with its parents if missing.
    ///   - deviceName: This device's name; the host name when `nil`. An existing store
    ///     keeps its device identity unless a name is given, which renames the device.
    /// - Throws: ``DeviceNameError`` for a name
    ///   that cannot be stored, before anything is created; for an existing store,
    ///   `StoreError/damagedStore(_:_:)` when its `Store.plist` is not a layout file and
    ///   `StoreError/newerLayout(_:_:supported:)` when it is a newer layout's, before
    ///   anything is written into it; `FileSystemError`. A `Store.plist` that is empty or
    ///   cut short (by a power loss, as a copy that was never made durable leaves it: the
    ///   start of the layout file, zero bytes in place of some of it) in a folder that
    ///   holds `Documents/` is written again
    ///   (see ``isLayoutTorn(at:)``), since the only thing it holds is the layout version,
    ///   and this layout is the only one there has been. A folder inside another store's
    ///   `Documents/` or `Local.nosync/`, links followed, is refused before anything is
    ///   made: `StoreError/insideStore(_:store:folder:)` (an existing store there too,
    ///   which that store's sync, verify and prune would take for files of its own).
    public static func create(at path: String, deviceName: String? = nil) throws -> SurveyStore {
        try create(at: path, deviceName: deviceName, calls: .live)
    }

    /// `create(at:deviceName:)` making the system calls of `calls` (a test's simulated disk).
    @_spi(Testing) public static func create(
        at path: String, deviceName: String? = nil, calls: SystemCalls
    ) throws -> SurveyStore {
        if let deviceName { try checkDeviceName(deviceName) }
        try refuseInsideStore(path)
        let writer = RevisionStore.writer(root: path, calls: calls)
        try writer.createRoot()
        let layout = try layoutFileBytes()
        // An existing store's layout file is checked before anything is written into it;
        // one cut short (a torn write) is written again.
        var isTorn = false
        if try FileReader(root: path, calls: calls).status(atPath: path + "/" + layoutFile) != nil {
            isTorn = try isLayoutTorn(at: path, calls: calls)
            if !isTorn { try checkLayout(at: path, calls: calls, forWriting: true) }
        }
        try writer.prepare()
        if isTorn { try writer.replaceFile(layout, at: layoutFile) }
        if try writer.writeFile(layout, at: layoutFile) == .alreadyExists {
            try checkLayout(at: path, calls: calls, forWriting: true)
        }
        try RevisionStore.createDocumentsFolder(with: writer, reader: FileReader(root: path, calls: calls))
        // As when opening: none recorded, or something else in its place, gives a new
        // identity, unless another process records one first (a second `init`, the first
        // write of a store copied without its local state): that one is the store's; an
        // I/O error renews nothing. A name given renames the device, keeping its id.
        var device =
            try DeviceIdentity.readIfRecorded(store: path, writer: writer)
            ?? DeviceIdentity.create(
                Device(id: DeviceIdentity.newID(), name: deviceName ?? ProcessInfo.processInfo.hostName),
                writer: writer)
        if let deviceName, device.name != deviceName {
            device.name = deviceName
            try DeviceIdentity.write(device, writer: writer)
        }
        let store = SurveyStore(root: path, device: device, calls: calls)
        // On an existing store, the same clean-up as opening it for writing.
        try writer.removeLeftovers()
        try store.finishInterruptedPrunes()
        return store
    }

    /// The longest device name, in bytes of UTF-8 (255, a file name's limit).
    ///
    /// Every revision's metadata names its device, and a metadata file is read only up to
    /// 1 MiB (a revision whose metadata would be larger is refused): the bound keeps a name,
    /// even one of `&` written as `&amp;`, far inside it.
    public static let maximumDeviceNameBytes = 255

    /// Checks that `name` can be a device's name: not empty nor only white space, at most
    /// ``maximumDeviceNameBytes`` bytes of UTF-8, and only characters an XML property list
    /// carries (no control characters other than tab and line feed, no carriage return).
    ///
    /// - Throws: ``DeviceNameError``.
    public static func checkDeviceName(_ name: String) throws {
        guard !name.isEmpty else { throw DeviceNameError(name: name, reason: "it is empty") }
        guard name.utf8.count <= maximumDeviceNameBytes else {
            throw DeviceNameError(
                name: String(name.prefix(40)) + "…",
                reason:
                    "it is \(name.utf8.count) bytes of UTF-8; a device name has at most \(maximumDeviceNameBytes)"
            )
        }
        guard !name.allSatisfy(\.isWhitespace) else {
            throw DeviceNameError(name: name, reason: "it is only white space")
        }
        do {
            _ = try DeviceIdentity.plistData(Device(id: "0", name: name), folder: "")
        } catch let error as PropertyListError {
            throw DeviceNameError(name: name, reason: error.message)
        }
    }

    /// Opens an existing store, removing temporaries left by interrupted writes.
    ///
    /// A store that came without its local state (`Local.nosync/`, which sync engines are
    /// told to exclude) is opened as it is: its first write that goes ahead makes it
    /// (device identity, temporary and lock folders), and a call that fails, refuses or
    /// finds nothing to write leaves the store exactly as it was.
    ///
    /// - Parameter path: The store folder.
    /// - Throws: `StoreError/noSuchStore(_:)` when `path` holds no store;
    ///   `StoreError/damagedStore(_:_:)` when its `Store.plist` is not a layout file;
    ///   `StoreError/newerLayout(_:_:supported:)` when it is a newer layout's, which this
    ///   build does not write to; `FileSystemError`.
    public static func open(at path: String) throws -> SurveyStore {
        try open(at: path, calls: .live)
    }

    /// `open(at:)` making the system calls of `calls`, with a clock of the test's own.
    ///
    /// - Parameters:
    ///   - path: The store folder.
    ///   - calls: The system calls to make (a test's simulated disk).
    ///   - wallClock: Milliseconds since 1970 for new revisions' timestamps (the system
    ///     clock when `nil`).
    @_spi(Testing) public static func open(
        at path: String, calls: SystemCalls, wallClock: (@Sendable () -> Int64)? = nil
    ) throws -> SurveyStore {
        try checkLayout(at: path, calls: calls, forWriting: true)
        // A store that came without its local state (rsync or another engine told to
        // exclude `*.nosync`, a checkout) has nothing to clean up, and gets its local state
        // from its first write: opening it makes nothing, so a command that writes nothing
        // (or fails) leaves it as it was.
        let local = path + "/" + StoreLayout.localFolder
        guard try FileReader(root: path, calls: calls).status(atPath: local) != nil else {
            let device = Device(id: DeviceIdentity.newID(), name: ProcessInfo.processInfo.hostName)
            return SurveyStore(
                root: path, device: device, calls: calls, wallClock: wallClock, hasLocalState: false)
        }
        let writer = RevisionStore.writer(root: path, calls: calls)
        try writer.prepare()
        try writer.removeLeftovers()
        // None recorded, or something else in its place: a new identity, unless another
        // process opening the store records one first. An I/O error renews nothing.
        let device =
            try DeviceIdentity.readIfRecorded(store: path, writer: writer)
            ?? DeviceIdentity.create(
                Device(id: DeviceIdentity.newID(), name: ProcessInfo.processInfo.hostName), writer: writer)
        let store = SurveyStore(root: path, device: device, calls: calls, wallClock: wallClock)
        try store.finishInterruptedPrunes()
        return store
    }

    /// Opens an existing store for reading only: nothing is created, removed, locked or
    /// written, so a read-only mount, a read-only user or a backup can be listed, shown,
    /// exported, checked and verified.
    ///
    /// Readers need no lock: every revision is published by an atomic rename, so a
    /// reader sees each revision whole or not at all. What a concurrent writer (or an
    /// interrupted one) left half done is skipped, never taken for a revision.
    ///
    /// - Throws: `StoreError/noSuchStore(_:)` when `path` holds no store;
    ///   `StoreError/damagedStore(_:_:)` when its `Store.plist` is not a layout file.
    public static func openForReading(at path: String) throws -> SurveyStore {
        try openForReading(at: path, calls: .live, refreshingSummaryCache: false)
    }

    /// `openForReading(at:)` making the system calls of `calls` (a test's simulated disk).
    @_spi(Testing)
    public static func openForReading(at path: String, calls: SystemCalls) throws -> SurveyStore {
        try openForReading(at: path, calls: calls, refreshingSummaryCache: false)
    }

    /// Opens an existing store for reading only, like `openForReading(at:)`, except
    /// that listing its documents may rewrite the summary cache
    /// (`Local.nosync/summaries.cache`) when the store can be written: the only write it
    /// ever makes, an atomic replacement of that file, skipped without error on a
    /// read-only store. `survey list` and `survey conflicts` open stores this way.
    ///
    /// - Parameters:
    ///   - path: The store folder.
    ///   - refreshingSummaryCache: Whether `documentsReport()` may rewrite the summary
    ///     cache.
    /// - Throws: As `openForReading(at:)`.
    public static func openForReading(at path: String, refreshingSummaryCache: Bool) throws -> SurveyStore {
        try openForReading(at: path, calls: .live, refreshingSummaryCache: refreshingSummaryCache)
    }

    @_spi(Testing)
    public static func openForReading(
        at path: String, calls: SystemCalls, refreshingSummaryCache: Bool
    ) throws -> SurveyStore {
        try checkLayout(at: path, calls: calls, forWriting: false)
        let reader = FileReader(root: path, calls: calls)
        let device =
            (try? DeviceIdentity.peek(store: path, reader: reader)) ?? Device(id: "unknown", name: "unknown")
        return SurveyStore(
            root: path, device: device, calls: calls, readOnly: true,
            writesSummaryCache: refreshingSummaryCache)
    }

    /// The store's layout file and the key that holds its version.
    static let layoutFile = StoreLayout.layoutFile
    static let layoutKey = StoreLayout.layoutKey

    /// Checks that this build can change the store at `path`, as opening it for writing
    /// does first: its layout file names a layout this build writes. Only reads
    /// `Store.plist`; a store this build can only read can be told apart before advice
    /// to change it is given.
    ///
    /// - Parameter path: The store folder.
    /// - Throws: `StoreError/newerLayout(_:_:supported:)` for a layout newer than
    ///   ``layoutVersion``; `StoreError/noSuchStore(_:)` or `StoreError/damagedStore(_:_:)`
    ///   when `path` holds no store or its layout file is damaged.
    public static func checkLayoutForWriting(at path: String) throws {
        try checkLayout(at: path, calls: .live, forWriting: true)
    }

    /// The bytes of this build's `Store.plist`.
    static func layoutFileBytes() throws -> Data {
        try PropertyList.dictionary([layoutKey: .integer(PropertyList.Integer(Int64(layoutVersion)))])
            .xmlData()
    }

    /// Whether the store at `path` has a torn layout file, which
    /// `create(at:deviceName:)` writes again: `Store.plist` is a regular file that is
    /// empty or cut short, `Documents/` a folder beside it. Cut short means what a write
    /// a power loss interrupted leaves: the start of the layout file's bytes, some of them
    /// (or all of its end) zero bytes where blocks were allocated but not written. Any
    /// other content (a property list without the version, text, a folder or link in its
    /// place) is not torn, and is left for a person to look at.
    ///
    /// - Throws: `FileSystemError` when either cannot be looked at.
    public static func isLayoutTorn(at path: String) throws -> Bool {
        try isLayoutTorn(at: path, calls: .live)
    }

    static func isLayoutTorn(at path: String, calls: SystemCalls) throws -> Bool {
        let reader = FileReader(root: path, calls: calls)
        let data: Data
        do {
            guard try reader.status(atPath: path + "/" + StoreLayout.documentsFolder)?.isDirectory == true,
                try reader.status(atPath: path + "/" + layoutFile)?.kind == .regular,
                let bytes = try reader.contents(atPath: path + "/" + layoutFile)
            else { return false }
            data = bytes
        } catch let error as FileSystemError where error.code == .notFound {
            // No store's folder yet (init makes it).
            return false
        }
        let layout = try layoutFileBytes()
        return data.count <= layout.count
            && zip(data, layout).allSatisfy { written, expected in written == expected || written == 0 }
            && data != layout
    }

    /// Checks `Store.plist`: a regular file holding a dictionary with an integer
    /// `StoreLayoutVersion` this build knows (a newer one may be read, never written).
    static func checkLayout(at path: String, calls: SystemCalls, forWriting: Bool) throws {
        let file = path + "/" + layoutFile
        let data: Data
        do {
            guard let bytes = try FileReader(root: path, calls: calls).contents(atPath: file) else {
                throw StoreError.noSuchStore(path)
            }
            data = bytes
        } catch let error as FileSystemError where error.isAboutTheEntry {
            throw StoreError.damagedStore(file, error.reason)
        }
        let value: PropertyList
        do {
            value = try PropertyList(xml: data, file: file)
        } catch let error as PropertyListError {
            // Cut short beside the documents: a torn write, which creating the store mends.
            let isTorn = (try? isLayoutTorn(at: path, calls: calls)) ?? false
            throw isTorn
                ? StoreError.tornLayout(file, error.description)
                : StoreError.damagedStore(file, error.description)
        }
        // Any positive integer a property list can hold is a layout version: one past
        // `Int.max` is newer than this build, not damage.
        guard case .integer(let number)? = value[layoutKey], let version = number.uint64Value, version >= 1
        else {
            throw StoreError.damagedStore(file, "'\(layoutKey)' is missing or not a positive integer")
        }
        if forWriting && version > UInt64(layoutVersion) {
            throw StoreError.newerLayout(file, version, supported: layoutVersion)
        }
    }

    /// Whether `revision` is stamped more than a day ahead of this device's clock. Such a
    /// stamp is flagged, not trusted: it wins conflicts (the winner is the same on every
    /// replica) until a save or a resolution supersedes it, and a revision made on top of
    /// it takes this device's clock rather than inheriting the stamp.
    public func isStampedAhead(_ revision: RevisionMetadata) -> Bool {
        revisions.isFarAhead(revision.timestamp)
    }

    /// Throws `StoreError/readOnly(_:)` when the store was opened for reading only.
    func checkWritable() throws {
        if isReadOnly { throw StoreError.readOnly(root) }
    }

    /// Removes what prunes interrupted by a crash left behind (packages their tombstones
    /// already disown), each under its document's lock, and then whatever else stands in
    /// the pruning folder (no note of a prune).
    ///
    /// A prune that cannot be finished (a package that may not be removed, a lock file
    /// that cannot be used) is left, its note kept for the next write, and keeps no write
    /// to the store from going ahead: the packages it leaves are disowned by tombstones,
    /// which every read honours, and a prune of that document names what stands in its
    /// way. So is a stray entry that cannot be removed.
    private func finishInterruptedPrunes() throws {
        let notes = try revisions.pruneNotes()
        let pruning = root + "/" + StoreLayout.pruningFolder + "/"
        for id in notes.documents {
            do {
                let lock = try documentLock(id)
                defer { lock.unlock() }
                try revisions.finishPrune(id)
            } catch let error as FileSystemError
                where error.isUnusableLock || revisions.document(containing: error.path) == id
                || error.path.hasPrefix(pruning)
            {
                continue
            }
        }
        for name in notes.stray {
            do {
                try revisions.removeStrayPruneNote(name)
            } catch let error as FileSystemError where error.path.hasPrefix(pruning) {
                continue
            }
        }
    }

    // MARK: Documents

    /// A document as `list` shows it.
    public struct Summary: Sendable, Equatable {
        /// The document.
        public var id: UUID
        /// The winner's title (`nil` for a deleted document, or when it cannot be read).
        public var title: String?
        /// The winner.
        public var revision: RevisionMetadata
        /// The other heads that are not deletions: the unresolved conflict versions.
        public var conflicts: [RevisionID]
        /// The metadata of the heads in ``conflicts``, in the same order.
        public var conflictRevisions: [RevisionMetadata] = []
        /// Whether the winner is a deletion.
        public var isDeleted: Bool { revision.isDeleted }
        /// Normal, in conflict, or deleted.
        public var state: DocumentState {
            isDeleted ? .deleted : conflicts.isEmpty ? .normal : .inConflict
        }
    }

    /// The state of a document as a whole.
    public enum DocumentState: String, Sendable {
        /// One current revision.
        case normal
        /// More than one head that is not a deletion.
        case inConflict
        /// The winner is a deletion.
        case deleted
    }

    /// One row per document, by id. A document whose folder holds nothing that counts as a
    /// revision is left out (see `documentsReport()` for what was left out and why).
    ///
    /// - Throws: `FileSystemError` when a document's folder, or a package or file in it
    ///   (its current content included), cannot be read at all (permission denied, an
    ///   input/output error): a caller that
    ///   acts on every document (migrate, resolve every conflict) must not pass over one it
    ///   could not see. `documentsReport()` names such a document among its issues instead.
    public func documents() throws -> [Summary] {
        let report = try summariesReport()
        if let unreadable = report.unreadable.first { throw unreadable }
        return report.documents
    }

    /// One row per document, by id, and what was skipped on the way: entries of
    /// `Documents/` that are no document folders, items inside document folders that are
    /// no revisions, and documents that could not be read at all (a folder, package or
    /// file in one that may not be read, an input/output error). A document whose
    /// current revision's content cannot be read (damaged, or no survey) is listed
    /// without a title, and named among the issues; one in a newer format is listed
    /// without a title and no issue, its format saying why. One bad item never keeps
    /// the other documents from being listed.
    ///
    /// A document whose folder is provably unchanged since a clean read is taken from the
    /// summary cache in `Local.nosync/` (see `docs/FORMAT.md`), which this rewrites when
    /// ``writesSummaryCache`` is set; the result is the same either way.
    public func documentsReport() throws -> (documents: [Summary], issues: [StoreIssue]) {
        let report = try summariesReport()
        return (report.documents, report.issues)
    }

    /// Creates a document; returns its id and first revision.
    ///
    /// - Parameters:
    ///   - survey: The document's first content.
    ///   - id: The document's id: a new random one when `nil`. An id the store already
    ///     holds a document for is refused (a second first revision would put the
    ///     document in conflict with itself, or bring a deleted one back), decided under
    ///     the document's lock so that two processes creating it at once make one.
    /// - Throws: `SurveyError` when `survey` breaks a rule of the model (every rule is
    ///   applied to new content, including an emptied title); `StoreError/documentExists(_:)`
    ///   for an `id` in use, writing nothing.
    @discardableResult
    public func create(_ survey: Survey, id: UUID? = nil) throws -> (id: UUID, revision: RevisionMetadata) {
        try checkWritable()
        try survey.validate()
        let content = try survey.plistData()
        let chosen = id
        let id = id ?? UUID()
        // The revision names the device: a store without local state makes it first, once
        // the documents' folder is found usable (a blocked one fails, making nothing).
        if !hasLocalState {
            try wrapping(.create, id) {
                try revisions.prepareDocumentsFolder()
                try prepareLocalState()
            }
        }
        let lock = try chosen.map { try documentLock($0) }
        defer { lock?.unlock() }
        if chosen != nil {
            do {
                if try !revisions.read(id).foundNothing { throw StoreError.documentExists(id) }
            } catch StoreError.noSuchDocument(id) {}
        }
        let metadata = try wrapping(.create, id) {
            try revisions.write(
                document: id, parents: [], content: content, formatVersion: Self.formatVersion)
        }
        return (id, metadata)
    }

    /// The graph of a document, after removing resurrected copies of pruned revisions
    /// (when the store is writable).
    public func graph(of id: UUID) throws -> RevisionGraph {
        isReadOnly ? try revisions.graph(of: id).graph : try revisions.cleanedGraph(of: id).graph
    }

    /// The error for a document whose graph has no winner: `StoreError/noReadableRevision(_:skipped:)`
    /// when its folder holds items that were skipped or packages not complete yet, else
    /// `StoreError/noSuchDocument(_:)`.
    /// Only on that failure path does it read the folder again; an error reading it is
    /// thrown rather than taken for an empty folder.
    func noWinner(_ id: UUID) throws -> StoreError {
        // A package still being copied counts: the document is there, not yet readable.
        let read = try revisions.read(id)
        let skipped = read.skipped.count + read.incomplete.count
        return skipped > 0 ? .noReadableRevision(id, skipped: skipped) : .noSuchDocument(id)
    }

    /// What reading a document's folder skipped (links, special files, damaged or foreign
    /// packages and tombstones), for a warning: none of it counts as a revision.
    public func skippedItems(of id: UUID) throws -> [StoreIssue] {
        try revisions.read(id).skipped
    }

    /// The ids of the documents that have a folder, without reading any of them.
    public func documentIDs() throws -> [UUID] {
        try revisions.documentIDs()
    }

    /// A revision of a document: the winner, or `revision` when given.
    ///
    /// - Parameters:
    ///   - id: The document.
    ///   - revision: A revision of the document; `nil` for the winner.
    /// - Throws: `StoreError/noSuchDocument(_:)`, `StoreError/noSuchRevision(_:)` when
    ///   the document has no revision `revision`, `StoreError/unreadableRevision(_:_:)`
    ///   when its folder holds the revision's package but it cannot be read (not complete
    ///   yet, or damaged), `StoreError/noReadableRevision(_:skipped:)` when its folder
    ///   holds nothing but items that were skipped.
    public func revision(_ id: UUID, _ revision: RevisionID? = nil) throws -> RevisionMetadata {
        try self.revision(id, revision, in: revisions.graph(of: id).graph)
    }

    /// A revision of a document in its `graph`, already read.
    func revision(_ id: UUID, _ revision: RevisionID?, in graph: RevisionGraph) throws -> RevisionMetadata {
        guard let revision else {
            guard let winner = graph.winner else { throw try noWinner(id) }
            return winner
        }
        guard let found = graph.revisions[revision] else {
            // A package in the folder that cannot be read is named as such (read again:
            // only on the way to failing, and an error reading it is thrown as it is).
            let read = try revisions.read(id)
            if read.unseen.contains(revision) {
                throw unreadableRevision(revision, of: id, in: read)
            }
            throw StoreError.noSuchRevision(revision.description)
        }
        return found
    }

    /// Reads the survey of `revision`.
    ///
    /// - Throws: `StoreError/newerFormat(_:_:supported:)`, naming the revision, when its
    ///   format is newer than this build's; the errors of reading the content.
    public func survey(_ id: UUID, _ revision: RevisionMetadata) throws -> Survey {
        guard revision.formatVersion <= Self.formatVersion else {
            throw StoreError.newerFormat(revision.id, revision.formatVersion, supported: Self.formatVersion)
        }
        let data = try revisions.content(of: id, revision: revision)
        return try Self.decode(data, of: revision, file: contentFile(of: id, revision))
    }

    /// The path of `revision`'s content file, as errors about its content name it.
    private func contentFile(of id: UUID, _ revision: RevisionMetadata) -> String {
        root + "/" + StoreLayout.package(revision.id, of: id) + "/" + StoreLayout.contentFile
    }

    /// Opens a document: the survey of its winner (or of `revision`), that revision as
    /// the base of the next save, and the state of the document as a whole.
    ///
    /// A deleted document opens only at an earlier revision (named by `revision`): its
    /// state is then ``SurveyDocument/State/deleted(_:)``, and saving it restores it.
    ///
    /// - Throws: ``DocumentDeletedError`` when the document is deleted (or `revision` is
    ///   a deletion while it is), `StoreError` (`StoreError/deletion(_:)` when `revision`
    ///   is a deletion the document has outlived, `StoreError/newerFormat(_:_:supported:)`
    ///   for a revision in a newer format), or the errors of reading the content.
    public func open(_ id: UUID, revision: RevisionID? = nil) throws -> SurveyDocument {
        // Read without a lock: between reading the graph and the winner's content, another
        // process may bring a newer revision (a save, a sync) and prune the one read as the
        // winner. Its content gone, the winner is looked up again (a few times at most).
        var attempts = 0
        while true {
            let graph = try revisions.graph(of: id).graph
            let base = try self.revision(id, revision, in: graph)
            if base.isDeleted { throw try deletedError(id, base) }
            do {
                let content = try self.survey(id, base)
                return SurveyDocument(id: id, survey: content, base: base, state: SurveyDocument.State(graph))
            } catch StoreError.noContent(let pruned) where revision == nil && attempts < 3 {
                attempts += 1
                if try revisions.graph(of: id).graph.winner?.id == pruned {
                    throw StoreError.noContent(pruned)
                }
            }
        }
    }

    // MARK: Changing documents

    /// Saves `survey` as a new revision of `id` based on `base` (the winner by default).
    ///
    /// Saving never loses a concurrent save: if `base` is no longer the only head, the new
    /// revision is one more head and the document is in conflict. Content identical to
    /// the base writes nothing and returns the base. Every rule of the model is applied
    /// first (`Survey.validate()`), so a document read with an empty title or repeated
    /// option labels must be fixed before it is saved.
    ///
    /// - Parameters:
    ///   - survey: The new content.
    ///   - id: The document.
    ///   - base: The revision the content is based on; the winner when `nil`.
    ///   - ifCurrent: Refuse with `StoreError/notCurrent(base:heads:deletions:)` unless `base` is
    ///     the document's only current revision: the winner, every other head (if any) a
    ///     deletion it won over, since an edit never loses to a deletion it raced.
    /// - Returns: The new revision (or the base, when the content is the base's).
    @discardableResult
    public func save(
        _ survey: Survey, to id: UUID, base: RevisionID? = nil, ifCurrent: Bool = false
    ) throws -> RevisionMetadata {
        try write(survey, to: id, base: base, ifCurrent: ifCurrent).revision
    }

    /// Saves a document's survey as a new revision based on the document's own base.
    ///
    /// As `save(_:to:base:ifCurrent:)`: a concurrent save is never lost (the document
    /// is then in conflict, which the returned state says), and content identical to the
    /// base writes nothing.
    ///
    /// - Parameters:
    ///   - document: The document, as opened (or last saved) and edited since.
    ///   - ifCurrent: Refuse with `StoreError/notCurrent(base:heads:deletions:)` unless the
    ///     document's base is its only current revision (as `save(_:to:base:ifCurrent:)`
    ///     says).
    /// - Returns: The document after the save: the same survey, the revision written
    ///   (or the base, when nothing changed) as its base, and the document's state.
    @discardableResult
    public func save(_ document: SurveyDocument, ifCurrent: Bool = false) throws -> SurveyDocument {
        let (revision, graph) = try write(
            document.survey, to: document.id, base: document.base.id, ifCurrent: ifCurrent)
        var saved = document
        saved.base = revision
        saved.state = SurveyDocument.State(graph)
        return saved
    }

    /// Saves under the document's lock; returns the revision and the graph with it.
    private func write(
        _ survey: Survey, to id: UUID, base: RevisionID?, ifCurrent: Bool
    ) throws -> (revision: RevisionMetadata, graph: RevisionGraph) {
        try checkWritable()
        // The content is checked before anything is locked: a refusal locks nothing.
        try survey.validate()
        let content = try survey.plistData()
        let digest = RevisionID.sha256Hex(content)
        /// The base in `graph`, and whether it holds this content already (nothing to write).
        func decide(_ graph: RevisionGraph) throws -> (base: RevisionMetadata, unchanged: Bool) {
            let baseRevision = try revision(id, base, in: graph)
            let heads = graph.heads
            // Current: the base wins, and every other head is a deletion it won over (an
            // edit never loses to a deletion it raced, and such a deletion stays a head).
            if ifCurrent
                && (graph.winner?.id != baseRevision.id
                    || heads.contains { $0.id != baseRevision.id && !$0.isDeleted })
            {
                throw StoreError.notCurrent(
                    base: baseRevision.id, heads: heads.map(\.id),
                    deletions: Set(heads.filter(\.isDeleted).map(\.id)))
            }
            return (baseRevision, !baseRevision.isDeleted && baseRevision.contentDigest == digest)
        }
        if !hasLocalState {
            let graph = try revisions.graph(of: id).graph
            let decided = try decide(graph)
            if decided.unchanged { return (decided.base, graph) }
        }
        let lock = try documentLock(id)
        defer { lock.unlock() }
        // One read of the graph serves the base, the heads and the new revision's clock.
        // It is cleaned only once the save goes ahead: a refusal or no change removes nothing.
        var read = try revisions.read(id)
        let (baseRevision, unchanged) = try decide(read.graph)
        if unchanged { return (baseRevision, read.graph) }
        try revisions.clean(&read, of: id)
        var graph = read.graph
        let written = try wrapping(.save, id) {
            try revisions.write(
                document: id, parents: [baseRevision], content: content, formatVersion: Self.formatVersion,
                known: graph,
                contentDigest: digest)
        }
        graph.insert(written)
        return (written, graph)
    }

    /// Deletes a document: a deletion revision whose parents are the current heads (or
    /// `base`).
    ///
    /// Deleting what is already deleted writes nothing: when the document's winner is a
    /// deletion (and no `base` is given), `base` is itself a deletion, or a current
    /// revision is a deletion of `base` alone (a `delete` with this `base` made before),
    /// that deletion is returned as it is (compare it with ``deletion(of:)`` to tell).
    ///
    /// - Parameters:
    ///   - id: The document.
    ///   - base: The revision the deletion is based on; every head when `nil`.
    /// - Returns: The deletion revision.
    @discardableResult
    public func delete(_ id: UUID, base: RevisionID? = nil) throws -> RevisionMetadata {
        try deleteDocument(id, base: base).revision
    }

    /// What a write that may find nothing to do did.
    public struct WriteOutcome: Sendable, Equatable {
        /// The revision written, or the one already saying the same.
        public var revision: RevisionMetadata
        /// Whether ``revision`` was written by this call.
        public var isNew: Bool
        /// For a deletion or a resolution: revisions of the document that the store names
        /// but cannot read (not complete yet, damaged, or a link or special file in their
        /// package's place) and that no readable revision names as a parent. The revision
        /// written cannot name them as its parents, so it does not supersede them: if a
        /// repair brings one back (or its copy completes), it is a current revision again,
        /// so a deleted document is no longer deleted (an edit never loses to a deletion)
        /// and a resolved one may be in conflict again. Empty when there are none.
        public var unsuperseded: [RevisionID]

        /// Creates an outcome.
        public init(revision: RevisionMetadata, isNew: Bool, unsuperseded: [RevisionID] = []) {
            self.revision = revision
            self.isNew = isNew
            self.unsuperseded = unsuperseded
        }
    }

    /// Deletes a document as `delete(_:base:)` does, and tells whether it wrote a
    /// deletion or found the document already deleted (decided under the document's
    /// lock, from the same read), and which revisions it could not read and so does
    /// not supersede (``WriteOutcome/unsuperseded``).
    ///
    /// - Parameters:
    ///   - id: The document.
    ///   - base: The revision the deletion is based on; every head when `nil`.
    /// - Returns: The deletion revision, and whether it is new.
    /// - Throws: `StoreError/noSuchDocument(_:)` for a document without a folder, or whose
    ///   folder holds nothing (no revision, tombstone or package of any kind).
    public func deleteDocument(_ id: UUID, base: RevisionID? = nil) throws -> WriteOutcome {
        try checkWritable()
        /// The deletion already there, as `read` finds it: the winner (or `base`) when it is one.
        func existing(in read: DocumentRead) throws -> WriteOutcome? {
            let graph = read.graph
            guard var existing = try base.map({ try revision(id, $0, in: graph) }) ?? graph.winner else {
                return nil
            }
            // A deletion of `base` alone that is current already: deleting it again would
            // only add a second head saying the same.
            if base != nil, !existing.isDeleted,
                let same = graph.heads.first(where: { $0.isDeleted && $0.parents == [existing.id] })
            {
                existing = same
            }
            guard existing.isDeleted else { return nil }
            return WriteOutcome(revision: existing, isNew: false, unsuperseded: Self.unsuperseded(in: read))
        }
        /// A folder with nothing in it (left by a write that failed before its package was
        /// made, or made by hand) holds no document: there is nothing to delete, and a
        /// deletion written there would make a document out of nothing.
        func requireDocument(in read: DocumentRead) throws {
            if read.foundNothing { throw StoreError.noSuchDocument(id) }
        }
        if !hasLocalState {
            let read = try revisions.read(id)
            try requireDocument(in: read)
            if let deleted = try existing(in: read) { return deleted }
        }
        let lock = try documentLock(id)
        defer { lock.unlock() }
        // Cleaned only once the deletion goes ahead.
        var read = try revisions.read(id)
        try requireDocument(in: read)
        if let deleted = try existing(in: read) { return deleted }
        try revisions.clean(&read, of: id)
        let graph = read.graph
        let parents = try base.map { [try revision(id, $0, in: graph)] } ?? graph.heads
        let written = try wrapping(.delete, id) {
            try revisions.write(
                document: id, parents: parents, content: nil, formatVersion: Self.formatVersion, known: graph)
        }
        return WriteOutcome(revision: written, isNew: true, unsuperseded: Self.unsuperseded(in: read))
    }

    /// The revisions `read` names but cannot read and that nothing readable names as a
    /// parent: what a repair could bring back as a head a deletion does not descend from
    /// (see ``WriteOutcome/unsuperseded``).
    private static func unsuperseded(in read: DocumentRead) -> [RevisionID] {
        let unreadable = read.unseen
        guard !unreadable.isEmpty else { return [] }
        let graph = read.graph
        return unreadable.subtracting(graph.revisions.values.lazy.flatMap(\.parents))
            .subtracting(graph.revisions.keys).sorted()
    }

    /// How to resolve a conflict.
    public enum Resolution: Sendable {
        /// Keep the nominated winner's content.
        case acceptWinner
        /// Keep the content of this revision.
        case keep(RevisionID)
        /// Use this survey.
        case content(Survey)
        /// Merge the heads item by item (see `mergePlan(_:prefer:)`); contested fields
        /// take the value of head `prefer`, or else the winner's.
        case merge(prefer: RevisionID?)
    }

    /// Resolves every head into one new revision whose parents are all the heads.
    ///
    /// A resolution's metadata depends only on its parents and its content: its
    /// timestamp is one counter tick after the newest head's and its device is
    /// `RevisionStore.resolutionDevice`. Two replicas that resolve the same heads to the
    /// same content (by accepting, keeping, merging or supplying it) therefore write the
    /// same revision, and are not in conflict after syncing.
    ///
    /// A deleted document (its one head a deletion) is restored by keeping an earlier
    /// revision or by new content: the deletion becomes the new revision's parent.
    ///
    /// Only a document in conflict (more than one head that is not a deletion) is resolved,
    /// or a deleted one restored: a deletion that raced an edit is no conflict (the edit
    /// wins, and stays current), so a document whose other heads are such deletions has
    /// nothing to resolve, as one with a single head has.
    ///
    /// - Returns: The resolution, or `nil` when there is nothing to resolve: the document
    ///   is not in conflict (and, for ``Resolution/keep(_:)`` and ``Resolution/content(_:)``,
    ///   not deleted either).
    /// - Throws: `StoreError`, also `StoreError/noSuchRevision(_:)` for a revision to
    ///   keep that does not exist, even when there is nothing to resolve; the errors of
    ///   reading the content to keep (the winner's, or the kept revision's), which must
    ///   read as a survey, as ``survey(_:_:)`` reads it, unless its format is newer than
    ///   this build's (nothing is cleaned or written then);
    ///   `FileSystemError` when the revision cannot be written.
    @discardableResult
    public func resolve(_ id: UUID, _ resolution: Resolution) throws -> RevisionMetadata? {
        try resolveDocument(id, resolution)?.revision
    }

    /// Resolves a document as `resolve(_:_:)` does, and tells which revisions it could not
    /// read and so does not supersede (``WriteOutcome/unsuperseded``, from the same read,
    /// under the document's lock): once a copy completes one, or a repair brings it back,
    /// the document may be in conflict again. A merge refuses beside such revisions
    /// (`StoreError/unseenForMerge(_:_:)`), so its outcome names none.
    ///
    /// - Returns: The resolution written (``WriteOutcome/isNew``), or `nil` when there is
    ///   nothing to resolve.
    /// - Throws: As `resolve(_:_:)`.
    public func resolveDocument(_ id: UUID, _ resolution: Resolution) throws -> WriteOutcome? {
        try checkWritable()
        if case .merge(let prefer) = resolution {
            return try resolveMerge(id, prefer: prefer)?.revision.map {
                WriteOutcome(revision: $0, isNew: true)
            }
        }
        // Content is checked before anything is locked: a refusal locks nothing.
        if case .content(let survey) = resolution { try survey.validate() }
        if !hasLocalState, try !needsResolution(id, resolution, in: revisions.graph(of: id).graph) {
            return nil
        }
        let lock = try documentLock(id)
        defer { lock.unlock() }
        var read = try revisions.read(id)
        guard try needsResolution(id, resolution, in: read.graph), let winner = read.graph.winner else {
            return nil
        }
        // The content kept is read (and checked) before anything is cleaned: a refusal
        // changes nothing. Cleaning leaves the graph as it is.
        let content: Data?
        var formatVersion = Self.formatVersion
        switch resolution {
        case .merge: return nil
        case .acceptWinner:
            content = try keptContent(of: id, winner)
            formatVersion = winner.formatVersion
        case .keep(let keptID):
            let kept = try revision(id, keptID, in: read.graph)
            content = try keptContent(of: id, kept)
            formatVersion = kept.formatVersion
        case .content(let survey):
            content = try survey.plistData()
        }
        try revisions.clean(&read, of: id)
        let heads = read.graph.heads
        let written = try wrapping(.resolve, id) {
            try revisions.writeResolution(
                document: id, parents: heads, content: content, formatVersion: formatVersion)
        }
        return WriteOutcome(revision: written, isNew: true, unsuperseded: Self.unsuperseded(in: read))
    }

    /// The content a resolution that keeps `kept` carries: none for a deletion, else its
    /// content, read as a survey first, so that a resolution never carries content that
    /// ``survey(_:_:)`` could not read. Content in a format newer than this build's is kept
    /// as it is: this build cannot check it, and a newer one reads it.
    ///
    /// - Throws: The errors of reading the content (naming its file, and the item and
    ///   rule for content that breaks one).
    private func keptContent(of id: UUID, _ kept: RevisionMetadata) throws -> Data? {
        guard !kept.isDeleted else { return nil }
        let content = try revisions.content(of: id, revision: kept)
        if kept.formatVersion <= Self.formatVersion {
            _ = try Self.decode(content, of: kept, file: contentFile(of: id, kept))
        }
        return content
    }

    /// Whether `resolution` has something to resolve in `graph`: a conflict (more than one
    /// head that is not a deletion), or a deleted document that keeping a revision with
    /// content, or new content, restores.
    ///
    /// - Throws: `StoreError/noSuchRevision(_:)` for a revision to keep that `graph` lacks.
    private func needsResolution(_ id: UUID, _ resolution: Resolution, in graph: RevisionGraph) throws
        -> Bool
    {
        let restoring: Bool
        switch resolution {
        case .acceptWinner, .merge: restoring = false
        // Keeping a deletion restores nothing: a deleted document stays as it is.
        case .keep(let kept):
            let keeping = try revision(id, kept, in: graph)
            restoring = graph.isDeleted && !keeping.isDeleted
        case .content: restoring = graph.isDeleted
        }
        return graph.isInConflict || restoring
    }

    /// Resolves a document's conflict (see `resolve(_:_:)`) and opens it again.
    ///
    /// Only the document's id is used: edits in `document.survey` that were not saved
    /// are not part of the resolution (give `.content(document.survey)` to keep them).
    ///
    /// - Returns: The document at its winner after the resolution (at its winner as it
    ///   is, when there was nothing to resolve).
    /// - Throws: As `resolve(_:_:)`, and ``DocumentDeletedError`` when the document is
    ///   deleted afterwards (an accepted winner that is a deletion).
    @discardableResult
    public func resolve(_ document: SurveyDocument, _ resolution: Resolution) throws -> SurveyDocument {
        try resolve(document.id, resolution)
        return try open(document.id)
    }

    /// Prunes the content of revisions that are no longer heads.
    ///
    /// For a document in conflict, the content of every head and of the heads' merge
    /// bases stays, so that the conflict can still be merged item by item. Content
    /// superseded otherwise goes (unless `keepHistory` keeps it): a head that arrives
    /// later, based on a pruned revision, merges two-way. A document whose folder holds
    /// a package this store cannot read yet (half-copied, damaged, a link or file in its
    /// place) is not pruned: that package may be a head, whose merge base the prune would
    /// otherwise remove here and, through sync, on every replica.
    ///
    /// - Parameters:
    ///   - id: The document.
    ///   - keepHistory: How many generations of the winner's ancestors keep their content
    ///     (its parents, both after a merge, are the first).
    ///   - dryRun: Only say what would be pruned: nothing is locked, cleaned or written,
    ///     so it works on a store opened for reading.
    /// - Returns: The revisions pruned (or that would be).
    /// - Throws: `StoreError/unseenRevisions(_:_:)` for a package that cannot be read
    ///   yet; `StoreError/unreadableWinner(_:_:)` when the winner's content is damaged or
    ///   no survey this build reads; `FileSystemError` when it cannot be read at all (an
    ///   I/O error, too many open files), which is no verdict on the winner.
    public func prune(_ id: UUID, keepHistory: Int = 0, dryRun: Bool = false) throws -> [RevisionID] {
        if !dryRun && !hasLocalState {
            // Nothing to prune, and no copy of a pruned revision to remove: nothing to lock.
            let read = try revisions.read(id)
            if try prune(id, read, keepHistory: keepHistory, dryRun: true).isEmpty && read.resurrected.isEmpty
            {
                return []
            }
        }
        let lock = dryRun ? nil : try documentLock(id)
        defer { lock?.unlock() }
        let read = dryRun ? try revisions.read(id) : try revisions.cleanedRead(id)
        return try prune(id, read, keepHistory: keepHistory, dryRun: dryRun)
    }

    /// ``prune(_:keepHistory:dryRun:)`` of the document as `read` found it.
    private func prune(_ id: UUID, _ read: DocumentRead, keepHistory: Int, dryRun: Bool) throws
        -> [RevisionID]
    {
        let graph = read.graph
        // A package this read cannot count (half-copied, damaged, something else in its
        // place) may be a head: the history it needs is not this read's to remove.
        let unseen = Self.unseen(in: read)
        if !unseen.isEmpty { throw StoreError.unseenRevisions(id, unseen) }
        // Its history is all that is left to read while the winner cannot be read.
        if let winner = graph.winner, !winner.isDeleted, winner.formatVersion <= Self.formatVersion {
            // A failure to read it (an I/O error, too many open files) says nothing of the
            // winner: the prune fails, or names the document as unreadable.
            _ = try FileSystemError.rethrowingFailureToLook {
                try survey(id, winner)
            } otherwise: { error in
                throw StoreError.unreadableWinner(id, "\(error)")
            }
        }
        // Keeping more generations than there are revisions keeps them all.
        return try wrapping(.prune, id) {
            try revisions.prune(
                id, graph: graph, pruned: read.pruned,
                keepHistory: min(max(keepHistory, 0), graph.revisions.count),
                dryRun: dryRun, alsoKeep: mergeBaseIDs(in: graph))
        }
    }

    /// What pruning one document of many did (see `pruneEveryDocument(keepHistory:dryRun:each:)`).
    public enum PruneOutcome: Sendable, Equatable {
        /// The revisions whose content was pruned (or would be, in a dry run); empty
        /// when there was nothing to prune.
        case pruned([RevisionID])
        /// Left alone because its current revision cannot be read (the reason given):
        /// its history is all there is left to read.
        case skippedUnreadableWinner(String)
        /// Left alone because its folder holds packages of these revisions that cannot
        /// be read yet (half-copied, damaged, something else in their place): they may
        /// be heads whose history a prune would remove.
        case skippedUnseenRevisions([RevisionID])
        /// Left alone because its lock file is something else (a folder, a link, a FIFO,
        /// or a file with a second name whose name could not be removed), or keeps being
        /// replaced: the reason, which says the entry can be removed, or to try again once
        /// the replacing stops.
        case skippedUnusableLock(String)
        /// Left alone because its folder, or a package or file in it, may not be read
        /// (permission denied) or gives an input/output error: the folder, and the system's
        /// reason. Every other document is pruned.
        case skippedUnreadable(StoreIssue)
        /// Not pruned, or not finished, because its folder may not be written or a file or
        /// folder in it may not be removed (permission denied, a read-only file system; an
        /// input/output error fails the prune): the error, naming it. What was done is
        /// safe: a package whose tombstone is written is left out by every read, and a
        /// prune once it can be written (or the next write to the store) finishes. Every
        /// other document is pruned.
        case skippedUnwritable(String)
    }

    /// Prunes every document, one at a time, each under its own lock, and reports each
    /// as it is done.
    ///
    /// A document whose current revision cannot be read, whose folder holds a package
    /// it cannot read yet (half-copied, damaged), whose lock file is something else
    /// (a folder, a link) or keeps being replaced, or whose folder, or a package or file in
    /// it, may not be read (permission denied) or gives an input/output error while it is
    /// read, is skipped rather than stopping the others; one whose folder is gone by its
    /// turn (deleted meanwhile by another process) is passed over. Any other error (a
    /// write that fails, a read-only store) stops the run: what was pruned before it stays
    /// pruned.
    ///
    /// - Parameters:
    ///   - keepHistory: How many generations of each winner's ancestors keep their content.
    ///   - dryRun: Only say what would be pruned, locking and writing nothing.
    ///   - each: Called after each document with its position (from 1), the number of
    ///     documents, the document and what was done.
    public func pruneEveryDocument(
        keepHistory: Int = 0, dryRun: Bool = false,
        each: (_ position: Int, _ count: Int, _ id: UUID, _ outcome: PruneOutcome) throws -> Void
    ) throws {
        // Only the folder names are listed up front: each document is read when its turn comes.
        let ids = try documentIDs()
        for (index, id) in ids.enumerated() {
            let outcome: PruneOutcome
            do {
                outcome = .pruned(try prune(id, keepHistory: keepHistory, dryRun: dryRun))
            } catch StoreError.unreadableWinner(_, let reason) {
                outcome = .skippedUnreadableWinner(reason)
            } catch StoreError.unseenRevisions(_, let revisions) {
                outcome = .skippedUnseenRevisions(revisions)
            } catch StoreError.noSuchDocument {
                continue
            } catch let error as FileSystemError where error.isUnusableLock {
                outcome = .skippedUnusableLock(error.description)
            } catch {
                // A document folder that may not be written, or a package in it that may
                // not be removed (permission denied, a read-only file system: a tombstone
                // written already keeps every read from counting its package), keeps none
                // of the others from being pruned either.
                let fileError =
                    error as? FileSystemError ?? (error as? OperationError)?.underlying as? FileSystemError
                if let fileError, RevisionStore.isDenied(fileError),
                    ![.open, .read, .list, .stat].contains(fileError.operation),
                    revisions.document(containing: fileError.path) == id
                {
                    outcome = .skippedUnwritable(fileError.description)
                } else {
                    // A document that cannot be read keeps none of the others from being pruned.
                    guard let issue = revisions.unreadable(error, of: id, so: "pruned") else { throw error }
                    outcome = .skippedUnreadable(issue)
                }
            }
            try each(index + 1, ids.count, id, outcome)
        }
    }

    func documentLock(_ id: UUID, wait: Bool = true) throws -> FileLock {
        try checkWritable()
        try prepareLocalState()
        return try revisions.documentLock(id, wait: wait)
    }

    /// For a store opened without local state, makes it before the first write that makes
    /// a revision (or takes a document's lock), even when another process made its folders
    /// meanwhile: the revision then names the device recorded in it, whichever process
    /// recorded it first, so that one replica saves under one id.
    func prepareLocalState() throws {
        if !hasLocalState { try revisions.prepareLocalState() }
    }
}

extension SurveyStore {
    /// Opens a store without removing or writing anything, for `verify`.
    ///
    /// - Parameters:
    ///   - path: The store folder.
    ///   - calls: The system calls to make.
    @_spi(Testing)
    public static func openWithoutCleaning(at path: String, calls: SystemCalls = .live) throws -> SurveyStore
    {
        try openForReading(at: path, calls: calls)
    }

    /// The revisions of `id` whose content was pruned.
    @_spi(Testing) public func prunedRevisions(of id: UUID) throws -> Set<RevisionID> {
        try revisions.graph(of: id).pruned
    }
}

extension DocumentRead {
    /// Whether the read found nothing at all in the document's folder: no revision,
    /// tombstone, or package of any kind (a folder left by a write that failed before its
    /// package was made, or made by hand). Such a folder holds no document.
    var foundNothing: Bool {
        graph.revisions.isEmpty && skipped.isEmpty && incomplete.isEmpty && damagedPackages.isEmpty
            && blockedPackages.isEmpty && tombstones.isEmpty
    }
}
