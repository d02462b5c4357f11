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

    /// Every revision of a document, in winner order (heads first, the winner first),
    /// with where each stands.
    ///
    /// - Throws: `StoreError/noSuchDocument(_:)`, or `StoreError/noReadableRevision(_:skipped:)`
    ///   when the folder holds nothing but items that were skipped.
    public func history(of id: UUID) throws -> [HistoryEntry] {
        let (graph, pruned) = try revisions.graph(of: id)
        guard !graph.revisions.isEmpty else { throw noWinner(id) }
        let heads = Set(graph.heads.map(\.id))
        let winner = graph.winner?.id
        return graph.revisions.values.sorted(by: RevisionGraph.precedes).map { revision in
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
