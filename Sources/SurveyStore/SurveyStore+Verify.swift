import Foundation
import Packages
import Versions

extension SurveyStore {
    /// Something `verify` found, with the path it concerns: a problem, or a note
    /// (`StoreIssue.isNote`).
    public typealias Problem = StoreIssue

    /// Why a device identity file reads as none, without its path.
    static func deviceProblem(_ error: any Error, file: String) -> String {
        if case StoreError.noSuchStore = error { return "it lacks DeviceID or DeviceName" }
        return RevisionStore.reason(error, file: file)
    }

    /// Checks the whole store: its layout file and folders, every revision's metadata
    /// against its id and its content against its digest, every parent known, links,
    /// special files and anything else that does not belong, stray temporary files,
    /// interrupted prunes, unreadable property lists, this device's identity file; and,
    /// as notes, each folder of the store this process may not write in and each lock
    /// file it may not open. Changes nothing, follows no link, and needs no write access.
    ///
    /// - Returns: The problems and notes found, by path; the store is clean when every
    ///   entry is a note.
    public func verify() -> [Problem] {
        var layoutProblems: [Problem] = []
        do {
            try Self.checkLayout(at: root, calls: calls, forWriting: true)
        } catch StoreError.newerLayout(let file, let version, let supported) {
            // A layout newer than this build writes is read, and every write refused: a note.
            layoutProblems.append(
                Problem(
                    path: file,
                    message:
                        "store layout \(version) is newer than this build supports (\(supported)): it can be read but not changed (every command that writes refuses it)",
                    isNote: true))
        } catch {
            layoutProblems.append(Problem(path: root + "/" + Self.layoutFile, message: "\(error)"))
        }
        let reader = FileReader(root: root, calls: calls)
        var problems = revisions.verify { document, revision in
            // Content this build can read is read as a survey too; a newer format is opaque.
            if revision.formatVersion <= Self.formatVersion {
                _ = try survey(document, revision)
            } else {
                _ = try revisions.content(of: document, revision: revision)
            }
        } checkingIdentity: { devicePath in
            // A file in the device identity's place that reads as none.
            do {
                _ = try DeviceIdentity.peek(store: root, reader: reader)
                return nil
            } catch let error as FileSystemError where error.isFailureToLook {
                // Unreadable, not damaged: a command that writes fails on it as this read
                // did, and renews nothing.
                return Self.deviceProblem(error, file: devicePath)
            } catch {
                return "not this device's identity (\(Self.deviceProblem(error, file: devicePath))): the next"
                    + " command that writes replaces it with a new device id, named after this host"
            }
        }
        // The revisions' findings come sorted by path and message; these take their place
        // among them.
        for problem in layoutProblems {
            let place = problems.firstIndex { ($0.path, $0.message) > (problem.path, problem.message) }
            problems.insert(problem, at: place ?? problems.endIndex)
        }
        return problems
    }
}
