import Foundation
import Packages
import Versions

extension SurveyStore {
    /// What a sync did.
    public struct SyncReport: Sendable, Equatable {
        /// Revisions and tombstones copied from this store to the other.
        public var sent = 0
        /// Revisions and tombstones copied from the other store to this one.
        public var received = 0
        /// Documents that are in conflict after the sync and were not before, on either side.
        public var conflictsAppeared: [UUID] = []
        /// Documents that were in conflict on either side and are not any more.
        public var conflictsResolved: [UUID] = []
        /// Documents looked at.
        public var documents = 0
        /// Revisions not copied because their content does not match its digest on the
        /// side that has them (`verify` names them; the other documents sync as usual).
        public var damaged: [StoreIssue] = []
        /// Revisions copied whose timestamp lies more than a day ahead of this device's
        /// clock: flagged, since they win conflicts until something supersedes them.
        public var aheadOfClock: [StoreIssue] = []
    }

    /// Two-way sync with another store: afterwards both hold the same revisions and
    /// tombstones. Only what is missing is copied (revisions are immutable, so names
    /// decide), each copy is written atomically and durably like a save, tombstones are
    /// applied on both sides, and local state (``StoreLayout/localFolder``) is never touched. Running it again
    /// right after copies nothing.
    ///
    /// - Parameters:
    ///   - other: The other store.
    ///   - progress: Called after each document with the number done and the total.
    /// - Returns: What was copied and how conflicts changed.
    /// - Throws: ``SyncError/sameStore(_:)`` when `other` is this store's own folder
    ///   (under any path), before anything is read or written.
    public func sync(
        with other: SurveyStore, concurrency: Int = SurveyStore.syncConcurrency, progress: ((Int, Int) -> Void)? = nil
    ) throws -> SyncReport {
        try checkWritable()
        try other.checkWritable()
        let mine = try revisions.reader.status(atPath: root), theirs = try other.revisions.reader.status(atPath: other.root)
        if let mine, let theirs, mine.device == theirs.device, mine.inode == theirs.inode {
            throw SyncError.sameStore(other.root)
        }
        var report = SyncReport()
        let ids = Set(try revisions.documentIDs()).union(try other.revisions.documentIDs())
            .map { ($0.uuidString, $0) }.sorted { $0.0 < $1.0 }.map(\.1)
        report.documents = ids.count
        // Documents are independent, so several are synced at once: the file system then
        // commits the fsyncs of many packages together, and reading overlaps waiting.
        let outcomes = try concurrentMap(count: ids.count, workers: max(1, concurrency)) { index in
            let id = ids[index]
            // Same complete packages and tombstones on both sides: nothing to copy, nothing
            // to clean up, and no conflict can change.
            if revisions.holdsSameFiles(id, as: other.revisions) { return DocumentOutcome() }
            return try syncDocument(id, with: other)
        } progress: { done in
            progress?(done, ids.count)
        }
        for (id, outcome) in zip(ids, outcomes) {
            report.sent += outcome.sent
            report.received += outcome.received
            if outcome.conflictAppeared { report.conflictsAppeared.append(id) }
            if outcome.conflictResolved { report.conflictsResolved.append(id) }
            report.damaged += outcome.damaged
            report.aheadOfClock += outcome.aheadOfClock
        }
        return report
    }

    /// How many documents a sync works on at once by default. (Tests that replay a run
    /// call by call pass 1.)
    public static let syncConcurrency = 32

    private struct DocumentOutcome {
        var sent = 0
        var received = 0
        var tombstonesSent = 0
        var tombstonesReceived = 0
        var conflictAppeared = false
        var conflictResolved = false
        var damaged: [StoreIssue] = []
        var aheadOfClock: [StoreIssue] = []
    }

    /// Syncs one document: each side's graph is read once before copying (after removing
    /// resurrected packages) and serves both directions. Afterwards a side is read again
    /// only when it may have changed: it received tombstones (which may name packages it
    /// still has), or its first read failed for another reason than a missing folder;
    /// this side is also read when it received revisions, for its conflict state.
    ///
    /// Both sides' document locks are held throughout, so a prune on either side waits
    /// for the sync and never removes a revision whose child the sync is copying.
    private func syncDocument(_ id: UUID, with other: SurveyStore) throws -> DocumentOutcome {
        let locks = try lockBoth(id, other)
        defer {
            locks.0.unlock()
            locks.1.unlock()
        }
        let (mine, mineFailed) = Self.readBefore { try revisions.cleanedRead(id) }
        let (theirs, theirsFailed) = Self.readBefore { try other.revisions.cleanedRead(id) }
        let before = mine?.graph.isInConflict ?? false
        let otherBefore = theirs?.graph.isInConflict ?? false
        var outcome = DocumentOutcome()
        (outcome.sent, outcome.tombstonesSent) = try copyMissing(
            id, from: self, mine, to: other, theirs, damaged: &outcome.damaged, ahead: &outcome.aheadOfClock)
        (outcome.received, outcome.tombstonesReceived) = try copyMissing(
            id, from: other, theirs, to: self, mine, damaged: &outcome.damaged, ahead: &outcome.aheadOfClock)
        // Tombstones copied may disown packages the receiving side still has: it noted
        // that before they were copied, and removes them now (then the note).
        if outcome.tombstonesSent > 0 || theirsFailed { try other.revisions.finishPrune(id) }
        if outcome.tombstonesReceived > 0 { try revisions.finishPrune(id) }
        let after: Bool
        if outcome.received > 0 || outcome.tombstonesReceived > 0 || mineFailed {
            after = try revisions.cleanedGraph(of: id).graph.isInConflict
        } else {
            after = before
        }
        outcome.conflictAppeared = after && !(before && otherBefore)
        outcome.conflictResolved = !after && (before || otherBefore)
        return outcome
    }

