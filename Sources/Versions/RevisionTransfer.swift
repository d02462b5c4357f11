import Dispatch
import Foundation
import Packages
import Synchronization

/// Moves revisions between two stores: two-way sync of documents, tombstones arriving,
/// completion of packages a copy left half there, and repair of damaged content from the
/// other store's intact copy.
///
/// How sync decides what to copy, for each document:
/// - When both folders hold the same names, every package complete and its files, and
///   every tombstone, the same size on both sides, nothing can differ and the document is
///   skipped unread.
/// - Otherwise both document locks are taken and both folders read once. Each side gets
///   the complete revisions it lacks (neither a package nor a tombstone in effect of that
///   id: a pending tombstone, whose superseding revision has not arrived, prunes nothing),
///   parents before children, each checked against its digest first: a revision whose
///   content does not match is never sent, and is reported. A revision both sides have
///   whose content differs in size is read on both sides and the damaged copy replaced by
///   the intact one, and so is every package or tombstone a read found damaged. A link or
///   special file where a side's document folder or package belongs is removed first.
/// - Then each side gets the tombstones it lacks, once the revisions have arrived, so that
///   a tombstone whose superseding revision is on its way stays pending meanwhile.
///
/// Revisions are written in batches: each package under the receiver's temporary folder
/// as soon as its document is read (`PackageWriter.stage(_:)`), then many packages
/// flushed to disk at once and published, each still atomic
/// (`PackageWriter.publish(_:creatingFolders:refusing:)`, which fsyncs a batch of one package file
/// by file instead); a sync returns once every revision and tombstone it copied is
/// durable.
public struct RevisionTransfer: Sendable {
    /// This side of the transfer.
    public let local: RevisionStore
    /// The other side.
    public let remote: RevisionStore

    /// Documents whose folder's name something other than a folder takes on this side
    /// and on the other (``RevisionStore/DocumentListing/blocked``), as the sync's listing
    /// found them: before anything is copied to such a document, a link or special file
    /// there is removed (never followed); a regular file is reported in
    /// ``DocumentOutcome/damaged`` and nothing is copied to it.
    public var blocked: (local: [UUID: SystemCalls.FileKind], remote: [UUID: SystemCalls.FileKind]) = (
        [:], [:]
    )

    /// A transfer between `local` and `remote`.
    public init(between local: RevisionStore, and remote: RevisionStore) {
        self.local = local
        self.remote = remote
    }

    /// What syncing one document did.
    public struct DocumentOutcome: Sendable, Equatable {
        /// Revisions and tombstones copied from ``RevisionTransfer/local`` to the remote store.
        public var sent = 0
        /// Revisions and tombstones copied from ``RevisionTransfer/remote`` to the local store.
        public var received = 0
        /// How many of ``sent`` were tombstones.
        public var tombstonesSent = 0
        /// How many of ``received`` were tombstones.
        public var tombstonesReceived = 0
        /// In conflict on the local side after the sync, and not on both sides before.
        public var conflictAppeared = false
        /// Not in conflict on the local side after the sync, and in conflict on one side before.
        public var conflictResolved = false
        /// Revisions not copied or not repaired: no side has them intact, or something
        /// that is not the store's to remove stands in the way (a folder that is not empty,
        /// a regular file).
        public var damaged: [StoreIssue] = []
        /// Revisions copied whose timestamp lies more than a day ahead of the receiver's clock.
        public var aheadOfClock: [StoreIssue] = []
        /// Content, metadata and tombstone files replaced by the other side's intact copy,
        /// and links or special files removed where a document's folder or a revision's
        /// package belongs.
        public var repaired: [StoreIssue] = []
        /// The document's folder on a side where it, or a package or file in it, may not be
        /// read (permission denied) or gives an input/output error, and why
        /// (``RevisionStore/unreadable(_:of:so:)``): nothing of the document is copied
        /// either way, since what that side holds cannot be known.
        public var unreadable: [StoreIssue] = []
        /// The document's folder on a side that may not be written (permission denied, a
        /// read-only file system), and why: the packages bound for it are not copied, its
        /// tombstones and clean-up are left, and what else of the document could be copied
        /// (to the other side) is counted in ``sent`` or ``received``.
        public var unwritable: [StoreIssue] = []

        /// Nothing done.
        public init() {}
    }

    /// How many documents are read at a time, and how many documents with something to
    /// copy are written as one batch.
    public static let documentsPerBatch = 512

    /// Syncs `documents` both ways (see ``RevisionTransfer``).
    ///
    /// Documents are read `width` at a time, ``documentsPerBatch`` after another; those
    /// with something to copy are written in batches of up to ``documentsPerBatch``
    /// documents (documents found the same on both sides take no room in a batch), each
    /// batch's revisions with one flush per store, then its tombstones. While a batch is
    /// written, the next documents are read on other threads (when `width` is more than 1):
    /// they are other documents, and each document is still decided under its locks and
    /// written after it is read.
    ///
    /// - Parameters:
    ///   - documents: The documents to sync, in the order their locks are taken.
    ///   - width: How many documents are read at once (1: one after another, on this
    ///     thread, never while a batch is written).
    ///   - progress: Called on this thread with the number of documents done.
    /// - Returns: Each document's outcome, in the order of `documents`.
    /// - Throws: `FileSystemError` or ``StoreError`` when a store cannot be read or written.
    public func sync(_ documents: [UUID], width: Int, progress: (Int) -> Void = { _ in }) throws
        -> [DocumentOutcome]
    {
        var outcomes = [DocumentOutcome](repeating: DocumentOutcome(), count: documents.count)
        // Packages are written under each store's temporary folder as documents are read,
        // and published batch by batch: no writer opening a store meanwhile takes them
        // for leftovers.
        let writing = (try local.writer.lockForWriting(), try remote.writer.lockForWriting())
        defer {
            writing.0.unlock()
            writing.1.unlock()
        }
        let chunks = stride(from: 0, to: documents.count, by: Self.documentsPerBatch).map {
            $0..<min($0 + Self.documentsPerBatch, documents.count)
        }
        // Read documents with something to write, and where they stand in `documents`.
        var batch: [Plan] = [], positions: [Int] = []
        var read = 0
        var next = chunks.first.map { planAhead(Array(documents[$0]), width: width) }
        for number in chunks.indices {
            guard let reading = next else { break }
            let plans: [Plan]
            do {
                plans = try reading()
            } catch {
                // The documents read before, waiting for a batch, are not published either.
                discardStaged(batch)
                throw error
            }
            next =
                number + 1 < chunks.count
                ? planAhead(Array(documents[chunks[number + 1]]), width: width) : nil
            for (offset, plan) in zip(chunks[number], plans) where !plan.skipped {
                batch.append(plan)
                positions.append(offset)
            }
            read = chunks[number].upperBound
            if batch.count >= Self.documentsPerBatch || next == nil {
                do {
                    try write(&batch, width: width)
                } catch {
                    // The next documents' reads finish before the error is reported, and
                    // nothing written for them or for this batch is left unpublished.
                    discardStaged(batch + ((try? next?()) ?? []))
                    throw error
                }
                for (position, plan) in zip(positions, batch) { outcomes[position] = plan.outcome }
                batch = []
                positions = []
            }
            progress(read - batch.count)
        }
        return outcomes
    }

