import Foundation
import Packages

/// The revisions of every document in a store folder, with content as opaque bytes.
///
/// Layout (see `docs/FORMAT.md`): `Documents/<document-uuid>/<revision-id>.survey/` holds
/// a revision's `DocumentMetadata.plist` and its `Survey.plist`; a pruned revision leaves
/// `<revision-id>.pruned`, a copy of its metadata, so that its place in the graph stays
/// and a copy of the package brought back by a sync engine is removed, not resurrected.
/// All names are lower case. Files under `Documents/` are written once and never changed.
public final class RevisionStore {
    public let root: String
    public let device: Device
    public let writer: PackageWriter
    /// Reads the store's files through the same system calls as ``writer``.
    public let reader: FileReader
    /// The metadata of complete packages and tombstones read so far, by file. Revisions
    /// never change (a name is its content's digest), so what was read once holds for as
    /// long as the name is there; an incomplete package is never remembered.
    private let known = MetadataCache()
    private let wallClock: @Sendable () -> Int64

    public static let metadataFile = "DocumentMetadata.plist"
    public static let contentFile = "Survey.plist"

    public init(root: String, device: Device, calls: SystemCalls = .live, wallClock: @escaping @Sendable () -> Int64 = {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }) {
        self.root = root
        self.device = device
        writer = PackageWriter(root: root, calls: calls)
        reader = FileReader(calls: calls)
        self.wallClock = wallClock
    }

    var documentsFolder: String { root + "/Documents" }

    public func folder(of document: UUID) -> String { "Documents/" + document.uuidString.lowercased() }

    // MARK: Reading

