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
        var problems: [Problem] = []
        do {
            try Self.checkLayout(at: root, calls: calls, forWriting: false)
        } catch {
            problems.append(Problem(path: root + "/" + Self.layoutFile, message: "\(error)"))
        }
        problems += revisions.verify { document, revision in
            // Content this build can read is read as a survey too; a newer format is opaque.
            if revision.formatVersion <= Self.formatVersion {
                _ = try survey(document, revision)
            } else {
                _ = try revisions.content(of: document, revision: revision)
            }
        }
        return problems.sorted { ($0.path, $0.message) < ($1.path, $1.message) }
    }
}