    /// Removes what `plans` wrote under the temporary folders and did not publish.
    func discardStaged(_ plans: [Plan]) {
        for plan in plans {
            remote.writer.discard(plan.toRemote.staged)
            local.writer.discard(plan.toLocal.staged)
        }
    }

    /// The plans of `documents`: read now on other threads when `width` is more than 1
    /// (the function returned waits for them), else read on this thread when it is called.
    func planAhead(_ documents: [UUID], width: Int) -> () throws -> [Plan] {
        // When one document fails, what the others already wrote aside goes.
        let read: @Sendable () throws -> [Plan] = { [self] in
            try BoundedWork.map(
                count: documents.count, width: width, { [self] index in try plan(documents[index]) },
                cleaningUp: { [self] plans in discardStaged(plans) })
        }
        guard width > 1 else { return read }
        let pending = Pending<[Plan]>()
        DispatchQueue(label: "SurveyStore.RevisionTransfer.reading").async {
            pending.finish(Result(catching: read))
        }
        return { try pending.wait() }
    }

    /// Writes one batch: each side's packages, then each document's second step; sets
    /// each plan's outcome.
    func write(_ plans: inout [Plan], width: Int) throws {
        try commit(&plans, direction: \.toRemote, into: remote)
        try commit(&plans, direction: \.toLocal, into: local)
        let finishing = plans.indices.filter { plans[$0].needsFinishing }
        let finished = try BoundedWork.map(count: finishing.count, width: width) { [self, plans] index in
            try finish(plans[finishing[index]])
        }
        for index in plans.indices where !plans[index].skipped && !plans[index].refused {
            // Nothing received and nothing failed: the local side is as it was, and the
            // remote one too, or now holds the same revisions.
            let before = plans[index]
            plans[index].settle(
                localAfter: before.localBefore,
                remoteAfter: before.outcome.sent == 0 ? before.remoteBefore : before.localBefore)
        }
        for (index, outcome) in zip(finishing, finished) { plans[index].outcome = outcome }
    }

    // MARK: Deciding

    /// What one side receives of one document.
    struct Delivery: Sendable {
        /// Packages to write, parents before children.
        var packages: [(revision: RevisionID, files: [PackageFile])] = []
        /// The same packages written under the receiver's temporary folder, to be published.
        var staged: [PackageWriter.StagedItem] = []
        /// Tombstones to write after the packages.
        var tombstones: [RevisionMetadata] = []

        /// Whether there is nothing to copy.
        var isEmpty: Bool { packages.isEmpty && tombstones.isEmpty }
        /// Whether arriving tombstones name packages the receiver has.
        var disowns = false
    }

    /// What a sync of one document will do, decided from one read of each side.
    struct Plan: Sendable {
        var document: UUID
        var skipped = true
        var toRemote = Delivery()
        var toLocal = Delivery()
        var localBefore = false
        var remoteBefore = false
        var localFailed = false
        var remoteFailed = false
        var outcome = DocumentOutcome()

        /// Whether a side refused packages of the document (``DocumentOutcome/unwritable``).
        var refused: Bool { !outcome.unwritable.isEmpty }

        /// Sets whether a conflict appeared (a side is in conflict that was not before: a
        /// conflict copied to a side that lacked it) or was resolved (neither side is in
        /// conflict, and one was before), given each side's state after.
        mutating func settle(localAfter: Bool, remoteAfter: Bool) {
            outcome.conflictAppeared = localAfter && !localBefore || remoteAfter && !remoteBefore
            outcome.conflictResolved = !localAfter && !remoteAfter && (localBefore || remoteBefore)
        }

        /// Whether the document needs its second step, under its locks again: tombstones
        /// to write, clean-up, or its conflict state to read again.
        var needsFinishing: Bool {
            !skipped && !refused
                && (!toRemote.tombstones.isEmpty || !toLocal.tombstones.isEmpty || outcome.received > 0
                    || localFailed
                    || remoteFailed || !outcome.repaired.isEmpty
                    || outcome.sent > 0 && !outcome.damaged.isEmpty)
        }
    }

    /// Reads both sides of `document` under both locks and decides what goes where;
    /// repairs damaged content on the way.
    func plan(_ document: UUID) throws -> Plan {
        var plan = Plan(document: document)
        // Same complete packages, of the same sizes, and tombstones on both sides:
        // nothing to copy or repair, and no conflict can change.
        if local.holdsSameFiles(document, as: remote) { return plan }
        plan.skipped = false
        let locks: (FileLock, FileLock)
        do {
            locks = try lockBoth(document)
        } catch let error as FileSystemError where error.isUnusableLock {
            // Something other than a lock file in a lock file's place (a folder, a link, a
            // hard link): this document is not synced, and every other one is.
            let name = document.uuidString.lowercased()
            plan.outcome.damaged.append(
                StoreIssue(path: error.path, message: "\(error.failure) (document \(name) not synced)"))
            return plan
        }
        defer {
            locks.0.unlock()
            locks.1.unlock()
        }
        let mine: DocumentRead?, theirs: DocumentRead?
        let localError: (any Error)?, remoteError: (any Error)?
        // The metadata bytes read are kept: a package copied is not read twice.
        (mine, localError) = Self.readBefore { try local.cleanedRead(document, keepingMetadata: true) }
        (theirs, remoteError) = Self.readBefore { try remote.cleanedRead(document, keepingMetadata: true) }
        // A side that may not be read (permission denied, an I/O error) could hold anything:
        // nothing is copied either way, and the document is named.
        let unreadable = [
            localError.flatMap { local.unreadable($0, of: document, so: "synced") },
            remoteError.flatMap { remote.unreadable($0, of: document, so: "synced") },
        ].compactMap { $0 }
        if !unreadable.isEmpty {
            plan.outcome.unreadable = unreadable
            return plan
        }
        // Any other failure to look (too many open files, an I/O error outside the
        // document's folder) says nothing of what that side holds either: taking the side
        // for empty would send it nothing and report the sync done. The sync fails.
        for error in [localError, remoteError].compactMap({ $0 as? FileSystemError })
        where error.isFailureToLook {
            throw error
        }
        (plan.localFailed, plan.remoteFailed) = (localError != nil, remoteError != nil)
        plan.localBefore = mine?.graph.isInConflict ?? false
        plan.remoteBefore = theirs?.graph.isInConflict ?? false
        do {
            plan.toRemote = try Self.delivery(document, from: local, mine, to: remote, theirs, &plan.outcome)
            plan.toLocal = try Self.delivery(document, from: remote, theirs, to: local, mine, &plan.outcome)
            // A side without the document's folder, whose name something else takes: made way
            // for, or nothing is copied to it.
            if theirs == nil, let kind = blocked.remote[document] {
                try Self.clearFolder(of: document, &plan.toRemote, in: remote, taken: kind, &plan.outcome)
            }
            if mine == nil, let kind = blocked.local[document] {
                try Self.clearFolder(of: document, &plan.toLocal, in: local, taken: kind, &plan.outcome)
            }
            if let mine, let theirs {
                try repairDamaged(
                    document, in: local, mine, from: remote, theirs, reportingMissing: true, &plan.outcome)
                try repairDamaged(
                    document, in: remote, theirs, from: local, mine, reportingMissing: true, &plan.outcome)
                try repairDiffering(document, mine, theirs, &plan.outcome)
            } else if let mine, remoteError == nil {
                // The other side has no folder for the document: what is damaged here has no
                // copy to be repaired from, and is named rather than left out of the copy in
                // silence.
                try repairDamaged(
                    document, in: local, mine, from: remote, nil, reportingMissing: true, &plan.outcome)
            } else if let theirs, localError == nil {
                try repairDamaged(
                    document, in: remote, theirs, from: local, nil, reportingMissing: true, &plan.outcome)
            }
            // Written now, on this thread, under each receiver's temporary folder: the
            // batch only flushes and publishes them.
            plan.toRemote.staged = try remote.stage(plan.toRemote.packages, of: document)
            do {
                plan.toLocal.staged = try local.stage(plan.toLocal.packages, of: document)
            } catch {
                remote.writer.discard(plan.toRemote.staged)
                throw error
            }
        } catch {
            // A file of the document that its read did not open (the content of a package
            // to copy or repair) may not be read: the document is named and nothing of it
            // copied, as when its folder may not be read; every other document syncs.
            let unreadable = [
                local.unreadable(error, of: document, so: "synced"),
                remote.unreadable(error, of: document, so: "synced"),
            ].compactMap { $0 }
            guard !unreadable.isEmpty else { throw error }
            var named = Plan(document: document)
            named.skipped = false
            named.outcome.unreadable = unreadable
            named.outcome.repaired = plan.outcome.repaired  // made already, under the locks
            return named
        }
        return plan
    }

