import Foundation
import Packages
import PropertyList
import Surveys
import Versions

extension SurveyStore {
    /// A merge of a document's heads, computed but not necessarily written.
    public struct MergePlan: Sendable {
        /// The document.
        public var document: UUID
        /// Every head, in winner order: the parents of the resolution.
        public var heads: [RevisionMetadata]
        /// The groups of heads merged first, in the order merged: heads that share history
        /// the other heads lack (`RevisionGraph.mergeGroups(of:)`); empty when there are
        /// none. The merge's last pass merges each group as one head with the other heads,
        /// from ``bases``.
        public var groups: [Group] = []
        /// The revisions the merge's (last pass's) base was made of, in winner order: one
        /// merge base; or, in a criss-cross history, the merge bases whose content can be
        /// read, merged into a *virtual* base; none for a two-way merge.
        public var bases: [RevisionMetadata]
        /// The base the merge started from when it is one revision (`nil`: a two-way merge,
        /// or a virtual base: see ``bases``).
        public var base: RevisionMetadata? { bases.count == 1 ? bases[0] : nil }
        /// Every best common ancestor of what the last pass merges (the heads, a group's
        /// history being that of its heads together), in winner order (more than one only
        /// in a criss-cross history, and then merged into a virtual base).
        public var mergeBases: [RevisionMetadata]
        /// Why the merge (its last pass) is two-way, when it is.
        public var twoWayReason: String?
        /// The merge: the survey (`nil` when every head is a deletion), contests, notes.
        public var result: SurveyMerge.Result?
        /// Whether nothing was contested.
        public var isClean: Bool { result?.isClean ?? true }
        /// The number of fields contested.
        public var contestedCount: Int { result?.contested.count ?? 0 }
        /// Whether there was no base.
        public var isTwoWay: Bool { bases.isEmpty }
        /// Whether the base was virtual: several merge bases merged, the fields they
        /// disagreed on unknown (see `SurveyMerge.VirtualBase`).
        public var isVirtualBase: Bool { bases.count > 1 }

        /// A group of heads merged first, from its own base, because they share history
        /// the other heads lack (see the README's rule 12).
        public struct Group: Sendable {
            /// Its heads, in winner order (those of groups it merged too).
            public var heads: [RevisionMetadata]
            /// The revisions its base was made of, as ``MergePlan/bases`` (none: two-way).
            public var bases: [RevisionMetadata]
            /// Its best common ancestors, as ``MergePlan/mergeBases``.
            public var mergeBases: [RevisionMetadata]
            /// Why its merge is two-way, when it is.
            public var twoWayReason: String?
            /// The base it started from when it is one revision.
            public var base: RevisionMetadata? { bases.count == 1 ? bases[0] : nil }
            /// Whether its merge had no base.
            public var isTwoWay: Bool { bases.isEmpty }
            /// Whether its base was virtual.
            public var isVirtualBase: Bool { bases.count > 1 }
        }
    }

    /// A merge refused by `strict`: fields were contested. Nothing was written.
    public struct MergeRefusal: Error, Sendable, CustomStringConvertible {
        /// The merge that was refused.
        public var plan: MergePlan
        /// What was refused: the document, how many fields the merge contests, and that
        /// nothing was written.
        public var problem: String {
            "document \(plan.document.uuidString.lowercased()): the merge contests \(plan.result?.contested.count ?? 0) field(s); nothing written"
        }
        /// The ``problem``, and what a merge that is not strict does instead.
        public var description: String {
            problem
                + " (a merge that is not strict gives each the change of the first head that made one, the winner first, or of the head preferred)"
        }
    }

