extension RevisionGraph {
    /// One pass of a merge of several heads: the heads, or groups merged in an earlier
    /// pass, that it merges, and the merge bases it builds its base from.
    public struct MergeGroup: Sendable, Equatable {
        /// What a pass merges: a head, or the result of an earlier pass.
        public enum Part: Sendable, Hashable {
            /// A head.
            case head(RevisionID)
            /// The result of the pass at this index of the list (``mergeGroups(of:)``).
            case group(Int)
        }

        /// What it merges, in the winner order of their first heads.
        public var parts: [Part]
        /// Every head it holds, its groups' too, in the winner order.
        public var heads: [RevisionID]
        /// Its merge bases, level by level, as ``mergeBaseLevels(of:)`` gives them: those
        /// of its parts, a group's history being that of its heads together.
        public var baseLevels: [[RevisionMetadata]]
    }

    /// The passes a merge of `heads` is made of, in the order they are made: heads that
    /// share history the other heads lack are merged first.
    ///
    /// While more than two parts are left (at first, the heads), the parts that descend
    /// from a revision some of the others do not (two of them or more, not all) form a
    /// *group*; of the groups, the smallest (one that holds no other group) is merged first
    /// from its own merge bases and takes the place of its parts, its history that of its
    /// heads together. When several such groups are left, the one whose parts share the
    /// most revisions goes first, then the one whose least head id is least (comparing the
    /// sorted head ids in turn). Groups that hold no common part are merged alike in
    /// either order; the rule decides only between groups that overlap. The last pass
    /// merges what is left from their merge bases; without a group, it is the one pass,
    /// from ``mergeBaseLevels(of:)``.
    ///
    /// The passes depend only on the graph, never on the order of `heads`.
    ///
    /// - Parameter heads: The revisions to merge.
    /// - Returns: The passes, the last merging everything; empty without heads.
    public func mergeGroups(of heads: [RevisionID]) -> [MergeGroup] {
        let heads = Array(Set(heads)).sorted { a, b in
            switch (revisions[a], revisions[b]) {
            case (let a?, let b?): Self.precedes(a, b)
            case (.some, nil): true
            case (nil, .some): false
            case (nil, nil): a > b
            }
        }
        guard !heads.isEmpty else { return [] }
        // Two heads (or one) are one pass; only more can hold a group.
        guard heads.count > 2 else {
            return [
                MergeGroup(
                    parts: heads.map { .head($0) }, heads: heads, baseLevels: mergeBaseLevels(of: heads))
            ]
        }
        let ancestries = heads.map(ancestors(of:))
        // Each revision by the heads that descend from it (their indices, ascending), and
        // how many revisions each such set of heads holds.
        var holders: [RevisionID: [Int]] = [:]
        for (index, ancestry) in ancestries.enumerated() {
            for revision in ancestry { holders[revision, default: []].append(index) }
        }
        var patterns: [[Int]: Int] = [:]
        for pattern in holders.values { patterns[pattern, default: 0] += 1 }

        struct Node {
            var heads: [Int]
            var part: MergeGroup.Part
        }
        func group(_ nodes: [Node]) -> MergeGroup {
            let members = nodes.flatMap(\.heads).sorted()
            return MergeGroup(
                parts: nodes.sorted { $0.heads.min()! < $1.heads.min()! }.map(\.part),
                heads: members.map { heads[$0] },
                baseLevels: mergeBaseLevels(
                    ofAncestries: nodes.map { node in
                        node.heads.dropFirst().reduce(ancestries[node.heads[0]]) { $0.union(ancestries[$1]) }
                    }, heads: members.map { heads[$0] }))
        }
        var nodes = heads.indices.map { Node(heads: [$0], part: .head(heads[$0])) }
        var groups: [MergeGroup] = []
        while nodes.count > 2 {
            var nodeOf = [Int](repeating: 0, count: heads.count)
            for (index, node) in nodes.enumerated() { for head in node.heads { nodeOf[head] = index } }
            // The sets of parts (their indices, ascending) that descend from a revision
            // the other parts do not, and how many revisions all of each set's parts hold.
            var held: [[Int]: Int] = [:]
            for (pattern, count) in patterns {
                held[Array(Set(pattern.map { nodeOf[$0] })).sorted(), default: 0] += count
            }
            let candidates = held.keys.filter { $0.count >= 2 && $0.count < nodes.count }
            guard !candidates.isEmpty else { break }
            let sets = candidates.map(Set.init)
            let smallest = candidates.indices.filter { index in
                !sets.indices.contains { $0 != index && sets[$0].isStrictSubset(of: sets[index]) }
            }.map { candidates[$0] }
            func shared(_ candidate: [Int]) -> Int {
                held.reduce(0) { total, entry in
                    total + (Set(entry.key).isSuperset(of: candidate) ? entry.value : 0)
                }
            }
            func ids(_ candidate: [Int]) -> [RevisionID] {
                candidate.flatMap { nodes[$0].heads.map { heads[$0] } }.sorted()
            }
            let chosen = smallest.map { (candidate: $0, shared: shared($0), ids: ids($0)) }.min { a, b in
                a.shared != b.shared ? a.shared > b.shared : a.ids.lexicographicallyPrecedes(b.ids)
            }!.candidate
            groups.append(group(chosen.map { nodes[$0] }))
            let merged = Node(
                heads: chosen.flatMap { nodes[$0].heads }.sorted(), part: .group(groups.count - 1))
            nodes = nodes.indices.filter { !chosen.contains($0) }.map { nodes[$0] } + [merged]
            nodes.sort { $0.heads[0] < $1.heads[0] }
        }
        groups.append(group(nodes))
        return groups
    }
}