    /// A side's read before copying: `nil` and no error when the side has no folder for
    /// the document, `nil` and the error when it could not be read for another reason.
    static func readBefore(_ read: () throws -> DocumentRead) -> (read: DocumentRead?, error: (any Error)?) {
        do {
            return (try read(), nil)
        } catch StoreError.noSuchDocument {
            return (nil, nil)
        } catch {
            return (nil, error)
        }
    }

    /// The complete revisions of `document` that `target` lacks (parents first, content
    /// checked against its digest; a damaged one is reported in `outcome` instead), and
    /// then the tombstones it lacks, in effect or pending.
    static func delivery(
        _ document: UUID, from source: RevisionStore, _ sourceRead: DocumentRead?, to target: RevisionStore,
        _ targetRead: DocumentRead?, _ outcome: inout DocumentOutcome
    ) throws -> Delivery {
        var delivery = Delivery()
        guard let sourceRead else { return delivery }
        let targetRead = targetRead ?? DocumentRead()
        // A damaged package is repaired in place, not copied over. A tombstone the target
        // holds for a revision stands in for it only once it is in effect (something there
        // supersedes the revision): one still pending (the superseding revision not arrived,
        // as when a copy that brought the tombstone was interrupted) prunes nothing, and
        // the revision is copied, or the two sides would go on with different heads.
        let targetHas = { (revision: RevisionID) in
            targetRead.live[revision] != nil || targetRead.pruned.contains(revision)
                || targetRead.damagedPackages.contains(revision)
        }
        for revision in sourceRead.graph.revisions.values.sorted(by: { $0.id < $1.id })
        where !sourceRead.pruned.contains(revision.id) && !targetHas(revision.id) {
            if let kind = targetRead.blockedPackages[revision.id],
                !(try makeWay(
                    for: StoreLayout.package(revision.id, of: document), what: "revision's package",
                    in: target,
                    kind: kind, &outcome))
            {
                continue
            }
            let files: [PackageFile]
            do {
                guard
                    let found = try source.packageFiles(
                        revision, of: document, metadata: sourceRead.metadataBytes[revision.id])
                else { continue }
                files = found
            } catch let error as FileSystemError where error.isAboutTheEntry {
                // Too large a file, or something else where one of its files belongs:
                // this revision is not copied, every other one is.
                outcome.damaged.append(
                    StoreIssue(
                        path: error.path,
                        message: "\(error.failure), and the other store has no copy (not copied)"))
                continue
            }
            if !revision.isDeleted, RevisionID.sha256Hex(files[1].contents) != revision.contentDigest {
                outcome.damaged.append(
                    StoreIssue(
                        path: source.contentPath(revision.id, of: document),
                        message:
                            "the content does not match its digest, and the other store has no copy"
                            + " (not copied)"
                    ))
                continue
            }
            delivery.packages.append((revision.id, files))
            if target.isFarAhead(revision.timestamp) {
                outcome.aheadOfClock.append(
                    StoreIssue(
                        path: target.root + "/" + StoreLayout.package(revision.id, of: document),
                        message:
                            "stamped \(revision.timestamp) by \(revision.device.name),"
                            + " more than a day ahead of this device's clock"
                    ))
            }
        }
        // A revision whose tombstone the target holds pending, and which a revision copied
        // here now supersedes, would be pruned as soon as that one lands: it is not copied.
        if !targetRead.pending.isEmpty, !delivery.packages.isEmpty {
            func parents(_ id: RevisionID) -> [RevisionID] {
                (sourceRead.graph.revisions[id] ?? sourceRead.tombstones[id] ?? targetRead.tombstones[id]
                    ?? targetRead.live[id])?.parents ?? []
            }
            var superseded = Set<RevisionID>()
            var stack = delivery.packages.flatMap { parents($0.revision) }
            while let next = stack.popLast() {
                if superseded.insert(next).inserted { stack.append(contentsOf: parents(next)) }
            }
            let doomed = targetRead.pending.intersection(superseded)
            if !doomed.isEmpty {
                delivery.packages.removeAll { doomed.contains($0.revision) }
                let paths = Set(doomed.map { target.root + "/" + StoreLayout.package($0, of: document) })
                outcome.aheadOfClock.removeAll { paths.contains($0.path) }
            }
        }
        // A tombstone the target holds damaged is repaired in place, not written over.
        let arriving = sourceRead.tombstones.keys.filter {
            targetRead.tombstones[$0] == nil && !targetRead.damagedTombstones.contains($0)
        }.sorted()
        delivery.tombstones = arriving.map { sourceRead.tombstones[$0]! }
        delivery.disowns = arriving.contains { targetRead.live[$0] != nil }
        return delivery
    }

    /// Makes way in `target` for the folder of `document`, which `kind` takes, when
    /// `delivery` has something to copy to it (``makeWay(for:what:in:kind:_:)``); empties
    /// `delivery` when the name stays taken.
    static func clearFolder(
        of document: UUID, _ delivery: inout Delivery, in target: RevisionStore,
        taken kind: SystemCalls.FileKind,
        _ outcome: inout DocumentOutcome
    ) throws {
        guard !delivery.isEmpty,
            !(try makeWay(
                for: StoreLayout.folder(of: document), what: "document's folder", in: target, kind: kind,
                &outcome))
        else { return }
        delivery = Delivery()
    }

