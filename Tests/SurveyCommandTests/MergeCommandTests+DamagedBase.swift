import Foundation
import Testing

extension MergeCommandTests {
    /// The path of revision `revision`'s content in `store`.
    static func content(_ store: Store, _ id: String, _ revision: String) -> String {
        store.path + "/Documents/\(id)/\(revision).survey/Survey.plist"
    }

    /// A document in conflict whose heads merge cleanly from their base: one retitles the
    /// survey, the other answers the name "Grace". Returns the document and the base.
    static func retitledAndRenamed(_ store: Store) throws -> (id: String, base: String) {
        let (id, base, _) = try conflict(
            store,
            heads: [
                survey(baseItems, title: "Visit, retitled"),
                survey([binary(), name("Grace"), rate(), dish()]),
            ])
        return (id, base)
    }

    /// The revisions of `id` with their state, and every head's content, to compare before
    /// and after a command that must change nothing.
    static func snapshot(_ store: Store, _ id: String) throws -> [String] {
        try store.versions(id).map { "\($0["revision"] ?? "") \($0["state"] ?? "")" }.sorted()
    }

    @Test(
        "resolve --merge whose merge base's content is torn fails with 65 naming the file, writes nothing, and merges three-way once verify --repair-from repaired it"
    )
    func tornBaseFailsTheMerge() throws {
        let store = try Store()
        defer { try? FileManager.default.removeItem(at: store.directory) }
        let (id, base) = try Self.retitledAndRenamed(store)
        let replica = store.directory.appendingPathComponent("replica").path
        try FileManager.default.copyItem(atPath: store.path, toPath: replica)
        // Torn under its name, as a copy that was never made durable leaves it after a power loss.
        try FileHandle(forWritingTo: URL(fileURLWithPath: Self.content(store, id, base))).truncate(
            atOffset: 40)
        let before = try Self.snapshot(store, id)
        for arguments in [["resolve", id, "--merge"], ["resolve", id, "--merge", "--dry-run"]] {
            let refused = try store.run(arguments)
            #expect(refused.status == 65, "\(arguments): \(refused.stderr)")
            #expect(
                refused.stderr.contains(
                    "\(id)/\(base).survey/Survey.plist: the content does not match the digest")
                    && refused.stderr.contains("--repair-from"), "\(refused.stderr)")
            #expect(try Self.snapshot(store, id) == before, "\(arguments) changed the store")
        }
        #expect(try store.run(["verify", "--repair-from", replica]).status == 0)
        let (merge, shown) = try Self.merge(store, id)
        #expect(
            merge["twoWay"] as? Bool == false && (merge["contested"] as? [Any])?.isEmpty == true, "\(merge)")
        #expect(shown["title"] as? String == "Visit, retitled", "\(shown)")
        let items = try #require(shown["items"] as? [[String: Any]])
        #expect(
            items.first { $0["id"] as? String == Self.id(2) }?["answer"] as? String == "Grace", "\(items)")
    }

    @Test(
        "A document in conflict whose folder holds a package that cannot be read (a link in place of a content file) is not merged: resolve --merge exits 1 (unseenForMerge) naming it, resolve --all --merge lists it, conflicts counts no contested fields but names it, nothing written"
    )
    func unseenPackageFailsTheMerge() throws {
        let store = try Store()
        defer { try? FileManager.default.removeItem(at: store.directory) }
        let (id, base) = try Self.retitledAndRenamed(store)
        let content = Self.content(store, id, base)
        try FileManager.default.removeItem(atPath: content)
        try FileManager.default.createSymbolicLink(atPath: content, withDestinationPath: "/etc/hostname")
        let before = try Self.snapshot(store, id)
        let refused = try store.run(["resolve", id, "--merge", "--json"])
        #expect(refused.status == 1, "\(refused.stderr)")
        let error = try #require(
            (try JSONSerialization.jsonObject(with: Data(refused.stdout.utf8)) as? [String: Any])?["error"]
                as? [String: Any])
        #expect(error["code"] as? String == "unseenForMerge", "\(error)")
        #expect((error["message"] as? String)?.contains("\(base): half-copied, damaged") == true, "\(error)")
        let all = try store.run(["resolve", "--all", "--merge", "--json"])
        #expect(all.status == 75, "\(all.stderr)")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(all.stdout.utf8)) as? [String: Any])
        let unresolved = try #require(report["unresolved"] as? [[String: Any]])
        #expect(unresolved.map { $0["id"] as? String } == [id], "\(report)")
        #expect((unresolved.first?["reason"] as? String)?.contains("is not merged") == true, "\(report)")
        // `conflicts` agrees: no count of contested fields for a merge that is refused.
        let conflicts = try store.run(["conflicts", "--json"])
        let rows = try #require(
            try JSONSerialization.jsonObject(with: Data(conflicts.stdout.utf8)) as? [[String: Any]])
        #expect(rows.count == 1 && rows[0]["contested"] is NSNull, "\(conflicts.stdout)")
        #expect(rows.first?["unreadable"] as? [String] == [base], "\(conflicts.stdout)")
        let text = try store.run(["conflicts"])
        #expect(
            text.stdout.contains("not merged while \(base) cannot be read (a copy in progress, or damage)"),
            "\(text.stdout)")
        #expect(try Self.snapshot(store, id) == before)
        // Keeping a head still resolves it.
        #expect(try store.run(["resolve", id, "--accept"]).status == 0)
    }
}