    /// A side's graph before copying: `nil` and not failed when the side has no folder
    /// for the document, `nil` and failed when it could not be read for another reason.
    /// Takes this document's lock here and in `other`, without ever waiting for one while
    /// holding the other (two syncs in opposite directions cannot deadlock).
    private func lockBoth(_ id: UUID, _ other: SurveyStore) throws -> (FileLock, FileLock) {
        func attempt(_ first: SurveyStore, _ second: SurveyStore) throws -> (FileLock, FileLock)? {
            let held = try first.documentLock(id)
            do {
                return (held, try second.documentLock(id, wait: false))
            } catch let error as FileSystemError where error.code == .locked {
                held.unlock()
                return nil
            }
        }
        var attempts = 0
        while true {
            if let locks = try attempt(self, other) { return locks }
            if let locks = try attempt(other, self) { return (locks.1, locks.0) }
            attempts += 1
            usleep(UInt32.random(in: 1_000...(attempts < 10 ? 5_000 : 50_000)))
        }
    }

    private static func readBefore(_ read: () throws -> DocumentRead) -> (read: DocumentRead?, failed: Bool) {
        do {
            return (try read(), false)
        } catch StoreError.noSuchDocument {
            return (nil, false)
        } catch {
            return (nil, true)
        }
    }

    /// Copies the complete revisions and then the tombstones of `id` that `target` lacks,
    /// given both sides' reads before copying (`nil` where a side has no such document).
    ///
    /// Revisions go first, parents before children, so that at every instant the target
    /// holds what its tombstones need to take effect: a tombstone whose superseding
    /// revision has not arrived yet is pending and prunes nothing. A revision whose
    /// content does not match its digest is not copied; it is added to `damaged`.
    ///
    /// - Returns: The revisions and tombstones copied, and how many of them were tombstones.
    private func copyMissing(
        _ id: UUID, from source: SurveyStore, _ sourceRead: DocumentRead?, to target: SurveyStore, _ targetRead: DocumentRead?,
        damaged: inout [StoreIssue], ahead: inout [StoreIssue]
    ) throws -> (copied: Int, tombstones: Int) {
        guard let sourceRead else { return (0, 0) }
        let targetRead = targetRead ?? DocumentRead()
        let folder = target.revisions.folder(of: id)
        var copied = 0
        try target.revisions.writer.createDirectory(StoreLayout.documentsFolder)
        try target.revisions.writer.createDirectory(folder)
        let targetHas = { (revision: RevisionID) in
            targetRead.live[revision] != nil || targetRead.tombstones[revision] != nil
        }
        let sourceFolder = source.root + "/" + source.revisions.folder(of: id)
        for revision in sourceRead.graph.revisions.values.sorted(by: { $0.id < $1.id })
        where !sourceRead.pruned.contains(revision.id) && !targetHas(revision.id) {
            let package = sourceFolder + "/" + StoreLayout.packageName(revision.id)
            var files: [PackageFile] = []
            for name in [StoreLayout.metadataFile, StoreLayout.contentFile] {
                let limit = name == StoreLayout.contentFile ? FileReader.contentLimit : FileReader.smallFileLimit
                if let contents = try source.revisions.reader.contents(atPath: package + "/" + name, limit: limit) {
                    files.append(PackageFile(name: name, contents: contents))
                }
            }
            guard files.count == (revision.isDeleted ? 1 : 2) else { continue }
            if !revision.isDeleted, RevisionID.sha256Hex(files[1].contents) != revision.contentDigest {
                damaged.append(
                    StoreIssue(path: package + "/" + StoreLayout.contentFile, message: "the content does not match its digest (not copied)"))
                continue
            }
            // A package of that name may be there, incomplete (the read did not count it):
            // a file copy was interrupted. What it lacks is added.
            try target.revisions.publish(files, of: revision.id, in: id)
            if target.revisions.isFarAhead(revision.timestamp) {
                ahead.append(
                    StoreIssue(
                        path: target.root + "/" + StoreLayout.package(revision.id, of: id),
                        message: "stamped \(revision.timestamp) by \(revision.device.name), more than a day ahead of this device's clock"))
            }
            copied += 1
        }
        // Then the tombstones, in effect or pending. When they disown packages the target
        // has, it notes the prune first, so that a crash before the removal is finished
        // on the next open.
        let arriving = sourceRead.tombstones.keys.filter { targetRead.tombstones[$0] == nil }
        if arriving.contains(where: { targetRead.live[$0] != nil }) { try target.revisions.notePrune(id) }
        for revisionID in arriving.sorted() {
            let metadata = sourceRead.tombstones[revisionID]!
            _ = try target.revisions.writer.writeFile(try metadata.plistData(), at: StoreLayout.tombstone(revisionID, of: id))
            copied += 1
        }
        return (copied, arriving.count)
    }
}

