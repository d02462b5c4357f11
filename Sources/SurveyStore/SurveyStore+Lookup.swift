import Diagnostics
import Foundation
import Packages
import Versions

/// A name given for a document or a revision that does not name exactly one.
public enum LookupError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No document's id is, or starts with, this text.
    case noSuchDocument(String)
    /// The text is a document's id, but something other than a folder (a link, a file, a
    /// FIFO) takes its folder's name in `Documents/`: never followed, so no document is
    /// read there.
    case blockedDocument(String, SystemCalls.FileKind)
    /// More than one document's id starts with this text.
    case ambiguousDocument(String, [UUID])
    /// More than one revision's id starts with this text.
    case ambiguousRevision(String, [RevisionID])

    public var description: String {
        switch self {
        case .noSuchDocument(let text):
            text.isEmpty
                ? "no document named: give a document id or a prefix of one"
                : "there is no document \(ShownText.escaping(text))"
        case .blockedDocument(let text, let kind):
            "there is no document \(ShownText.escaping(text)) here: \(kind.asFound) stands where its folder belongs in Documents/; once it is moved away, a sync copies the document again from a replica that holds it"
        case .ambiguousDocument(let text, let ids):
            "'\(ShownText.escaping(text))' matches \(ids.count) documents: \(Self.list(ids.map(\.uuidString).map { $0.lowercased() })); give more of the id"
        case .ambiguousRevision(let text, let ids):
            "'\(ShownText.escaping(text))' matches \(ids.count) revisions: \(Self.list(ids.map(\.description))); give more of the id"
        }
    }

    private static func list(_ names: [String]) -> String {
        let sorted = names.sorted()
        return sorted.count <= 5
            ? sorted.joined(separator: ", ") : sorted.prefix(5).joined(separator: ", ") + ", …"
    }
}

/// Opening the content of a deleted document, or of a deletion revision.
///
/// The description says when and on which device the document was deleted, and how to
/// bring it back (``remedy``): keep an earlier revision, or save content on top of the
/// deletion.
public struct DocumentDeletedError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The deleted document.
    public var document: UUID
    /// The deletion revision.
    public var deletion: RevisionMetadata
    /// Revisions before the deletion whose content is still there, newest first, from the
    /// newest whose content can be read: the ones `resolve --keep` can restore (an older
    /// one further down may still be damaged; each is read when it is kept).
    public var restorable: [RevisionID]

    /// When, on which device and by which revision the document was deleted.
    public var problem: String {
        let when = deletion.timestamp.date.formatted(.iso8601)
        return
            "document \(document.uuidString.lowercased()) was deleted at \(when) on device \(ShownText.quoted(deletion.device.name)) (revision \(deletion.id))"
    }

    /// What restores it: `Remedy.restoreDeleted(_:deletion:restorable:)`.
    public var remedy: Remedy {
        .restoreDeleted(document, deletion: deletion.id, restorable: restorable.first)
    }

    /// The ``problem``, then the ``remedy``'s advice (`Remedy.advice`).
    public var description: String { problem + remedy.advice }
}

extension SurveyStore {
    /// The document whose id is `text` or starts with it (in any letter case): the
    /// look-up a tool makes for a name typed by a person. An app holds ids.
    ///
    /// Only folder names are listed; documents are read only when more than one folder
    /// matches (a folder without a revision is not a document).
    ///
    /// - Parameter text: A document id or a prefix of one.
    /// - Returns: The one document it names.
    /// - Throws: ``LookupError/noSuchDocument(_:)`` when none matches (or `text` is
    ///   empty), ``LookupError/blockedDocument(_:_:)`` when `text` is an id whose folder's
    ///   name something else takes, ``LookupError/ambiguousDocument(_:_:)`` when several
    ///   match.
    public func documentID(matching text: String) throws -> UUID {
        let lower = text.lowercased()
        guard !lower.isEmpty else { throw LookupError.noSuchDocument(text) }
        let listing = try revisions.documentListing()
        var matches = listing.ids.filter { $0.uuidString.lowercased().hasPrefix(lower) }
        if matches.count > 1 {
            if let exact = matches.first(where: { $0.uuidString.lowercased() == lower }) { return exact }
            matches = matches.filter { (try? revision($0, nil)) != nil }
        }
        switch matches.count {
        case 1: return matches[0]
        case 0:
            // A whole id whose folder's name something else takes is said to be so.
            if let id = UUID(uuidString: text), let kind = listing.blocked[id] {
                throw LookupError.blockedDocument(text, kind)
            }
            throw LookupError.noSuchDocument(text)
        default: throw LookupError.ambiguousDocument(text, matches.sorted { $0.uuidString < $1.uuidString })
        }
    }

