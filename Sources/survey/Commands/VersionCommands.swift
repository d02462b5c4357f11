import ArgumentParser
import Foundation
import SurveyStore

struct VersionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "versions", abstract: "Every revision of a document.",
        discussion: """
            State: current (the winner), conflict (another head that is not a deletion), deleted (a head \
            that is a deletion), superseded (any revision a later one is based on, a deletion included). \
            The heads come first, the winner first (a deletion after every head that is not one), then \
            the other revisions, newest first.

            Each row: the revision, when it was saved (marked "(ahead of this clock!)" when more than a day \
            ahead of this device's clock), the device that saved it, its state, and "(pruned)" when only its \
            metadata is left. --json: [{"revision", "parents", "modified", "device", "formatVersion", \
            "state", "pruned", "futureTimestamp"}].

            \(SurveyTool.exitCodesReference)
            """)
    @OptionGroup var options: StoreOptions
    @Argument(help: "The document.") var document: String

    func validate() throws {
        try IDArgument.requireDocument(document)
    }

    struct Row: Encodable {
        var revision: String
        var parents: [String]
        var modified, device: String
        var formatVersion: Int
        var state: String
        var pruned: Bool
        /// The timestamp lies more than a day ahead of this device's clock: not trusted.
        var futureTimestamp: Bool
    }

    func run() throws {
        try runReporting {
            let store = try options.openForReading()
            let id = try store.document(document)
            let rows = try versionRows(store, id)
            if options.json { try Console.printJSON(rows); return }
            for row in rows {
                Console.printRow(
                    "\(row.revision)  \(row.modified)\(row.futureTimestamp ? " (ahead of this clock!)" : "")  \(row.device)  \(row.state)\(row.pruned ? " (pruned)" : "")"
                )
            }
        }
    }
}

func versionRows(_ store: SurveyStore, _ id: UUID) throws -> [VersionsCommand.Row] {
    try store.history(of: id).map { entry in
        let revision = entry.revision
        return VersionsCommand.Row(
            revision: revision.id.description, parents: revision.parents.map(\.description),
            modified: iso(revision.timestamp),
            device: revision.device.name, formatVersion: revision.formatVersion, state: entry.state.rawValue,
            pruned: entry.isPruned, futureTimestamp: entry.isStampedAhead)
    }
}

