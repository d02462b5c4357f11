import Foundation
import Packages
import PropertyList
import Surveys
import Versions

extension SurveyStore {
    /// What ``summariesReport(usingCache:)`` found.
    struct SummariesReport {
        var documents: [Summary]
        var issues: [StoreIssue]
        /// How many rows came from the summary cache.
        var fromCache: Int
        /// The failures to read documents that were left out for them, or whose current
        /// content could not be read at all (each also among ``issues``): a caller that
        /// acts on every document (``documents()``) throws the first rather than pass over
        /// a document it could not see.
        var unreadable: [FileSystemError] = []
        /// The documents left out because no revision of theirs can be read (every
        /// package in their folders half-copied, damaged, or something else in its
        /// place; each also among ``issues``): a caller that acts on every document
        /// names them rather than pass over them.
        var withoutRevision: [UUID] = []
    }

    /// ``documentsReport()``: each document from the summary cache when its folder is
    /// unchanged since it was recorded, else read from its revisions (and recorded when
    /// the read was clean). The cache is rewritten at the end when it changed and
    /// ``writesSummaryCache`` is set.
    ///
    /// - Parameter usingCache: `false` reads every document from its revisions and
    ///   neither reads nor writes the cache (for tests comparing the two).
    func summariesReport(usingCache: Bool = true) throws -> SummariesReport {
        var (ids, issues, _) = try revisions.documentFolders()
        let cache =
            usingCache
            ? SummaryCache(
                root: root, reader: FileReader(root: root, calls: calls),
                writer: RevisionStore.writer(root: root, calls: calls)) : nil
        var fromCache = 0
        var unreadable: [FileSystemError] = []
        var withoutRevision: [UUID] = []
        let documents = try ids.compactMap { id -> Summary? in
            if let summary = cache?.summary(of: id) {
                fromCache += 1
                return summary
            }
            // The folder's state is taken before it is read: a change made after this is
            // stamped later than anything recorded.
            let capture = cache?.capture(id)
            let read: DocumentRead
            do {
                read = try revisions.read(id)
            } catch let error as StoreError where error == .noSuchDocument(id) {
                return nil  // removed while the store was being listed
            } catch  where RevisionStore.isAboutContents(error) {
                issues.append(
                    StoreIssue(path: root + "/" + revisions.folder(of: id), message: "\(error) (skipped)"))
                return nil
            } catch let error as FileSystemError {
                // Its folder, or a package or file in it, cannot be read (another user's,
                // made unreadable, a bad sector): that document alone is left out, named.
                guard let issue = revisions.unreadable(error, of: id, so: "listed") else { throw error }
                issues.append(issue)
                unreadable.append(error)
                return nil
            }
            issues += read.skipped
            guard let winner = read.graph.winner else {
                // Not a row, but not passed over in silence either.
                if !read.skipped.isEmpty || !read.incomplete.isEmpty { withoutRevision.append(id) }
                if !read.skipped.isEmpty {
                    issues.append(
                        StoreIssue(
                            path: root + "/" + revisions.folder(of: id),
                            message: "no revision of this document can be read, so it is not listed",
                            remedy: .verifyThenRepair))
                } else if !read.incomplete.isEmpty {
                    // A copy under way (or interrupted) of a document new here: said, so that
                    // a store holding only such copies is not called empty.
                    let count = read.incomplete.count
                    issues.append(
                        StoreIssue(
                            path: root + "/" + revisions.folder(of: id),
                            message:
                                "no revision of this document is complete yet (\(count == 1 ? "1 is still being copied, or its" : "\(count) are still being copied, or their") copy was interrupted), so it is not listed until one is"
                        ))
                }
                return nil
            }
            var survey: Survey?
            if !winner.isDeleted {
                do {
                    survey = try self.survey(id, winner)
                } catch StoreError.newerFormat {
                    // Listed without a title: its format column says why.
                } catch {
                    // Content that cannot be read at all (an input/output error) is no
                    // verdict on it: a caller acting on every document fails on it too.
                    let failure = (error as? FileSystemError).flatMap { $0.isFailureToLook ? $0 : nil }
                    if let failure { unreadable.append(failure) }
                    issues.append(
                        StoreIssue(
                            path: root + "/" + revisions.folder(of: id),
                            message:
                                "its current revision cannot be read, so it is listed without a title: \(error)",
                            isFailureToLook: failure != nil,
                            remedy: Self.remedy(
                                forUnreadable: error, of: id, head: winner,
                                inConflict: !read.graph.conflicts.isEmpty,
                                otherHeads: self.readableHeads(read.graph.conflicts, of: id))
                        ))
                }
            }
            let conflicts = read.graph.conflicts
            let summary = Summary(
                id: id, title: survey?.title, revision: winner, conflicts: conflicts.map(\.id),
                conflictRevisions: conflicts)
            cache?.record(id, capture: capture, read: read, summary: summary, titleRead: survey != nil)
            return summary
        }
        if writesSummaryCache { cache?.finish() }
        return SummariesReport(
            documents: documents, issues: issues, fromCache: fromCache, unreadable: unreadable,
            withoutRevision: withoutRevision)
    }

    /// What mends document `id` when reading it at `revision` (its winner when `nil`)
    /// failed with `error`, as ``remedy(forUnreadable:of:head:inConflict:otherHeads:)`` says it for
    /// `list`: nothing unless the revision is a head that is not a deletion, which a save
    /// on top, or another head kept (one that reads: a format newer than this build's
    /// counts), replaces.
    package func remedy(forUnreadable error: any Error, of id: UUID, revision: RevisionID?) -> Remedy? {
        // None when the winner is a deletion.
        guard let live = try? graph(of: id).liveHeads, let winner = live.first else {
            return nil
        }
        guard let head = live.first(where: { $0.id == revision ?? winner.id }) else { return nil }
        return Self.remedy(
            forUnreadable: error, of: id, head: head, inConflict: live.count > 1,
            otherHeads: readableHeads(live.filter { $0.id != head.id }, of: id))
    }

    /// Those of `heads` (of document `id`) whose content reads as a survey, or is in a
    /// format newer than this build's (which it cannot check, and keeps as it is): the
    /// heads a remedy may offer to keep. Each is read: only on the way to failing.
    func readableHeads(_ heads: [RevisionMetadata], of id: UUID) -> [RevisionMetadata] {
        heads.filter { $0.formatVersion > Self.formatVersion || (try? survey(id, $0)) != nil }
    }

    /// What mends document `id` whose `head` (its winner, or another head in a conflict,
    /// `inConflict`) cannot be read, as `error` says, or `nil` when neither remedy applies
    /// (an input/output error, say).
    ///
    /// Content that does not match the digest in its metadata is damaged here, and a
    /// replica's intact copy repairs it. Content that matches it but is no survey this
    /// build reads (malformed, or breaking a rule) holds the same bytes on every replica,
    /// so no repair mends it: new content saved on top does, or, in a conflict, keeping
    /// one of `otherHeads`, the document's other heads that read (asked for only then).
    static func remedy(
        forUnreadable error: any Error, of id: UUID, head: RevisionMetadata, inConflict: Bool,
        otherHeads: @autoclosure () -> [RevisionMetadata]
    ) -> Remedy? {
        switch error {
        case VersionsError.contentMismatch, VersionsError.digestMismatch:
            .repairFromReplica
        case is PropertyListError, is SurveyError, is SurveyFileError, is FormatError:
            .replaceContent(
                id, otherHeads: otherHeads().map(\.id), hasHistory: !head.parents.isEmpty,
                inConflict: inConflict)
        default:
            nil
        }
    }
}