    /// A document named by a person, and what its folder holds that is no revision.
    public struct DocumentMatch: Sendable, Equatable {
        /// The document.
        public var id: UUID
        /// What reading the document's folder skipped (see ``SurveyStore/skippedItems(of:)``):
        /// for a warning, never hidden.
        public var skipped: [StoreIssue]
    }

    /// ``documentID(matching:)``, with what the document's folder holds that is no
    /// revision (links, special files, damaged or foreign packages), for a warning.
    ///
    /// - Throws: As ``documentID(matching:)``; `FileSystemError` when the document's
    ///   folder cannot be looked at (an I/O error, too many open files).
    public func matchDocument(_ text: String) throws -> DocumentMatch {
        let id = try documentID(matching: text)
        // What the folder holds is named, never hidden: a failure to look (an I/O error,
        // too many open files) fails the look-up rather than pass over it. Anything else
        // (no folder by now, a folder its own read refuses) is the command's own read to
        // report.
        let skipped = try FileSystemError.rethrowingFailureToLook {
            try skippedItems(of: id)
        } otherwise: { _ in
            []
        }
        return DocumentMatch(id: id, skipped: skipped)
    }

    /// The revision of document `document` whose id is `text` or starts with it, in any
    /// letter case (ids are written in lower case): the look-up a tool makes for a name
    /// typed by a person. An app holds `RevisionID`s.
    ///
    /// - Parameters:
    ///   - text: A revision id or a prefix of one.
    ///   - document: The document.
    ///   - headsOnly: Look among the document's heads only.
    /// - Throws: `StoreError/noSuchRevision(_:)` when no revision matches `text`
    ///   (or it is empty), `StoreError/unreadableRevision(_:_:)` when what it names is a
    ///   package in the document's folder that cannot be read (not complete yet, damaged,
    ///   something else in its place), ``LookupError/ambiguousRevision(_:_:)`` when
    ///   several match, such packages among them (a prefix that names a revision now names
    ///   it once a copy under way completes too); `StoreError/noSuchDocument(_:)`.
    public func revisionID(
        matching text: String, in document: UUID, headsOnly: Bool = false
    ) throws -> RevisionID {
        let read = try revisions.read(document)
        let graph = read.graph
        let candidates = (headsOnly ? graph.heads : Array(graph.revisions.values)).map(\.id)
        let key = text.lowercased()
        if let exact = candidates.first(where: { $0.description == key }) { return exact }
        // Packages that cannot be read yet are named as what they are, never passed over:
        // one the text names is not "no revision", and one it matches makes a prefix as
        // ambiguous as a revision would.
        let unseen = key.isEmpty ? [] : read.unseen.filter { $0.description.hasPrefix(key) }
        if let exact = unseen.first(where: { $0.description == key }) {
            throw unreadableRevision(exact, of: document, in: read)
        }
        let matches = key.isEmpty ? [] : candidates.filter { $0.description.hasPrefix(key) }
        switch (matches.count, unseen.count) {
        case (1, 0): return matches[0]
        case (0, 0): throw StoreError.noSuchRevision(headsOnly ? "\(text) among the heads" : text)
        case (0, 1): throw unreadableRevision(unseen.first!, of: document, in: read)
        default:
            let ids = (matches + unseen).sorted { $0.description < $1.description }
            throw LookupError.ambiguousRevision(text, ids)
        }
    }

    /// `StoreError/unreadableRevision(_:_:)` for `revision`, one of `read`'s packages that
    /// cannot be read (``DocumentRead/unseen``), naming its package and saying why: the
    /// reason the read gave for a damaged one.
    func unreadableRevision(_ revision: RevisionID, of document: UUID, in read: DocumentRead) -> StoreError {
        let package = root + "/" + StoreLayout.package(revision, of: document)
        let why: String
        if let kind = read.blockedPackages[revision] {
            why =
                "\(kind.inWords) stands where its package, \(ShownText.escaping(package)), belongs"
                + (kind == .regular ? " (a sync copies nothing over a file: move it away first)" : "")
        } else if read.damagedPackages.contains(revision) {
            // What the read skipped in it, and why.
            let found = read.skipped.first { $0.path == package || $0.path.hasPrefix(package + "/") }
            let skipped = " (skipped)"
            why =
                "its package is damaged: "
                + (found.map { issue in
                    let message =
                        issue.message.hasSuffix(skipped)
                        ? String(issue.message.dropLast(skipped.count)) : issue.message
                    return "\(ShownText.escaping(issue.path)): \(message)"
                } ?? ShownText.escaping(package))
        } else {
            why =
                "its package, \(ShownText.escaping(package)), is not complete yet (it is still being copied, or its copy was interrupted)"
        }
        return .unreadableRevision(revision, why)
    }

