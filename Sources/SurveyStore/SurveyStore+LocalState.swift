import Foundation
import Packages
import PropertyList
import Versions

/// Per-device state that is read or written wrongly.
public struct LocalStateError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The state file.
    public var path: String
    /// What is wrong with it.
    public var reason: String
    public var description: String { "\(path): not a per-device state file: \(reason)" }
}

extension SurveyStore {
    /// This device's state for document `id` (an app's last-opened item, scroll position,
    /// sort order), or `nil` when none was written.
    ///
    /// Per-device state is a dictionary kept in `Local.nosync/state/<document-uuid>.plist`
    /// (`StoreLayout.stateFile(of:)`): it is never a revision, so it never syncs and
    /// never causes a conflict, and nothing under `Documents/` changes when it does. It
    /// is removed when the document's content is gone (its winner a deletion and every
    /// earlier revision pruned), by the clean-up of the next save, delete, sync or prune.
    ///
    /// The corresponding C functions are `openat`, `fstat` and `read`.
    /// - Parameter id: The document.
    /// - Returns: The dictionary last written with `setLocalState(_:of:)`.
    /// - Throws: ``LocalStateError`` when the file is not an XML property list holding
    ///   a dictionary; `FileSystemError` when it cannot be read.
    public func localState(of id: UUID) throws -> [String: PropertyList]? {
        try readState(at: StoreLayout.stateFile(of: id))
    }

    /// Replaces this device's state for document `id`, atomically and durably (written
    /// under `Local.nosync/tmp/`, fsynced, renamed over the old file, the folder fsynced);
    /// `nil` removes it.
    ///
    /// The document's content must be there: a document deleted with every revision that
    /// had content pruned takes no state, since nothing would ever remove it. The check
    /// and the write are made under the document's lock, the lock a prune takes, so a
    /// prune in another process cannot take the content away between them.
    ///
    /// The corresponding C functions are `openat`, `fcntl`, `write`, `fsync`, `renameat`
    /// and `unlinkat`.
    /// - Parameters:
    ///   - state: The new state, or `nil`.
    ///   - id: The document, which must have content (for `nil`, a folder).
    /// - Throws: `StoreError/noSuchDocument(_:)` when `id` has no folder, or (for a new
    ///   state) no content, `StoreError/readOnly(_:)`, `PropertyListError` for a value XML
    ///   cannot carry, `FileSystemError` (code `tooLarge` for state whose property list is
    ///   over 1 MiB, the most `localState(of:)` reads); after a failure the old state is
    ///   unchanged.
    public func setLocalState(_ state: [String: PropertyList]?, of id: UUID) throws {
        try checkWritable()
        // Checked first, so that a document that is not there gets no lock file.
        guard try revisions.isFolder(StoreLayout.folder(of: id)) else {
            throw StoreError.noSuchDocument(id)
        }
        let lock = try documentLock(id)
        defer { lock.unlock() }
        if state != nil {
            let read = try revisions.read(id)
            if read.foundNothing || RevisionStore.hasNoContent(read.graph, pruned: read.pruned) {
                throw StoreError.noSuchDocument(id)
            }
        }
        try writeState(state, at: StoreLayout.stateFile(of: id))
    }

    /// This device's state for the store as a whole (the open window, a sort order), or
    /// `nil` when none was written; kept in `Local.nosync/state/store.plist`
    /// (`StoreLayout.storeStateFile`), never synced. See `localState(of:)`.
    ///
    /// - Throws: ``LocalStateError``, `FileSystemError`.
    public func localState() throws -> [String: PropertyList]? {
        try readState(at: StoreLayout.storeStateFile)
    }

    /// Replaces this device's state for the store, atomically and durably; `nil` removes
    /// it. See `setLocalState(_:of:)`.
    ///
    /// - Throws: `StoreError/readOnly(_:)`, `PropertyListError`, `FileSystemError` (code
    ///   `tooLarge` over 1 MiB, as for a document's state).
    public func setLocalState(_ state: [String: PropertyList]?) throws {
        try checkWritable()
        try writeState(state, at: StoreLayout.storeStateFile)
    }

    private func readState(at relativePath: String) throws -> [String: PropertyList]? {
        let path = root + "/" + relativePath
        guard let data = try revisions.localFile(relativePath) else { return nil }
        let value: PropertyList
        do {
            value = try PropertyList(xml: data, file: path)
        } catch let error as PropertyListError {
            throw LocalStateError(path: path, reason: error.description)
        }
        guard case .dictionary(let dictionary) = value else {
            throw LocalStateError(path: path, reason: "it holds \(value.typeDescription), not a dictionary")
        }
        return dictionary
    }

    private func writeState(_ state: [String: PropertyList]?, at relativePath: String) throws {
        try revisions.replaceLocalFile(
            try state.map { try PropertyList.dictionary($0).xmlData() }, at: relativePath)
    }
}
