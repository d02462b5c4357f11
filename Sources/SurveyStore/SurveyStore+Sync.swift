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
        /// Documents in conflict after the sync on a side where they were not before (a
        /// conflict copied to a side that lacked it; with damage left on one side, the sides
        /// can differ, and each is looked at).
        public var conflictsAppeared: [UUID] = []
        /// Documents that were in conflict on either side and are on neither any more.
        public var conflictsResolved: [UUID] = []
        /// Documents looked at.
        public var documents = 0
        /// Revisions whose content does not match its digest on the side that has them,
        /// and that no side has intact: not copied, not repaired; packages and tombstones
        /// that do not verify on one side (torn or garbled metadata, something else where
        /// one of their files belongs) and that the other side has no copy of; and damage a sync leaves
        /// (a folder that is not empty where a revision's file belongs, a regular file
        /// where a document's folder or a revision's package belongs). The other documents
        /// sync as usual.
        public var damaged: [StoreIssue] = []
        /// Revisions copied whose timestamp lies more than a day ahead of this device's
        /// clock: flagged, since they win conflicts until something supersedes them.
        public var aheadOfClock: [StoreIssue] = []
        /// Damaged files, on either side, replaced by the other side's intact copy (content
        /// that did not match its digest, metadata or a tombstone that did not verify, a
        /// link or special file in a revision's file's place), and links or special files
        /// removed where a document's folder or a revision's package belongs.
        public var repaired: [StoreIssue] = []
        /// Documents not synced because their folder, or a package or file in it, may not
        /// be read on one side (permission denied: another user's files, `chmod 000`) or
        /// gives an input/output error: that side's folder, and the system's reason. Nothing
        /// of such a document is copied either way; every other document syncs as usual.
        public var unreadable: [StoreIssue] = []
        /// Documents not synced whole because their folder (or the documents' folder, for a
        /// document new there) may not be written on one side (permission denied, a
        /// read-only file system): that side's folder, and the system's reason. What could
        /// be copied to the other side is; every other document syncs as usual.
        public var unwritable: [StoreIssue] = []
    }

    /// Two-way sync with another store: afterwards both hold the same revisions and
    /// tombstones. Only what is missing is copied (revisions are immutable, so names
    /// decide), tombstones are applied on both sides, a revision one side holds damaged
    /// (its content, differing in size from the other side's copy, does not match its
    /// digest) is repaired from the other side's intact copy, and local state
    /// (`StoreLayout/localFolder`) is never touched. Running it again right after
    /// copies nothing.
    ///
    /// Revisions are written in batches, each package atomic, each batch made durable at
    /// once (see `RevisionTransfer` in Versions); when this returns, everything copied is durable.
    ///
    /// A document that cannot be read on one side (permission denied, an input/output
    /// error) is left as it is on both and named in ``SyncReport/unreadable``, one whose
    /// folder may not be written on a side (permission denied, a read-only file system)
    /// is named in ``SyncReport/unwritable``, and every other one is synced: a document
    /// named there or in ``SyncReport/damaged`` may still differ between the two stores.
    ///
    /// - Parameters:
    ///   - other: The other store.
    ///   - concurrency: How many documents are read at once, at most: fewer when the
    ///     process may open few files (eight descriptors a document, 32 kept for the rest of
    ///     the process, at least one document), so that a sync of any size works under any
    ///     limit of open files.
    ///   - progress: Called with the number of documents done and the total.
    /// - Returns: What was copied and repaired, how conflicts changed, and what could not
    ///   be read.
    /// - Throws: ``SyncError/sameStore(_:)`` when `other` is this store's own folder
    ///   (under any path), before anything is read or written.
    public func sync(
        with other: SurveyStore, concurrency: Int = SurveyStore.syncConcurrency,
        progress: ((Int, Int) -> Void)? = nil
    ) throws -> SyncReport {
        try checkWritable()
        try other.checkWritable()
        try checkDistinct(from: other)
        let mine = try revisions.documentListing(), theirs = try other.revisions.documentListing()
        let ids = Set(mine.ids).union(theirs.ids)
            .map { ($0.uuidString, $0) }.sorted { $0.0 < $1.0 }.map(\.1)
        var report = SyncReport()
        report.documents = ids.count
        var transfer = RevisionTransfer(between: revisions, and: other.revisions)
        transfer.blocked = (mine.blocked, theirs.blocked)
        let outcomes = try wrapping(.sync, nil) {
            try transfer.sync(ids, width: max(1, concurrency)) { done in progress?(done, ids.count) }
        }
        for (id, outcome) in zip(ids, outcomes) {
            report.sent += outcome.sent
            report.received += outcome.received
            if outcome.conflictAppeared { report.conflictsAppeared.append(id) }
            if outcome.conflictResolved { report.conflictsResolved.append(id) }
            report.damaged += outcome.damaged
            report.aheadOfClock += outcome.aheadOfClock
            report.repaired += outcome.repaired
            report.unreadable += outcome.unreadable
            report.unwritable += outcome.unwritable
        }
        return report
    }

    /// How many documents a sync works on at once by default. (Tests that replay a run
    /// call by call pass 1.)
    public static let syncConcurrency = 32

    /// What `repair(from:)` did.
    public struct RepairReport: Sendable, Equatable {
        /// Damaged content, metadata and tombstone files, replaced by the other store's copy.
        public var repaired: [StoreIssue] = []
        /// Damaged files left as they are: the other store has no intact copy, or a folder
        /// that is not empty stands in the file's place; and names where a document's
        /// folder or a revision's package belongs that a link, a FIFO, socket or device or
        /// a file takes, which a repair leaves (it copies no revision), each message saying
        /// whether a sync with the other store would clear it; and documents whose folder, or
        /// a package or file in it, may not be read to look for damage (permission denied,
        /// an input/output error: "cannot be read, so it is not repaired"), the other
        /// documents repaired.
        public var unrepaired: [StoreIssue] = []
    }

    /// Repairs this store from a copy: every revision whose content does not match its
    /// digest is replaced by `other`'s copy of the same revision when that one matches, and
    /// so is every damaged package's metadata and content and every damaged tombstone
    /// (bytes that do not verify, or a link, a FIFO, socket or device, an empty folder or
    /// too large a file in the file's place). Nothing else is copied, and `other` is only
    /// read.
    ///
    /// Each repair replaces the damaged file atomically and durably (written under the
    /// temporary folder, fsynced, renamed over it, its folder fsynced); a link is replaced,
    /// never followed.
    ///
    /// - Parameter other: A store holding the same revisions (a replica or a backup).
    /// - Returns: The files repaired and those no copy could repair.
    public func repair(from other: SurveyStore) throws -> RepairReport {
        try checkWritable()
        try checkDistinct(from: other)
        let found = try RevisionTransfer(between: revisions, and: other.revisions).repairFromRemote()
        return RepairReport(repaired: found.repaired, unrepaired: found.unrepaired)
    }

    /// Throws when `other` is this very store (the same folder reached another way).
    private func checkDistinct(from other: SurveyStore) throws {
        let mine = try FileReader(root: root, calls: calls).status(atPath: root)
        let theirs = try FileReader(root: other.root, calls: other.calls).status(atPath: other.root)
        if let mine, let theirs, mine.device == theirs.device, mine.inode == theirs.inode {
            throw SyncError.sameStore(other.root)
        }
    }
}