    /// Computes the item-level merge of a document's heads without writing anything.
    ///
    /// The base is the best common ancestor of the non-deleted heads. A criss-cross
    /// history gives several: those whose content can be read are merged, from their own
    /// base made the same way (`RevisionGraph.mergeBaseLevels(of:)`), into a *virtual*
    /// base whose contested fields are unknown (`SurveyMerge.VirtualBase`), so that a
    /// field is contested only when the heads changed it differently since. Without a
    /// readable base the merge is two-way. Heads that share history the other heads lack
    /// are merged first, from their own base, as one group (`RevisionGraph.mergeGroups(of:)`,
    /// ``MergePlan/groups``), whose contests are unknown when it is merged with the others
    /// (see the README's rule 12). Format-1 revisions are migrated first, and the
    /// items of a format-1 revision are matched by position to the base's (to the
    /// winner's in a two-way merge), since format 1 has no item ids.
    ///
    /// - Parameters:
    ///   - id: The document.
    ///   - prefer: A head whose values win contests instead of the winner's (not a
    ///     deletion, which changes no field: `StoreError/noSuchRevision(_:)`).
    /// - Returns: The merge, or `nil` when the document is not in conflict: it has a single
    ///   head, or its other heads are deletions (which never win over an edit).
    /// - Throws: `StoreError` when `prefer` is no head or a head cannot be read, and
    ///   `StoreError/unseenForMerge(_:_:)` as `resolveMerge(_:prefer:strict:dryRun:)` throws
    ///   it; `SurveyError` (rule `tooManyItems`) when the merge would hold more than
    ///   `Survey.maximumItemCount` items, so that no reader would take it.
    public func mergePlan(_ id: UUID, prefer: RevisionID? = nil) throws -> MergePlan? {
        try mergePlan(id, prefer: prefer, in: mergeableRead(id).graph)
    }

    /// The revisions of the document whose packages its folder holds but that cannot be
    /// read yet (half-copied, damaged, or something else in their place), pruned ones
    /// left out: beside them a conflict is not merged (`StoreError/unseenForMerge(_:_:)`)
    /// and the document is not pruned (`StoreError/unseenRevisions(_:_:)`).
    ///
    /// - Throws: `StoreError/noSuchDocument(_:)`; `FileSystemError` when the folder cannot
    ///   be read.
    public func unseenRevisions(of id: UUID) throws -> [RevisionID] {
        Self.unseen(in: try revisions.read(id))
    }

    /// ``graph(of:)`` and ``unseenRevisions(of:)`` from one read of the document's folder:
    /// what a preview of its merge needs (``contestedFieldCount(of:in:)`` when `unseen` is
    /// empty).
    public func graphAndUnseenRevisions(of id: UUID) throws -> (graph: RevisionGraph, unseen: [RevisionID]) {
        let read = isReadOnly ? try revisions.read(id) : try revisions.cleanedRead(id)
        return (read.graph, Self.unseen(in: read))
    }

    static func unseen(in read: DocumentRead) -> [RevisionID] {
        read.unseen.subtracting(read.tombstones.keys).sorted()
    }

    /// The document read for a merge: a package this read cannot count may be a head or
    /// the merge base, and merged without it the heads would merge differently here than
    /// on a replica that reads it, so a conflict beside one is refused.
    private func mergeableRead(_ id: UUID) throws -> DocumentRead {
        let read = try revisions.read(id)
        let unseen = Self.unseen(in: read)
        if !unseen.isEmpty && RevisionGraph.isInConflict(heads: read.graph.heads) {
            throw StoreError.unseenForMerge(id, unseen)
        }
        return read
    }

    /// How many fields `resolveMerge(_:prefer:strict:dryRun:)` would contest: 0 when the
    /// heads merge cleanly or the document is not in conflict; `nil` when its heads cannot
    /// be merged (no such document, a head damaged or malformed, or in a format newer than
    /// this build, a merge of more items than a survey may hold, or a package in the
    /// folder that cannot be read yet: ``unseenRevisions(of:)``).
    ///
    /// - Parameter id: The document.
    /// - Throws: `FileSystemError` when the document or a head could not be looked at
    ///   (permission denied, an input/output error): that says nothing of whether the heads
    ///   merge, so it is never answered with `nil`.
    public func contestedFieldCount(of id: UUID) throws -> Int? {
        let graph: RevisionGraph? = try FileSystemError.rethrowingFailureToLook {
            try mergeableRead(id).graph
        } otherwise: { _ in
            nil
        }
        guard let graph else { return nil }
        return try contestedFieldCount(of: id, in: graph)
    }

