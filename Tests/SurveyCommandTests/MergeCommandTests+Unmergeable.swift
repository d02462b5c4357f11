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
}
