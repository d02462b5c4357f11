import Foundation

extension RevisionStore {
    /// Whether a document has no content left: its winner is a deletion and every
    /// revision that had content was pruned, so it can no longer be restored.
    public static func hasNoContent(_ graph: RevisionGraph, pruned: Set<RevisionID>) -> Bool {
        guard graph.isDeleted else { return false }
        return !graph.revisions.values.contains { !$0.isDeleted && !pruned.contains($0.id) }
    }

    /// Removes the document's per-device state (``StoreLayout/stateFile(of:)``) once its
    /// content is gone (see ``hasNoContent(_:pruned:)``); the clean-up of a save, delete,
    /// resolve, sync and prune calls it.
    ///
    /// The corresponding C functions are `unlinkat` and `fsync`.
    /// - Throws: `FileSystemError` when the file is there and cannot be removed.
    func removeStateIfNoContent(_ document: UUID, graph: RevisionGraph, pruned: Set<RevisionID>) throws {
        guard Self.hasNoContent(graph, pruned: pruned) else { return }
        try writer.remove(StoreLayout.stateFile(of: document))
    }
}
