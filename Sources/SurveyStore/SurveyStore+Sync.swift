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
    }

    /// Two-way sync with another store: afterwards both hold the same revisions and
    /// tombstones. Only what is missing is copied (revisions are immutable, so names
    /// decide), each copy is written atomically and durably like a save, tombstones are
    /// applied on both sides, and `Local.nosync/` is never touched. Running it again
    /// right after copies nothing.
    ///
    /// - Parameters:
    ///   - other: The other store.
    ///   - progress: Called after each document with the number done and the total.
    /// - Returns: What was copied and how conflicts changed.
    public func sync(
        with other: SurveyStore, concurrency: Int = SurveyStore.syncConcurrency, progress: ((Int, Int) -> Void)? = nil
    ) throws -> SyncReport {
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
    }

    /// Syncs one document: each side's graph is read once before copying (after removing
    /// resurrected packages) and serves both directions. Afterwards a side is read again
    /// only when it may have changed: it received tombstones (which may name packages it
    /// still has), or its first read failed for another reason than a missing folder;
    /// this side is also read when it received revisions, for its conflict state.
    private func syncDocument(_ id: UUID, with other: SurveyStore) throws -> DocumentOutcome {
        let (mine, mineFailed) = Self.readBefore { try revisions.cleanedGraph(of: id) }
        let (theirs, theirsFailed) = Self.readBefore { try other.revisions.cleanedGraph(of: id) }
        let before = mine?.graph.isInConflict ?? false
        let otherBefore = theirs?.graph.isInConflict ?? false
        var outcome = DocumentOutcome()
        (outcome.sent, outcome.tombstonesSent) = try copyMissing(id, from: self, mine, to: other, theirs)
        (outcome.received, outcome.tombstonesReceived) = try copyMissing(id, from: other, theirs, to: self, mine)
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
    private static func readBefore(
        _ read: () throws -> (graph: RevisionGraph, pruned: Set<RevisionID>)
    ) -> (read: (graph: RevisionGraph, pruned: Set<RevisionID>)?, failed: Bool) {
        do {
            return (try read(), false)
        } catch StoreError.noSuchDocument {
            return (nil, false)
        } catch {
            return (nil, true)
        }
    }

    /// Copies the tombstones and complete revisions of `id` that `target` lacks, given
    /// both sides' graphs as read before copying (`nil` where a side has no such document).
    ///
    /// - Returns: The revisions and tombstones copied, and how many of them were tombstones.
    private func copyMissing(
        _ id: UUID, from source: SurveyStore, _ sourceRead: (graph: RevisionGraph, pruned: Set<RevisionID>)?,
        to target: SurveyStore, _ targetRead: (graph: RevisionGraph, pruned: Set<RevisionID>)?
    ) throws -> (copied: Int, tombstones: Int) {
        guard let (sourceGraph, sourcePruned) = sourceRead else { return (0, 0) }
        let (targetGraph, targetPruned) = targetRead ?? (RevisionGraph(), [])
        let folder = target.revisions.folder(of: id)
        var copied = 0
        try target.revisions.writer.createDirectory("Documents")
        try target.revisions.writer.createDirectory(folder)
        // Tombstones first: a revision the source pruned is never sent as content. When
        // they disown packages the target has, it notes the prune first, so that a crash
        // before the removal is finished on the next open.
        let arriving = sourcePruned.subtracting(targetPruned)
        if arriving.contains(where: { targetGraph.revisions[$0] != nil }) { try target.revisions.notePrune(id) }
        for revisionID in arriving.sorted() {
            let metadata = sourceGraph.revisions[revisionID]!
            _ = try target.revisions.writer.writeFile(try metadata.plistData(), at: folder + "/\(revisionID).pruned")
            copied += 1
        }
        let tombstones = copied
        let sourceFolder = source.root + "/" + source.revisions.folder(of: id)
        for revision in sourceGraph.revisions.values.sorted(by: { $0.id < $1.id })
        where !sourcePruned.contains(revision.id) && targetGraph.revisions[revision.id] == nil && !targetPruned.contains(revision.id) {
            let package = sourceFolder + "/\(revision.id).survey"
            var files: [PackageFile] = []
            for name in [RevisionStore.metadataFile, RevisionStore.contentFile] {
                if let contents = try source.revisions.reader.contents(atPath: package + "/" + name) {
                    files.append(PackageFile(name: name, contents: contents))
                }
            }
            guard files.count == (revision.isDeleted ? 1 : 2) else { continue }
            if !revision.isDeleted, RevisionID.sha256Hex(files[1].contents) != revision.contentDigest {
                throw VersionsError.contentMismatch(revision.id)
            }
            let path = folder + "/\(revision.id).survey"
            if try target.revisions.writer.writePackage(files, at: path) == .alreadyExists {
                // A package of that name is there but incomplete (the graph did not count
                // it): a file copy was interrupted. Add what it lacks.
                try target.revisions.writer.completePackage(files, at: path)
            }
            copied += 1
        }
        return (copied, tombstones)
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
            if name.hasSuffix(".survey") {
                guard !set.contains(String(name.dropLast(".survey".count)) + ".pruned"),
                    let files = try? reader.names(atPath: path + "/" + name), Set(files) == complete
                else { return false }
            } else if !name.hasSuffix(".pruned") {
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