    /// ``contestedFieldCount(of:)`` for a document whose graph the caller has read already
    /// (``graph(of:)``), so that its revisions' metadata is not read again: only the heads'
    /// and the merge bases' content is. A graph holds no package that could not be read:
    /// ask ``unseenRevisions(of:)`` too, since `resolveMerge(_:prefer:strict:dryRun:)`
    /// refuses a conflict beside one.
    ///
    /// - Parameters:
    ///   - id: The document.
    ///   - graph: The document's graph.
    /// - Throws: `FileSystemError` when a head or a merge base could not be looked at
    ///   (permission denied, an input/output error).
    public func contestedFieldCount(of id: UUID, in graph: RevisionGraph) throws -> Int? {
        try FileSystemError.rethrowingFailureToLook {
            try mergePlan(id, prefer: nil, in: graph)?.contestedCount ?? 0
        } otherwise: { _ in
            nil
        }
    }

    func mergePlan(_ id: UUID, prefer: RevisionID?, in graph: RevisionGraph) throws -> MergePlan? {
        let heads = graph.heads
        guard RevisionGraph.isInConflict(heads: heads) else { return nil }
        var preferred: RevisionMetadata?
        if let prefer {
            guard let head = heads.first(where: { $0.id == prefer }) else {
                throw StoreError.noSuchRevision("\(prefer) among the heads")
            }
            // A deletion changes no field: preferring it would change nothing, unsaid.
            guard !head.isDeleted else {
                throw StoreError.noSuchRevision("\(prefer) among the heads that are not deletions")
            }
            preferred = head
        }
        let live = heads.filter { !$0.isDeleted }
        var plan = MergePlan(
            document: id, heads: heads, bases: [], mergeBases: [], twoWayReason: nil, result: nil)
        guard !live.isEmpty else { return plan }
        let surveys = Dictionary(
            try live.enumerated().map { ($1.id, (rank: $0, revision: $1, survey: try survey(id, $1))) },
            uniquingKeysWith: { first, _ in first })
        // Each pass merges heads, and groups merged in an earlier pass, from its own base.
        var merged: [SurveyMerge.Head] = []
        for group in graph.mergeGroups(of: live.map(\.id)) {
            let mergeBases = group.baseLevels.first ?? []
            let (baseSurvey, bases) = try mergeBase(id, levels: group.baseLevels[...])
            var twoWayReason: String?
            if baseSurvey == nil {
                twoWayReason =
                    if let unreadable = mergeBases.first(where: { !$0.isDeleted }) {
                        "the content of the merge base \(unreadable.id) has been pruned or cannot be read"
                    } else if let deletion = mergeBases.first {
                        "the merge base \(deletion.id) is a deletion, which has no content: the heads were each saved after it"
                    } else if let (revision, parent) = graph.missingParent(inHistoryOf: group.heads) {
                        "the heads have no common ancestor in this store, whose history is incomplete: the parent \(parent) of \(revision) is not here (a copy still under way, or a revision imported without its history), so a sync or a finished copy may give them one"
                    } else {
                        "the heads have no common ancestor"
                    }
            }
            // The heads' items of format 1 are matched by position to the base's (to the
            // first part's without a base); a group's result has the ids of the current format.
            var parts: [SurveyMerge.Head] = []
            for part in group.parts {
                switch part {
                case .group(let index): parts.append(merged[index])
                case .head(let head):
                    let (rank, revision, content) = surveys[head]!
                    let reference = baseSurvey?.survey ?? (parts.isEmpty ? nil : parts[0].survey)
                    parts.append(
                        SurveyMerge.Head(
                            label: revision.id.description,
                            survey: revision.formatVersion == 1 && reference != nil
                                ? content.matchingItemIDs(byPositionTo: reference!) : content, rank: rank))
                }
            }
            let result = SurveyMerge.merge(
                virtualBase: baseSurvey, heads: parts, prefer: preferred?.id.description)
            let members = group.heads.compactMap { surveys[$0]?.revision }
            if members.count < live.count {
                // A later pass merges it as one head; the last pass's result is the merge.
                merged.append(SurveyMerge.Head(merging: result, of: parts, from: baseSurvey))
                plan.groups.append(
                    .init(heads: members, bases: bases, mergeBases: mergeBases, twoWayReason: twoWayReason))
            } else {
                plan.mergeBases = mergeBases
                plan.bases = bases
                plan.twoWayReason = twoWayReason
                plan.result = result
            }
        }
        // Heads that each hold many items of their own can merge into more than a survey
        // may hold, which no reader would then take: such a merge cannot be made.
        if let merged = plan.result?.survey, merged.items.count > Survey.maximumItemCount {
            throw SurveyError(
                position: nil, title: nil, rule: .tooManyItems,
                message:
                    "the merge of the heads would hold \(merged.items.count) items; a survey has at most \(Survey.maximumItemCount), so the document must be resolved by keeping a head or with new content"
            )
        }
        return plan
    }