    /// The deletion revision of `id` when the document is deleted (its winner is a
    /// deletion), else `nil`.
    ///
    /// - Throws: As ``revision(_:_:)``.
    public func deletion(of id: UUID) throws -> RevisionMetadata? {
        let winner = try revision(id, nil)
        return winner.isDeleted ? winner : nil
    }

    /// The error that opening deletion revision `deletion` of `id` reports: while the
    /// document is deleted (its winner is a deletion), a ``DocumentDeletedError`` saying
    /// when, where, and how to restore it (of the winning deletion); once a live revision wins (the deletion lost a
    /// conflict, or was superseded), `StoreError/deletion(_:)`, since the document is
    /// there and restoring it would make a conflict.
    ///
    /// - Throws: An error reading the document's folder again (thrown, so that no caller
    ///   takes it for the document not being deleted).
    func deletedError(_ id: UUID, _ deletion: RevisionMetadata) throws -> any Error {
        let (graph, pruned) = try revisions.graph(of: id)
        if let winner = graph.winner, !winner.isDeleted { return StoreError.deletion(deletion.id) }
        // The document's own deletion (the winner), which an older one it superseded is not.
        let deletion = graph.winner ?? deletion
        // The revisions the deletion replaced and their ancestors, in the winner order
        // (newest first): the first is the one that was current when it was deleted, not
        // whichever parent has the smallest id.
        var restorable: [RevisionMetadata] = []
        var queue = deletion.parents
        var seen = Set<RevisionID>()
        while !queue.isEmpty {
            let next = queue.removeFirst()
            guard seen.insert(next).inserted, let revision = graph.revisions[next] else { continue }
            if !revision.isDeleted, !pruned.contains(next) { restorable.append(revision) }
            queue += revision.parents
        }
        // One whose content cannot be read (damaged, or no survey this build reads) would
        // restore a document nobody can open: the list starts at the newest that can be.
        let readable = restorable.sorted(by: RevisionGraph.precedes).drop { (try? survey(id, $0)) == nil }
        return DocumentDeletedError(document: id, deletion: deletion, restorable: readable.map(\.id))
    }

    /// Why `id` has no content to open when the document is deleted (its winner is a
    /// deletion): when, on which device, and how to restore it; `nil` when it is not
    /// deleted.
    ///
    /// - Parameter id: The document.
    /// - Returns: The error that opening the document reports, or `nil`.
    /// - Throws: As ``revision(_:_:)``.
    public func deletedDocument(_ id: UUID) throws -> DocumentDeletedError? {
        guard let deletion = try deletion(of: id) else { return nil }
        return try deletedError(id, deletion) as? DocumentDeletedError
    }

    /// The other revisions that `revision` of `id` is in conflict with: for a head that
    /// is not a deletion, every other head that is not one (the winner included); for any
    /// other revision, the document's unresolved conflict versions.
    ///
    /// - Throws: `StoreError/noSuchDocument(_:)`.
    public func conflicts(of id: UUID, at revision: RevisionMetadata) throws -> [RevisionID] {
        SurveyDocument.conflicts(of: revision.id, in: SurveyDocument.State(try self.graph(of: id))).map(\.id)
    }

    /// The bytes of `revision`'s content exactly as stored, in whatever format it is
    /// written (a newer format included): for exporting it unread.
    ///
    /// - Throws: ``DocumentDeletedError`` for a deletion while the document is deleted
    ///   (`StoreError/deletion(_:)` for one it has outlived), `StoreError/noContent(_:)`
    ///   for pruned content.
    public func storedContent(_ id: UUID, _ revision: RevisionMetadata) throws -> Data {
        if revision.isDeleted { throw try deletedError(id, revision) }
        return try revisions.content(of: id, revision: revision)
    }
}
