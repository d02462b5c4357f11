import Foundation
import Testing

extension MergeCommandTests {
    /// Two new stores, devices "laptop" and "phone", in a new temporary folder, and a
    /// function that writes a file (text, name) beside them and returns its path.
    static func twoReplicas() throws -> (
        laptop: SyncTests.Replica, phone: SyncTests.Replica, write: (String, String) throws -> String
    ) {
        let directory = try CommandRunner.temporaryDirectory()
        let laptop = SyncTests.Replica(path: directory.appendingPathComponent("laptop").path)
        let phone = SyncTests.Replica(path: directory.appendingPathComponent("phone").path)
        #expect(try laptop.run(["init", "--device", "laptop"]).status == 0)
        #expect(try phone.run(["init", "--device", "phone"]).status == 0)
        func write(_ text: String, _ name: String) throws -> String {
            let url = directory.appendingPathComponent(name)
            try Data(text.utf8).write(to: url)
            return url.path
        }
        return (laptop, phone, write)
    }

    /// Two replicas with a criss-cross history, made with the commands: a laptop changes
    /// the name, the note (item 5) and the dish, a phone the rating and the dish; each
    /// merges both (the laptop taking the winner's dish, the phone with `--prefer` the
    /// laptop's), then the laptop sets the name back and the phone changes the note again.
    /// Returns the replicas, the document and the two merge bases (the phone's, the
    /// newer, first).
    static func crissCross() throws -> (SyncTests.Replica, SyncTests.Replica, String, [String]) {
        let (laptop, phone, write) = try twoReplicas()
        func items(name: String = "Ada", note: String = "none", rate: Int = 8, dish: String? = nil)
            -> String
        {
            Self.survey([
                Self.binary(), Self.name(name), Self.rate(rate), Self.dish(answer: dish),
                Self.extra(5, title: "Note", answer: note),
            ])
        }
        let created = try laptop.json(["new", "--from", try write(items(), "o.json")]) as! [String: Any]
        let id = created["id"] as! String
        #expect(try laptop.run(["sync", phone.path]).status == 0)
        let a =
            try laptop.json([
                "save", id, "--from", try write(items(name: "Grace", note: "from A", dish: "Soup"), "a.json"),
            ]) as! [String: Any]
        let b =
            try phone.json(["save", id, "--from", try write(items(rate: 9, dish: "Cake"), "b.json")])
            as! [String: Any]
        #expect(try laptop.run(["sync", phone.path]).status == 0)
        let aRevision = a["revision"] as! String
        #expect(try laptop.run(["resolve", id, "--merge"]).status == 0)
        #expect(try phone.run(["resolve", id, "--merge", "--prefer", aRevision]).status == 0)
        #expect(
            try laptop.run([
                "save", id, "--from",
                try write(items(name: "Ada", note: "from A", rate: 9, dish: "Cake"), "x.json"),
            ]).status == 0)
        #expect(
            try phone.run([
                "save", id, "--from",
                try write(items(name: "Grace", note: "from Y", rate: 9, dish: "Soup"), "y.json"),
            ]).status == 0)
        #expect(try laptop.run(["sync", phone.path]).status == 0)
        return (laptop, phone, id, [b["revision"] as! String, aRevision])
    }

    @Test(
        "Criss-cross history: resolve --merge merges from a virtual base, the merge of both merge bases: the name set back and the note changed again both apply, only the dish the two merges chose differently is contested, and both replicas write the same resolution"
    )
    func crissCrossMerge() throws {
        let (laptop, phone, id, bases) = try Self.crissCross()
        let dry = try laptop.json(["resolve", id, "--merge", "--dry-run"]) as! [String: Any]
        #expect(dry["base"] as? [String] == bases && dry["twoWay"] as? Bool == false, "\(dry)")
        let contested = Self.contested(dry)
        #expect(
            contested.map { [$0["item"] as? String, $0["field"] as? String] } == [[Self.id(4), "answer"]],
            "\(contested)")
        let text = try laptop.run(["resolve", id, "--merge", "--dry-run"])
        #expect(
            text.stdout.contains("from a virtual base, the merge of their 2 merge bases ("),
            "\(text.stdout)")
        let written = try laptop.json(["resolve", id, "--merge"]) as! [String: Any]
        let again = try phone.json(["resolve", id, "--merge"]) as! [String: Any]
        #expect(written["revision"] as? String == again["revision"] as? String, "the resolutions converge")
        let shown = try phone.json(["show", id]) as! [String: Any]
        let answers = Self.items(shown).map { $0["answer"] }
        #expect(answers[1] as? String == "Ada", "the laptop set the name back")
        #expect(answers[2] as? Double == 9)
        #expect(answers[4] as? String == "from Y", "only the phone changed the note since the laptop's edit")
        #expect(try laptop.run(["sync", phone.path]).status == 0)
        #expect(try laptop.state() == phone.state())
        #expect((try laptop.json(["conflicts"]) as! [Any]).isEmpty)
    }
}
