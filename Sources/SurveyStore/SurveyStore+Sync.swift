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
    public func sync(with other: SurveyStore, progress: ((Int, Int) -> Void)? = nil) throws -> SyncReport {
        var report = SyncReport()
        let ids = Set(try revisions.documentIDs()).union(try other.revisions.documentIDs()).sorted { $0.uuidString < $1.uuidString }
        report.documents = ids.count
        for (done, id) in ids.enumerated() {
            let before = (try? graph(of: id))?.isInConflict ?? false
            let otherBefore = (try? other.graph(of: id))?.isInConflict ?? false
            report.sent += try copyMissing(id, from: self, to: other)
            report.received += try copyMissing(id, from: other, to: self)
            try revisions.finishPrune(id)
            try other.revisions.finishPrune(id)
            let after = try graph(of: id).isInConflict
            if after && !(before && otherBefore) { report.conflictsAppeared.append(id) }
            if !after && (before || otherBefore) { report.conflictsResolved.append(id) }
            progress?(done + 1, ids.count)
        }
        return report
    }

    /// Copies the tombstones and complete revisions of `id` that `target` lacks.
    private func copyMissing(_ id: UUID, from source: SurveyStore, to target: SurveyStore) throws -> Int {
        guard let (sourceGraph, sourcePruned) = try? source.revisions.graph(of: id) else { return 0 }
        let (targetGraph, targetPruned) = (try? target.revisions.graph(of: id)) ?? (RevisionGraph(), [])
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
        return copied
    }
}