    /// Makes way in `target` for `name` (relative to the root: a document's folder, `what`
    /// "document's folder", or a revision's package, "revision's package"), which `kind`
    /// takes (``RevisionStore/DocumentListing/blocked``, ``DocumentRead/blockedPackages``):
    /// removes a link or a FIFO, socket or device, which holds nothing of the store's (the
    /// link itself, never followed), and reports it in `outcome.repaired`; reports
    /// anything else in `outcome.damaged` and leaves it. Returns whether the name is free.
    static func makeWay(
        for name: String, what: String, in target: RevisionStore, kind: SystemCalls.FileKind,
        _ outcome: inout DocumentOutcome
    ) throws -> Bool {
        guard kind == .symbolicLink || kind == .special else {
            outcome.damaged.append(
                StoreIssue(
                    path: target.root + "/" + name,
                    message:
                        "a file stands where the \(what) belongs: nothing is copied to it"
                        + " (move the file away, then sync again)"))
            return false
        }
        do {
            try target.writer.removeNonFolder(name)
        } catch let error as FileSystemError {
            if error.code == .notFound { return true }  // gone already
            // Changed since it was listed (a folder now, say), or not removable: this
            // document or revision waits for the next run; the others go on.
            outcome.damaged.append(
                StoreIssue(
                    path: target.root + "/" + name, message: "nothing is copied to it: \(error.reason)"))
            return false
        }
        outcome.repaired.append(
            StoreIssue(
                path: target.root + "/" + name,
                message: "\(kind.inWords) stood where the \(what) belongs: removed (never followed)"))
        return true
    }

    /// Repairs in `damaged` each tombstone and each package that its read (`damagedRead`)
    /// found damaged, from `intact`'s copy when `intactRead` holds that tombstone or that
    /// revision whole. With `reportingMissing`, one that `intact` has no copy of is
    /// reported in `outcome.damaged`.
    func repairDamaged(
        _ document: UUID, in damaged: RevisionStore, _ damagedRead: DocumentRead, from intact: RevisionStore,
        _ intactRead: DocumentRead?, reportingMissing: Bool, _ outcome: inout DocumentOutcome
    ) throws {
        for id in damagedRead.damagedTombstones.sorted() {
            let file = StoreLayout.tombstone(id, of: document)
            // Another revision's metadata is replaced only by a repair, and only when that
            // revision is whole elsewhere: else it may be its only copy.
            if let other = try damaged.misplacedRevision(file, as: id, of: document),
                try intactRead?.tombstones[id] == nil
                    || !damaged.holdsWhole(other) && !intact.holdsWhole(other)
            {
                if reportingMissing {
                    outcome.damaged.append(
                        Self.misplaced(
                            other, at: damaged.root + "/" + file, as: id, in: document, what: "tombstone"))
                }
                continue
            }
            // Only another store's tombstone repairs one: a damaged file under a tombstone's
            // name is no decision to prune, and a revision the other store holds whole is
            // not made a tombstone from it (a prune there would have kept it, as a merge
            // base, say).
            if intactRead?.tombstones[id] != nil {
                // Judged again now: it may have been replaced since the read.
                if let damage = try damaged.metadataDamage(file, as: id, of: document) {
                    try replaceMetadata(
                        file, damage, as: id, of: document, in: damaged, from: intact, what: "tombstone",
                        &outcome)
                }
            } else if reportingMissing {
                outcome.damaged.append(
                    StoreIssue(
                        path: damaged.root + "/" + file,
                        message: intactRead?.live[id] != nil
                            ? "the tombstone is damaged, and the other store holds \(id) whole, not pruned: remove"
                                + " the damaged file (a sync then brings the revision back, if this store lacks it)"
                            : "the tombstone is damaged, and the other store has no copy of it"))
            }
        }
        for id in damagedRead.damagedPackages.sorted() {
            let package = StoreLayout.package(id, of: document)
            // Another revision's package, under another revision's name or in another
            // document's folder (moved by hand), is replaced only by a repair, and only when
            // that revision is whole elsewhere: else its bytes may be its only copy.
            if let other = try damaged.misplacedRevision(
                package + "/" + StoreLayout.metadataFile, as: id, of: document),
                try intactRead?.live[id] == nil || !damaged.holdsWhole(other) && !intact.holdsWhole(other)
            {
                if reportingMissing {
                    outcome.damaged.append(
                        Self.misplaced(
                            other, at: damaged.root + "/" + package, as: id, in: document, what: "package"))
                }
                continue
            }
            if let revision = intactRead?.live[id] {
                try repairPackage(revision, of: document, in: damaged, from: intact, &outcome)
            } else if reportingMissing {
                outcome.damaged.append(
                    StoreIssue(
                        path: damaged.root + "/" + package,
                        message: "the package is damaged, and the other store has no copy of \(id)"))
            }
        }
    }

    /// What a repair says of a package or tombstone at `path`, in `document`'s folder under
    /// the name of `revision`, that holds `other`'s metadata: where it belongs, and that it
    /// is left as it is.
    static func misplaced(
        _ other: RevisionMetadata, at path: String, as revision: RevisionID, in document: UUID, what: String
    ) -> StoreIssue {
        guard other.documentID == document else {
            let name = other.documentID.uuidString.lowercased()
            return StoreIssue(
                path: path,
                message:
                    "the \(what) is a revision of document \(name), not of this one: move it back to"
                    + " \(StoreLayout.folder(of: other.documentID))/ (or remove it)")
        }
        let name =
            what == "tombstone" ? StoreLayout.tombstoneName(other.id) : StoreLayout.packageName(other.id)
        return StoreIssue(
            path: path,
            message:
                "the \(what) holds revision \(other.id), not \(revision): rename it \(name) (or remove it);"
                + " it is never replaced, since it may be that revision's only copy")
    }

    /// Repairs `damaged`'s package of `revision` from `intact`'s copy: its metadata when
    /// it is damaged (``replaceMetadata(_:_:as:of:in:from:what:_:)``), then its content
    /// when that is (``repair(_:of:in:from:_:)``).
    func repairPackage(
        _ revision: RevisionMetadata, of document: UUID, in damaged: RevisionStore,
        from intact: RevisionStore,
        _ outcome: inout DocumentOutcome
    ) throws {
        let file = StoreLayout.package(revision.id, of: document) + "/" + StoreLayout.metadataFile
        if let damage = try damaged.metadataDamage(file, as: revision.id, of: document) {
            guard
                try replaceMetadata(
                    file, damage, as: revision.id, of: document, in: damaged, from: intact, what: "metadata",
                    &outcome)
            else { return }
        }
        if !revision.isDeleted { try repair(revision, of: document, in: damaged, from: intact, &outcome) }
    }

