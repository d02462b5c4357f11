import Foundation
import Packages
import Versions

extension SurveyStore {
    /// Something `verify` found, with the path it concerns: a problem, or a note
    /// (`StoreIssue.isNote`).
    public typealias Problem = StoreIssue

    /// Checks the whole store: its layout file and folders, every revision's metadata
    /// against its id and its content against its digest, every parent known, links,
    /// special files and anything else that does not belong, stray temporary files,
    /// interrupted prunes, unreadable property lists. Changes nothing, follows no link,
    /// and needs no write access.
    ///
    /// - Returns: The problems and notes found, by path; the store is clean when every
    ///   entry is a note.
    public func verify() -> [Problem] {
        var layoutProblem: Problem?
        do {
            try Self.checkLayout(at: root, calls: calls, forWriting: false)
        } catch {
            layoutProblem = Problem(path: root + "/" + Self.layoutFile, message: "\(error)")
        }
        var problems = revisions.verify { document, revision in
            // Content this build can read is read as a survey too; a newer format is opaque.
            if revision.formatVersion <= Self.formatVersion {
                _ = try survey(document, revision)
            } else {
                _ = try revisions.content(of: document, revision: revision)
            }
        }
        // The revisions' findings come sorted by path and message; the layout file's
        // problem takes its place among them.
        if let layoutProblem {
            let place = problems.firstIndex {
                ($0.path, $0.message) > (layoutProblem.path, layoutProblem.message)
            }
            problems.insert(layoutProblem, at: place ?? problems.endIndex)
        }
        return problems
    }
}