    /// The documents that have a folder.
    public func documentIDs() throws -> [UUID] {
        let names = try reader.names(atPath: documentsFolder)
        // Each id's text is made once, not once per comparison.
        return names.compactMap { name in UUID(uuidString: name).map { ($0.uuidString, $0) } }.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// A document's revision graph, with the ids of pruned revisions.
    ///
    /// A package whose name a tombstone also carries is left out (and removed by
    /// ``cleanUp(_:)``): it is a copy a sync engine brought back.
    public func graph(of document: UUID) throws -> (graph: RevisionGraph, pruned: Set<RevisionID>) {
        let path = root + "/" + folder(of: document)
        guard let names = try reader.entries(atPath: path)?.map(\.name) else {
            throw StoreError.noSuchDocument(document)
        }
        var graph = RevisionGraph()
        var pruned = Set<RevisionID>()
        for name in names where name.hasSuffix(".pruned") {
            let file = path + "/" + name
            let metadata: RevisionMetadata
            if let known = known[file] {
                metadata = known
            } else {
                guard let data = try reader.contents(atPath: file) else { continue }
                metadata = try RevisionMetadata(plist: data, file: file)
                known[file] = metadata
            }
            graph.insert(metadata)
            pruned.insert(metadata.id)
        }
        for name in names where name.hasSuffix(".survey") {
            guard let id = RevisionID(String(name.dropLast(".survey".count))), !pruned.contains(id) else { continue }
            let file = path + "/" + name + "/" + Self.metadataFile
            if let metadata = known[file] {
                graph.insert(metadata)
                continue
            }
            // A package is a revision only once it is complete: a copy that a file-sync
            // engine has not finished (or was killed in) is not one yet.
            // Only absence makes a package incomplete: any other failure to read is an
            // error, never a reason to leave a revision out.
            guard let data = try reader.contents(atPath: file),
                let metadata = try? RevisionMetadata(plist: data, file: file), metadata.id == id,
                try metadata.isDeleted || reader.status(atPath: path + "/" + name + "/" + Self.contentFile) != nil
            else {
                // A prune (or arriving tombstones) may have replaced the package since the
                // folder was listed: then its tombstone is there now, and it stays a revision.
                let tombstone = path + "/\(id).pruned"
                if let bytes = try reader.contents(atPath: tombstone), let metadata = try? RevisionMetadata(plist: bytes, file: tombstone),
                    metadata.id == id
                {
                    graph.insert(metadata)
                    pruned.insert(id)
                }
                continue
            }
            known[file] = metadata
            graph.insert(metadata)
        }
        return (graph, pruned)
    }

    /// The content of a revision, checked against its digest.
    public func content(of document: UUID, revision: RevisionMetadata) throws -> Data {
        let file = root + "/" + folder(of: document) + "/\(revision.id).survey/" + Self.contentFile
        guard let data = try reader.contents(atPath: file) else {
            throw StoreError.noContent(revision.id)
        }
        guard RevisionID.sha256Hex(data) == revision.contentDigest else { throw VersionsError.contentMismatch(revision.id) }
        return data
    }

    // MARK: Writing

    /// Writes a new revision of `document` with `parents` and `content` (`nil` deletes).
    ///
    /// - Returns: The new revision's metadata; writing a revision that already exists
    ///   (the same bytes made twice) is not an error.
    /// - Parameters:
    ///   - known: The document's graph when the caller has just read it, so that it is
    ///     not read again; it only advances the clock past the timestamps seen.
    ///   - contentDigest: The SHA-256 of `content` when the caller has computed it.
    public func write(
        document: UUID, parents: [RevisionMetadata], content: Data?, formatVersion: Int, known: RevisionGraph? = nil,
        contentDigest: String? = nil
    ) throws -> RevisionMetadata {
        let known = known ?? (try? graph(of: document).graph)
        // Timestamps seen on other devices advance this device's clock, except those too
        // far in the future to trust.
        var clock = HybridClock(wallClock: wallClock)
        for timestamp in known?.revisions.values.map(\.timestamp) ?? [] { clock.observe(timestamp) }
        let metadata = RevisionMetadata.make(
            documentID: document, parents: parents, content: content, formatVersion: formatVersion, device: device,
            clock: &clock, contentDigest: contentDigest)
        var files = [PackageFile(name: Self.metadataFile, contents: try metadata.plistData())]
        if let content { files.append(PackageFile(name: Self.contentFile, contents: content)) }
        try writer.createDirectory("Documents")
        try writer.createDirectory(folder(of: document))
        let path = folder(of: document) + "/\(metadata.id).survey"
        if try writer.writePackage(files, at: path) == .alreadyExists {
            // The same revision is there already, or half of it from an interrupted copy.
            try writer.completePackage(files, at: path)
        }
        return metadata
    }

    /// Writes a migration of `parent`: a revision whose metadata depends only on the
    /// parent and the content (timestamp one tick after the parent's, the migration's own
    /// device), so that replicas migrating the same revision write the same revision.
    public func writeMigration(document: UUID, parent: RevisionMetadata, content: Data, formatVersion: Int) throws -> RevisionMetadata {
        var metadata = RevisionMetadata(
            documentID: document, id: RevisionID(generation: parent.id.generation + 1, digest: ""), parents: [parent.id],
            timestamp: HybridTimestamp(milliseconds: parent.timestamp.milliseconds, counter: parent.timestamp.counter + 1),
            device: Device(id: "format-migration", name: "format migration"), formatVersion: formatVersion, isDeleted: false,
            contentDigest: RevisionID.sha256Hex(content))
        metadata.id = RevisionID(generation: parent.id.generation + 1, digest: metadata.computedDigest)
        let files = [PackageFile(name: Self.metadataFile, contents: try metadata.plistData()), PackageFile(name: Self.contentFile, contents: content)]
        let path = folder(of: document) + "/\(metadata.id).survey"
        if try writer.writePackage(files, at: path) == .alreadyExists {
            try writer.completePackage(files, at: path)
        }
        return metadata
    }

    /// Writes a resolution of `parents` (a document's heads): a revision whose metadata
    /// depends only on the parents and the content, so that replicas resolving the same
    /// heads to the same content write the same revision.
    ///
    /// The timestamp is one counter tick after the newest parent's; the device is the
    /// fixed ``resolutionDevice``; the parents are sorted as in every revision.
    ///
    /// - Parameters:
    ///   - document: The document.
    ///   - parents: The heads being resolved.
    ///   - content: The resolved content, or `nil` for a deletion.
    ///   - formatVersion: The content's format version.
    /// - Returns: The resolution's metadata; writing one that already exists is not an error.
    /// - Throws: `FileSystemError` when the package cannot be written.
    public func writeResolution(document: UUID, parents: [RevisionMetadata], content: Data?, formatVersion: Int) throws -> RevisionMetadata {
        let newest = parents.map(\.timestamp).max() ?? HybridTimestamp(milliseconds: 0)
        let generation = (parents.map(\.id.generation).max() ?? 0) + 1
        var metadata = RevisionMetadata(
            documentID: document, id: RevisionID(generation: generation, digest: ""), parents: parents.map(\.id).sorted(),
            timestamp: HybridTimestamp(milliseconds: newest.milliseconds, counter: newest.counter + 1),
            device: Self.resolutionDevice, formatVersion: formatVersion, isDeleted: content == nil,
            contentDigest: content.map(RevisionID.sha256Hex))
        metadata.id = RevisionID(generation: generation, digest: metadata.computedDigest)
        var files = [PackageFile(name: Self.metadataFile, contents: try metadata.plistData())]
        if let content { files.append(PackageFile(name: Self.contentFile, contents: content)) }
        try writer.createDirectory("Documents")
        try writer.createDirectory(folder(of: document))
        let path = folder(of: document) + "/\(metadata.id).survey"
        if try writer.writePackage(files, at: path) == .alreadyExists {
            try writer.completePackage(files, at: path)
        }
        return metadata
    }

    /// The device every resolution names, whoever makes it (see ``writeResolution(document:parents:content:formatVersion:)``).
    public static let resolutionDevice = Device(id: "resolution", name: "resolution")

    /// Replaces the content of revisions that are not heads by tombstones, keeping the
    /// last `keepHistory` ancestors of the winner and the revisions in `alsoKeep`.
    /// Heads are never pruned.
    ///
    /// - Returns: The revisions pruned now.
    public func prune(_ document: UUID, keepHistory: Int = 0, dryRun: Bool = false, alsoKeep: Set<RevisionID> = []) throws -> [RevisionID] {
        let (graph, pruned) = try graph(of: document)
        let heads = Set(graph.heads.map(\.id))
        var keep = heads.union(alsoKeep)
        if let winner = graph.winner, keepHistory > 0 {
            var frontier = [winner.id]
            for _ in 0..<keepHistory {
                frontier = frontier.flatMap { graph.revisions[$0]?.parents ?? [] }
                keep.formUnion(frontier)
            }
        }
        let victims = graph.revisions.values.filter { !keep.contains($0.id) && !pruned.contains($0.id) }
            .sorted { $0.id < $1.id }
        if dryRun || victims.isEmpty { return victims.map(\.id) }
        try notePrune(document)
        for victim in victims {
            // The tombstone first: from then on the package is a leftover, whatever happens.
            _ = try writer.writeFile(try victim.plistData(), at: folder(of: document) + "/\(victim.id).pruned")
            try removePackage(folder(of: document) + "/\(victim.id).survey")
        }
        try writer.remove(pruneNote(document))
        return victims.map(\.id)
    }

    /// Writes a durable note that packages of `document` are about to be disowned by
    /// tombstones (a prune, or tombstones arriving by sync), so that the next open
    /// finishes their removal if a crash interrupts it (see ``interruptedPrunes()``).
    public func notePrune(_ document: UUID) throws {
        try writer.createDirectory(Self.pruningFolder)
        _ = try writer.writeFile(Data(), at: pruneNote(document))
    }

    private func pruneNote(_ document: UUID) -> String {
        Self.pruningFolder + "/" + document.uuidString.lowercased()
    }

    /// Where prune notes which documents it is pruning (local state, never synced).
    public static let pruningFolder = "Local.nosync/pruning"

    /// Documents whose prune was interrupted (a crash, a kill): their tombstones may stand
    /// beside packages that were not yet removed.
    public func interruptedPrunes() throws -> [UUID] {
        try reader.names(atPath: root + "/" + Self.pruningFolder).compactMap { UUID(uuidString: $0) }
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
    public func cleanedGraph(of document: UUID) throws -> (graph: RevisionGraph, pruned: Set<RevisionID>) {
        let result = try graph(of: document)
        for id in result.pruned where try reader.status(atPath: root + "/" + folder(of: document) + "/\(id).survey") != nil {
            try removePackage(folder(of: document) + "/\(id).survey")
        }
        return result
    }

    private func removePackage(_ relativePath: String) throws {
        try writer.remove(relativePath)
    }
}

/// Parsed metadata by file path, shared by the threads that read one store.
private final class MetadataCache: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [String: RevisionMetadata] = [:]

    subscript(path: String) -> RevisionMetadata? {
        get { lock.withLock { entries[path] } }
        set { lock.withLock { entries[path] = newValue } }
    }
}

/// Errors about the store's documents and revisions.
public enum StoreError: Error, Equatable, CustomStringConvertible {
    case noSuchStore(String)
    case noSuchDocument(UUID)
    case noSuchRevision(String)
    case noContent(RevisionID)
    case notCurrent(base: RevisionID, heads: [RevisionID])
    case inConflict(UUID)
    case newerFormat(Int, supported: Int)

    public var description: String {
        switch self {
        case .noSuchStore(let path): "there is no store at \(path) (run `survey init` to create one)"
        case .noSuchDocument(let id): "there is no document \(id.uuidString.lowercased())"
        case .noSuchRevision(let text): "there is no revision \(text)"
        case .noContent(let id): "revision \(id) has been pruned; only its place in the history remains"
        case .notCurrent(let base, let heads):
            "revision \(base) is no longer the only current revision (current: \(heads.map(\.description).joined(separator: ", ")))"
        case .inConflict(let id): "document \(id.uuidString.lowercased()) is in conflict; resolve it first"
        case .newerFormat(let version, let supported): "format \(version) is newer than this build supports (\(supported))"
        }
    }
}
