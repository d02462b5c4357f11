/// The revisions of one document and the relations between them: heads, the winner and
/// the conflicts, computed the same way on every replica from the same revisions.
public struct RevisionGraph: Sendable {
    public private(set) var revisions: [RevisionID: RevisionMetadata] = [:]

    public init(_ revisions: [RevisionMetadata] = []) {
        for revision in revisions { insert(revision) }
    }

    /// Adds a revision; adding one that is already there changes nothing.
    public mutating func insert(_ revision: RevisionMetadata) {
        revisions[revision.id] = revision
    }

    /// The revisions no other known revision names as a parent.
    public var heads: [RevisionMetadata] {
        let named = Set(revisions.values.flatMap(\.parents))
        return revisions.values.filter { !named.contains($0.id) }.sorted(by: Self.precedes)
    }

    /// The head every replica nominates: non-deleted before deleted, then the newest
    /// timestamp, then the greater revision id.
    public var winner: RevisionMetadata? { heads.first }

    /// The non-deleted heads other than the winner.
    public var conflicts: [RevisionMetadata] {
        guard let winner else { return [] }
        return heads.filter { !$0.isDeleted && $0.id != winner.id }
    }

    /// Whether more than one head is not a deletion.
    public var isInConflict: Bool { heads.filter { !$0.isDeleted }.count > 1 }

    /// Whether the document is deleted: its winner is a deletion.
    public var isDeleted: Bool { winner?.isDeleted ?? false }

    /// The winner order: `true` when `a` wins over `b`.
    public static func precedes(_ a: RevisionMetadata, _ b: RevisionMetadata) -> Bool {
        if a.isDeleted != b.isDeleted { return !a.isDeleted }
        if a.timestamp != b.timestamp { return a.timestamp > b.timestamp }
        return a.id > b.id
    }
}