    /// The base of a merge whose merge bases are `levels` (see
    /// `RevisionGraph.mergeBaseLevels(of:)`): the one revision of the first level whose
    /// content can be read; or those revisions merged, from the base the next levels give,
    /// into a virtual base.
    ///
    /// - Returns: The base (`nil`: no revision of the first level can be read, or there is
    ///   none) and the revisions it was made of.
    /// - Throws: An input/output error reading a base's content, or content that does not
    ///   match its digest: a merge made without it would differ from the one another
    ///   replica makes with it.
    func mergeBase(_ id: UUID, levels: ArraySlice<[RevisionMetadata]>) throws -> (
        SurveyMerge.VirtualBase?, [RevisionMetadata]
    ) {
        guard let level = levels.first else { return (nil, []) }
        var readable: [RevisionMetadata] = []
        var surveys: [Survey] = []
        for candidate in level where !candidate.isDeleted {
            do {
                surveys.append(try survey(id, candidate))
                readable.append(candidate)
            } catch let error as FileSystemError where error.isFailureToLook {
                // An input/output error says nothing of the base: a merge made without it
                // would contest every difference here, and differ from the one another
                // replica makes with it.
                throw error
            } catch VersionsError.contentMismatch(let file, let revision) {
                // Damaged content (torn by a copy that was never made durable, or changed):
                // repairable from a replica that holds it intact, and a merge made without
                // it would differ from the one that replica makes with it.
                throw VersionsError.contentMismatch(file, revision)
            } catch {
                // Pruned content (a tombstone stands for the revision), or content that is
                // not a survey this build reads: the base is made of the others, or the
                // merge is two-way.
            }
        }
        guard readable.count > 1 else { return (surveys.first.map(SurveyMerge.VirtualBase.init), readable) }
        let (below, _) = try mergeBase(id, levels: levels.dropFirst())
        let merged = Self.merge(readable, surveys: surveys, base: below, prefer: nil)
        return (SurveyMerge.VirtualBase(merging: merged), readable)
    }

    /// The item-level merge of `revisions`, whose content is `surveys`, ranked in the
    /// order given (the winner order), from `base`. A format-1 revision's items are
    /// matched by position to the base's (to the first revision's without a base).
    static func merge(
        _ revisions: [RevisionMetadata], surveys: [Survey], base: SurveyMerge.VirtualBase?, prefer: String?
    ) -> SurveyMerge.Result {
        var surveys = surveys
        let reference = base?.survey ?? surveys[0]
        for index in surveys.indices where revisions[index].formatVersion == 1 && !(base == nil && index == 0)
        {
            surveys[index] = surveys[index].matchingItemIDs(byPositionTo: reference)
        }
        let heads = revisions.indices.map {
            SurveyMerge.Head(label: revisions[$0].id.description, survey: surveys[$0], rank: $0)
        }
        return SurveyMerge.merge(virtualBase: base, heads: heads, prefer: prefer)
    }