    /// Replaces `damaged`'s `file` (relative to the root: a package's metadata or a
    /// tombstone), found `damage`d as `revision`'s metadata
    /// (``RevisionStore/metadataDamage(_:as:of:)``), by `intact`'s copy, the only bytes that
    /// verify (checked again as they are read), atomically and durably
    /// (``replace(_:with:in:damage:what:from:_:)``). Returns whether it did: a copy that
    /// changed since it was read is left for the next run.
    @discardableResult
    func replaceMetadata(
        _ file: String, _ damage: FileDamage, as revision: RevisionID, of document: UUID,
        in damaged: RevisionStore, from intact: RevisionStore, what: String, _ outcome: inout DocumentOutcome
    ) throws -> Bool {
        let source = intact.root + "/" + file
        // A copy that cannot be read for an input/output error fails the repair, naming it;
        // one gone or damaged since it was read is left for the next run.
        let read: Data?
        do {
            read = try intact.reader.contents(atPath: source, limit: FileReader.smallFileLimit)
        } catch  where RevisionStore.isAboutContents(error) {
            read = nil
        }
        guard let bytes = read, let copy = try? RevisionMetadata(plist: bytes, file: source),
            copy.id == revision, copy.documentID == document
        else { return false }
        return try replace(file, with: bytes, in: damaged, damage: damage, what: what, from: intact, &outcome)
    }

    /// Replaces `damaged`'s `file` (relative to the root), found `damage`d, by `bytes`,
    /// `intact`'s copy, atomically and durably, and reports it in `outcome`. An empty
    /// folder in its place is removed first; one that is not empty is reported and left
    /// as it is (what it holds is not the store's to delete). Returns whether it did.
    func replace(
        _ file: String, with bytes: Data, in damaged: RevisionStore, damage: FileDamage, what: String,
        from intact: RevisionStore, _ outcome: inout DocumentOutcome
    ) throws -> Bool {
        do {
            try damaged.writer.replaceFile(bytes, at: file)
        } catch let error as FileSystemError where error.errno == .notEmpty {
            outcome.damaged.append(
                StoreIssue(
                    path: damaged.root + "/" + file,
                    message:
                        "a folder that is not empty stands where the \(what) belongs: left as it is"
                        + " (move it away, then repair again)"))
            return false
        }
        outcome.repaired.append(
            StoreIssue(
                path: damaged.root + "/" + file,
                message: "\(damage.description(of: what)); replaced by \(intact.root)'s copy"))
        return true
    }

    /// Revisions both sides hold whose content files differ in size: one of them is
    /// damaged (a torn copy). Each is read on both sides, and a copy that does not match
    /// its digest is replaced by the other when that one does; when neither does, both
    /// are reported.
    func repairDiffering(
        _ document: UUID, _ mine: DocumentRead, _ theirs: DocumentRead, _ outcome: inout DocumentOutcome
    )
        throws
    {
        for (id, revision) in mine.live.sorted(by: { $0.key < $1.key })
        where !revision.isDeleted && theirs.live[id] != nil && !mine.pruned.contains(id)
            && !theirs.pruned.contains(id)
        {
            let mineSize = try local.reader.status(atPath: local.contentPath(id, of: document))?.size
            let theirSize = try remote.reader.status(atPath: remote.contentPath(id, of: document))?.size
            guard let mineSize, let theirSize, mineSize != theirSize else { continue }
            try repair(revision, of: document, in: local, from: remote, &outcome)
            try repair(revision, of: document, in: remote, from: local, &outcome)
        }
    }

    /// Replaces the content of `revision` in `damaged` by `intact`'s copy when the one in
    /// `damaged` is damaged (``RevisionStore/contentDamage(_:of:)``). Reports it repaired,
    /// or damaged when `intact` has no intact copy either. Returns whether `damaged`'s
    /// copy was damaged.
    @discardableResult
    func repair(
        _ revision: RevisionMetadata, of document: UUID, in damaged: RevisionStore,
        from intact: RevisionStore,
        _ outcome: inout DocumentOutcome
    ) throws -> Bool {
        // Only a copy found wrong is replaced (never one that cannot be read).
        guard let damage = try damaged.contentDamage(revision, of: document) else { return false }
        guard let good = try intact.intactContent(revision, of: document) else {
            let absence = try intact.absence(ofContent: revision, of: document)
            outcome.damaged.append(
                StoreIssue(
                    path: damaged.contentPath(revision.id, of: document),
                    message: "\(damage.description(of: "content", now: true)), and \(absence)"))
            return true
        }
        _ = try replace(
            StoreLayout.package(revision.id, of: document) + "/" + StoreLayout.contentFile, with: good,
            in: damaged, damage: damage, what: "content", from: intact, &outcome)
        return true
    }

    // MARK: Writing

    /// Publishes every plan's packages for one side in one batch (written when the plan
    /// was made), then completes those a copy left half there.
    func commit(_ plans: inout [Plan], direction: KeyPath<Plan, Delivery>, into target: RevisionStore) throws
    {
        var batch: [(document: UUID, revision: RevisionID, item: PackageWriter.StagedItem)] = []
        var owners: [Int] = []
        for (index, plan) in plans.enumerated() {
            let delivery = plan[keyPath: direction]
            for (package, item) in zip(delivery.packages, delivery.staged) {
                batch.append((plan.document, package.revision, item))
                owners.append(index)
            }
        }
        guard !batch.isEmpty else { return }
        // A package already there (or half there from an interrupted copy) is completed.
        // A document's folder that may not be written refuses its packages alone.
        let outcomes = try target.publish(staged: batch, lockingCompletions: true, refusingDenied: true)
        for (owner, outcome) in zip(owners, outcomes) {
            if case .refused(let error) = outcome {
                if !plans[owner].refused {
                    let folder = target.root + "/" + target.folder(of: plans[owner].document)
                    plans[owner].outcome.unwritable.append(
                        StoreIssue(
                            path: folder,
                            message: "cannot be written, so it is not synced: "
                                + RevisionStore.reason(error, file: folder)))
                }
                continue
            }
            if direction == \Plan.toRemote {
                plans[owner].outcome.sent += 1
            } else {
                plans[owner].outcome.received += 1
            }
        }
    }

    /// The second step of a document: under both locks again, the tombstones each side
    /// lacks, the removal of what they disown, and the conflict state after.
    func finish(_ plan: Plan) throws -> DocumentOutcome {
        let document = plan.document
        var plan = plan
        let locks = try lockBoth(document)
        defer {
            locks.0.unlock()
            locks.1.unlock()
        }
        plan.outcome.tombstonesSent = try Self.writeTombstones(plan.toRemote, of: document, into: remote)
        plan.outcome.sent += plan.outcome.tombstonesSent
        plan.outcome.tombstonesReceived = try Self.writeTombstones(plan.toLocal, of: document, into: local)
        plan.outcome.received += plan.outcome.tombstonesReceived
        // Tombstones copied may disown packages the receiving side still has: it noted
        // that before they were copied, and removes them now (then the note).
        if plan.outcome.tombstonesSent > 0 || plan.remoteFailed { try remote.finishPrune(document) }
        if plan.outcome.tombstonesReceived > 0 { try local.finishPrune(document) }
        var localAfter = plan.localBefore
        if plan.outcome.received > 0 || plan.localFailed || !plan.outcome.repaired.isEmpty {
            localAfter = try local.cleanedGraph(of: document).graph.isInConflict
        }
        // The sides hold the same revisions now, unless damage was left (a revision one
        // side could not copy) or a write failed: then the remote side is read too, so that
        // a conflict the copy made there (a child sent without its damaged parent) counts,
        // and one that only the damage made here is not called resolved.
        var remoteAfter = localAfter
        if plan.remoteFailed || !plan.outcome.damaged.isEmpty {
            do {
                remoteAfter = try remote.cleanedGraph(of: document).graph.isInConflict
            } catch let error as StoreError where error == .noSuchDocument(document) {
                // Nothing could be copied there: the document is not in conflict there.
                remoteAfter = false
            }
        }
        plan.settle(localAfter: localAfter, remoteAfter: remoteAfter)
        return plan.outcome
    }