struct ConflictsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conflicts",
        abstract:
            "Documents in conflict, with how many fields an item-level merge would contest (0: it merges cleanly).",
        discussion: """
            A document that cannot be read (no permission, an input/output error), or whose heads cannot be \
            looked at for the merge preview or for deletions, is named on standard error: every other one is \
            listed, then the command says the listing is incomplete and exits 1.

            \(SurveyTool.exitCodesReference)
            """)
    @OptionGroup var options: StoreOptions

    struct Row: Encodable {
        var id, current: String
        @NullIfAbsent var title: String?
        var conflicts: [String]
        /// The heads that are deletions (a device deleted the document while others edited
        /// it): no conflict versions, but a resolution supersedes them too.
        var deletions: [String]
        /// Fields `resolve --merge` would contest; `null` when the heads cannot be merged
        /// (a head in a newer format or unreadable, or a package in the folder that cannot
        /// be read yet; one that could not be read for an input/output error is named in a
        /// warning).
        @NullIfAbsent var contested: Int?
        /// Revisions whose packages the folder holds but that cannot be read yet
        /// (half-copied, damaged, something else in their place): `resolve --merge` waits
        /// for them, since one may be a head or the merge base.
        var unreadable: [String]
        /// Heads stamped more than a day ahead of this device's clock: they win until a
        /// save or resolution supersedes them.
        var aheadOfClock: [String]
    }

    func run() throws {
        try runReporting {
            let store = try options.openForListing()
            let (documents, issues) = try store.documentsReport()
            for issue in issues { Console.error("warning: \(Advice.describe(issue))") }
            // The documents that could not be looked at, whole or in part: this listing is
            // incomplete, so it ends in exit 1, as `list`'s does.
            var unreadable = Unreadable.folders(among: issues)
            // The documents whose merge could not be previewed for a failure to look (named
            // in a warning): their text row says so, not that the heads cannot be merged.
            var notPreviewed: Set<String> = []
            /// `body`'s answer for document `id`, or `nil` with a warning that says what
            /// is not shown when it could not be looked at (an input/output error, no
            /// permission), never passed over as if there were nothing to show.
            func looking<T>(at id: UUID, _ what: String, are: Bool = false, _ body: () throws -> T?) throws
                -> T?
            {
                do {
                    return try body()
                } catch let error as FileSystemError where error.isFailureToLook {
                    Console.error(
                        "warning: \(error), so \(what) of document \(id.lowercased) \(are ? "are" : "is") not shown"
                    )
                    unreadable.insert(store.root + "/" + StoreLayout.folder(of: id))
                    notPreviewed.insert(id.lowercased)
                    return nil
                }
            }
            let rows = try documents.filter { !$0.conflicts.isEmpty }.map { document in
                let id = document.id
                // Read once, for the deletions among the heads and for the merge preview,
                // which packages a copy has not completed (or damage) keep waiting.
                let read = try looking(at: id, "the deletions and the merge preview", are: true) {
                    // Pruned and gone, or damaged, since it was listed: it names no deletion
                    // and cannot be merged, rather than stop the listing of the others.
                    try FileSystemError.rethrowingFailureToLook {
                        try store.graphAndUnseenRevisions(of: id)
                    } otherwise: { _ in
                        nil
                    }
                }
                let graph = read?.graph, unseen = read?.unseen ?? []
                let contested: Int? = try graph.flatMap { graph in
                    guard unseen.isEmpty else { return nil }
                    return try looking(at: id, "the merge preview") {
                        try store.contestedFieldCount(of: id, in: graph)
                    }
                }
                if graph != nil, unseen.isEmpty, contested == nil, !notPreviewed.contains(id.lowercased) {
                    // Why not, in a warning: a head damaged (which a repair mends), malformed
                    // or no survey, in a newer format, or a merge too large; said as a merge
                    // would say it, with what mends it. What cannot be looked at this time (an
                    // input/output error) is no reason: it leaves the listing incomplete.
                    do {
                        _ = try looking(at: id, "why its heads cannot be merged") {
                            try store.advisingOnUnreadableHeads(id) { try store.mergePlan(id) }
                        }
                    } catch {
                        // The advice was added as a failure of the command's own.
                        let failure = error as? CommandFailure ?? CommandFailure(error)
                        var why = failure.file == nil && failure.line == nil ? failure.message : failure.text
                        if case StoreError.newerFormat = error {
                            why += Advice.namingStore(
                                in:
                                    " (a build that reads that format merges them; or resolve the conflict with `survey resolve \(id.lowercased) --keep REV` or `--from FILE`)"
                            )
                        }
                        Console.error("warning: \(id.lowercased): its heads cannot be merged: \(why)")
                    }
                }
                return Row(
                    id: id.lowercased, current: document.revision.id.description, title: document.title,
                    conflicts: document.conflicts.map(\.description),
                    deletions: (graph?.heads ?? []).filter(\.isDeleted).map(\.id.description),
                    contested: contested,
                    unreadable: unseen.map(\.description),
                    aheadOfClock: ([document.revision] + document.conflictRevisions).filter(
                        store.isStampedAhead
                    )
                    .map(\.id.description))
            }
            if options.json {
                try Console.printJSON(rows)
            } else {
                // Nothing on standard output, which a script reads; a person is told why.
                if rows.isEmpty && unreadable.isEmpty { Console.error("no document is in conflict") }
                for row in rows {
                    let merge =
                        row.contested.map { $0 == 0 ? "merges cleanly" : "merge contests \($0) field(s)" }
                        ?? (notPreviewed.contains(row.id)
                            ? "merge not previewed"
                            : row.unreadable.isEmpty
                                ? "cannot be merged"
                                : "not merged while \(row.unreadable.joined(separator: ", ")) cannot be read (a copy in progress, or damage)")
                    let deletions =
                        row.deletions.isEmpty ? "" : "  deletions \(row.deletions.joined(separator: ", "))"
                    let ahead =
                        row.aheadOfClock.isEmpty
                        ? "" : "  (stamped ahead of this clock: \(row.aheadOfClock.joined(separator: ", ")))"
                    Console.printRow(
                        "\(row.id)  \(row.title ?? "—")  winner \(row.current)  conflicts \(row.conflicts.joined(separator: ", "))\(deletions)  \(merge)\(ahead)"
                    )
                }
            }
            try Unreadable.endListing(leavingOut: unreadable.count)
        }
    }
}

