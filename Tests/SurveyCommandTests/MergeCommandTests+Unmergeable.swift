import Foundation
import SurveyStore
import Surveys
import Testing
import Versions

extension MergeCommandTests {
    @Test(
        "resolve --all --merge lists a document whose heads cannot be merged (one in a newer format) and resolves the rest; conflicts --json gives its contested as null; resolve --merge --json of a document not in conflict says resolved: false"
    )
    func unmergeableHeadsListed() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store").path
        let store = try SurveyStore.create(at: path, deviceName: "laptop")
        // A document in conflict with a head in format 3, which this build cannot read.
        let (newer, first) = try store.create(try Survey(title: "Newer", items: []))
        var retitled = try store.survey(newer, first)
        retitled.title = "Newer, edited"
        _ = try store.save(retitled, to: newer, base: first.id)
        let laterApp = RevisionStore(root: path, device: Device(id: "later-app", name: "later app"))
        _ = try laterApp.write(
            document: newer, parents: [first], content: Data("opaque".utf8), formatVersion: 3)
        // A document in conflict whose heads merge cleanly: one edits the title, the
        // other the answer.
        let (clean, base) = try store.create(
            try Survey(title: "Clean", items: [Surveys.Item(title: "Name", kind: .textField(subtitle: nil))]))
        var one = try store.survey(clean, base)
        one.title = "Clean, edited"
        _ = try store.save(one, to: clean, base: base.id)
        let original = try store.survey(clean, base)
        var answered = original.items[0]
        answered.answer = Answer.text("Ada")
        _ = try store.save(try Survey(title: original.title, items: [answered]), to: clean, base: base.id)

        let conflicts = try CommandRunner.run(["conflicts", "--json", "--store", path])
        let rows = try #require(
            try JSONSerialization.jsonObject(with: Data(conflicts.stdout.utf8)) as? [[String: Any]])
        let newerRow = try #require(rows.first { $0["id"] as? String == newer.uuidString.lowercased() })
        #expect(newerRow["contested"] is NSNull, "\(newerRow)")

        let all = try CommandRunner.run(["resolve", "--all", "--merge", "--json", "--store", path])
        #expect(all.status == 75, "\(all.stderr)")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(all.stdout.utf8)) as? [String: Any])
        let resolved = try #require(report["resolved"] as? [[String: Any]])
        let unresolved = try #require(report["unresolved"] as? [[String: Any]])
        #expect(resolved.map { $0["id"] as? String } == [clean.uuidString.lowercased()], "\(report)")
        #expect(unresolved.map { $0["id"] as? String } == [newer.uuidString.lowercased()], "\(report)")
        #expect(unresolved.first?["contested"] is NSNull, "\(report)")
        #expect((unresolved.first?["reason"] as? String)?.contains("format 3 is newer") == true, "\(report)")

        // The resolved document is no longer in conflict: --merge says so.
        let again = try CommandRunner.run([
            "resolve", clean.uuidString.lowercased(), "--merge", "--json", "--store", path,
        ])
        #expect(again.status == 0, "\(again.stderr)")
        let said = try #require(
            try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any])
        #expect(said["resolved"] as? Bool == false, "\(said)")
    }

    @Test(
        "diff of a document with a head in a newer format compares the heads it can read and names the one it cannot; a winner in a newer format fails, named"
    )
    func diffLeavesOutNewerHeads() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store").path
        let store = try SurveyStore.create(at: path, deviceName: "laptop")
        let (id, base) = try store.create(try Survey(title: "Mixed", items: []))
        // A later app's head, stamped long ago so that it is not the winner.
        let laterApp = RevisionStore(
            root: path, device: Device(id: "later-app", name: "later app"), wallClock: { 1_560_000_000_000 })
        let newer = try laterApp.write(
            document: id, parents: [base], content: Data("opaque".utf8), formatVersion: 3)
        var one = try store.survey(id, base)
        one.title = "Mixed, here"
        let here = try store.save(one, to: id, base: base.id)
        one.title = "Mixed, there"
        let there = try store.save(one, to: id, base: base.id)
        let winner = try store.revision(id)
        let other = winner.id == here.id ? there : here
        let document = id.uuidString.lowercased()

        let text = try CommandRunner.run(["diff", document, "--store", path])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("to \(other.id.description.prefix(14))…"), "\(text.stdout)")
        #expect(
            text.stderr.contains(
                "warning: \(newer.id): not compared with the winner: format 3 is newer than this build supports"
            ),
            "\(text.stderr)")
        let json = try CommandRunner.run(["diff", document, "--json", "--store", path])
        let pairs = try #require(
            try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(pairs.count == 1, "\(json.stdout)")

        // A later app's head that wins: nothing can be compared with it.
        let later = RevisionStore(root: path, device: Device(id: "later-app", name: "later app"))
        let winning = try later.write(
            document: id, parents: [try store.revision(id, other.id)], content: Data("opaque".utf8),
            formatVersion: 3)
        #expect(try store.revision(id).id == winning.id)
        let failed = try CommandRunner.run(["diff", document, "--store", path])
        #expect(failed.status == 65, "\(failed.stdout)")
        #expect(
            failed.stderr.contains(
                "error: the winner \(winning.id): format 3 is newer than this build supports"),
            "\(failed.stderr)")
        // show names the revision and says how to copy it as it is.
        let show = try CommandRunner.run(["show", document, "--store", path])
        #expect(show.status == 65, "\(show.stdout)")
        #expect(
            show.stderr.contains(
                "error: \(winning.id): format 3 is newer than this build supports (2); export it as it is"),
            "\(show.stderr)")
        // So do edit, and diff of two named revisions, one of them the newer winner.
        for arguments in [
            ["edit", document, "--title", "Edited"], ["diff", document, other.id.description],
        ] {
            let result = try CommandRunner.run(arguments + ["--store", path])
            #expect(result.status == 65, "\(arguments): \(result.stdout)")
            #expect(
                result.stderr.contains(
                    "error: \(winning.id): format 3 is newer than this build supports (2)"),
                "\(arguments): \(result.stderr)")
        }
    }
}