    /// Writes a delivery's tombstones, each durably, after noting the prune when they
    /// disown packages the target has (so that a crash before their removal is finished
    /// on the next open). Returns how many it wrote.
    static func writeTombstones(_ delivery: Delivery, of document: UUID, into target: RevisionStore) throws
        -> Int
    {
        guard !delivery.tombstones.isEmpty else { return 0 }
        try target.writer.createDirectory(StoreLayout.documentsFolder)
        try target.writer.createDirectory(StoreLayout.folder(of: document))
        func publish() throws {
            for metadata in delivery.tombstones {
                try target.publishTombstone(metadata, of: document)
            }
        }
        if delivery.disowns {
            try target.disowning(document, by: delivery.tombstones.map(\.id), publish)
        } else {
            try publish()
        }
        return delivery.tombstones.count
    }

    /// Takes `document`'s lock in both stores, without ever waiting for one while holding
    /// the other (two syncs in opposite directions cannot deadlock).
    func lockBoth(_ document: UUID) throws -> (FileLock, FileLock) {
        func attempt(_ first: RevisionStore, _ second: RevisionStore) throws -> (FileLock, FileLock)? {
            let held = try first.documentLock(document)
            do {
                return (held, try second.documentLock(document, wait: false))
            } catch let error as FileSystemError where error.code == .locked {
                held.unlock()
                return nil
            }
        }
        var attempts = 0
        while true {
            if let locks = try attempt(local, remote) { return locks }
            if let locks = try attempt(remote, local) { return (locks.1, locks.0) }
            attempts += 1
            usleep(UInt32.random(in: 1_000...(attempts < 10 ? 5_000 : 50_000)))
        }
    }
}

extension RevisionTransfer {
    /// What a repair from another store found.
    public struct RepairReport: Sendable, Equatable {
        /// Content, metadata and tombstone files replaced by the other store's intact copy.
        public var repaired: [StoreIssue] = []
        /// Damaged content, metadata or tombstones that the other store has no intact copy
        /// of, names in the way of a document's folder or a revision's package, and documents
        /// that may not be read to look for damage (left as they are).
        public var unrepaired: [StoreIssue] = []

        /// Nothing found.
        public init() {}
    }

    /// Checks the content of every revision of the local store against its digest, and
    /// replaces each that does not match by the remote store's copy of the same revision
    /// when that one does; replaces each damaged tombstone and package
    /// (``DocumentRead/damagedTombstones``, ``DocumentRead/damagedPackages``) by the remote
    /// store's copy: the metadata, then the content, each when it is damaged. Nothing else is
    /// copied either way, and the remote store is only read.
    ///
    /// A document whose folder, or a package or file in it, may not be read to look for
    /// damage (permission denied, an input/output error) is never taken for one without
    /// damage: it is named in ``RepairReport/unrepaired`` ("cannot be read, so it is not
    /// repaired") and left as it is, and the other documents are repaired. Documents whose
    /// revisions are themselves damaged beyond reading are left out, for the verify to name.
    ///
    /// - Throws: `FileSystemError` or ``StoreError`` when the local store cannot be
    ///   written, the remote store's documents cannot be listed, or a read fails for
    ///   another reason (too many open files).
    public func repairFromRemote() throws -> RepairReport {
        var report = RepairReport()
        let listing = try local.documentListing()
        // A copy whose documents cannot be read is no copy: said so, never taken for one
        // that holds nothing.
        try remote.checkDocumentsFolder()
        // A name in the way of a document's folder: a sync's to clear, since a repair
        // copies no revision; named, so that the repair does not pass over it in silence.
        if !listing.blocked.isEmpty {
            // Listed for whether the other store can fill the folder: a listing that
            // fails says nothing of that, so it fails the repair, never "has none".
            let theirs = Set(try remote.documentIDs())
            for (document, kind) in listing.blocked.sorted(by: { $0.key.uuidString < $1.key.uuidString }) {
                report.unrepaired.append(
                    Self.inTheWay(
                        local.root + "/" + local.folder(of: document), kind, what: "document's folder",
                        copied: "document's revisions", remoteHasIt: theirs.contains(document)))
            }
        }
        for document in listing.ids {
            let read: DocumentRead
            let damaged: [RevisionMetadata]
            do {
                read = try local.read(document)
                damaged = try read.live.values.sorted { $0.id < $1.id }.filter { revision in
                    guard !revision.isDeleted, !read.pruned.contains(revision.id) else { return false }
                    return try local.contentDamage(revision, of: document) != nil
                }
            } catch  where RevisionStore.isAboutContents(error) {
                // Damaged beyond reading: the verify that follows names it.
                continue
            } catch {
                // A document that may not be read (permission denied, an input/output error)
                // is named and left as it is, never taken for one without damage; the others
                // are repaired. Any other failure (too many open files) ends the repair.
                guard let issue = local.unreadable(error, of: document, so: "repaired") else { throw error }
                report.unrepaired.append(issue)
                continue
            }
            var theirs: DocumentRead?
            if !read.damagedPackages.isEmpty || !read.damagedTombstones.isEmpty
                || !read.blockedPackages.isEmpty
            {
                do {
                    theirs = try remote.read(document)
                } catch let error as StoreError where error == .noSuchDocument(document) {
                    theirs = nil
                } catch  where RevisionStore.isAboutContents(error) {
                    theirs = nil
                } catch {
                    // The other store's copy that cannot be read (an input/output error, no
                    // permission) is named, never taken for no copy; this document is left.
                    guard let issue = remote.unreadable(error, of: document, so: "used for the repair") else {
                        throw error
                    }
                    report.unrepaired.append(issue)
                    continue
                }
            }
            for (revision, kind) in read.blockedPackages.sorted(by: { $0.key < $1.key }) {
                report.unrepaired.append(
                    Self.inTheWay(
                        local.root + "/" + StoreLayout.package(revision, of: document), kind,
                        what: "revision's package", copied: "revision",
                        remoteHasIt: theirs?.live[revision] != nil || theirs?.tombstones[revision] != nil))
            }
            guard !damaged.isEmpty || !read.damagedPackages.isEmpty || !read.damagedTombstones.isEmpty else {
                continue
            }
            let lock = try local.documentLock(document)
            defer { lock.unlock() }
            var outcome = DocumentOutcome()
            do {
                try repairDamaged(
                    document, in: local, read, from: remote, theirs, reportingMissing: true, &outcome)
                for revision in damaged.sorted(by: { $0.id < $1.id }) {
                    try repair(revision, of: document, in: local, from: remote, &outcome)
                }
            } catch {
                // A file of the other store's copy that may not be read (its folder, a
                // package, a content file): named, and what this document has left to
                // repair is left; every other document is repaired.
                guard let issue = remote.unreadable(error, of: document, so: "used for the repair") else {
                    throw error
                }
                outcome.damaged.append(issue)
            }
            report.repaired += outcome.repaired
            report.unrepaired += outcome.damaged
        }
        return report
    }
}

