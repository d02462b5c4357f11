import ArgumentParser
import Foundation
import SurveyStore

/// `survey diff`: item-level differences between revisions of a document.
struct DiffCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Item-level differences between revisions of a document.",
        discussion: """
            With no revision: the winner against each other head (--json: an array, one object per head); \
            a head this build cannot read (in a newer format, say) is named in a warning and left out, and \
            the command fails only when no head could be compared. With REV_A: REV_A against the winner. \
            With REV_A and REV_B: REV_A against REV_B (--json: one object). A deleted document, compared \
            through its winner, exits 66 and says when it was deleted and how to restore it, as show does.

            \(SurveyTool.exitCodesReference)
            """)
    @OptionGroup var options: StoreOptions
    @Argument(help: "The document.") var document: String
    @Argument(help: "The revision to compare from (default: the winner, against each other head).")
    var revisionA: String?
    @Argument(help: "The revision to compare to (default: the winner).") var revisionB: String?

    func validate() throws {
        try IDArgument.requireDocument(document)
        try IDArgument.requireRevision(revisionA, for: "<revision-a>")
        try IDArgument.requireRevision(revisionB, for: "<revision-b>")
    }

    func run() throws {
        try runReporting {
            let store = try options.openForReading()
            let id = try store.document(document)
            let from = try store.revisionID(revisionA, in: id)
            let to = try store.revisionID(revisionB, in: id)
            let pairs =
                revisionA == nil
                ? try store.advisingOnUnreadableHeads(id) { try headPairs(store, id) }
                : try store.advisingOnUnreadable(id, reading: [from, to]) {
                    try store.namingNewer { try store.diffs(id, from, to) }
                }
            if options.json {
                if revisionA == nil {
                    try Console.printJSON(pairs.map(DiffJSON.init))
                } else {
                    try Console.printJSON(DiffJSON(pairs[0]))
                }
                return
            }
            if pairs.isEmpty {
                print("\(id.lowercased) is not in conflict: no other head to compare with the winner")
            }
            for (index, pair) in pairs.enumerated() {
                if index > 0 { print("") }
                for line in MergeText.lines(pair) { print(line) }
            }
        }
    }

    /// The winner against each other head that this build can read; each one it cannot
    /// is named in a warning. Fails when the winner cannot be read, or no head can.
    private func headPairs(_ store: SurveyStore, _ id: UUID) throws -> [SurveyStore.RevisionDiff] {
        let (pairs, leftOut) = try store.namingNewer(
            what: "the winner ", then: "; no head can be compared with it"
        ) {
            try store.headDiffs(id)
        }
        for (head, error) in leftOut {
            // The head is named once: a newer format's error names it too.
            let why =
                switch error {
                case StoreError.newerFormat(_, let version, let supported):
                    FormatError.newer(version, supported: supported).description
                case StoreError.deletion: "it records a deletion, which has no content"
                // Not named again by its content's file.
                case let error as SurveyError: error.leavingOutFile.description
                default: "\(error)"
                }
            Console.error("warning: \(head): not compared with the winner: \(why)")
        }
        // No head compared: a failure, unless those left out are deletions (which have no
        // content to compare, and were named).
        let failures = leftOut.filter { _, error in
            if case StoreError.deletion = error { return false }
            return true
        }
        if pairs.isEmpty, let (_, error) = failures.first { throw error }
        return pairs
    }
}
