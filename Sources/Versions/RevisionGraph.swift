/// The revisions of one document and the relations between them: heads, the winner and
/// the conflicts, computed the same way on every replica from the same revisions.
public struct RevisionGraph: Sendable {
    /// Every revision of the document, by id.
    public private(set) var revisions: [RevisionID: RevisionMetadata] = [:]

    /// Creates the graph of `revisions`.
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

    /// The heads that record no deletion, the winner first: the ones a merge reads, and
    /// a resolution may keep.
    public var liveHeads: [RevisionMetadata] { heads.filter { !$0.isDeleted } }

    /// The non-deleted heads other than the winner.
    public var conflicts: [RevisionMetadata] {
        guard let winner else { return [] }
        return liveHeads.filter { $0.id != winner.id }
    }

    /// Whether more than one head is not a deletion.
    public var isInConflict: Bool { Self.isInConflict(heads: heads) }

    /// Whether the document is deleted: its winner is a deletion.
    public var isDeleted: Bool { Self.isDeleted(heads: heads) }

    /// Whether a graph with `heads` is in conflict (see ``isInConflict``).
    public static func isInConflict(heads: [RevisionMetadata]) -> Bool {
        heads.lazy.filter { !$0.isDeleted }.count > 1
    }

    /// Whether a graph whose heads are `heads`, the winner first, is deleted (see
    /// ``isDeleted``).
    public static func isDeleted(heads: [RevisionMetadata]) -> Bool { heads.first?.isDeleted ?? false }

    /// The heads once `revision` is inserted, given `heads`, the heads before, and whether
    /// a revision of the graph names it as a parent (a caller that keeps the set of named
    /// parents answers that without a pass over the revisions).
    ///
    /// - Parameters:
    ///   - revision: A revision not in the graph yet (or just inserted).
    ///   - heads: The graph's heads before it was inserted, in the winner order.
    ///   - isParent: Whether a revision of the graph names `revision` as a parent.
    /// - Returns: The heads, the winner first.
    public static func heads(
        inserting revision: RevisionMetadata, into heads: [RevisionMetadata], isParent: Bool
    ) -> [RevisionMetadata] {
        var result = heads.filter { head in !revision.parents.contains(head.id) && head.id != revision.id }
        if !isParent { result.append(revision) }
        if result.count > 1 { result.sort(by: Self.precedes) }
        return result
    }

    /// The winner order: `true` when `a` wins over `b`.
    public static func precedes(_ a: RevisionMetadata, _ b: RevisionMetadata) -> Bool {
        if a.isDeleted != b.isDeleted { return !a.isDeleted }
        if a.timestamp != b.timestamp { return a.timestamp > b.timestamp }
        return a.id > b.id
    }
}

extension RevisionGraph {
    /// Every revision `id` descends from, `id` included (parents missing from the graph
    /// are left out).
    public func ancestors(of id: RevisionID) -> Set<RevisionID> {
        var seen: Set<RevisionID> = []
        var stack = [id]
        while let next = stack.popLast() {
            guard revisions[next] != nil, seen.insert(next).inserted else { continue }
            stack.append(contentsOf: revisions[next]!.parents)
        }
        return seen
    }

    /// A revision `heads` descend from (or one of them) whose parent is not in the graph,
    /// with that parent, the first in id order: the history here is incomplete (a copy
    /// still under way, or a revision imported without its history), so what the heads
    /// share may be missing. `nil` when every parent is here.
    public func missingParent(inHistoryOf heads: [RevisionID]) -> (revision: RevisionID, parent: RevisionID)?
    {
        let history = heads.reduce(into: Set<RevisionID>()) { $0.formUnion(ancestors(of: $1)) }
        return history.sorted().lazy.compactMap { id in
            self.revisions[id]!.parents.sorted().first { self.revisions[$0] == nil }.map { (id, $0) }
        }.first
    }

    /// The best common ancestors of `heads`: revisions every head descends from (a head
    /// counts as its own ancestor) that are not an ancestor of another such revision.
    ///
    /// - Parameter heads: The revisions to merge.
    /// - Returns: The merge bases in the winner order (newest first), empty when the
    ///   heads share no ancestor. Usually one; criss-cross histories give several.
    public func mergeBases(of heads: [RevisionID]) -> [RevisionMetadata] {
        mergeBases(ofAncestries: heads.map(ancestors(of:)))
    }

    /// The best common ancestors of revisions given by their ancestries (each the set of
    /// revisions it descends from, itself included; a group's, the union of its heads').
    func mergeBases(ofAncestries ancestries: [Set<RevisionID>]) -> [RevisionMetadata] {
        guard var common = ancestries.first else { return [] }
        for ancestry in ancestries.dropFirst() { common.formIntersection(ancestry) }
        // Every proper ancestor of a common ancestor, in one walk.
        var dominated: Set<RevisionID> = []
        var stack = common.flatMap { revisions[$0]?.parents ?? [] }
        while let next = stack.popLast() {
            guard revisions[next] != nil, dominated.insert(next).inserted else { continue }
            stack.append(contentsOf: revisions[next]!.parents)
        }
        return common.subtracting(dominated).compactMap { revisions[$0] }.sorted(by: Self.precedes)
    }

    /// The merge bases a merge of `heads` builds its base from, level by level: the heads'
    /// merge bases first; when more than one of a level is not a deletion (a criss-cross
    /// history), the merge bases of those next, and so on, until a level has at most one
    /// that is not a deletion or its revisions share no ancestor.
    ///
    /// A merge of the heads makes its base from the last level up: the revisions of a
    /// level merged from the base of the level below (a *virtual* base). Pruning keeps the
    /// content of every revision listed, so that the merge reads the same base later.
    ///
    /// - Parameter heads: The revisions to merge.
    /// - Returns: The levels, each in the winner order; the first is
    ///   ``mergeBases(of:)``; empty when the heads share no ancestor.
    public func mergeBaseLevels(of heads: [RevisionID]) -> [[RevisionMetadata]] {
        mergeBaseLevels(ofAncestries: heads.map(ancestors(of:)), heads: heads)
    }

    /// ``mergeBaseLevels(of:)`` of revisions given by their ancestries (see
    /// `mergeBases(ofAncestries:)`), `heads` being every head they hold.
    func mergeBaseLevels(ofAncestries ancestries: [Set<RevisionID>], heads: [RevisionID])
        -> [[RevisionMetadata]]
    {
        var levels: [[RevisionMetadata]] = []
        var seen = Set(heads)
        var bases = mergeBases(ofAncestries: ancestries)
        while true {
            // Damaged parents that form a cycle could give a level again: it ends there.
            guard !bases.isEmpty, bases.allSatisfy({ !seen.contains($0.id) }) else { break }
            seen.formUnion(bases.map(\.id))
            levels.append(bases)
            let live = bases.filter { !$0.isDeleted }
            guard live.count > 1 else { break }
            bases = mergeBases(of: live.map(\.id))
        }
        return levels
    }

}