extension RevisionTransfer {
    /// What a repair says of a name that something other than a folder takes (`kind`),
    /// where `what` belongs: it copies no revision, so it leaves the name to a sync (which
    /// removes a link or special file there and copies `copied`) or to a person (a file).
    static func inTheWay(
        _ path: String, _ kind: SystemCalls.FileKind, what: String, copied: String, remoteHasIt: Bool
    ) -> StoreIssue {
        let found = kind == .symbolicLink || kind == .special ? kind.asFound : "a file"
        let remedy =
            !remoteHasIt
            ? "the other store does not have it either"
            : kind == .symbolicLink || kind == .special
                ? "a repair copies no revision; a sync with the other store removes it and copies the \(copied)"
                : "move the file away, then sync with the other store to copy the \(copied)"
        return StoreIssue(path: path, message: "\(found) stands where the \(what) belongs: \(remedy)")
    }
}

extension RevisionStore {
    /// The path of a revision's content file.
    func contentPath(_ revision: RevisionID, of document: UUID) -> String {
        root + "/" + StoreLayout.package(revision, of: document) + "/" + StoreLayout.contentFile
    }

    /// What is wrong with this store's copy of `revision`'s content: `nil` when it matches
    /// its digest or is absent (a package not complete yet).
    ///
    /// - Throws: `FileSystemError` when it cannot be read (an I/O error, no permission):
    ///   never taken for damage or for absence.
    func contentDamage(_ revision: RevisionMetadata, of document: UUID) throws -> FileDamage? {
        try damage(
            of: StoreLayout.package(revision.id, of: document) + "/" + StoreLayout.contentFile,
            limit: FileReader.contentLimit
        ) { RevisionID.sha256Hex($0) == revision.contentDigest }
    }

    /// Whether `revision` is whole under its own name in its own document's folder in this
    /// store: its package with metadata that verifies and content that matches its digest,
    /// or its tombstone. Then a copy of it found elsewhere is not its only one.
    func holdsWhole(_ revision: RevisionMetadata) throws -> Bool {
        let document = revision.documentID
        let package = StoreLayout.package(revision.id, of: document)
        let metadata = package + "/" + StoreLayout.metadataFile
        if try reader.status(atPath: root + "/" + metadata) != nil,
            try metadataDamage(metadata, as: revision.id, of: document) == nil
        {
            if revision.isDeleted { return true }
            if try reader.status(atPath: contentPath(revision.id, of: document)) != nil,
                try contentDamage(revision, of: document) == nil
            {
                return true
            }
        }
        let tombstone = StoreLayout.tombstone(revision.id, of: document)
        return try reader.status(atPath: root + "/" + tombstone) != nil
            && metadataDamage(tombstone, as: revision.id, of: document) == nil
    }

    /// The revision whose metadata `file` (relative to the root: a package's metadata or a
    /// tombstone) holds, when it verifies as the metadata of a revision other than
    /// `revision` of `document`: another revision's package or tombstone renamed, or moved
    /// into another document's folder, by hand or by a tool. Its bytes are that revision's
    /// and may be its only copy, so a repair does not replace them unless that revision is
    /// whole elsewhere (``holdsWhole(_:)``). `nil` otherwise.
    ///
    /// - Throws: `FileSystemError` when the file cannot be read (an input/output error, no
    ///   permission): that says nothing of what it holds, so it is never taken for `nil`.
    func misplacedRevision(_ file: String, as revision: RevisionID, of document: UUID) throws
        -> RevisionMetadata?
    {
        let read: Data?
        do {
            read = try reader.contents(atPath: root + "/" + file, limit: FileReader.smallFileLimit)
        } catch  where Self.isAboutContents(error) {
            return nil
        }
        guard let bytes = read, let metadata = try? RevisionMetadata(plist: bytes, file: file),
            metadata.id != revision || metadata.documentID != document
        else { return nil }
        return metadata
    }

    /// What is wrong with this store's `file` (relative to the root: a package's metadata
    /// or a tombstone) as the metadata of `revision` in `document`: `nil` when it verifies
    /// or is absent.
    ///
    /// - Throws: `FileSystemError` when it cannot be read (an I/O error, no permission).
    func metadataDamage(_ file: String, as revision: RevisionID, of document: UUID) throws -> FileDamage? {
        try damage(of: file, limit: FileReader.smallFileLimit) { bytes in
            guard let metadata = try? RevisionMetadata(plist: bytes, file: file) else { return false }
            return metadata.id == revision && metadata.documentID == document
        }
    }

    /// What is wrong with this store's `file` (relative to the root), read whole up to
    /// `limit` bytes and judged by `isIntact`: `nil` when it is intact or absent.
    private func damage(of file: String, limit: Int, isIntact: (Data) -> Bool) throws -> FileDamage? {
        do {
            guard let bytes = try reader.contents(atPath: root + "/" + file, limit: limit) else { return nil }
            return isIntact(bytes) ? nil : .bytes
        } catch let error as FileSystemError where Self.isAboutContents(error) {
            return .entry(error.code)
        }
    }

    /// This store's copy of `revision`'s content when it matches its digest.
    func intactContent(_ revision: RevisionMetadata, of document: UUID) throws -> Data? {
        guard let data = try content(revision, of: document),
            RevisionID.sha256Hex(data) == revision.contentDigest
        else {
            return nil
        }
        return data
    }

    /// Why this store holds no intact copy of `revision`'s content, once
    /// ``intactContent(_:of:)`` found none, as the end of a sentence: it has no copy, has
    /// pruned it, holds a package a copy has not completed, a damaged copy, or something
    /// that cannot be read in the content's place.
    ///
    /// - Throws: `FileSystemError` when the store cannot be looked at (an input/output
    ///   error, no permission).
    func absence(ofContent revision: RevisionMetadata, of document: UUID) throws -> String {
        let file = contentPath(revision.id, of: document)
        do {
            if try reader.contents(atPath: file, limit: FileReader.contentLimit) != nil {
                return "\(root)'s copy does not match its digest either"
            }
        } catch  where Self.isAboutContents(error) {
            return "\(root)'s copy cannot be read: \(Self.reason(error, file: file))"
        }
        if try reader.status(atPath: root + "/" + StoreLayout.tombstone(revision.id, of: document)) != nil {
            return "\(root) has pruned it"
        }
        if try reader.status(atPath: root + "/" + StoreLayout.package(revision.id, of: document)) != nil {
            return "\(root)'s package of it has no content (a copy in progress there, or interrupted)"
        }
        return "\(root) has no copy of it"
    }

    private func content(_ revision: RevisionMetadata, of document: UUID) throws -> Data? {
        do {
            return try reader.contents(
                atPath: contentPath(revision.id, of: document), limit: FileReader.contentLimit)
        } catch  where Self.isAboutContents(error) {
            return nil
        }
    }

