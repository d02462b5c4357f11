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
    public var description: String { "the device name \(name.debugDescription) cannot be used: \(reason)" }
}

/// A folder of survey documents, each kept as revisions: the library's entry point.
///
/// ```swift
/// let store = try SurveyStore.create(at: "/path/Surveys", deviceName: "Laptop")
/// let (id, _) = try store.create(survey)
/// var (current, revision) = try store.open(id)
/// try current.setAnswer(.choice(1), forItem: itemID)
/// try store.save(current, to: id, base: revision.id)
/// ```
///
/// Every save writes a new revision atomically and durably; concurrent saves from the
/// same base are all kept, and the newest is nominated the winner on every replica.
public final class SurveyStore {
    /// The current format of `Survey.plist`.
    public static let formatVersion = FormatMigrator.current
    /// The layout version written to `Store.plist`.
    public static let layoutVersion = 1

    public let root: String
    public let device: Device
    let revisions: RevisionStore

    init(root: String, device: Device, calls: SystemCalls, wallClock: (@Sendable () -> Int64)? = nil) {
        self.root = root
        self.device = device
        revisions =
            if let wallClock {
                RevisionStore(root: root, device: device, calls: calls, wallClock: wallClock)
            } else {
                RevisionStore(root: root, device: device, calls: calls)
            }
    }

    /// The system calls the store makes: the real ones, or a test's simulated disk.
    public var calls: SystemCalls { revisions.writer.calls }

    /// Creates the store if needed (idempotent) and opens it.
    ///
    /// - Parameters:
    ///   - path: The store folder; created with its parents if missing.
    ///   - deviceName: This device's name; the host name when `nil`. An existing store
    ///     keeps its device identity unless a name is given, which renames the device.
    ///   - calls: The system calls to make (the real ones unless a test simulates a disk).
    /// - Throws: ``DeviceNameError`` for a name
    ///   that cannot be stored, before anything is created; ``FileSystemError``.
    public static func create(at path: String, deviceName: String? = nil, calls: SystemCalls = .live) throws -> SurveyStore {
        if let deviceName { try checkDeviceName(deviceName) }
        let writer = PackageWriter(root: path, calls: calls)
        try writer.createRoot()
        let layout = PropertyList.dictionary(["StoreLayoutVersion": .integer(PropertyList.Integer(Int64(layoutVersion)))])
        try writer.prepare()
        _ = try writer.writeFile(try layout.xmlData(), at: "Store.plist")
        try writer.createDirectory("Documents")
        let existing = try? DeviceIdentity.read(store: path, writer: writer)
        var device = existing ?? Device(id: DeviceIdentity.newID(), name: deviceName ?? ProcessInfo.processInfo.hostName)
        if let deviceName, existing != nil { device.name = deviceName }
        if existing != device { try DeviceIdentity.write(device, writer: writer) }
        return SurveyStore(root: path, device: device, calls: calls)
    }

    /// Checks that `name` can be a device's name: not empty, and only characters an XML
    /// property list carries (no control characters other than tab and line feed, no
    /// carriage return).
    ///
    /// - Throws: ``DeviceNameError``.
    public static func checkDeviceName(_ name: String) throws {
        guard !name.isEmpty else { throw DeviceNameError(name: name, reason: "it is empty") }
        do {
            _ = try DeviceIdentity.plistData(Device(id: "0", name: name), folder: "")
        } catch let error as PropertyListError {
            throw DeviceNameError(name: name, reason: error.message)
        }
    }

    /// Opens an existing store, removing temporaries left by interrupted writes.
    ///
    /// - Parameters:
    ///   - path: The store folder.
    ///   - calls: The system calls to make (the real ones unless a test simulates a disk).
    ///   - wallClock: Milliseconds since 1970 for new revisions' timestamps (the system
    ///     clock by default; tests pass their own).
    /// - Throws: ``StoreError/noSuchStore(_:)`` when `path` holds no store.
    public static func open(
        at path: String, calls: SystemCalls = .live, wallClock: (@Sendable () -> Int64)? = nil
    ) throws -> SurveyStore {
        guard FileReader(calls: calls).exists(path + "/Store.plist") else { throw StoreError.noSuchStore(path) }
        let writer = PackageWriter(root: path, calls: calls)
        try writer.prepare()
        try writer.removeLeftovers()
        let device = try (try? DeviceIdentity.read(store: path, writer: writer)) ?? {
            let device = Device(id: DeviceIdentity.newID(), name: ProcessInfo.processInfo.hostName)
            try DeviceIdentity.write(device, writer: writer)
            return device
        }()
        let store = SurveyStore(root: path, device: device, calls: calls, wallClock: wallClock)
        try store.finishInterruptedPrunes()
        return store
    }

    /// Removes what prunes interrupted by a crash left behind (packages their tombstones
    /// already disown), each under its document's lock.
    private func finishInterruptedPrunes() throws {
        for id in try revisions.interruptedPrunes() {
            let lock = try documentLock(id)
            defer { lock.unlock() }
            try revisions.finishPrune(id)
        }
    }

