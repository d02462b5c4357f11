import Foundation
import Packages

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
        do {
            try writer.remove(StoreLayout.stateFile(of: document))
        } catch let error as FileSystemError where error.code == .symbolicLink || error.errno == .notDirectory
        {
            // The state folder is a link or a file (`verify` names it): the store never
            // wrote through it, so no state of this document is there to remove.
            guard try reader.status(atPath: root + "/" + StoreLayout.stateFolder)?.kind == .directory else {
                return
            }
            throw error
        } catch let error as FileSystemError where Self.isDenied(error) {
            // State the file system refuses to remove (permission denied, a read-only file
            // system) stays: it is never read for a document without content, and keeps no
            // prune or sync from going ahead.
            return
        }
    }
}

extension RevisionStore {
    /// The bytes of a file of this device's local state (under ``StoreLayout/localFolder``),
    /// or `nil` when there is none. Never a revision, never synced.
    ///
    /// - Parameter relativePath: The file, relative to the store's folder.
    /// - Throws: `FileSystemError` for anything but a missing file: a link, a folder, a
    ///   FIFO or device, a file over the small-file limit, an I/O error.
    public func localFile(_ relativePath: String) throws -> Data? {
        try reader.contents(atPath: root + "/" + relativePath)
    }

    /// Makes `Documents/` when it is missing, as the first write of a package does (see
    /// ``createDocumentsFolder(with:reader:)``).
    ///
    /// - Throws: ``StoreError/documentsFolderBlocked(_:_:)`` when something else stands in
    ///   its place; `FileSystemError`.
    public func prepareDocumentsFolder() throws {
        try Self.createDocumentsFolder(with: writer, reader: reader)
    }

    /// Makes the store's local state through the `makeLocalState` this store was opened
    /// with (see ``init(root:device:calls:wallClock:isReadable:makeLocalState:)``), whether
    /// or not its folders are there (another process may have made them, and not yet
    /// recorded its device), so that ``device`` is then the one recorded; without
    /// `makeLocalState`, makes the folders when they are missing. For the first write of
    /// a store opened without local state, before it makes a revision, which names
    /// ``device``.
    ///
    /// - Throws: `FileSystemError`.
    public func prepareLocalState() throws {
        if let makeLocalState { try makeLocalState() } else { try writer.prepareIfMissing() }
    }

    /// Replaces a file of this device's local state atomically and durably, creating the
    /// state folder when needed; `nil` removes it.
    ///
    /// - Parameters:
    ///   - data: The new bytes, or `nil`.
    ///   - relativePath: The file, relative to the store's folder, in
    ///     ``StoreLayout/stateFolder``.
    /// - Throws: `FileSystemError` (code `tooLarge` when `data` is over
    ///   `FileReader.smallFileLimit`, the most ``localFile(_:)`` reads); after a failure
    ///   the old file is unchanged.
    public func replaceLocalFile(_ data: Data?, at relativePath: String) throws {
        guard let data else {
            try writer.remove(relativePath)
            return
        }
        // A file its reader would refuse is not written.
        guard data.count <= FileReader.smallFileLimit else {
            throw FileSystemError(
                .tooLarge(FileReader.smallFileLimit), operation: .write, path: root + "/" + relativePath)
        }
        // In a store that came without local state, the state comes with the rest of it.
        try writer.prepareIfMissing()
        try writer.createDirectory(StoreLayout.stateFolder)
        try writer.replaceFile(data, at: relativePath)
    }

    /// Whether `relativePath` is a folder beneath the store's root (links are not followed).
    ///
    /// - Throws: `FileSystemError` when it cannot be looked up.
    public func isFolder(_ relativePath: String) throws -> Bool {
        try reader.status(atPath: root + "/" + relativePath)?.kind == .directory
    }
}