struct ResolveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resolve", abstract: "Resolve every head into one new revision.",
        discussion: """
            --merge merges the heads item by item from their common ancestor (several, in a criss-cross \
            history, merged into a virtual base first); heads that share history the others lack are \
            merged first, from their own common ancestor, and then as one head with the others \
            (--json: groups): changes on one side are taken, \
            different changes to one field are contested and take the value of the first head, winner first \
            (or --prefer REV first), that changed it. \
            --strict refuses with exit 75, writing nothing, when a field is contested. \
            --all --merge resolves every document in conflict and lists those it could not (exit 75 when any is left; \
            1 when a head or base of one could not be read, which is named in "unreadable" with --json); \
            with nothing in conflict it says so. \
            The same resolution made on two replicas is the same revision.

            A document that is not in conflict is left as it is ("resolved": false with --json, exit 0); a \
            revision named with --keep or --prefer must exist all the same. A document is in conflict while more than \
            one of its heads is not a deletion: a deletion that raced an edit is no conflict (the edit stays \
            current, and survey conflicts does not list it). A deleted document is restored by \
            --keep REV (an earlier revision) or --from FILE; anything else says that it is deleted and \
            names the newest earlier revision to keep ("deleted": true with --json).

            Content kept by --accept or --keep must read as a survey, as show reads it: content that does not \
            (malformed, or breaking a rule) is refused with exit 65, naming the file and the item and rule, and \
            nothing is written; content in a format newer than this build's is kept as it is. A resolution \
            supersedes the heads this store can read: one it cannot read yet (half-copied, damaged) is named \
            in a warning, since once it is complete or repaired the document may be in conflict again.

            \(SurveyTool.exitCodesReference)
            """)
    @OptionGroup var options: StoreOptions
    @Argument(help: "The document (omit with --all).") var document: String?
    @Flag(help: "Keep the nominated winner's content.") var accept = false
    @Option(help: "Keep this revision's content.") var keep: String?
    @Option(
        help:
            "Use this survey (JSON or XML plist); an item without an id takes the id of the winner's item of the same kind and title, if any."
    ) var from: String?
    @Flag(help: "Merge the heads item by item.") var merge = false
    @Option(
        help:
            "With --merge: the head put first, whose changes win contested fields (default: the winner); a field it left unchanged takes the next head's change."
    )
    var prefer: String?
    @Flag(help: "With --merge: refuse (exit 75, nothing written) when any field is contested.") var strict =
        false
    @Flag(
        help:
            "With --merge: show the merge and the merge against the winner (--json: againstWinner), and write nothing (the store is only read; no lock, no Local.nosync/)."
    ) var dryRun = false
    @Flag(help: "With --merge: every document in conflict.") var all = false

    /// Checked as the command runs rather than in `validate()`, which the parser calls
    /// before it looks for unknown options: `resolve DOC --acept` is then said to be an
    /// unknown option, not a missing choice.
    func checkArguments() throws {
        if [accept, keep != nil, from != nil, merge].filter({ $0 }).count != 1 {
            throw ValidationError("give exactly one of --accept, --keep REV, --from FILE and --merge")
        }
        try IDArgument.requireDocument(document)
        try IDArgument.requireRevision(keep, for: "--keep")
        try IDArgument.requireRevision(prefer, for: "--prefer")
        try PathArgument.requireName(from, for: "--from")
        if !merge && (prefer != nil || strict || dryRun || all) {
            throw ValidationError("--prefer, --strict, --dry-run and --all go with --merge")
        }
        if all == (document != nil) {
            throw ValidationError(
                all ? "give a document or --all, not both" : "give a document (or --all with --merge)")
        }
        if all && prefer != nil {
            throw ValidationError("--prefer names a head of one document; it does not go with --all")
        }
    }

    func run() throws {
        try checkArguments()
        try runReporting {
            // A dry run opens the store for reading: it locks, cleans and writes nothing.
            let store = try dryRun ? options.openForDryRun() : options.open()
            if merge && all { return try resolveAll(store) }
            let id = try store.document(document!)
            if merge { return try resolveMerge(store, id) }
            let outcome: SurveyStore.WriteOutcome?
            // The head whose content is kept (the winner, `nil`, with --accept) is advised on,
            // should it be no valid survey.
            if accept {
                outcome = try store.advisingOnUnreadable(id, revision: nil) {
                    try store.resolveDocument(id, .acceptWinner)
                }
            } else if let keep {
                let kept = try store.revisionID(matching: keep, in: id)
                outcome = try store.advisingOnUnreadable(id, revision: kept) {
                    try store.resolveDocument(id, .keep(kept))
                }
            } else {
                // Items without an id are matched with the winner's, as every replica has it.
                let survey = try readSurvey(
                    from: from!, document: id, on: try store.revision(id, nil), in: store)
                outcome = try store.resolveDocument(id, .content(survey))
            }
            guard let outcome else {
                return try sayNothingToResolve(store, id, keepingDeletion: keep != nil)
            }
            let resolved = outcome.revision
            // Heads it could not read are not its parents: named, as delete names them.
            if !outcome.unsuperseded.isEmpty {
                Console.error(
                    Advice.unsupersededWarning(
                        outcome.unsuperseded, written: "resolution",
                        outcome: "the document may be in conflict again", again: "resolve"))
            }
            if options.json {
                try Console.printJSON(
                    Resolved(
                        id: id.lowercased, revision: resolved.id.description, resolved: true,
                        deleted: resolved.isDeleted, unsuperseded: outcome.unsuperseded.map(\.description)))
            } else {
                print(resolved.id.description)
                // Keeping a deletion deletes the document: said, since nothing else shows it.
                if resolved.isDeleted {
                    Console.error(
                        "the revision kept is a deletion: document \(id.lowercased) is deleted now (`survey resolve \(id.lowercased) --keep REV` restores an earlier revision)"
                    )
                }
            }
        }
    }

    /// `resolve DOC` (not `--all`) with `--json`: the revision written, or the current one
    /// when nothing was.
    struct Resolved: Encodable {
        var id, revision: String
        var resolved: Bool
        /// Whether `revision` is a deletion: a resolution that keeps one, or a deleted
        /// document left as it is.
        var deleted: Bool
        /// The revisions the resolution could not read, and so does not supersede (the
        /// warning names them too); none when nothing was written.
        var unsuperseded: [String] = []
    }

    /// Says that `id` has nothing to resolve and writes nothing: it is not in conflict.
    /// A deleted document is named as such, with how to restore it, since keeping its
    /// deletion (or accepting or merging its one head) leaves it deleted.
    private func sayNothingToResolve(_ store: SurveyStore, _ id: UUID, keepingDeletion: Bool) throws {
        let current = try store.revision(id, nil)
        if options.json {
            return try Console.printJSON(
                Resolved(
                    id: id.lowercased, revision: current.id.description, resolved: false,
                    deleted: current.isDeleted))
        }
        let document = id.lowercased
        guard current.isDeleted, let deleted = try store.deletedDocument(id) else {
            return Console.error(
                "\(document) is not in conflict; nothing to resolve (it stays at \(current.id))")
        }
        let why = keepingDeletion ? "keeping a deletion restores nothing" : "nothing to resolve"
        let restore =
            deleted.restorable.first.map {
                "`survey resolve \(document) --keep REV` restores it from an earlier revision (the newest: \($0))"
                    + ", or `survey resolve \(document) --from FILE` with new content"
            }
            ?? "the content of every earlier revision is pruned: `survey resolve \(document) --from FILE` restores it with new content"
        Console.error(
            "\(document) is deleted (revision \(current.id)), not in conflict: \(why), and it stays deleted; \(restore)"
        )
    }

    /// The head `--prefer` names. A revision that is there but no head is named as
    /// superseded, and the heads are listed, rather than said not to exist; on a document
    /// not in conflict it is returned as it is, for the merge to find nothing to resolve
    /// (as `--keep REV` does, the revision must exist all the same). A head that records a
    /// deletion is refused in a conflict: it changes no field to prefer.
    private func preferredHead(_ store: SurveyStore, _ id: UUID) throws -> RevisionID? {
        guard let prefer else { return nil }
        let head: RevisionID
        do {
            head = try store.revisionID(matching: prefer, in: id, headsOnly: true)
        } catch StoreError.noSuchRevision, StoreError.unreadableRevision {
            // Any revision it names, when no head (or only a package not readable yet) does:
            // a prefix that matches several, a revision whose package cannot be read yet and
            // an error reading are said as they are, never taken for no revision at all.
            let superseded: RevisionID?
            do {
                superseded = try store.revisionID(matching: prefer, in: id)
            } catch StoreError.noSuchRevision {
                superseded = nil
            }
            // Not in conflict (the plan, which reads without cleaning anything, is none):
            // nothing to merge, whichever revision is preferred. Should the document fall
            // into conflict meanwhile, the merge refuses this non-head.
            if let superseded,
                case .success(.none) = Result(catching: { try store.mergePlan(id, prefer: superseded) })
            {
                return superseded
            }
            let graph = try store.graph(of: id)
            // On a document not in conflict any revision would do: this one is none.
            guard superseded != nil || RevisionGraph.isInConflict(heads: graph.heads) else {
                throw StoreError.noSuchRevision(prefer)
            }
            let heads = graph.heads.map(\.id.description).joined(separator: ", ")
            throw StoreError.noSuchRevision(
                superseded.map {
                    "\(prefer) among the heads (\($0) is superseded, not a head; the heads: \(heads))"
                } ?? "\(prefer) among the heads (the heads: \(heads))")
        }
        // A deletion changes no field, so preferring it would change nothing: refused in a
        // conflict, naming the heads that may be preferred (from the plan, which reads
        // without cleaning anything).
        if try store.revision(id, head).isDeleted, let plan = try store.mergePlan(id) {
            let live = plan.heads.filter { !$0.isDeleted }.map(\.id.description).joined(separator: ", ")
            throw StoreError.noSuchRevision(
                "\(prefer) among the heads that are not deletions (\(head) records a deletion, which changes no field; the heads that do not: \(live))"
            )
        }
        return head
    }

    private func resolveMerge(_ store: SurveyStore, _ id: UUID) throws {
        let outcome: (plan: SurveyStore.MergePlan, revision: RevisionMetadata?)
        do {
            let preferred = try preferredHead(store, id)
            let made = try store.advisingOnUnreadableHeads(id) {
                try store.resolveMerge(id, prefer: preferred, strict: strict, dryRun: dryRun)
            }
            guard let made else { return try sayNothingToResolve(store, id, keepingDeletion: false) }
            outcome = made
        } catch let refusal as SurveyStore.MergeRefusal {
            if options.json {
                try Console.printJSON(MergeJSON(refusal.plan, revision: nil, dryRun: dryRun, refused: true))
            } else {
                for line in MergeText.lines(refusal.plan) { Console.error(line) }
            }
            Console.error(
                "error: \(refusal.problem) (without --strict each takes the change of the first head that made one, the winner first, or --prefer REV)"
            )
            throw ExitStatus.refused
        }
        // What a dry run shows besides the decisions: the merge against the winner.
        var againstWinner: SurveyDiff?
        if dryRun, let merged = outcome.plan.result?.survey, let winner = outcome.plan.heads.first,
            !winner.isDeleted
        {
            againstWinner = SurveyDiff(from: try store.survey(id, winner), to: merged)
        }
        if options.json {
            return try Console.printJSON(
                MergeJSON(
                    outcome.plan, revision: outcome.revision, dryRun: dryRun, refused: false,
                    againstWinner: againstWinner))
        }
        if dryRun {
            for line in MergeText.lines(outcome.plan) { print(line) }
            if let againstWinner {
                print("the merge against the winner (nothing written):")
                for line in MergeText.lines(againstWinner) { print(line) }
            }
            return
        }
        for line in MergeText.lines(outcome.plan) { Console.error(line) }
        if let revision = outcome.revision { print(revision.id.description) }
    }

    private func resolveAll(_ store: SurveyStore) throws {
        struct Resolved: Encodable {
            var id: String
            @NullIfAbsent var revision: String?  // null with --dry-run
            var contested: Int
        }
        struct Unresolved: Encodable {
            var id: String
            @NullIfAbsent var title: String?
            @NullIfAbsent var contested: Int?  // null when it cannot be merged
            var reason: String
        }
        struct Report: Encodable {
            var resolved: [Resolved]
            var unresolved: [Unresolved]
            /// Documents left in conflict because a head or base may not be read.
            var unreadable: [Unreadable]
            var dryRun: Bool
        }
        var report = Report(resolved: [], unresolved: [], unreadable: [], dryRun: dryRun)
        for summary in try store.documents() where !summary.conflicts.isEmpty {
            do {
                guard
                    let (plan, revision) = try store.resolveMerge(summary.id, strict: strict, dryRun: dryRun)
                else { continue }
                report.resolved.append(
                    Resolved(
                        id: summary.id.lowercased, revision: revision?.id.description,
                        contested: plan.contestedCount))
            } catch let refusal as SurveyStore.MergeRefusal {
                report.unresolved.append(
                    Unresolved(
                        id: summary.id.lowercased, title: summary.title,
                        contested: refusal.plan.result?.contested.count, reason: "contested fields"))
            } catch let error as StoreError {
                report.unresolved.append(
                    Unresolved(
                        id: summary.id.lowercased, title: summary.title, contested: nil,
                        reason: Advice.describe(error)))
            } catch  where SurveyStore.isAboutHeads(error) {
                report.unresolved.append(
                    Unresolved(
                        id: summary.id.lowercased, title: summary.title, contested: nil,
                        reason: "\(error)" + (store.advice(onUnreadableHeadOf: summary.id, error) ?? "")))
            } catch let error as FileSystemError where error.isUnusableLock {
                // Its lock file is something else: this document is left, every other one merged.
                report.unresolved.append(
                    Unresolved(
                        id: summary.id.lowercased, title: summary.title, contested: nil,
                        reason: error.description))
            } catch {
                // A head or base that may not be read (permission denied, an input/output
                // error): this document is left, named, and every other one merged.
                guard let issue = store.unreadableIssue(error, of: summary.id, so: "merged") else {
                    throw error
                }
                report.unresolved.append(
                    Unresolved(
                        id: summary.id.lowercased, title: summary.title, contested: nil,
                        reason: Advice.describe(issue)))
                report.unreadable.append(Unreadable(issue, id: summary.id.lowercased))
                Console.error("error: \(Advice.describe(issue))")
            }
        }
        if options.json {
            try Console.printJSON(report)
        } else {
            if report.resolved.isEmpty && report.unresolved.isEmpty {
                Console.error("no document is in conflict; nothing to resolve")
            }
            for row in report.resolved {
                print(
                    "\(row.id): \(dryRun ? "would resolve" : "resolved")\(row.revision.map { " as \($0)" } ?? "")\(row.contested > 0 ? " (\(row.contested) contested)" : "")"
                )
            }
            for row in report.unresolved {
                Console.printRow(
                    "\(row.id): left in conflict (\(row.contested.map { "\($0) contested field(s)" } ?? row.reason))"
                )
            }
        }
        // A document that could not be read is a failure, not a refusal.
        if !report.unreadable.isEmpty {
            Console.error("error: \(Unreadable.count(report.unreadable.count)), so not merged")
            throw ExitStatus.failure
        }
        if !report.unresolved.isEmpty { throw ExitStatus.refused }
    }
}