    /// Merges a document's heads item by item and writes the merge as their resolution.
    ///
    /// The resolution's metadata depends only on the heads and the merged content (see
    /// `resolve(_:_:)`), so two replicas merging the same heads write the same revision.
    ///
    /// - Parameters:
    ///   - id: The document.
    ///   - prefer: A head whose values win contests instead of the winner's (not a
    ///     deletion, which changes no field: `StoreError/noSuchRevision(_:)`).
    ///   - strict: Refuse, writing nothing, when any field is contested.
    ///   - dryRun: Compute the merge, and lock and write nothing (it works on a store
    ///     opened for reading).
    /// - Returns: The merge and the revision written (`nil` for a dry run); `nil` when the
    ///   document is not in conflict (see `mergePlan(_:prefer:)`).
    /// - Throws: ``MergeRefusal`` when `strict` and a field is contested; `SurveyError`
    ///   (rule `tooManyItems`) when the merge would hold more than `Survey.maximumItemCount`
    ///   items, dry run or not, nothing written; `StoreError` (`StoreError/unseenForMerge(_:_:)`
    ///   when the document's folder holds a package it cannot read yet, which may be a head
    ///   or the merge base); `VersionsError/contentMismatch(_:_:)` when a merge base's
    ///   content does not match its digest (repairable from a replica that holds it).
    @discardableResult
    public func resolveMerge(
        _ id: UUID, prefer: RevisionID? = nil, strict: Bool = false, dryRun: Bool = false
    ) throws -> (plan: MergePlan, revision: RevisionMetadata?)? {
        // A store without local state yet (see `hasLocalState`) refuses, or finds nothing
        // to merge, on a read made without the lock: nothing to lock, nothing made.
        if !dryRun && !hasLocalState,
            try resolveMerge(id, prefer: prefer, strict: strict, dryRun: true) == nil
        {
            return nil
        }
        let lock = dryRun ? nil : try documentLock(id)
        defer { lock?.unlock() }
        var read = try mergeableRead(id)
        guard let plan = try mergePlan(id, prefer: prefer, in: read.graph) else { return nil }
        if strict && !plan.isClean { throw MergeRefusal(plan: plan) }
        if dryRun { return (plan, nil) }
        let content = try plan.result.map { try $0.survey.plistData() }
        // Cleaned only once the merge is written, as every write that goes ahead is.
        try revisions.clean(&read, of: id)
        let written = try wrapping(.merge, id) {
            try revisions.writeResolution(
                document: id, parents: plan.heads, content: content, formatVersion: Self.formatVersion)
        }
        return (plan, written)
    }

    /// What `syncMerging(with:concurrency:progress:)` did.
    public struct MergingSyncReport: Sendable {
        /// The sync itself.
        public var sync: SyncReport
        /// Documents whose conflict merged cleanly and was resolved on both sides.
        public var merged: [UUID]
        /// Documents still in conflict: their merge contests a field (or cannot be made).
        public var unmerged: [UUID]
    }

