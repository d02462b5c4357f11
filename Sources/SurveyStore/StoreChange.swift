import Foundation
import Versions

/// One change of a store, as ``SurveyStore/changes(debounce:mechanism:)`` reports it.
///
/// Changes are found by reading a document's folder again after its files changed and
/// comparing what `RevisionStore.read(_:)` finds with what it found before, so only
/// complete revisions count: a package being copied in produces nothing until its last
/// file is there (and, when it was not renamed into place, until its content matches its
/// digest). Each new revision is reported once, as ``Kind/created`` (the first
/// revision of a document not seen before) or ``Kind/revisionAdded``, however many
/// files brought it; after those, a document whose state changed gets one
/// ``Kind/conflictAppeared``, ``Kind/conflictResolved``, ``Kind/deleted`` or
/// ``Kind/restored``.
public struct StoreChange: Sendable, Hashable, CustomStringConvertible {
    /// What happened.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// A document appeared: ``StoreChange/revision`` is its first revision seen.
        case created
        /// A revision arrived: ``StoreChange/revision``. Every revision is reported once,
        /// one pruned before the feed read its folder too, so its content may be gone by
        /// the time the change is handled (`StoreError.noContent`): ``StoreChange/heads``
        /// says what is current. One a sync brings already pruned may come after its
        /// descendants, whose tombstone arrives after them.
        case revisionAdded = "revision-added"
        /// The document went into conflict (more than one head that is not a deletion);
        /// ``StoreChange/revision`` is the winner.
        case conflictAppeared = "conflict-appeared"
        /// The document left conflict; ``StoreChange/revision`` is the winner.
        case conflictResolved = "conflict-resolved"
        /// The document's winner became a deletion: ``StoreChange/revision``. A conflict that
        /// ends in a deletion (one kept) gets this change alone: the document is out of conflict.
        case deleted
        /// The document was deleted and is not any more, and is not in conflict (a
        /// document that comes back in conflict gets ``conflictAppeared``): an earlier
        /// revision kept, content saved on top of the deletion, or an edit that raced the
        /// deletion (which an edit never loses to) arrived. ``StoreChange/revision`` is the
        /// winner.
        case restored
        /// The document's folder, or a package or file in it, may not be read (permission
        /// denied: another user's files, `chmod 000`) or gives an input/output error:
        /// ``StoreChange/issue`` names its folder and the system's reason. Until a read of
        /// it succeeds, nothing of it is reported; once its folder changes and it can be
        /// read, what changed since it was last read is (for a document never read, a
        /// ``created`` and each revision). ``StoreChange/revision`` is `nil`.
        case unreadable
        /// Changes may have been missed (the kernel's event queue overflowed, or a watched
        /// folder was removed or replaced): read everything again. Names no document.
        case reread
    }

    /// What happened.
    public var kind: Kind
    /// The document, or `nil` for ``Kind/reread``.
    public var document: UUID?
    /// The revision the change is about, or `nil` for ``Kind/reread`` and
    /// ``Kind/unreadable``.
    public var revision: RevisionID?
    /// The document's heads once the change was seen, the winner first (empty for
    /// ``Kind/reread`` and ``Kind/unreadable``).
    public var heads: [RevisionID]
    /// For ``Kind/unreadable``: the document's folder and why it cannot be read ("cannot
    /// be read, so it is not watched until it can be: …", with the system's reason);
    /// `nil` for every other kind.
    public var issue: StoreIssue?

    /// A change of `kind`.
    public init(
        _ kind: Kind, document: UUID?, revision: RevisionID?, heads: [RevisionID], issue: StoreIssue? = nil
    ) {
        self.kind = kind
        self.document = document
        self.revision = revision
        self.heads = heads
        self.issue = issue
    }

    /// The change that says "read everything again".
    public static let reread = StoreChange(.reread, document: nil, revision: nil, heads: [])

    /// `revision-added 1b4e…-… 2-9f2c… (heads: 2-9f2c…)`, `unreadable 1b4e…-…`, or `reread`.
    public var description: String {
        if kind == .unreadable, let document { return "\(kind.rawValue) \(document.uuidString.lowercased())" }
        guard let document, let revision else { return kind.rawValue }
        let heads = heads.map(\.description).joined(separator: ", ")
        return "\(kind.rawValue) \(document.uuidString.lowercased()) \(revision) (heads: \(heads))"
    }
}