    /// The files of a revision's package (metadata, then content unless it is a
    /// deletion); `nil` when the package is not complete. `metadata` is the metadata file's
    /// bytes when a read of the document kept them (verified then): they are not read again.
    ///
    /// When a file-sync engine has moved the package's metadata onto the revision's
    /// tombstone (Syncthing does: the two hold the same bytes) and the content is still
    /// there, the package is rebuilt with the tombstone's bytes, checked to be this
    /// revision's metadata.
    func packageFiles(_ revision: RevisionMetadata, of document: UUID, metadata: Data? = nil) throws
        -> [PackageFile]?
    {
        let package = root + "/" + StoreLayout.package(revision.id, of: document)
        var files: [PackageFile] = []
        for name in revision.isDeleted
            ? [StoreLayout.metadataFile] : [StoreLayout.metadataFile, StoreLayout.contentFile]
        {
            let limit = name == StoreLayout.contentFile ? FileReader.contentLimit : FileReader.smallFileLimit
            var contents =
                name == StoreLayout.metadataFile && metadata != nil
                ? metadata : try reader.contents(atPath: package + "/" + name, limit: limit)
            if contents == nil, name == StoreLayout.metadataFile {
                let tombstone = root + "/" + StoreLayout.tombstone(revision.id, of: document)
                if let bytes = try reader.contents(atPath: tombstone),
                    let moved = try? RevisionMetadata(plist: bytes, file: tombstone),
                    moved.id == revision.id, moved.documentID == document
                {
                    contents = bytes
                }
            }
            guard let contents else { return nil }
            files.append(PackageFile(name: name, contents: contents))
        }
        return files
    }

    /// Takes this store's lock of `document`.
    package func documentLock(_ document: UUID, wait: Bool = true) throws -> FileLock {
        try writer.lock(at: StoreLayout.lock(of: document), mode: .exclusive, wait: wait)
    }

    /// Whether `other` holds exactly the same tombstones and complete packages of
    /// `document`, with files of the same sizes, judged without reading: both folders
    /// list the same names, every package in them holds its metadata and its content as
    /// regular files and every tombstone is one, the same sizes on both sides, and no
    /// package has a tombstone.
    /// Revisions never change, so such a document has nothing to sync; in any other case
    /// (a deletion, a half-copied or torn package, a stray file, a link) this says `false`
    /// and the revisions are read. Hidden entries are left out of the comparison.
    ///
    /// Each side's document folder is opened once and listed; only when both list the
    /// same names (so a document one side lacks, or with a revision one side lacks, costs
    /// no more) is each package in them opened from there (never through a link) and its
    /// two files looked up by name.
    func holdsSameFiles(_ document: UUID, as other: RevisionStore) -> Bool {
        let same = try? reader.withFolder(atPath: root + "/" + folder(of: document)) { mine -> Bool in
            // Hidden entries (`StoreLayout.isHidden(_:)`) are no part of the document.
            let myEntries = try mine.entries().filter { !StoreLayout.isHidden($0.name) }
            guard !myEntries.isEmpty else { return false }
            let found = try other.reader.withFolder(atPath: other.root + "/" + other.folder(of: document)) {
                theirs -> Bool in
                let theirEntries = try theirs.entries().filter { !StoreLayout.isHidden($0.name) }
                guard Set(myEntries.map(\.name)) == Set(theirEntries.map(\.name)),
                    let mySizes = try Self.contentSizes(mine, myEntries),
                    let theirSizes = try Self.contentSizes(theirs, theirEntries)
                else { return false }
                return mySizes == theirSizes
            }
            return found ?? false
        }
        return same ?? false
    }

    /// Every entry of a document's folder (open as `folder`, listed as `entries`) by
    /// name, with the sizes of a package's metadata and content (a tombstone's own size,
    /// and zero),
    /// when every package holds its metadata and its content as regular files, no package
    /// has a tombstone, and nothing else is there; otherwise `nil`.
    private static func contentSizes(_ folder: FileReader.Folder, _ entries: [SystemCalls.DirectoryEntry])
        throws -> [String: PackageSizes]?
    {
        var sizes: [String: PackageSizes] = [:]
        sizes.reserveCapacity(entries.count)
        for entry in entries {
            if entry.name.hasSuffix(StoreLayout.tombstoneSuffix) {
                guard let tombstone = try folder.status(of: entry.name), tombstone.kind == .regular else {
                    return nil
                }
                sizes[entry.name] = PackageSizes(metadata: tombstone.size, content: 0)
                continue
            }
            guard entry.name.hasSuffix(StoreLayout.packageSuffix),
                entry.kind == .directory || entry.kind == .unknown,
                let package = try folder.withSubfolder(
                    entry.name,
                    { package -> PackageSizes? in
                        guard let metadata = try package.status(of: Self.metadataFile),
                            metadata.kind == .regular,
                            let content = try package.status(of: Self.contentFile),
                            content.kind == .regular
                        else { return nil }
                        return PackageSizes(metadata: metadata.size, content: content.size)
                    }) ?? nil
            else { return nil }
            sizes[entry.name] = package
        }
        // A package with a tombstone of the same revision: a prune or a deletion in
        // progress, read in full.
        for name in sizes.keys where name.hasSuffix(StoreLayout.packageSuffix) {
            let tombstone = name.dropLast(StoreLayout.packageSuffix.count) + StoreLayout.tombstoneSuffix
            if sizes[String(tombstone)] != nil { return nil }
        }
        return sizes
    }
}

/// The sizes of a package's two files, as `RevisionStore.holdsSameFiles(_:as:)` compares them.
struct PackageSizes: Equatable {
    var metadata: Int
    var content: Int
}

/// A result another thread delivers once, and this one waits for.
final class Pending<Value: Sendable>: Sendable {
    private let result = Locked<Result<Value, any Error>?>(nil)
    private let delivered = DispatchSemaphore(value: 0)

    /// Delivers the result (once).
    func finish(_ value: Result<Value, any Error>) {
        result.withLock { $0 = value }
        delivered.signal()
    }

    /// Waits for the result (once), and returns or throws it.
    func wait() throws -> Value {
        delivered.wait()
        return try result.withLock { $0! }.get()
    }
}

/// What is wrong with a file of a revision (its metadata, its content or its tombstone)
/// that a repair replaces.
enum FileDamage: Equatable {
    /// A regular file whose bytes are wrong: metadata that does not verify, content that
    /// does not match its digest.
    case bytes
    /// Something other than a regular file within the size limit in its place
    /// (``RevisionStore/isAboutContents(_:)``): a link, a FIFO, socket or device, a
    /// folder, too large a file.
    case entry(FileSystemError.Code)

    /// What was (or, with `now`, is) wrong with the `what` ("metadata", "content",
    /// "tombstone").
    func description(of what: String, now: Bool = false) -> String {
        let was = now ? "is" : "was"
        switch self {
        case .bytes:
            return what == "content"
                ? "the content \(now ? "does" : "did") not match its digest"
                : "the \(what) \(now ? "does" : "did") not verify"
        case .entry(.symbolicLink): return "the \(what) \(was) a symbolic link"
        case .entry(.isDirectory): return "the \(what) \(was) a folder"
        case .entry(.tooLarge): return "the \(what) \(was) larger than any intact one"
        case .entry: return "the \(what) \(was) a FIFO, socket or device"
        }
    }
}