    /// Syncs with `other`, then resolves on both sides every conflict that merges
    /// cleanly. Merges are deterministic, so both sides write the same revision; should
    /// they not (one side could not read a merge base the other could), the documents
    /// concerned are synced again.
    ///
    /// - Parameters:
    ///   - other: The other store.
    ///   - concurrency: How many documents to sync at once, at most (see
    ///     `sync(with:concurrency:progress:)`).
    ///   - progress: Called after each document of the sync with the number done and the total.
    /// - Returns: The sync's report and what was merged.
    /// - Throws: What the sync throws; after the sync, `FileSystemError` when a document it
    ///   did not name as unreadable cannot be listed for the merge (an input/output error),
    ///   or when a merge cannot be written: the documents already merged stay merged. A
    ///   document whose heads or base may not be read on a side is named in the sync
    ///   report's `unreadable` ("cannot be read, so it is not merged") and left in conflict.
    public func syncMerging(
        with other: SurveyStore, concurrency: Int = SurveyStore.syncConcurrency,
        progress: ((Int, Int) -> Void)? = nil
    ) throws -> MergingSyncReport {
        var report = try sync(with: other, concurrency: concurrency, progress: progress)
        var merged: [UUID] = []
        var unmerged: [UUID] = []
        var differing = false
        // A document unreadable on either side is named in `report.unreadable` already, and
        // was not synced: it is not merged either, and every other one is.
        let unreadable = Set(
            report.unreadable.compactMap {
                StoreLayout.documentID(folderName: SafeName.lastComponent(of: $0.path))
            })
        let listing = try summariesReport()
        // A document the listing could not read now (an input/output error) is not one
        // without a conflict: unless the sync named it already, the merge fails on it
        // rather than pass over it in silence.
        if let failure = listing.unreadable.first(where: { failure in
            revisions.document(containing: failure.path).map { !unreadable.contains($0) } ?? true
        }) {
            throw failure
        }
        for summary in listing.documents
        where !summary.conflicts.isEmpty && !unreadable.contains(summary.id) {
            do {
                let here = try resolveMerge(summary.id, strict: true)?.revision
                let there = try other.resolveMerge(summary.id, strict: true)?.revision
                if here?.id != there?.id { differing = true }
                merged.append(summary.id)
            } catch is MergeRefusal {
                unmerged.append(summary.id)
            } catch StoreError.noContent {
                unmerged.append(summary.id)
            } catch StoreError.unseenForMerge {
                unmerged.append(summary.id)
            } catch  where Self.isAboutHeads(error) {
                unmerged.append(summary.id)
            } catch {
                // A head or base that may not be read on a side (permission denied, an
                // input/output error): named, left in conflict, and every other one merged.
                guard
                    let issue = revisions.unreadable(error, of: summary.id, so: "merged")
                        ?? other.revisions.unreadable(error, of: summary.id, so: "merged")
                else { throw error }
                report.unreadable.append(issue)
                unmerged.append(summary.id)
            }
        }
        if differing { _ = try sync(with: other, concurrency: concurrency) }
        return MergingSyncReport(sync: report, merged: merged, unmerged: unmerged)
    }

    /// What to say of document `id` when `error`, thrown while working on it, says that its
    /// folder, or a package or file in it, may not be read (permission denied) or gives an
    /// input/output error: its folder, and "cannot be read, so it is not `outcome`: " with
    /// the system's reason; `nil` for any other error. A command over many documents names
    /// such a document with it, leaves it, and goes on with the others.
    public func unreadableIssue(_ error: any Error, of id: UUID, so outcome: String) -> StoreIssue? {
        revisions.unreadable(error, of: id, so: outcome)
    }

    /// Whether `error`, thrown by a merge of a document's heads, is about those heads: one
    /// in a format newer than this build's, content that does not match its digest, is no
    /// property list or no valid survey. A merge of many documents leaves such a document
    /// in conflict and goes on with the others; any other error (a file that cannot be
    /// written) ends it.
    public static func isAboutHeads(_ error: any Error) -> Bool {
        switch error {
        case is FormatError, is VersionsError, is SurveyError, is PropertyListError: true
        case StoreError.newerFormat: true
        default: false
        }
    }

    /// The best common ancestors of a document's non-deleted heads, and in a criss-cross
    /// history those of the merge bases, level by level (`RevisionGraph.mergeBaseLevels(of:)`),
    /// for every pass of the merge (those of each group of heads merged first,
    /// `RevisionGraph.mergeGroups(of:)`): what prune keeps for a merge.
    func mergeBaseIDs(in graph: RevisionGraph) -> Set<RevisionID> {
        let live = graph.liveHeads
        guard live.count > 1 else { return [] }
        return Set(graph.mergeGroups(of: live.map(\.id)).flatMap { $0.baseLevels.joined() }.map(\.id))
    }
}