    // MARK: Documents

    /// A document as `list` shows it.
    public struct Summary: Sendable, Equatable {
        public var id: UUID
        public var title: String?
        public var revision: RevisionMetadata
        public var conflicts: [RevisionID]
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

    /// One row per document, by id.
    public func documents() throws -> [Summary] {
        try revisions.documentIDs().compactMap { id in
            let (graph, _) = try revisions.graph(of: id)
            guard let winner = graph.winner else { return nil }
            let title = winner.isDeleted ? nil : (try? survey(id, winner))?.title
            return Summary(id: id, title: title, revision: winner, conflicts: graph.conflicts.map(\.id))
        }
    }

    /// Creates a document; returns its id and first revision.
    @discardableResult
    public func create(_ survey: Survey, id: UUID = UUID()) throws -> (id: UUID, revision: RevisionMetadata) {
        let metadata = try revisions.write(document: id, parents: [], content: try survey.plistData(), formatVersion: Self.formatVersion)
        return (id, metadata)
    }

    /// The graph of a document, after removing resurrected copies of pruned revisions.
    public func graph(of id: UUID) throws -> RevisionGraph {
        try revisions.cleanedGraph(of: id).graph
    }

    /// The ids of the documents that have a folder, without reading any of them.
    public func documentIDs() throws -> [UUID] {
        try revisions.documentIDs()
    }

    /// A revision of a document: the winner, or `revision` when given.
    ///
    /// - Parameter text: A revision id or a unique prefix of one; `nil` for the winner.
    /// - Throws: ``StoreError/noSuchRevision(_:)`` when no revision matches `text`,
    ///   ``LookupError/ambiguousRevision(_:_:)`` when several do.
    public func revision(_ id: UUID, _ text: String?) throws -> RevisionMetadata {
        try revision(id, text, in: revisions.graph(of: id).graph)
    }

    /// A revision of a document in its `graph`, already read.
    func revision(_ id: UUID, _ text: String?, in graph: RevisionGraph) throws -> RevisionMetadata {
        guard let text else {
            guard let winner = graph.winner else { throw StoreError.noSuchDocument(id) }
            return winner
        }
        if let exact = graph.revisions.values.first(where: { $0.id.description == text }) { return exact }
        let matches = text.isEmpty ? [] : graph.revisions.values.filter { $0.id.description.hasPrefix(text) }
        switch matches.count {
        case 1: return matches[0]
        case 0: throw StoreError.noSuchRevision(text)
        default: throw LookupError.ambiguousRevision(text, matches.map(\.id).sorted { $0.description < $1.description })
        }
    }

    /// Reads the survey of `revision`.
    public func survey(_ id: UUID, _ revision: RevisionMetadata) throws -> Survey {
        guard revision.formatVersion <= Self.formatVersion else {
            throw StoreError.newerFormat(revision.formatVersion, supported: Self.formatVersion)
        }
        let data = try revisions.content(of: id, revision: revision)
        // Older formats are migrated in memory; item ids derive from the revision id.
        return try FormatMigrator.survey(
            from: data, version: revision.formatVersion, seed: revision.id.description,
            file: "\(id.uuidString.lowercased())/\(revision.id).survey/\(RevisionStore.contentFile)")
    }

    /// Opens a document: its winner (or `revision`) and the survey in it.
    ///
    /// - Throws: ``DocumentDeletedError`` when the document is deleted (or `revision` is
    ///   a deletion), ``StoreError``, or the errors of reading the content.
    public func open(_ id: UUID, revision text: String? = nil) throws -> (survey: Survey, revision: RevisionMetadata) {
        let revision = try revision(id, text)
        if revision.isDeleted { throw deletedError(id, revision) }
        return (try survey(id, revision), revision)
    }

    // MARK: Changing documents

    /// Saves `survey` as a new revision of `id` based on `base` (the winner by default).
    ///
    /// Saving never loses a concurrent save: if `base` is no longer the only head, the new
    /// revision is one more head and the document is in conflict. Content identical to
    /// the base writes nothing and returns the base.
    ///
    /// - Parameter ifCurrent: Refuse with ``StoreError/notCurrent(base:heads:)`` unless
    ///   `base` is the document's only head.
    @discardableResult
    public func save(_ survey: Survey, to id: UUID, base: String? = nil, ifCurrent: Bool = false) throws -> RevisionMetadata {
        let lock = try documentLock(id)
        defer { lock.unlock() }
        // One read of the graph serves the base, the heads and the new revision's clock.
        let graph = try revisions.graph(of: id).graph
        let baseRevision = try revision(id, base, in: graph)
        let heads = graph.heads
        if ifCurrent && heads.map(\.id) != [baseRevision.id] {
            throw StoreError.notCurrent(base: baseRevision.id, heads: heads.map(\.id))
        }
        let content = try survey.plistData()
        let digest = RevisionID.sha256Hex(content)
        if !baseRevision.isDeleted, baseRevision.contentDigest == digest { return baseRevision }
        return try revisions.write(
            document: id, parents: [baseRevision], content: content, formatVersion: Self.formatVersion, known: graph,
            contentDigest: digest)
    }

