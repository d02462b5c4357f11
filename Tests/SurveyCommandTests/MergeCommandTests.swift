import Foundation
import Testing

/// `survey diff`, `resolve --merge` and converging resolutions, run through the binary.
@Suite("survey diff and resolve --merge", .serialized)
struct MergeCommandTests {
    /// Item ids 1…4, fixed so that heads can be written as JSON by hand.
    static func id(_ number: Int) -> String { String(format: "00000000-0000-4000-8000-%012d", number) }

    struct Item {
        var number: Int
        var json: String
    }

    static func binary(_ answer: Int = 1, title: String = "Come again?") -> Item {
        Item(
            number: 1,
            json:
                #"{"id": "\#(id(1))", "title": "\#(title)", "kind": "binary", "options": ["No", "Yes"], "answer": \#(answer)}"#
        )
    }
    static func name(_ answer: String = "Ada", title: String = "Name") -> Item {
        Item(
            number: 2,
            json: #"{"id": "\#(id(2))", "title": "\#(title)", "kind": "textField", "answer": "\#(answer)"}"#)
    }
    static func rate(_ answer: Int = 8, maximum: Int = 10, title: String = "Rate") -> Item {
        Item(
            number: 3,
            json:
                #"{"id": "\#(id(3))", "title": "\#(title)", "kind": "slider", "minimum": 0, "maximum": \#(maximum), "roundToInteger": true, "answer": \#(answer)}"#
        )
    }
    static func dish(_ options: [String] = ["Soup", "Fish", "Cake"], answer: String? = nil) -> Item {
        let list = options.map { "\"\($0)\"" }.joined(separator: ", ")
        return Item(
            number: 4,
            json:
                #"{"id": "\#(id(4))", "title": "Dish", "kind": "picker", "options": [\#(list)]\#(answer.map { #", "answer": "\#($0)""# } ?? "")}"#
        )
    }
    static func extra(_ number: Int, title: String = "Extra", answer: String = "x") -> Item {
        Item(
            number: number,
            json:
                #"{"id": "\#(id(number))", "title": "\#(title)", "kind": "textField", "answer": "\#(answer)"}"#
        )
    }
    static var baseItems: [Item] { [binary(), name(), rate(), dish()] }

    static func survey(_ items: [Item], title: String = "Visit") -> String {
        #"{"title": "\#(title)", "items": [\#(items.map(\.json).joined(separator: ", "))]}"#
    }

    typealias Store = StoreCommandTests.Store

    /// Creates the base document and saves `heads` from it, the first head last so that it
    /// is the newest: the winner. Returns the id, the base revision and the heads' revisions
    /// (in the order given).
    static func conflict(_ store: Store, base: String = survey(baseItems), heads: [String]) throws -> (
        id: String, base: String, heads: [String]
    ) {
        #expect(try store.run(["init", "--device", "test"]).status == 0)
        let created = try store.json(["new", "--from", store.write(base, "base.json")]) as! [String: Any]
        let id = created["id"] as! String
        let baseRevision = created["revision"] as! String
        var revisions: [String] = []
        for (index, head) in heads.enumerated().reversed() {
            let saved =
                try store.json([
                    "save", id, "--from", store.write(head, "head\(index).json"), "--base", baseRevision,
                ]) as! [String: Any]
            revisions.insert(saved["revision"] as! String, at: 0)
        }
        return (id, baseRevision, revisions)
    }

    /// `resolve --merge --json` and then `show --json`.
    static func merge(_ store: Store, _ id: String, _ extra: [String] = []) throws -> (
        merge: [String: Any], shown: [String: Any]
    ) {
        let merged = try store.json(["resolve", id, "--merge"] + extra) as! [String: Any]
        return (merged, try store.json(["show", id]) as! [String: Any])
    }

    static func items(_ shown: [String: Any]) -> [[String: Any]] { shown["items"] as! [[String: Any]] }
    static func ids(_ shown: [String: Any]) -> [String] {
        items(shown).map { ($0["id"] as! String).lowercased() }
    }
    static func contested(_ merge: [String: Any]) -> [[String: Any]] {
        merge["contested"] as! [[String: Any]]
    }

    @Test(
        "Rule 1: one-sided changes taken; different changes contested, the winner's value (or --prefer's) taken; --strict refuses with 75"
    )
    func rule1() throws {
        let store = try Store()
        let (id, _, heads) = try Self.conflict(
            store,
            heads: [
                Self.survey([Self.binary(), Self.name("Grace"), Self.rate(9), Self.dish()]),
                Self.survey([Self.binary(0), Self.name(), Self.rate(6), Self.dish()]),
            ])
        let strict = try store.run(["resolve", id, "--merge", "--strict", "--json"])
        #expect(strict.status == 75, "\(strict.stderr)")
        let refused = try JSONSerialization.jsonObject(with: Data(strict.stdout.utf8)) as! [String: Any]
        #expect(refused["refused"] as? Bool == true && refused["revision"] is NSNull)
        #expect(try store.versions(id).count == 3, "--strict wrote nothing")
        let dry = try store.json(["resolve", id, "--merge", "--dry-run"]) as! [String: Any]
        #expect(dry["dryRun"] as? Bool == true && dry["revision"] is NSNull && Self.contested(dry).count == 1)
        #expect(try store.versions(id).count == 3, "--dry-run wrote nothing")

        let (merge, shown) = try Self.merge(store, id, ["--prefer", String(heads[1].prefix(10))])
        #expect(merge["twoWay"] as? Bool == false && (merge["base"] as? [String])?.count == 1)
        let contest = try #require(Self.contested(merge).first)
        #expect(Self.contested(merge).count == 1)
        #expect(
            contest["item"] as? String == Self.id(3) && contest["field"] as? String == "answer"
                && contest["chosen"] as? Int == 6)
        #expect((contest["values"] as! [[String: Any]]).map { $0["value"] as? Int } == [6, 9])
        let items = Self.items(shown)
        #expect(
            items[0]["answer"] as? Int == 0 && items[1]["answer"] as? String == "Grace"
                && items[2]["answer"] as? Double == 6)
    }

    @Test(
        "A contested binary answer shows each head's option label, as show does (it showed the positions: 0 and 0 for No and Yes among swapped options), a multiTF answer one T or F per option; --json keeps the positions and adds the labels"
    )
    func contestedAnswersShownAsShowShowsThem() throws {
        let store = try Store()
        func items(binary: String, flags: String) -> [Item] {
            [
                Item(
                    number: 1,
                    json: #"{"id": "\#(Self.id(1))", "title": "Come again?", "kind": "binary", \#(binary)}"#),
                Item(
                    number: 5,
                    json:
                        #"{"id": "\#(Self.id(5))", "title": "Tried", "kind": "multiTF", "options": ["Soup", "Fish", "Cake"], "answer": \#(flags)}"#
                ),
            ]
        }
        let (id, _, heads) = try Self.conflict(
            store,
            base: Self.survey(items(binary: #""options": ["No", "Yes"]"#, flags: "[false, false, false]")),
            heads: [
                Self.survey(
                    items(binary: #""options": ["No", "Yes"], "answer": 0"#, flags: "[true, false, true]")),
                Self.survey(
                    items(binary: #""options": ["Yes", "No"], "answer": 0"#, flags: "[false, true, true]")),
            ])
        let (a, b) = (heads[0].prefix(8), heads[1].prefix(8))
        for head in heads {
            let shown = try store.run(["show", id, "--revision", head])
            #expect(
                shown.stdout.contains(head == heads[0] ? "(binary): No\n" : "(binary): Yes\n"),
                "\(shown.stdout)")
        }
        let dry = try store.run(["resolve", id, "--merge", "--dry-run"])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(
            dry.stdout.contains(
                #"  item 1 "Come again?" answer: took "No" from \#(a)… (\#(a)… "No"; \#(b)… "Yes")"#),
            "\(dry.stdout)")
        #expect(
            dry.stdout.contains(#"  item 2 "Tried" answer: took TFT from \#(a)… (\#(a)… TFT; \#(b)… FTT)"#),
            "\(dry.stdout)")
        // --strict says the same lines on standard error, writing nothing.
        let strict = try store.run(["resolve", id, "--merge", "--strict"])
        #expect(
            strict.status == 75 && strict.stderr.contains(#"(\#(a)… "No"; \#(b)… "Yes")"#), "\(strict.stderr)"
        )
        let json = try store.json(["resolve", id, "--merge", "--dry-run"]) as! [String: Any]
        let contests = Self.contested(json)
        #expect(contests.count == 2)
        let binary = try #require(contests.first { $0["item"] as? String == Self.id(1) })
        #expect(binary["chosen"] as? Int == 0 && binary["chosenOption"] as? String == "No", "\(binary)")
        let values = try #require(binary["values"] as? [[String: Any]])
        #expect(
            values.map { $0["value"] as? Int } == [0, 0]
                && values.map { $0["option"] as? String } == ["No", "Yes"])
        let flags = try #require(contests.first { $0["item"] as? String == Self.id(5) })
        #expect(flags["chosenOption"] == nil, "\(flags)")
        #expect((flags["values"] as? [[String: Any]])?.allSatisfy { $0["option"] == nil } == true, "\(flags)")
        #expect(try store.versions(id).count == 3, "nothing written")
    }

    @Test(
        "Rule 1 (default) and rule 2: the winner's value for a contested field (the title too); different fields of one item both apply"
    )
    func rule2() throws {
        let store = try Store()
        let (id, _, _) = try Self.conflict(
            store,
            heads: [
                Self.survey(
                    [Self.binary(), Self.name(title: "Your name"), Self.rate(9), Self.dish()],
                    title: "Visit A"),
                Self.survey(
                    [Self.binary(), Self.name("Grace"), Self.rate(6), Self.dish()], title: "Visit B"),
            ])
        let (merge, shown) = try Self.merge(store, id)
        #expect(Self.contested(merge).map { $0["field"] as? String } == ["title", "answer"])
        #expect(
            Self.contested(merge).first?["item"] is NSNull
                && Self.contested(merge).first?["chosen"] as? String == "Visit A")
        #expect(shown["title"] as? String == "Visit A")
        let items = Self.items(shown)
        #expect(items[1]["title"] as? String == "Your name" && items[1]["answer"] as? String == "Grace")
        #expect(items[2]["answer"] as? Double == 9, "the winner's value")
    }

    @Test(
        "Rules 3 and 4: removed and modified elsewhere is kept and reported; removed and untouched elsewhere is removed"
    )
    func rules3and4() throws {
        let store = try Store()
        let (id, _, _) = try Self.conflict(
            store,
            heads: [
                Self.survey([Self.binary(), Self.rate(), Self.dish()]),
                Self.survey([Self.binary(), Self.name("Grace"), Self.dish()]),
            ])
        let (merge, shown) = try Self.merge(store, id, ["--strict"])
        #expect(Self.ids(shown) == [1, 2, 4].map(Self.id))
        #expect(Self.items(shown)[1]["answer"] as? String == "Grace")
        let notes = merge["notes"] as! [[String: Any]]
        #expect(
            notes.map { $0["note"] as? String } == ["keptDespiteRemoval"]
                && notes[0]["item"] as? String == Self.id(2))
    }

    @Test(
        "Rule 5: a move and an edit both apply; an item moved to different places takes the winner's place and is contested"
    )
    func rule5() throws {
        let store = try Store()
        let (id, _, _) = try Self.conflict(
            store,
            heads: [
                Self.survey([Self.dish(), Self.binary(), Self.name(), Self.rate()]),
                Self.survey([Self.binary(), Self.name(), Self.rate(), Self.dish(answer: "Fish")]),
            ])
        let (merge, shown) = try Self.merge(store, id, ["--strict"])
        #expect(Self.contested(merge).isEmpty)
        #expect(
            Self.ids(shown) == [4, 1, 2, 3].map(Self.id)
                && Self.items(shown)[0]["answer"] as? String == "Fish")

        let other = try Store()
        let (clash, _, _) = try Self.conflict(
            other,
            heads: [
                Self.survey([Self.name(), Self.rate(), Self.dish(), Self.binary()]),
                Self.survey([Self.name(), Self.rate(), Self.binary(), Self.dish()]),
            ])
        let (moved, order) = try Self.merge(other, clash)
        #expect(Self.ids(order) == [2, 3, 4, 1].map(Self.id))
        #expect(Self.contested(moved).map { $0["field"] as? String } == ["position"])
    }

    @Test(
        "Rule 6: inserts at one place on both sides are all kept, each side's run together, the winner's first"
    )
    func rule6() throws {
        let store = try Store()
        let (id, _, _) = try Self.conflict(
            store,
            heads: [
                Self.survey([
                    Self.binary(), Self.extra(10), Self.extra(11), Self.name(), Self.rate(), Self.dish(),
                ]),
                Self.survey([Self.binary(), Self.extra(20), Self.name(), Self.rate(), Self.dish()]),
            ])
        let (merge, shown) = try Self.merge(store, id, ["--strict"])
        #expect(Self.contested(merge).isEmpty)
        #expect(Self.ids(shown) == [1, 10, 11, 20, 2, 3, 4].map(Self.id))
    }

    @Test("Rule 7: the same new item on both sides is one item; its differing field is contested")
    func rule7() throws {
        let store = try Store()
        let (id, _, _) = try Self.conflict(
            store,
            heads: [
                Self.survey(Self.baseItems + [Self.extra(9, answer: "one")]),
                Self.survey(Self.baseItems + [Self.extra(9, answer: "two")]),
            ])
        let (merge, shown) = try Self.merge(store, id)
        #expect(Self.ids(shown) == [1, 2, 3, 4, 9].map(Self.id))
        #expect(
            Self.contested(merge).map { $0["field"] as? String } == ["answer"]
                && Self.items(shown)[4]["answer"] as? String == "one")
    }

    @Test("Rule 8: a kind change against an answer edit is contested as one unit")
    func rule8() throws {
        let store = try Store()
        let (id, _, _) = try Self.conflict(
            store,
            heads: [
                Self.survey([
                    Self.binary(), Self.name(), Self.extra(3, title: "Rate", answer: "good"), Self.dish(),
                ]),
                Self.survey([Self.binary(), Self.name(), Self.rate(2), Self.dish()]),
            ])
        let (merge, shown) = try Self.merge(store, id)
        #expect(Self.contested(merge).map { $0["field"] as? String } == ["kind"])
        #expect(
            Self.items(shown)[2]["kind"] as? String == "textField"
                && Self.items(shown)[2]["answer"] as? String == "good")
    }

    @Test(
        "A contest of the unit kind names a binary answer in it by its option label, as show does (it showed answer 0 beside the options); --json keeps the position"
    )
    func kindContestShowsBinaryAnswerByLabel() throws {
        let store = try Store()
        let picker = Item(
            number: 1,
            json:
                #"{"id": "\#(Self.id(1))", "title": "Come again?", "kind": "picker", "options": ["No", "Yes", "Maybe"]}"#
        )
        let (id, _, heads) = try Self.conflict(
            store,
            heads: [
                Self.survey([Self.binary(0), Self.name(), Self.rate(), Self.dish()]),
                Self.survey([picker, Self.name(), Self.rate(), Self.dish()]),
            ])
        let (a, b) = (heads[0].prefix(8), heads[1].prefix(8))
        let binary = #"binary, options ["No", "Yes"], answer "No""#
        let line =
            #"  item 1 "Come again?" kind: took \#(binary) from \#(a)… (\#(a)… \#(binary); \#(b)… picker, options ["No", "Yes", "Maybe"])"#
        let dry = try store.run(["resolve", id, "--merge", "--dry-run"])
        #expect(dry.status == 0 && dry.stdout.contains(line), "\(dry.stdout)\(dry.stderr)")
        let strict = try store.run(["resolve", id, "--merge", "--strict"])
        #expect(strict.status == 75 && strict.stderr.contains(line), "\(strict.stderr)")
        let json = try store.json(["resolve", id, "--merge", "--dry-run"]) as! [String: Any]
        let contest = try #require(Self.contested(json).first)
        #expect(contest["field"] as? String == "kind" && contest["chosenOption"] == nil, "\(contest)")
        #expect((contest["chosen"] as? [String: Any])?["answer"] as? Int == 0, "\(contest)")
        let values = try #require(contest["values"] as? [[String: Any]])
        #expect(values.allSatisfy { $0["option"] == nil }, "\(values)")
        #expect((values[0]["value"] as? [String: Any])?["answer"] as? Int == 0, "\(values)")
        #expect(try store.versions(id).count == 3, "nothing written")
    }

    @Test("Rule 9: merged options and answer that break a rule take the winner's whole item")
    func rule9() throws {
        let store = try Store()
        let (id, _, _) = try Self.conflict(
            store,
            heads: [
                Self.survey([Self.binary(), Self.name(), Self.rate(), Self.dish(["Soup", "Fish"])]),
                Self.survey([Self.binary(), Self.name(), Self.rate(), Self.dish(answer: "Cake")]),
            ])
        let (merge, shown) = try Self.merge(store, id)
        #expect(Self.contested(merge).map { $0["field"] as? String } == ["item"])
        #expect((merge["notes"] as! [[String: Any]]).map { $0["note"] as? String } == ["tookWholeItem"])
        let dish = Self.items(shown)[3]
        #expect(dish["options"] as? [String] == ["Soup", "Fish"] && dish["answer"] == nil)
        #expect(try store.run(["verify"]).status == 0)
    }

    @Test(
        "Rule 10: three heads arriving in different orders on two replicas merge to the same revision; after sync, one head"
    )
    func rule10() throws {
        let directory = try CommandRunner.temporaryDirectory()
        let replicas = (0..<3).map {
            SyncTests.Replica(path: directory.appendingPathComponent("r\($0)").path)
        }
        for replica in replicas { #expect(try replica.run(["init"]).status == 0) }
        let baseFile = directory.appendingPathComponent("base.json")
        try Data(Self.survey(Self.baseItems).utf8).write(to: baseFile)
        let created = try replicas[0].json(["new", "--from", baseFile.path]) as! [String: Any]
        let id = created["id"] as! String
        for replica in replicas.dropFirst() {
            #expect(try replicas[0].run(["sync", replica.path]).status == 0)
        }
        let heads = [
            Self.survey([Self.binary(0), Self.name(), Self.rate(), Self.dish()]),
            Self.survey([Self.binary(), Self.name("Grace"), Self.rate(3), Self.dish()]),
            Self.survey(
                [Self.binary(), Self.name(), Self.rate(7), Self.dish(answer: "Soup")], title: "Visit 3"),
        ]
        for (index, replica) in replicas.enumerated() {
            let file = directory.appendingPathComponent("h\(index).json")
            try Data(heads[index].utf8).write(to: file)
            #expect(try replica.run(["save", id, "--from", file.path]).status == 0)
        }
        // Replica 0 hears from 1 then 2; replica 2 from 1 then 0 (1 relays nothing back).
        #expect(try replicas[0].run(["sync", replicas[1].path]).status == 0)
        #expect(try replicas[2].run(["sync", replicas[1].path]).status == 0)
        #expect(try replicas[0].run(["sync", replicas[2].path]).status == 0)
        let first = try replicas[0].json(["resolve", id, "--merge"]) as! [String: Any]
        let second = try replicas[2].json(["resolve", id, "--merge"]) as! [String: Any]
        #expect((first["heads"] as? [String])?.count == 3)
        #expect(first["revision"] as? String == second["revision"] as? String)
        #expect(try replicas[0].run(["sync", replicas[2].path]).status == 0)
        let conflicts = try replicas[0].json(["conflicts"]) as! [Any]
        #expect(conflicts.isEmpty)
        let shown = try replicas[2].json(["show", id]) as! [String: Any]
        #expect(
            shown["title"] as? String == "Visit 3" && Self.items(shown)[1]["answer"] as? String == "Grace")
    }

    @Test(
        "diff: the winner against each other head (a JSON array), REV_A against the winner, REV_A against REV_B (one object)"
    )
    func diff() throws {
        let store = try Store()
        let (id, base, heads) = try Self.conflict(
            store,
            heads: [
                Self.survey(
                    [Self.binary(), Self.name("Grace"), Self.rate(), Self.extra(9)], title: "Visit 2"),
                Self.survey([Self.rate(), Self.binary(), Self.name(), Self.dish()]),
            ])
        let all = try store.json(["diff", id]) as! [[String: Any]]
        #expect(
            all.count == 1 && all[0]["from"] as? String == heads[0] && all[0]["to"] as? String == heads[1])
        let one = try store.json(["diff", id, base]) as! [String: Any]
        #expect(one["from"] as? String == base && one["to"] as? String == heads[0])
        #expect((one["title"] as? [String: Any])?["to"] as? String == "Visit 2")
        let changes = one["items"] as! [[String: Any]]
        let byID = Dictionary(uniqueKeysWithValues: changes.map { ($0["id"] as! String, $0) })
        #expect(byID[Self.id(2)]?["change"] as? String == "modified")
        let fields = byID[Self.id(2)]?["fields"] as? [[String: Any]]
        #expect(
            fields?.first?["field"] as? String == "answer" && fields?.first?["from"] as? String == "Ada"
                && fields?.first?["to"] as? String == "Grace")
        #expect(
            byID[Self.id(4)]?["change"] as? String == "removed"
                && (byID[Self.id(4)]?["position"] as? [String: Any])?["from"] as? Int == 4)
        #expect(
            byID[Self.id(9)]?["change"] as? String == "added"
                && (byID[Self.id(9)]?["position"] as? [String: Any])?["to"] as? Int == 4)
        #expect((byID[Self.id(9)]?["position"] as? [String: Any])?["from"] is NSNull)
        let pair = try store.json(["diff", id, base, heads[1]]) as! [String: Any]
        let moved = (pair["items"] as! [[String: Any]]).filter { $0["change"] as? String == "moved" }
        #expect(moved.map { $0["id"] as? String } == [Self.id(3)])
        let text = try store.run(["diff", id, base])
        #expect(
            text.status == 0 && text.stdout.contains(#"answer: "Ada" → "Grace""#)
                && text.stdout.contains(#"- 4 "Dish": removed"#))
        #expect(try store.run(["diff", id, "9-nope"]).status == 66)
    }

    @Test(
        "conflicts counts contested fields; resolve --all --merge --strict resolves what merges cleanly, lists the rest, exits 75"
    )
    func resolveAll() throws {
        let store = try Store()
        let (contestedID, _, _) = try Self.conflict(
            store,
            heads: [
                Self.survey([Self.binary(), Self.name(), Self.rate(9), Self.dish()]),
                Self.survey([Self.binary(), Self.name(), Self.rate(6), Self.dish()]),
            ])
        let created =
            try store.json(["new", "--from", store.write(Self.survey(Self.baseItems), "second.json")])
            as! [String: Any]
        let cleanID = created["id"] as! String
        for (index, head) in [
            Self.survey([Self.binary(0)] + Self.baseItems.dropFirst()),
            Self.survey(Self.baseItems.dropLast()),
        ].enumerated() {
            #expect(
                try store.run([
                    "save", cleanID, "--from", store.write(head, "c\(index).json"), "--base",
                    created["revision"] as! String,
                ]).status == 0)
        }
        let rows = try store.json(["conflicts"]) as! [[String: Any]]
        let counts = Dictionary(
            uniqueKeysWithValues: rows.map { ($0["id"] as! String, $0["contested"] as? Int) })
        #expect(counts == [contestedID: 1, cleanID: 0])
        let all = try store.run(["resolve", "--all", "--merge", "--strict", "--json"])
        #expect(all.status == 75)
        let report = try JSONSerialization.jsonObject(with: Data(all.stdout.utf8)) as! [String: Any]
        #expect((report["resolved"] as! [[String: Any]]).map { $0["id"] as? String } == [cleanID])
        #expect((report["unresolved"] as! [[String: Any]]).map { $0["id"] as? String } == [contestedID])
        let left = try store.json(["conflicts"]) as! [[String: Any]]
        #expect(left.map { $0["id"] as? String } == [contestedID])
        #expect(try store.run(["resolve", "--all", "--merge", "--strict"]).status == 75)
        #expect(try store.run(["resolve", "--all", "--merge"]).status == 0)
        #expect((try store.json(["conflicts"]) as! [Any]).isEmpty)
        let nothing = try store.run(["resolve", "--all", "--merge"])
        #expect(nothing.status == 0 && nothing.stdout.isEmpty)
        #expect(nothing.stderr == "no document is in conflict; nothing to resolve\n")
        #expect(try store.run(["resolve", "--all", "--accept"]).status == 64)
    }

    /// Two replicas with the same two-head conflict (its heads in the order saved). With
    /// `contested`, both heads change "Rate" differently; otherwise they change different items.
    /// With `synced` false, the second head is on the second replica only.
    static func replicatedConflict(contested: Bool = true, synced: Bool = true) throws -> (
        SyncTests.Replica, SyncTests.Replica, String, [String]
    ) {
        let directory = try CommandRunner.temporaryDirectory()
        let a = SyncTests.Replica(path: directory.appendingPathComponent("laptop").path)
        let b = SyncTests.Replica(path: directory.appendingPathComponent("phone").path)
        #expect(try a.run(["init", "--device", "laptop"]).status == 0)
        #expect(try b.run(["init", "--device", "phone"]).status == 0)
        let texts = [
            Self.survey(Self.baseItems),
            Self.survey([Self.binary(0), Self.name(), Self.rate(contested ? 9 : 8), Self.dish()]),
            Self.survey([Self.binary(), Self.name("Grace"), Self.rate(contested ? 2 : 8), Self.dish()]),
        ]
        let files = try texts.enumerated().map { index, text in
            let url = directory.appendingPathComponent("f\(index).json")
            try Data(text.utf8).write(to: url)
            return url.path
        }
        let created = try a.json(["new", "--from", files[0]]) as! [String: Any]
        let id = created["id"] as! String
        #expect(try a.run(["sync", b.path]).status == 0)
        let one = try a.json(["save", id, "--from", files[1]]) as! [String: Any]
        let two = try b.json(["save", id, "--from", files[2]]) as! [String: Any]
        if synced { #expect(try a.run(["sync", b.path]).status == 0) }
        return (a, b, id, [one["revision"] as! String, two["revision"] as! String])
    }

    @Test(
        "Two real stores resolving the same conflict offline (--merge, --accept, --keep) write the same revision; after sync no conflict, verify clean",
        arguments: ["merge", "accept", "keep"])
    func convergingResolutions(kind: String) throws {
        let (a, b, id, heads) = try Self.replicatedConflict()
        let arguments: [String] =
            switch kind {
            case "merge": ["--merge"]
            case "accept": ["--accept"]
            default: ["--keep", heads[0]]
            }
        let first = try a.json(["resolve", id] + arguments) as! [String: Any]
        let second = try b.json(["resolve", id] + arguments) as! [String: Any]
        #expect(first["revision"] as? String == second["revision"] as? String)
        let report = try a.json(["sync", b.path]) as! [String: Any]
        #expect(
            report["sent"] as? Int == 0 && report["received"] as? Int == 0,
            "both already hold the one resolution")
        for replica in [a, b] {
            #expect((try replica.json(["conflicts"]) as! [Any]).isEmpty)
            #expect(try replica.run(["verify"]).status == 0)
        }
        #expect(try a.state() == b.state())
    }

    @Test("sync --merge resolves on both sides every conflict that merges cleanly, and leaves contested ones")
    func syncMerge() throws {
        let (a, b, id, _) = try Self.replicatedConflict()
        let contested = try a.json(["sync", b.path, "--merge"]) as! [String: Any]
        #expect(contested["unmerged"] as? [String] == [id] && contested["merged"] as? [String] == [])

        let (c, d, clean, _) = try Self.replicatedConflict(contested: false, synced: false)
        let report = try c.json(["sync", d.path, "--merge"]) as! [String: Any]
        #expect(report["merged"] as? [String] == [clean])
        for replica in [c, d] {
            #expect((try replica.json(["conflicts"]) as! [Any]).isEmpty)
            #expect(try replica.run(["verify"]).status == 0)
        }
        #expect(try c.state() == d.state())
        let shown = try d.json(["show", clean]) as! [String: Any]
        #expect(
            Self.items(shown)[0]["answer"] as? Int == 0
                && Self.items(shown)[1]["answer"] as? String == "Grace")
    }

    @Test(
        "prune of a document in conflict keeps the heads and their merge base, so resolve --merge stays three-way"
    )
    func pruneKeepsMergeBase() throws {
        let store = try Store()
        #expect(try store.run(["init"]).status == 0)
        let created =
            try store.json(["new", "--from", store.write(Self.survey(Self.baseItems), "f.json")])
            as! [String: Any]
        let id = created["id"] as! String
        let first = created["revision"] as! String
        let second =
            try store.json([
                "save", id, "--from",
                store.write(Self.survey([Self.binary(0)] + Self.baseItems.dropFirst()), "s.json"),
            ]) as! [String: Any]
        let base = second["revision"] as! String
        #expect(
            try store.run([
                "save", id, "--from",
                store.write(Self.survey([Self.binary(0), Self.name(), Self.rate(9), Self.dish()]), "a.json"),
                "--base", base,
            ]).status == 0)
        #expect(
            try store.run([
                "save", id, "--from",
                store.write(
                    Self.survey([Self.binary(0), Self.name("Grace"), Self.rate(), Self.dish()]), "b.json"),
                "--base", base,
            ]).status == 0)
        let pruned = try store.json(["prune", id]) as! [String: Any]
        let rows = pruned["documents"] as! [[String: Any]]
        #expect(rows.first?["pruned"] as? [String] == [first])
        let merged = try store.json(["resolve", id, "--merge", "--strict"]) as! [String: Any]
        #expect(merged["base"] as? [String] == [base] && merged["twoWay"] as? Bool == false)
        let shown = try store.json(["show", id]) as! [String: Any]
        #expect(
            Self.items(shown)[2]["answer"] as? Double == 9
                && Self.items(shown)[1]["answer"] as? String == "Grace")
        #expect(Self.items(shown)[0]["answer"] as? Int == 0)
    }

    @Test(
        "A head based on a revision pruned elsewhere merges two-way: every difference contested, and the output says so"
    )
    func twoWayAfterPrune() throws {
        let (a, b, id, _) = try Self.replicatedConflict(contested: false, synced: false)
        // a was not in conflict when it pruned: the base went before b's head arrived.
        #expect(try a.run(["prune", id]).status == 0)
        #expect(try a.run(["sync", b.path]).status == 0)
        let merged = try a.json(["resolve", id, "--merge", "--dry-run"]) as! [String: Any]
        #expect(
            merged["twoWay"] as? Bool == true && merged["base"] is NSNull && merged["twoWayReason"] is String)
        #expect(Self.contested(merged).map { $0["field"] as? String } == ["answer", "answer"])
        let text = try a.run(["resolve", id, "--merge", "--dry-run"])
        #expect(text.stdout.contains("two-way merge"))
        #expect(try a.run(["resolve", id, "--merge", "--strict"]).status == 75)
    }

    @Test(
        "A revision copied in before its parent (an rsync under way) makes a conflict whose two-way merge says the history here is incomplete, naming the missing parent, not that the heads share no ancestor"
    )
    func twoWayWhileHistoryIsMissing() throws {
        let a = try Store(), b = try Store()
        defer {
            try? FileManager.default.removeItem(at: a.directory)
            try? FileManager.default.removeItem(at: b.directory)
        }
        #expect(try a.run(["init"]).status == 0 && b.run(["init"]).status == 0)
        let created =
            try a.json(["new", "--from", a.write(Self.survey(Self.baseItems), "base.json")]) as! [String: Any]
        let id = created["id"] as! String
        #expect(try a.run(["sync", b.path]).status == 0)
        let second = try a.json(["edit", id, "--title", "Second"]) as! [String: Any]
        let third = try a.json(["edit", id, "--title", "Third"]) as! [String: Any]
        let parent = try #require(second["revision"] as? String),
            child = try #require(third["revision"] as? String)
        // Only the newest package has arrived on b.
        try FileManager.default.copyItem(
            atPath: a.path + "/Documents/\(id)/\(child).survey",
            toPath: b.path + "/Documents/\(id)/\(child).survey")
        let merged = try b.json(["resolve", id, "--merge", "--dry-run"]) as! [String: Any]
        #expect(merged["twoWay"] as? Bool == true, "\(merged)")
        let reason = try #require(merged["twoWayReason"] as? String)
        #expect(
            reason.contains(
                "history is incomplete: the parent \(parent) of \(child) is not here (a copy still under way"),
            "\(reason)")
        // Once the copy is complete there is no conflict left to merge.
        try FileManager.default.copyItem(
            atPath: a.path + "/Documents/\(id)/\(parent).survey",
            toPath: b.path + "/Documents/\(id)/\(parent).survey")
        #expect(try b.run(["resolve", id, "--merge", "--dry-run"]).stderr.contains("not in conflict"))
    }

    @Test(
        "demo: two devices agree after a clean merge and a contested one; its temporary folder is removed; a re-run reuses a kept store"
    )
    func demo() throws {
        let result = try CommandRunner.run(["demo", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let summary = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
        #expect(summary["agree"] as? Bool == true && summary["clean"] as? Bool == true)
        #expect(summary["contested"] as? [String] == ["Rate us.answer"])
        #expect(summary["resolutionLaptop"] as? String == summary["resolutionPhone"] as? String)
        #expect(summary["kept"] as? Bool == false)
        #expect(
            !FileManager.default.fileExists(atPath: summary["folder"] as! String),
            "the temporary folder is removed")

        let folder = try CommandRunner.temporaryDirectory().appendingPathComponent("demo").path
        let first = try CommandRunner.run(["demo", "--store", folder])
        #expect(first.status == 0 && first.stdout.contains("Created two stores"))
        let again = try CommandRunner.run(["demo", "--store", folder])
        #expect(again.status == 0 && again.stdout.contains("Using the existing demo stores in \(folder)"))
        #expect(
            again.stdout.contains("no conflict, they agree")
                && again.stdout.contains("verify, both stores: clean"))
        #expect(
            FileManager.default.fileExists(atPath: folder + "/laptop/Store.plist")
                && FileManager.default.fileExists(atPath: folder + "/phone/Store.plist"))

        // The advice it ends with runs as printed, in a folder whose name a shell would split.
        let spaced = try CommandRunner.temporaryDirectory().appendingPathComponent("my demo").path
        let kept = try CommandRunner.run(["demo", "--store", spaced])
        let advice = try #require(
            kept.stdout.split(separator: "\n").last.flatMap { line in
                line.hasPrefix("Explore it: ") ? line.dropFirst("Explore it: ".count) : nil
            }, "\(kept.stdout)")
        #expect(advice.hasPrefix("survey versions --store '\(spaced)/laptop' "), "\(advice)")
        let explored = try CommandRunner.run(
            ["-c", "PATH=\"$0:$PATH\"; " + advice, CommandRunner.binary.deletingLastPathComponent().path],
            executable: URL(fileURLWithPath: "/bin/bash"), timeLimit: 60)
        #expect(
            explored.status == 0 && explored.stdout.contains("resolution"),
            "\(explored.stdout)\(explored.stderr)")
    }

    @Test(
        "diff and resolve --merge --dry-run write a quote in quoted text as \\\" and a backslash as \\\\ (a quote in a title or answer seemed to end it)"
    )
    func quotesInQuotedText() throws {
        let store = try Store()
        let (id, _, heads) = try Self.conflict(
            store,
            heads: [
                Self.survey(
                    [
                        Self.binary(), Self.name(#"say \"hi\""#, title: #"Your \"name\""#), Self.rate(),
                        Self.dish(),
                    ],
                    title: #"Visit \\ \"2\""#),
                Self.survey(
                    [Self.binary(), Self.name(#"a\\b"#, title: #"Your \"name\""#), Self.rate(), Self.dish()]),
            ])
        let diff = try store.run(["diff", id])
        #expect(diff.status == 0, "\(diff.stderr)")
        for line in [
            #"  title: "Visit \\ \"2\"" → "Visit""#, #"* 2 "Your \"name\"":"#,
            #"    answer: "say \"hi\"" → "a\\b""#,
        ] {
            #expect(diff.stdout.contains(line + "\n"), "\(line) in \(diff.stdout)")
        }
        let dry = try store.run(["resolve", id, "--merge", "--dry-run"])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(
            dry.stdout.contains(
                #"  item 2 "Your \"name\"" answer: took "say \"hi\"" from \#(heads[0].prefix(8))… (\#(heads[0].prefix(8))… "say \"hi\""; \#(heads[1].prefix(8))… "a\\b")"#
            ), "\(dry.stdout)")
        // The merge against the winner: the contested answer is the winner's, the title too.
        #expect(
            dry.stdout.hasSuffix("the merge against the winner (nothing written):\n  no differences\n"),
            "\(dry.stdout)")
        // JSON carries the text as it is.
        let shown = try store.json(["show", id]) as! [String: Any]
        #expect(
            shown["title"] as? String == #"Visit \ "2""#
                && Self.items(shown)[1]["answer"] as? String == #"say "hi""#)
    }

    @Test(
        "resolve --merge --dry-run --json has the merge against the winner that the text shows, as againstWinner (it was missing); null without --dry-run; a binary answer in it, and in diff, by its option label too"
    )
    func dryRunJSONAgainstWinner() throws {
        let store = try Store()
        let (id, _, heads) = try Self.conflict(
            store,
            heads: [
                Self.survey([Self.binary(), Self.name("Grace"), Self.rate(9), Self.dish()]),
                Self.survey([Self.binary(0), Self.name(), Self.rate(6), Self.dish()], title: "Visit 2"),
            ])
        let dry = try store.json(["resolve", id, "--merge", "--dry-run"]) as! [String: Any]
        let against = try #require(dry["againstWinner"] as? [String: Any], "\(dry)")
        #expect(against["from"] as? String == heads[0] && against["to"] is NSNull, "\(against)")
        #expect((against["title"] as? [String: Any])?["to"] as? String == "Visit 2", "\(against)")
        let items = against["items"] as! [[String: Any]]
        // Item 1's answer comes from the other head; item 3's contest takes the winner's 9.
        #expect(items.map { $0["id"] as? String } == [Self.id(1)], "\(items)")
        let field = (items.first?["fields"] as? [[String: Any]])?.first
        #expect(
            field?["field"] as? String == "answer" && field?["from"] as? Int == 1
                && field?["to"] as? Int == 0,
            "\(items)")
        // A binary answer's positions, and the labels they choose.
        #expect(
            field?["fromOption"] as? String == "Yes" && field?["toOption"] as? String == "No", "\(items)")
        #expect(items.first?["position"] as? [String: Int] == ["from": 1, "to": 1], "\(items)")
        // The text output shows the same differences, a binary answer by its label as show
        // prints it (it showed the positions, 1 → 0), and so does diff.
        let text = try store.run(["resolve", id, "--merge", "--dry-run"]).stdout
        #expect(
            text.contains(
                "the merge against the winner (nothing written):\n  title: \"Visit\" → \"Visit 2\"\n* 1 \"Come again?\":\n    answer: \"Yes\" → \"No\"\n"
            ), "\(text)")
        let diff = try store.run(["diff", id, heads[0], heads[1]])
        #expect(
            diff.stdout.contains("* 1 \"Come again?\":\n    answer: \"Yes\" → \"No\"\n"), "\(diff.stdout)")
        let written = try store.json(["resolve", id, "--merge"]) as! [String: Any]
        #expect(written["againstWinner"] is NSNull && written["revision"] is String, "\(written)")
    }
}
