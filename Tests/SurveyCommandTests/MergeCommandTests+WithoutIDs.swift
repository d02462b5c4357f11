import Foundation
import Testing

/// Files written without item ids (by hand, by another tool), saved on a document.
extension MergeCommandTests {
    /// The ids of the winner's items, in order.
    static func itemIDs(_ store: Store, _ id: String, revision: String? = nil) throws -> [String] {
        let shown =
            try store.json(["show", id] + (revision.map { ["--revision", $0] } ?? [])) as! [String: Any]
        return items(shown).map { $0["id"] as! String }
    }

    @Test(
        "A file without item ids saved on a document keeps its items' ids: saving it again writes nothing, and diff names the answer changed, not every item removed and added"
    )
    func fileWithoutIDsKeepsItems() throws {
        let store = try Store()
        let (id, first) = try store.makeDocument()
        let before = try Self.itemIDs(store, id)
        let file = try store.write(StoreCommandTests.edited(rating: 9), "nine.json")
        let saved = try store.json(["save", id, "--from", file]) as! [String: Any]
        #expect(saved["changed"] as? Bool == true)
        #expect(try Self.itemIDs(store, id) == before)
        let again = try store.json(["save", id, "--from", file]) as! [String: Any]
        #expect(
            again["changed"] as? Bool == false && again["revision"] as? String == saved["revision"] as? String
        )
        let diff = try store.run(["diff", id, first])
        #expect(diff.status == 0, "\(diff.stderr)")
        #expect(diff.stdout.hasSuffix("* 3 \"Rate us\":\n    answer: 8 → 9\n"), "\(diff.stdout)")
        #expect(!diff.stdout.contains("added") && !diff.stdout.contains("removed"), "\(diff.stdout)")
        // A title changed, and an item inserted before the others: a new item each; the
        // others keep their ids, wherever they now stand.
        let edited = StoreCommandTests.edited(rating: 9).replacingOccurrences(of: "Your name", with: "Name")
            .replacingOccurrences(
                of: #"{"title": "Would you"#,
                with: #"{"title": "Date", "kind": "datePicker"}, {"title": "Would you"#)
        let moved =
            try store.json(["save", id, "--from", store.write(edited, "edited.json")]) as! [String: Any]
        let after = try Self.itemIDs(store, id)
        #expect(after.count == 4 && after[1] == before[0] && after[3] == before[2], "\(after) \(before)")
        #expect(Set([after[0], after[2]]).isDisjoint(with: before))
        let changes = try store.json(["diff", id, saved["revision"] as! String, moved["revision"] as! String])
        let kinds = ((changes as! [String: Any])["items"] as! [[String: Any]]).map { $0["change"] as! String }
        #expect(kinds.sorted() == ["added", "added", "removed"], "\(changes)")
    }

    @Test(
        "Files without item ids saved offline on two replicas merge field by field (the rating contested, no item doubled); resolve --from such a file on both replicas writes the same revision"
    )
    func filesWithoutIDsMergeAndConverge() throws {
        let laptop = try Store(), phone = try Store()
        let (id, _) = try laptop.makeDocument()
        #expect(try phone.run(["init", "--device", "phone"]).status == 0)
        #expect(try laptop.run(["sync", phone.path]).status == 0)
        let before = try Self.itemIDs(laptop, id)
        // The laptop changes the rating; the phone the rating and the name.
        let ours = try laptop.write(StoreCommandTests.edited(rating: 3), "three.json")
        let theirs = try phone.write(StoreCommandTests.edited(rating: 4, name: "Grace"), "four.json")
        #expect(try laptop.run(["save", id, "--from", ours]).status == 0)
        #expect(try phone.run(["save", id, "--from", theirs]).status == 0)
        #expect(try laptop.run(["sync", phone.path]).status == 0)
        let merge = try laptop.json(["resolve", id, "--merge", "--dry-run"]) as! [String: Any]
        #expect(
            Self.contested(merge).map { $0["field"] as? String } == ["answer"]
                && Self.contested(merge).first?["item"] as? String == before[2], "\(merge)")
        let merged = try laptop.json(["resolve", id, "--merge"]) as! [String: Any]
        let revision = try #require(merged["revision"] as? String)
        let shown = try laptop.json(["show", id, "--revision", revision]) as! [String: Any]
        #expect(Self.items(shown).map { $0["id"] as! String } == before)
        #expect(Self.items(shown)[1]["answer"] as? String == "Grace")
        #expect(try laptop.run(["sync", phone.path]).status == 0)
        // Both save again on the merge, offline, then both resolve with one file.
        #expect(
            try laptop.run([
                "save", id, "--from", laptop.write(StoreCommandTests.edited(rating: 1), "1.json"),
            ]).status == 0)
        #expect(
            try phone.run(["save", id, "--from", phone.write(StoreCommandTests.edited(rating: 2), "2.json")])
                .status == 0)
        #expect(try laptop.run(["sync", phone.path]).status == 0)
        let resolution = StoreCommandTests.edited(rating: 10, name: "Ada Lovelace")
        let resolved = try [laptop, phone].map { replica in
            let result = try replica.json(["resolve", id, "--from", replica.write(resolution, "r.json")])
            return (result as! [String: Any])["revision"] as! String
        }
        #expect(resolved[0] == resolved[1], "\(resolved)")
        #expect(try Self.itemIDs(laptop, id) == before)
        let report = try laptop.json(["sync", phone.path]) as! [String: Any]
        #expect((report["conflictsAppeared"] as? [String])?.isEmpty == true, "\(report)")
        #expect((try laptop.json(["conflicts"]) as! [Any]).isEmpty)
    }

    @Test(
        "When the base's content cannot be read, a file without item ids is saved with new items, and a warning names the file, the base's content and why"
    )
    func baseUnreadableWarns() throws {
        let store = try Store()
        let (id, first) = try store.makeDocument()
        let before = try Self.itemIDs(store, id)
        // The base's content torn: truncated under its name.
        let documents = URL(fileURLWithPath: store.path + "/Documents")
        let content = try #require(
            FileManager.default.enumerator(atPath: documents.path)?.compactMap { $0 as? String }
                .first { $0.hasSuffix("\(first).survey/Survey.plist") })
        try FileHandle(forWritingTo: documents.appendingPathComponent(content)).truncate(atOffset: 10)
        let file = try store.write(StoreCommandTests.edited(rating: 9), "nine.json")
        let saved = try store.run(["save", id, "--from", file, "--json"])
        #expect(saved.status == 0, "\(saved.stderr)")
        #expect(
            saved.stderr.hasPrefix(
                "warning: \(file): its 3 items without an id are saved as new items, since the base revision's content, which they would be matched with, cannot be read: "
            ) && saved.stderr.contains("\(first).survey/Survey.plist: the content does not match the digest"),
            "\(saved.stderr)")
        #expect(Set(try Self.itemIDs(store, id)).isDisjoint(with: before))
    }
}
