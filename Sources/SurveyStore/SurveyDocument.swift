import Foundation
import Surveys
import Versions

/// A document as an app holds it: its id, the survey being edited, the revision that
/// survey is based on, and the state of the document in the store when it was read.
///
/// `SurveyStore/open(_:revision:)` returns one; `SurveyStore/save(_:ifCurrent:)`
/// saves its ``survey`` on top of its ``base`` and returns the document as it is
/// afterwards, so an app keeps one value and never passes revisions around:
///
/// ```swift
/// var document = try store.open(id)
/// document.survey.title = "Visitor feedback"
/// document = try store.save(document)
/// ```
public struct SurveyDocument: Sendable, Equatable, Identifiable {
    /// The state of a document as a whole, when it was read.
    public enum State: Sendable, Equatable {
        /// One current revision.
        case normal
        /// More than one head that is not a deletion: the heads, the winner first.
        case inConflict([RevisionMetadata])
        /// The winner is this deletion. A deleted document opens only at an earlier
        /// revision, and saving it restores the document.
        case deleted(RevisionMetadata)

        /// The state of the document whose graph is `graph`.
        init(_ graph: RevisionGraph) {
            if let winner = graph.winner, winner.isDeleted {
                self = .deleted(winner)
            } else if graph.isInConflict {
                self = .inConflict(graph.liveHeads)
            } else {
                self = .normal
            }
        }
    }

    /// The document's id.
    public let id: UUID
    /// The survey: the base's content when opened, and whatever the app made of it since.
    public var survey: Survey
    /// The revision ``survey`` is based on: the parent of the next save.
    public internal(set) var base: RevisionMetadata
    /// The state of the document when it was opened or last saved.
    public internal(set) var state: State

    /// The other current revisions that ``base`` was in conflict with when the document
    /// was read, as `SurveyStore/conflicts(of:at:)` gives them without reading the
    /// document again: for a head that is not a deletion, every other such head (the
    /// winner first); for an earlier revision, every such head but the winner. Empty when
    /// the document was not in conflict.
    public var conflicts: [RevisionMetadata] { Self.conflicts(of: base.id, in: state) }

    /// The heads `revision` is in conflict with in a document in `state` (see
    /// ``conflicts``).
    static func conflicts(of revision: RevisionID, in state: State) -> [RevisionMetadata] {
        guard case .inConflict(let heads) = state else { return [] }
        return heads.contains { $0.id == revision }
            ? heads.filter { $0.id != revision } : Array(heads.dropFirst())
    }

    /// Whether the document was in conflict when it was read.
    public var isInConflict: Bool {
        if case .inConflict = state { return true }
        return false
    }
}