extension SurveyStore {
    /// The item-level differences between two revisions' surveys.
    public struct RevisionDiff: Sendable {
        /// The revision the changes are counted from.
        public var from: RevisionMetadata
        /// The revision they lead to.
        public var to: RevisionMetadata
        /// The differences.
        public var diff: SurveyDiff
    }

    /// Item-level differences of a document's revisions, as `survey diff` shows them.
    ///
    /// - Parameters:
    ///   - id: The document.
    ///   - first: A revision, or `nil`: the winner against each other non-deleted head
    ///     (from the winner to the head).
    ///   - second: A revision, or `nil`: `first` against the winner (from `first` to the winner).
    /// - Returns: One diff per pair (none when `first` is `nil` and there is no conflict).
    /// - Throws: `StoreError` when a revision is unknown, pruned, a deletion or in a newer
    ///   format; ``DocumentDeletedError`` when the document is deleted and the winner is
    ///   compared without being named.
    public func diffs(
        _ id: UUID, _ first: RevisionID? = nil, _ second: RevisionID? = nil
    ) throws -> [RevisionDiff] {
        let graph = try revisions.graph(of: id).graph
        let pairs: [(RevisionMetadata, RevisionMetadata)]
        if let first {
            let from = try revision(id, first, in: graph)
            // The winner stood for by default is a deletion: the document is deleted.
            if second == nil, let winner = graph.winner, winner.isDeleted {
                throw try deletedError(id, winner)
            }
            pairs = [(from, try revision(id, second, in: graph))]
        } else {
            guard let winner = graph.winner else { throw try noWinner(id) }
            if winner.isDeleted { throw try deletedError(id, winner) }
            pairs = graph.conflicts.map { (winner, $0) }
        }
        return try pairs.map { from, to in
            for revision in [from, to] where revision.isDeleted { throw StoreError.deletion(revision.id) }
            return RevisionDiff(
                from: from, to: to, diff: SurveyDiff(from: try survey(id, from), to: try survey(id, to)))
        }
    }

    /// The winner against each other head, as `diffs(_:_:_:)` with no revision gives them,
    /// except that a head whose content cannot be read here (``isAboutHeads(_:)``: in a
    /// newer format, say) or that has none (a deletion, `StoreError/deletion(_:)`) is
    /// left out and returned with why, rather than failing the whole call. One read of
    /// the document, the winner decoded once.
    ///
    /// - Returns: The diffs, and the heads left out with their errors, in head order.
    /// - Throws: What `diffs(_:_:_:)` throws when the winner itself cannot be read
    ///   (deleted, in conflict or not: ``DocumentDeletedError``; in a newer format;
    ///   damaged), or the document has no winner.
    public func headDiffs(_ id: UUID) throws -> (diffs: [RevisionDiff], leftOut: [(RevisionID, any Error)]) {
        let graph = try revisions.graph(of: id).graph
        guard let winner = graph.winner else { throw try noWinner(id) }
        if winner.isDeleted { throw try deletedError(id, winner) }
        // Every other head: a deletion among them is left out, and named.
        let heads = graph.heads.filter { $0.id != winner.id }
        guard !graph.conflicts.isEmpty else {
            return ([], heads.filter(\.isDeleted).map { ($0.id, StoreError.deletion($0.id)) })
        }
        let base = try survey(id, winner)
        var diffs: [RevisionDiff] = []
        var leftOut: [(RevisionID, any Error)] = []
        for head in heads {
            if head.isDeleted {
                leftOut.append((head.id, StoreError.deletion(head.id)))
                continue
            }
            do {
                diffs.append(
                    RevisionDiff(
                        from: winner, to: head, diff: SurveyDiff(from: base, to: try survey(id, head))))
            } catch  where Self.isAboutHeads(error) {
                leftOut.append((head.id, error))
            }
        }
        return (diffs, leftOut)
    }
}