struct PruneCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prune", abstract: "Remove the content of losing and superseded revisions.",
        discussion: """
            Prints a line for each document as soon as something in it is pruned (or it is skipped: its \
            current revision cannot be read, so its history is all there is left to read; its folder holds \
            revisions it cannot read yet; its lock file is something else, which can be removed, or keeps \
            being replaced, and then the exit status is 1, as every write to it fails meanwhile), then a \
            summary. \
            A document in conflict keeps the content of its heads and their merge bases (in a criss-cross \
            history, those of the merge bases too; and those of each group of heads merged first). --json: \
            {"documents": [{"id", "pruned", "skipped"}], "revisions", "skipped", "unreadable": [{"id", "path", \
            "message"}]} (the counts), listing only the documents something was pruned from or skipped. \
            A document whose folder, or a package or file in it, may not be read (permission denied) or \
            gives an input/output error is named ("error: PATH: ...", unreadable), every other document is \
            pruned, and the exit status is 1.

            \(SurveyTool.exitCodesReference)
            """)
    @OptionGroup var options: StoreOptions
    @Argument(help: "The document (default: every document).") var document: String?
    /// The next word is taken whatever it is, so that `--keep-history -1` is refused as a
    /// count (see ``validate()``), not taken for an option with the count missing.
    @Option(
        parsing: .unconditional,
        help:
            "Keep the content of this many generations of the winner's ancestors: its parents (both, after a merge), then theirs."
    )
    var keepHistory = 0

    func validate() throws {
        try IDArgument.requireDocument(document)
        if keepHistory < 0 { throw ValidationError("--keep-history is a count of generations, 0 or more") }
    }
    @Flag(
        help:
            "Say what would be pruned, and change nothing (the store is only read; no lock, no Local.nosync/)."
    ) var dryRun = false

    struct Row: Encodable {
        var id: String
        var pruned: [String]
        /// Why the document was skipped; `null` when it was not.
        @NullIfAbsent var skipped: String? = nil
    }

    func run() throws {
        try runReporting {
            let store = try dryRun ? options.openForDryRun() : options.open()
            let progress = ProgressBar(label: "documents", json: options.json)
            var rows: [Row] = []
            var unreadable: [Unreadable] = []
            var pruned = 0
            var total = 0
            // Documents whose prune could not remove everything (permission denied).
            var unfinished: [UUID] = []
            // Documents whose lock file is something else: no write to them succeeds.
            var locked: [UUID] = []
            func record(_ position: Int, _ count: Int, _ id: UUID, _ outcome: SurveyStore.PruneOutcome) {
                let row: Row
                switch outcome {
                case .skippedUnreadable(let issue):
                    // Named now, as the others go on; counted in the last line.
                    unreadable.append(
                        Unreadable(issue, id: id.lowercased))
                    progress.clear()
                    Console.error("error: \(Advice.describe(issue))")
                    total = count
                    progress.update(position, of: count)
                    return
                case .pruned(let revisions):
                    row = Row(id: id.lowercased, pruned: revisions.map(\.description))
                case .skippedUnreadableWinner(let reason):
                    row = Row(
                        id: id.lowercased, pruned: [],
                        skipped: "its current revision cannot be read: \(reason)")
                case .skippedUnseenRevisions(let revisions):
                    row = Row(
                        id: id.lowercased, pruned: [],
                        skipped:
                            "its folder holds revisions it cannot read yet (\(revisions.map(\.description).joined(separator: ", "))), half-copied or damaged, which may need the history a prune would remove"
                    )
                case .skippedUnusableLock(let reason):
                    row = Row(id: id.lowercased, pruned: [], skipped: reason)
                    locked.append(id)
                case .skippedUnwritable(let reason):
                    row = Row(id: id.lowercased, pruned: [], skipped: reason)
                    unfinished.append(id)
                }
                total = count
                pruned += row.pruned.count
                if row.skipped != nil || !row.pruned.isEmpty {
                    rows.append(row)
                    if !options.json {
                        progress.clear()
                        if let skipped = row.skipped {
                            Console.printRow("\(row.id): skipped (\(skipped))")
                        } else {
                            print(
                                "\(row.id): \(dryRun ? "would prune" : "pruned") \(row.pruned.count) revision(s)"
                            )
                        }
                        fflush(nil)  // each line as it happens, also into a pipe
                    }
                }
                progress.update(position, of: count)
            }
            if let document {
                let id = try store.document(document)
                record(1, 1, id, .pruned(try store.prune(id, keepHistory: keepHistory, dryRun: dryRun)))
            } else {
                try store.pruneEveryDocument(keepHistory: keepHistory, dryRun: dryRun, each: record)
            }
            let skipped = rows.filter { $0.skipped != nil }.count
            if options.json {
                struct Report: Encodable {
                    var documents: [Row]
                    var revisions, skipped: Int
                    var unreadable: [Unreadable]
                }
                try Console.printJSON(
                    Report(documents: rows, revisions: pruned, skipped: skipped, unreadable: unreadable))
            } else {
                let verb = dryRun ? "would prune" : "pruned"
                let touched = rows.count - skipped
                print(
                    "\(verb) \(pruned) revision(s) in \(touched) of \(total) document(s)\(skipped > 0 ? "; \(skipped) skipped" : "")"
                )
            }
            if !unreadable.isEmpty {
                Console.error(
                    "error: \(Unreadable.count(unreadable.count)), so not \(dryRun ? "looked at" : "pruned")")
            }
            if !unfinished.isEmpty {
                Console.error(
                    "error: \(Unreadable.documents(unfinished.count)) could not be pruned whole: what may not be removed stays until it may (once it may, a prune or the next write to the document finishes)"
                )
            }
            if !locked.isEmpty {
                Console.error(
                    "error: \(Unreadable.documents(locked.count)) not pruned: \(locked.count == 1 ? "its lock file cannot" : "their lock files cannot") be used (named above, with what mends it)"
                )
            }
            if !unreadable.isEmpty || !unfinished.isEmpty || !locked.isEmpty { throw ExitStatus.failure }
        }
    }
}

struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify", abstract: "Check the store's integrity.",
        discussion: """
            Exits 0 only when the store is clean (and, with --repair-from, nothing was left \
            unrepaired), 1 otherwise; what it cannot look at or read (an input/output error, no \
            permission) is one of its problems, never taken for nothing to report. A folder of the \
            store this user may not write in, and a lock file it may not open, is a note saying \
            which commands fail for it. With \
            --repair-from, each \
            revision whose content does not match its digest, or whose metadata or tombstone does \
            not verify, is first repaired from the other store's intact copy of that file (nothing \
            else is copied), and so is each with a link, a FIFO, socket or device, an empty folder \
            or too large a file where one of its files belongs; what cannot be repaired is named \
            ("not repaired: ..."), as is each name where a document's folder or a revision's package \
            belongs that something else takes (a repair copies no revision: a sync clears a link or \
            special file there and copies what belongs), and each document that may not be read to \
            look for damage (permission denied, an input/output error: the others are repaired). The \
            check then runs on the repaired store. \
            \(SurveyTool.exitCodesReference)
            """)
    @OptionGroup var options: StoreOptions
    @Option(
        name: .customLong("repair-from"),
        help: "Another store (a replica or a backup) to repair damaged revisions from.")
    var repairFrom: String?

    func validate() throws {
        try PathArgument.requireName(repairFrom, for: "--repair-from")
    }

    func run() throws {
        try runReporting {
            var repair: SurveyStore.RepairReport?
            if let repairFrom {
                let source: SurveyStore
                do {
                    source = try SurveyStore.openForReading(at: repairFrom)
                } catch StoreError.noSuchStore(let path) {
                    // A new store would hold nothing to repair from: not advised.
                    throw CommandFailure(
                        code: "noSuchStore",
                        message:
                            "there is no store at \(ShownText.escaping(path)) to repair from (--repair-from names a replica of this store)",
                        exit: ExitStatus.noInput.rawValue)
                }
                repair = try options.open().repair(from: source)
                for entry in repair?.repaired ?? [] { Console.error("repaired: \(Advice.describe(entry))") }
                for entry in repair?.unrepaired ?? [] {
                    Console.error("not repaired: \(Advice.describe(entry))")
                }
            }
            // Read only: verify reports leftovers instead of removing them, and works on a
            // read-only store.
            let found = try SurveyStore.openForReading(at: options.path).verify()
            let problems = found.filter { !$0.isNote }, notes = found.filter(\.isNote)
            struct Report: Encodable {
                struct Entry: Encodable { var path, message: String }
                var clean: Bool
                var problems: [Entry]
                var notes: [Entry]
                /// With `--repair-from`: the content, metadata and tombstone files replaced by
                /// the other store's copy.
                var repaired: [Entry]?
                /// With `--repair-from`: damaged files it could not repair (the other store
                /// has no intact copy, or a folder that is not empty stands in the way).
                var unrepaired: [Entry]?
            }
            if options.json {
                try Console.printJSON(
                    Report(
                        clean: problems.isEmpty,
                        problems: problems.map { .init(path: $0.path, message: $0.message) },
                        notes: notes.map { .init(path: $0.path, message: $0.message) },
                        repaired: repair.map { found in
                            found.repaired.map { .init(path: $0.path, message: $0.message) }
                        },
                        unrepaired: repair.map { found in
                            found.unrepaired.map { .init(path: $0.path, message: $0.message) }
                        }))
            }
            for entry in found { Console.error(Advice.describe(entry)) }
            if !options.json {
                if let repair { print("repaired \(repair.repaired.revisionCount) revision(s)") }
                print(
                    problems.isEmpty
                        ? "clean" + (notes.isEmpty ? "" : " (\(notes.count) note(s))")
                        : "\(problems.count) problem(s)")
            }
            if !problems.isEmpty || repair?.unrepaired.isEmpty == false { throw ExitStatus.failure }
        }
    }
}