extension RevisionStore {
    /// Whether `other` holds exactly the same tombstones and complete packages of
    /// `document`, judged by names alone: both folders list the same names, every
    /// package in them holds its metadata and its content, and no package has a
    /// tombstone. Revisions never change, so such a document has nothing to sync; in any
    /// other case (a deletion, a half-copied package, a stray file) this says `false`
    /// and the revisions are read.
    func holdsSameFiles(_ document: UUID, as other: RevisionStore) -> Bool {
        // The folders first, so that a document one side lacks costs one listing each.
        guard let mine = (try? reader.names(atPath: root + "/" + folder(of: document))), !mine.isEmpty,
            let theirs = (try? other.reader.names(atPath: other.root + "/" + other.folder(of: document))),
            Set(mine) == Set(theirs)
        else { return false }
        return holdsCompletePackages(document, names: mine) && other.holdsCompletePackages(document, names: theirs)
    }

    /// Whether every package among `names` (the document folder's entries) holds its
    /// metadata and its content, no package has a tombstone, and nothing else is there.
    private func holdsCompletePackages(_ document: UUID, names: [String]) -> Bool {
        let path = root + "/" + folder(of: document)
        let set = Set(names)
        let complete: Set<String> = [Self.metadataFile, Self.contentFile]
        for name in names {
            if name.hasSuffix(StoreLayout.packageSuffix) {
                guard !set.contains(String(name.dropLast(StoreLayout.packageSuffix.count)) + StoreLayout.tombstoneSuffix),
                    let files = try? reader.names(atPath: path + "/" + name), Set(files) == complete
                else { return false }
            } else if !name.hasSuffix(StoreLayout.tombstoneSuffix) {
                return false
            }
        }
        return true
    }
}

/// `body(0..<count)` on up to `workers` threads (on the calling thread when `workers` is
/// 1), the results in index order. After the
/// first error no new index is started, and that error is thrown once the threads that
/// are still working have finished. `progress` is called with the number of indices done,
/// one call at a time.
func concurrentMap<Result>(
    count: Int, workers: Int, _ body: (Int) throws -> Result, progress: (Int) -> Void
) throws -> [Result] {
    // One worker: on the calling thread, in order.
    if workers <= 1 || count <= 1 {
        return try (0..<count).map { index in
            defer { progress(index + 1) }
            return try body(index)
        }
    }
    return try withoutActuallyEscaping(body) { body in
        try withoutActuallyEscaping(progress) { progress in
            let work = ConcurrentWork(count: count, body: body, progress: progress)
            let finished = DispatchGroup()
            for _ in 0..<min(workers, count) {
                finished.enter()
                let thread = Thread {
                    work.run()
                    finished.leave()
                }
                thread.start()
            }
            finished.wait()
            // The threads may outlive this call for a moment: they must not hold the closures.
            return try work.finish()
        }
    }
}

/// The state shared by ``concurrentMap(count:workers:_:progress:)``'s threads; every
/// mutable field is guarded by `lock`, and the closures are only called while the map
/// waits for the threads, so sharing them is safe.
private final class ConcurrentWork<Result>: @unchecked Sendable {
    private let lock = NSLock()
    private let count: Int
    private var body: ((Int) throws -> Result)?
    private var progress: ((Int) -> Void)?
    private var next = 0
    private var done = 0
    private var values: [Result?]
    private var failure: (any Error)?

    init(count: Int, body: @escaping (Int) throws -> Result, progress: @escaping (Int) -> Void) {
        self.count = count
        self.body = body
        self.progress = progress
        values = Array(repeating: nil, count: count)
    }

    func run() {
        while let (index, body) = take() {
            do {
                let value = try body(index)
                lock.lock()
                values[index] = value
                done += 1
                progress?(done)
                lock.unlock()
            } catch {
                lock.lock()
                if failure == nil { failure = error }
                lock.unlock()
            }
        }
    }

    private func take() -> (Int, (Int) throws -> Result)? {
        lock.lock()
        defer { lock.unlock() }
        guard failure == nil, next < count, let body else { return nil }
        next += 1
        return (next - 1, body)
    }

    /// Drops the closures and returns the results, or throws the first error.
    func finish() throws -> [Result] {
        lock.lock()
        body = nil
        progress = nil
        lock.unlock()
        if let failure { throw failure }
        return values.map { $0! }
    }
}