    /// Deletes a document: a deletion revision whose parents are the current heads (or
    /// `base`).
    ///
    /// Deleting what is already deleted writes nothing: when the document's winner is a
    /// deletion (and no `base` is given), or `base` is itself a deletion, that deletion
    /// is returned as it is (compare it with ``deletion(of:)`` to tell).
    ///
    /// - Returns: The deletion revision.
    @discardableResult
    public func delete(_ id: UUID, base: String? = nil) throws -> RevisionMetadata {
        let lock = try documentLock(id)
        defer { lock.unlock() }
        let graph = try revisions.graph(of: id).graph
        if let existing = try base.map({ try revision(id, $0, in: graph) }) ?? graph.winner, existing.isDeleted {
            return existing
        }
        let parents = try base.map { [try revision(id, $0, in: graph)] } ?? graph.heads
        return try revisions.write(document: id, parents: parents, content: nil, formatVersion: Self.formatVersion, known: graph)
    }

    /// How to resolve a conflict.
    public enum Resolution: Sendable {
        /// Keep the nominated winner's content.
        case acceptWinner
        /// Keep the content of this revision (an id or a unique prefix).
        case keep(String)
        /// Use this survey.
        case content(Survey)
    }

    /// Resolves every head into one new revision whose parents are all the heads.
    ///
    /// A deleted document (its one head a deletion) is restored by keeping an earlier
    /// revision or by new content: the deletion becomes the new revision's parent.
    ///
    /// - Returns: The resolution, or `nil` when there is nothing to resolve: the document
    ///   has a single head (or, for ``Resolution/acceptWinner``, its winner is a deletion).
    /// - Throws: ``StoreError/noSuchRevision(_:)`` for a revision to keep that does not
    ///   exist, even when there is nothing to resolve.
    @discardableResult
    public func resolve(_ id: UUID, _ resolution: Resolution) throws -> RevisionMetadata? {
        let lock = try documentLock(id)
        defer { lock.unlock() }
        let graph = try revisions.graph(of: id).graph
        let heads = graph.heads
        if case .keep(let text) = resolution { _ = try revision(id, text, in: graph) }
        let restoring: Bool
        switch resolution {
        case .acceptWinner: restoring = false
        case .keep, .content: restoring = graph.isDeleted
        }
        guard heads.count > 1 || restoring, let winner = graph.winner else { return nil }
        let content: Data?
        var formatVersion = Self.formatVersion
        switch resolution {
        case .acceptWinner:
            content = winner.isDeleted ? nil : try revisions.content(of: id, revision: winner)
            formatVersion = winner.formatVersion
        case .keep(let text):
            let kept = try revision(id, text, in: graph)
            content = kept.isDeleted ? nil : try revisions.content(of: id, revision: kept)
            formatVersion = kept.formatVersion
        case .content(let survey):
            content = try survey.plistData()
        }
        return try revisions.write(document: id, parents: heads, content: content, formatVersion: formatVersion, known: graph)
    }

    /// Prunes the content of revisions that are no longer heads.
    ///
    /// - Throws: ``StoreError/inConflict(_:)`` for a document in conflict: resolve first.
    public func prune(_ id: UUID, keepHistory: Int = 0, dryRun: Bool = false) throws -> [RevisionID] {
        let lock = try documentLock(id)
        defer { lock.unlock() }
        let graph = try revisions.graph(of: id).graph
        if graph.isInConflict { throw StoreError.inConflict(id) }
        // Keeping more generations than there are revisions keeps them all: no need to
        // walk a history of `Int.max` generations.
        return try revisions.prune(id, keepHistory: min(max(keepHistory, 0), graph.revisions.count), dryRun: dryRun)
    }

    func documentLock(_ id: UUID) throws -> FileLock {
        try FileLock(path: root + "/Local.nosync/locks/" + id.uuidString.lowercased() + ".lock", mode: .exclusive, calls: calls)
    }
}

extension SurveyStore {
    /// Opens a store without removing or writing anything, for `verify`.
    ///
    /// - Parameters:
    ///   - path: The store folder.
    ///   - calls: The system calls to make.
    public static func openWithoutCleaning(at path: String, calls: SystemCalls = .live) throws -> SurveyStore {
        let reader = FileReader(calls: calls)
        guard reader.exists(path + "/Store.plist") else { throw StoreError.noSuchStore(path) }
        let device = (try? DeviceIdentity.peek(store: path, reader: reader)) ?? Device(id: "unknown", name: "unknown")
        return SurveyStore(root: path, device: device, calls: calls)
    }

    /// The revisions of `id` whose content was pruned.
    public func prunedRevisions(of id: UUID) throws -> Set<RevisionID> {
        try revisions.graph(of: id).pruned
    }
}
