import Foundation
import Packages
import Versions

extension SurveyStore {
    /// Where a revision stands in its document's graph.
    public enum RevisionState: String, Sendable, Equatable {
        /// The winner.
        case current
        /// Another head that is not a deletion.
        case conflict
        /// A head that is a deletion.
        case deleted
        /// Any revision a later one is based on (a deletion included).
        case superseded
    }

    /// A revision of a document, as `survey versions` lists it.
    public struct HistoryEntry: Sendable, Equatable {
        /// The revision.
        public var revision: RevisionMetadata
        /// Where it stands.
        public var state: RevisionState
        /// Whether its content was pruned (only its metadata is left).
        public var isPruned: Bool
        /// Whether it is stamped more than a day ahead of this device's clock (see
        /// ``SurveyStore/isStampedAhead(_:)``).
        public var isStampedAhead: Bool
    }

    /// Every revision of a document, with where each stands: the heads first, in winner
    /// order (the winner first, a deletion after every head that is not one), then every
    /// other revision, newest first (by timestamp, then by revision id).
    ///
    /// - Throws: `StoreError/noSuchDocument(_:)`, or `StoreError/noReadableRevision(_:skipped:)`
    ///   when the folder holds nothing but items that were skipped.
    public func history(of id: UUID) throws -> [HistoryEntry] {
        let (graph, pruned) = try revisions.graph(of: id)
        guard !graph.revisions.isEmpty else { throw try noWinner(id) }
        let heads = Set(graph.heads.map(\.id))
        let winner = graph.winner?.id
        // Winner order only ranks heads: over all revisions it would list a superseded
        // edit before a head that is a deletion, or before an older head in conflict.
        let ordered = graph.revisions.values.sorted { a, b in
            let isHead = (heads.contains(a.id), heads.contains(b.id))
            if isHead.0 != isHead.1 { return isHead.0 }
            if isHead.0 { return RevisionGraph.precedes(a, b) }
            return a.timestamp != b.timestamp ? a.timestamp > b.timestamp : a.id > b.id
        }
        return ordered.map { revision in
            let state: RevisionState =
                !heads.contains(revision.id)
                ? .superseded
                : revision.isDeleted
                    ? .deleted
                    : revision.id == winner ? .current : .conflict
            return HistoryEntry(
                revision: revision, state: state, isPruned: pruned.contains(revision.id),
                isStampedAhead: isStampedAhead(revision))
        }
    }

    /// Whether `path` holds a store (a `Store.plist`), without opening it.
    public static func exists(at path: String) -> Bool {
        FileReader(root: path).exists(path + "/" + StoreLayout.layoutFile)
    }

    /// Removes the folder at `path` and everything in it (stores a tool made for a
    /// while, such as `survey demo`'s), never following a symbolic link inside it:
    /// a link is removed, not what it points to. A missing folder is no error.
    ///
    /// The corresponding C functions are `unlinkat` and `fsync`.
    /// - Throws: `FileSystemError`.
    public static func removeFolder(_ path: String) throws {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else {
            return try PackageWriter(root: ".", temporaryFolder: ".", locksFolder: ".").remove(
                String(trimmed))
        }
        let parent = slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
        let name = String(trimmed[trimmed.index(after: slash)...])
        try PackageWriter(root: parent, temporaryFolder: ".", locksFolder: ".").remove(name)
    }
}

extension FormatCheck {
    /// Whether anything is at `path` (a link counts, followed or not).
    public static func exists(_ path: String) -> Bool {
        FileReader().exists(path)
    }
}
