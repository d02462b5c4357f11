import Foundation

/// What mends a failure or an issue the store reports, for the app or tool that shows it
/// to say in its own terms: a button that repairs from a replica, a command to run.
///
/// The errors and issues that carry one (``StoreError/remedy``, ``StoreIssue/remedy``)
/// say what is wrong in their ``StoreError/problem`` or ``StoreIssue/message``; their
/// descriptions add ``advice``, the remedy in words that name no program's commands.
public enum Remedy: Sendable, Hashable {
    /// The layout file of the store at this path was cut short, as an interrupted write
    /// leaves it: creating the store at the same path writes it again and keeps the
    /// documents.
    case writeLayoutAgain(String)
    /// A revision's files are damaged here (they do not match what their metadata
    /// records): a replica that holds the revision intact repairs it.
    case repairFromReplica
    /// No revision of the document can be read: verifying the store names each item
    /// skipped and why, and a replica that holds them intact repairs them.
    case verifyThenRepair
    /// A document is not pruned beside revisions it cannot read yet (how many): the copy
    /// under way finishes, or a replica that holds them intact repairs them, then the
    /// prune can run.
    case finishCopyThenPrune(count: Int)
    /// A conflict is not merged beside revisions it cannot read yet (how many): the copy
    /// under way finishes, or a replica repairs them, then the merge can run; or the
    /// conflict is resolved another way (a head kept, the winner accepted, new content).
    case finishCopyThenMerge(count: Int)
    /// A winner in an older format is not migrated beside revisions it cannot read yet
    /// (how many), one of which may supersede it: the copy under way finishes, or a
    /// replica repairs them, then the migration can run.
    case finishCopyThenMigrate(count: Int)
    /// A head of the document (its winner, or in a conflict another head) has content that
    /// matches the digest in its metadata but is no survey this build reads, so every
    /// replica holds the same bytes and no repair mends them: new content saved on top
    /// does (on top of every head when the document is in conflict, `inConflict`), or
    /// keeping another head (the first of `otherHeads`, the other heads that do read, of
    /// how many), or an earlier revision's content saved on top when the head has history
    /// (`hasHistory`).
    case replaceContent(UUID, otherHeads: [RevisionID], hasHistory: Bool, inConflict: Bool = false)
    /// The document was deleted by revision `deletion`: keeping an earlier revision whose
    /// content is still there (`restorable`, the newest) or saving content on top of the
    /// deletion restores it.
    case restoreDeleted(UUID, deletion: RevisionID, restorable: RevisionID?)

    /// The remedy in words, as a suffix for a message (starting with ` (` or `; `), naming
    /// no program's commands.
    public var advice: String {
        switch self {
        case .writeLayoutAgain(_):
            " (cut short; creating the store at this path writes it again, and keeps its documents)"
        case .repairFromReplica:
            " (a repair from a replica that has it intact mends it)"
        case .verifyThenRepair:
            " (verifying the store names each, and why; a repair from a replica that holds them intact mends them)"
        case .finishCopyThenPrune(let count):
            Self.finishCopy(count, then: "prune")
        case .finishCopyThenMerge(let count):
            Self.finishCopy(
                count,
                then:
                    "merge, or resolve the conflict by keeping a head, accepting the winner or saving new content"
            )
        case .finishCopyThenMigrate(let count):
            Self.finishCopy(count, then: "migrate")
        case .replaceContent(_, let otherHeads, let hasHistory, let inConflict):
            " (its content matches the digest in its metadata, so every replica holds these same bytes and no repair mends them; save new content on top"
                + (inConflict ? " of every head" : "")
                + (otherHeads.first.map {
                    ", or keep \(otherHeads.count == 1 ? "the other head" : "another head"), \($0)"
                }
                    ?? (hasHistory ? ", such as an earlier revision's content" : "")) + ")"
        case .restoreDeleted(_, let deletion, let restorable):
            "; restore it by "
                + (restorable.map { "keeping revision \($0), or by " } ?? "")
                + "saving content on top of the deletion, revision \(deletion)"
        }
    }

    /// What the remedies for `count` revisions that cannot be read yet say: the copy
    /// finished or repaired, `then` what can run.
    private static func finishCopy(_ count: Int, then: String) -> String {
        "; let the copy finish, or repair \(them(count)) from a replica that holds \(them(count)) intact, then \(then)"
    }

    /// `it` for one, `them` for more.
    public static func them(_ count: Int) -> String { count == 1 ? "it" : "them" }
}
