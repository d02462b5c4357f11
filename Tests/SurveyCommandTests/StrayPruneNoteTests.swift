import Foundation
import Surveys
import TestSupport
import Testing
import Versions

@testable import SurveyStore

/// `Local.nosync/pruning/` holds only the notes of prunes under way, each named after its
/// document in lower case: whatever else stands there notes nothing, and goes.
@Suite("Stray entries among prune notes")
struct StrayPruneNoteTests {
    @Test(
        "A name in Local.nosync/pruning/ that is no lower-case document UUID is removed by the next command that writes, and verify says so: verify called it an interrupted prune that the next write finishes, and no write ever removed it"
    )
    func strayNotesGo() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("stray-notes-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = try SurveyStore.create(at: root, deviceName: "laptop")
        let (id, _) = try store.create(try Survey(title: "First", items: []))
        let pruning = root + "/" + StoreLayout.pruningFolder
        try FileManager.default.createDirectory(atPath: pruning, withIntermediateDirectories: true)
        let stray = [pruning + "/notes.txt", pruning + "/" + id.uuidString.uppercased()]
        for path in stray { try Data().write(to: URL(fileURLWithPath: path)) }

        let before = try CommandRunner.run(["verify", "--store", root])
        #expect(before.status == 1)
        for path in stray {
            #expect(
                (before.stdout + before.stderr).contains(
                    "\(path): not a note of a prune, which names a document's UUID in lower case (the next command that writes removes it)"
                ), "\(before.stdout)")
        }
        let edit = try CommandRunner.run(["edit", id.uuidString, "--title", "Later", "--store", root])
        #expect(edit.status == 0, "\(edit.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: pruning).isEmpty)
        let after = try CommandRunner.run(["verify", "--store", root])
        #expect(after.status == 0, "\(after.stdout)\(after.stderr)")
    }
}
