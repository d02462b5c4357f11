import Foundation

extension RevisionStore {
    /// One revision package of `document`, read as ``read(_:)`` reads each: its metadata
    /// when the package is complete (the metadata verifies against the package's name
    /// and the document, and its content is a regular file), `nil` while it is
    /// incomplete or absent.
    ///
    /// For a watcher that learns a package's name from an event and wants to know
    /// whether it is a revision without reading the whole folder again; whatever this
    /// cannot settle (`nil`, a thrown error) the caller settles with ``read(_:)``. The
    /// metadata file is read afresh, and not remembered for later reads: a package that
    /// has just appeared has nothing remembered, and the caller keeps what it learns.
    ///
    /// - Throws: What ``read(_:)`` would report as a skipped package (a link, metadata
    ///   that does not verify: see ``isAboutContents(_:)``), and I/O errors.
    public func completePackage(_ revision: RevisionID, of document: UUID) throws -> RevisionMetadata? {
        try package(
            at: root + "/" + StoreLayout.package(revision, of: document), id: revision, document: document,
            cached: false)
    }
}

extension DocumentRead {
    /// Counts `metadata`, a complete package that appeared after this read
    /// (``RevisionStore/completePackage(_:of:)``), as ``RevisionStore/read(_:)`` would
    /// count it in a read made now, when this read alone says how.
    ///
    /// It does not when a tombstone names the revision, when a tombstone is pending (the
    /// new revision may put it into effect), when the revision is counted already or
    /// when this read skipped something of that name: then it returns `false` and
    /// changes nothing, and the caller reads the folder again.
    ///
    /// - Returns: Whether the revision was counted.
    public mutating func insert(complete metadata: RevisionMetadata) -> Bool {
        guard canInsert(complete: metadata) else { return false }
        let id = metadata.id
        live[id] = metadata
        graph.insert(metadata)
        if let index = incomplete.firstIndex(of: id) { incomplete.remove(at: index) }
        return true
    }

    /// Whether ``insert(complete:)`` would count `metadata`: no tombstone names it, none
    /// is pending, it is not counted already, and nothing of its name was skipped.
    public func canInsert(complete metadata: RevisionMetadata) -> Bool {
        let id = metadata.id
        guard pending.isEmpty, tombstones[id] == nil, live[id] == nil else { return false }
        if !skipped.isEmpty {
            let name = "/" + StoreLayout.packageName(id)
            guard !skipped.contains(where: { $0.path.contains(name) }) else { return false }
        }
        return true
    }
}
