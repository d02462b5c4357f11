import Foundation
import Testing

extension MergeCommandTests {
    /// A document made in a store from some content, and its revisions saved on top of any
    /// base, each from a file of its own.
    final class History {
        let store: Store
        let id: String
        /// The document's first revision.
        let origin: String
        private var saves = 0

        init(_ store: Store, _ content: String) throws {
            self.store = store
            let created =
                try store.json(["new", "--from", store.write(content, "origin.json")]) as! [String: Any]
            id = created["id"] as! String
            origin = created["revision"] as! String
        }

        /// Saves `content` on top of `base`; returns the new revision.
        func save(_ content: String, base: String) throws -> String {
            saves += 1
            let saved =
                try store.json([
                    "save", id, "--from", store.write(content, "save\(saves).json"), "--base", base,
                ])
                as! [String: Any]
            return saved["revision"] as! String
        }
    }

    @Test(
        "Three heads, two saved from A and one from A's parent O: resolve --merge merges the two from A first, so the name one of them set back to O's and the note it changed both apply, nothing contested; --dry-run --json names the group and its base, and the text says so"
    )
    func threeHeadsFromDifferentForks() throws {
        let store = try Store()
        #expect(try store.run(["init", "--device", "test"]).status == 0)
        func items(name: String = "Ada", note: String = "none", rate: Int = 8, come: Int = 1) -> String {
            Self.survey([
                Self.binary(come), Self.name(name), Self.rate(rate), Self.dish(), Self.extra(5, answer: note),
            ])
        }
        let created = try store.json(["new", "--from", store.write(items(), "o.json")]) as! [String: Any]
        let id = created["id"] as! String
        let o = created["revision"] as! String
        func save(_ content: String, _ file: String, base: String) throws -> String {
            let saved =
                try store.json(["save", id, "--from", store.write(content, file), "--base", base])
                as! [String: Any]
            return saved["revision"] as! String
        }
        let a = try save(items(name: "Grace", note: "from A"), "a.json", base: o)
        let h1 = try save(items(name: "Ada", note: "from H1"), "h1.json", base: a)
        // H2 changes only whether they come again.
        let h2 = try save(items(name: "Grace", note: "from A", come: 0), "h2.json", base: a)
        let h3 = try save(items(rate: 9), "h3.json", base: o)

        let dry = try store.json(["resolve", id, "--merge", "--dry-run"]) as! [String: Any]
        #expect(dry["base"] as? [String] == [o] && dry["twoWay"] as? Bool == false, "\(dry)")
        #expect(Self.contested(dry).isEmpty, "\(Self.contested(dry))")
        let groups = try #require(dry["groups"] as? [[String: Any]], "\(dry)")
        #expect(groups.count == 1)
        #expect(Set(groups.first?["heads"] as? [String] ?? []) == [h1, h2])
        #expect(groups.first?["base"] as? [String] == [a] && groups.first?["twoWay"] as? Bool == false)
        #expect(groups.first?["twoWayReason"] is NSNull)
        let text = try store.run(["resolve", id, "--merge", "--dry-run"])
        #expect(
            text.stdout.contains("first merged 2 heads (")
                && text.stdout.contains(
                    "which share history the other heads lack, from base \(a.prefix(14))…")
                && text.stdout.contains("merged 3 heads (") && text.stdout.contains("nothing contested"),
            "\(text.stdout)")

        let (merge, shown) = try Self.merge(store, id, ["--strict"])
        #expect(Set(merge["heads"] as? [String] ?? []) == [h1, h2, h3])
        let answers = Self.items(shown).map { $0["answer"] }
        #expect(answers[0] as? Int == 0, "H2's answer")
        #expect(answers[1] as? String == "Ada", "H1 set the name back to O's")
        #expect(answers[2] as? Double == 9, "H3's rating")
        #expect(answers[4] as? String == "from H1", "only H1 changed the note since A")
        #expect((try store.json(["conflicts"]) as! [Any]).isEmpty)
    }

    @Test(
        "A whole item a group took by rule 9 is reported as a contest of item even where the merge changes it further (a third head retitled it); the note tookWholeItem only where the merge holds that item as the group took it"
    )
    func groupWholeItemChangedFurther() throws {
        let store = try Store()
        #expect(try store.run(["init", "--device", "test"]).status == 0)
        func survey(
            name: String = "x", dish: String = "Dish", options: String = #"["Soup", "Fish", "Cake"]"#,
            answer: String = "Fish", title: String = "T"
        ) -> String {
            #"{"title": "\#(title)", "items": [{"id": "\#(Self.id(2))", "kind": "textField", "title": "Name", "answer": "\#(name)"}, {"id": "\#(Self.id(4))", "kind": "picker", "title": "\#(dish)", "options": \#(options), "answer": "\#(answer)"}]}"#
        }
        for (third, noted) in [(survey(dish: "Dish, retitled"), false), (survey(title: "T, retitled"), true)]
        {
            let history = try History(store, survey())
            let a = try history.save(survey(name: "from A"), base: history.origin)
            // In the group: one answers Cake, the other removes Cake: rule 9 takes a whole item.
            _ = try history.save(survey(name: "from A", answer: "Cake"), base: a)
            _ = try history.save(survey(name: "from A", options: #"["Soup", "Fish"]"#), base: a)
            _ = try history.save(third, base: history.origin)
            let dry = try store.json(["resolve", history.id, "--merge", "--dry-run"]) as! [String: Any]
            #expect((dry["groups"] as? [Any])?.count == 1, "\(dry)")
            #expect(
                Self.contested(dry).contains {
                    $0["item"] as? String == Self.id(4) && $0["field"] as? String == "item"
                },
                "\(Self.contested(dry))")
            let notes = (dry["notes"] as? [[String: Any]] ?? []).filter {
                $0["note"] as? String == "tookWholeItem"
            }
            #expect(notes.count == (noted ? 1 : 0), "\(dry["notes"] ?? [])")
        }
    }

    @Test(
        "A group's change that sets a field back to O's value counts as a change from O too: when the third head changed that field, the two are contested (the third's value silently replaced it), each group head listed with its own value, and --prefer makes either win"
    )
    func groupSettingBackIsContested() throws {
        let store = try Store()
        #expect(try store.run(["init", "--device", "test"]).status == 0)
        let history = try History(store, Self.survey([Self.name(), Self.rate(6)]))
        let (id, o) = (history.id, history.origin)
        func save(_ rate: Int, title: String = "Visit", base: String) throws -> String {
            try history.save(Self.survey([Self.name(), Self.rate(rate)], title: title), base: base)
        }
        // A sets the rating to 2; H1 sets it back to 6, H2 changes only the title; H3,
        // from O, sets it to 8.
        let a = try save(2, base: o)
        let h1 = try save(6, base: a)
        let h2 = try save(2, title: "Visit again", base: a)
        let h3 = try save(8, base: o)

        for (prefer, expected) in [(h1, 6), (h3, 8)] {
            let dry =
                try store.json(["resolve", id, "--merge", "--dry-run", "--prefer", prefer]) as! [String: Any]
            let contests = Self.contested(dry)
            #expect(contests.count == 1, "\(contests)")
            let contest = try #require(contests.first)
            #expect(contest["field"] as? String == "answer" && contest["chosenRevision"] as? String == prefer)
            #expect(contest["chosen"] as? Int == expected, "\(contest)")
            let values = (contest["values"] as? [[String: Any]] ?? []).map {
                ($0["revision"] as! String, ($0["value"] as? Int) ?? -1, $0["unchanged"] as! Bool)
            }
            #expect(Set(values.map(\.0)) == [h1, h2, h3], "\(values)")
            #expect(values.first { $0.0 == h1 }.map { $0.1 == 6 && !$0.2 } == true, "\(values)")
            #expect(values.first { $0.0 == h2 }.map { $0.1 == 2 && $0.2 } == true, "H2 left it as A had it")
            #expect(values.first { $0.0 == h3 }.map { $0.1 == 8 && !$0.2 } == true, "\(values)")
        }
        #expect(
            try store.run(["resolve", id, "--merge", "--strict"]).status == 75, "the rating is contested")
        let (merge, shown) = try Self.merge(store, id, ["--prefer", h1])
        #expect(Self.contested(merge).count == 1)
        #expect(Self.items(shown)[1]["answer"] as? Int == 6, "the value set back won, as preferred")
        #expect(shown["title"] as? String == "Visit again", "H2's title, changed on one side only")
    }

    @Test(
        "A field set back inside a group nested in another group stays a change through every pass: contested with the last head's change of it (it was lost once the outer group's base held the value set back)"
    )
    func nestedGroupSettingBackIsContested() throws {
        let store = try Store()
        #expect(try store.run(["init", "--device", "test"]).status == 0)
        func content(name: String = "Ada", rate: Int = 6, title: String = "Visit") -> String {
            Self.survey([Self.rate(rate), Self.name(name)], title: title)
        }
        let history = try History(store, content())
        let (id, o) = (history.id, history.origin)
        func save(_ text: String, base: String) throws -> String { try history.save(text, base: base) }
        // O ← A0 ← A (the name Fay); O ← C (a title); M merges A and C; H1 from M sets the
        // name back to Ada; H2 from A, H3 from C and H4 from O (the name Cy).
        let a0 = try save(content(rate: 5), base: o)
        let a = try save(content(name: "Fay", rate: 5), base: a0)
        let c = try save(content(title: "Visit C"), base: o)
        let m =
            try #require(try store.json(["resolve", id, "--merge"]) as? [String: Any])["revision"] as! String
        let h1 = try save(content(rate: 5, title: "Visit C"), base: m)
        _ = try save(content(name: "Fay", rate: 5, title: "Visit 2"), base: a)
        _ = try save(content(rate: 3, title: "Visit C"), base: c)
        let h4 = try save(content(name: "Cy"), base: o)

        let dry = try store.json(["resolve", id, "--merge", "--dry-run", "--prefer", h1]) as! [String: Any]
        #expect(
            (dry["groups"] as? [[String: Any]] ?? []).count == 2, "two nested groups: \(dry["groups"] ?? "")")
        let name = try #require(
            Self.contested(dry).first {
                $0["title"] as? String == "Name" && $0["field"] as? String == "answer"
            },
            "the name is contested: \(Self.contested(dry))")
        #expect(name["chosen"] as? String == "Ada" && name["chosenRevision"] as? String == h1, "\(name)")
        let changed = (name["values"] as? [[String: Any]] ?? []).filter { $0["unchanged"] as? Bool == false }
            .compactMap { $0["revision"] as? String }
        #expect(Set(changed).isSuperset(of: [h1, h4]), "\(name)")
        let other = try store.json(["resolve", id, "--merge", "--dry-run", "--prefer", h4]) as! [String: Any]
        #expect(
            Self.contested(other).contains {
                $0["chosen"] as? String == "Cy" && $0["chosenRevision"] as? String == h4
            },
            "\(Self.contested(other))")
    }

    @Test(
        "A group's move of an item back to its place in O counts as a move from O too: when the third head moved that item elsewhere, the two moves are contested (the third's order silently won), and --prefer makes either win"
    )
    func groupMovingBackIsContested() throws {
        let store = try Store()
        #expect(try store.run(["init", "--device", "test"]).status == 0)
        let items =
            [Self.extra(1, title: "One"), Self.extra(2, title: "Two"), Self.extra(3, title: "Three")]
            + [Self.extra(4, title: "Four")]
        func content(_ order: [Int], answer: String = "x") -> String {
            Self.survey(order.map { $0 == 3 ? Self.extra(3, title: "Three", answer: answer) : items[$0 - 1] })
        }
        let history = try History(store, content([1, 2, 3, 4]))
        let (id, o) = (history.id, history.origin)
        func save(_ text: String, base: String) throws -> String { try history.save(text, base: base) }
        // A moves One to the end; H1 moves it back to the start, H2 only answers Three;
        // H3, from O, moves One after Three.
        let a = try save(content([2, 3, 4, 1]), base: o)
        let h1 = try save(content([1, 2, 3, 4]), base: a)
        _ = try save(content([2, 3, 4, 1], answer: "from H2"), base: a)
        let h3 = try save(content([2, 3, 1, 4]), base: o)

        for prefer in [h1, h3] {
            let dry =
                try store.json(["resolve", id, "--merge", "--dry-run", "--prefer", prefer]) as! [String: Any]
            let contests = Self.contested(dry)
            let position = try #require(
                contests.first { $0["field"] as? String == "position" }, "\(contests)")
            #expect(position["chosenRevision"] as? String == prefer, "\(position)")
            let moved = (position["values"] as? [[String: Any]] ?? []).filter {
                $0["unchanged"] as? Bool == false
            }
            #expect(
                Set(moved.compactMap { $0["revision"] as? String }).isSuperset(of: [h1, h3]), "\(position)")
        }
        let (_, shown) = try Self.merge(store, id, ["--prefer", h1])
        let titles = Self.items(shown).map { $0["title"] as? String }
        #expect(titles == ["One", "Two", "Three", "Four"], "H1's move back, preferred: \(titles)")
        #expect(Self.items(shown)[2]["answer"] as? String == "from H2")
    }

    @Test(
        "A contest that a group won names the head of the group that made the change, and marks unchanged a head of the group that left the field as its own group's base and this merge's base have it (a position contest named the head that had not moved the item, and marked it changed)"
    )
    func groupContestNamesTheHeadThatChanged() throws {
        let store = try Store()
        #expect(try store.run(["init", "--device", "test"]).status == 0)
        func content(_ order: [Int], title: String = "T", last: String = "x") -> String {
            Self.survey(
                order.map { Self.extra($0, title: "Q\($0)", answer: $0 == 4 ? last : "x") }, title: title)
        }
        let history = try History(store, content([1, 2, 3, 4]))
        let (id, o) = (history.id, history.origin)
        func save(_ text: String, base: String) throws -> String { try history.save(text, base: base) }
        // A changes the title; A1 moves Q1 to the end, A2 answers Q4; B, from O, moves Q1
        // after Q3.
        let a = try save(content([1, 2, 3, 4], title: "TA"), base: o)
        let a1 = try save(content([2, 3, 4, 1], title: "TA"), base: a)
        let a2 = try save(content([1, 2, 3, 4], title: "TA", last: "from A2"), base: a)
        let b = try save(content([2, 3, 1, 4]), base: o)

        let dry = try store.json(["resolve", id, "--merge", "--dry-run", "--prefer", a2]) as! [String: Any]
        let position = try #require(
            Self.contested(dry).first { $0["field"] as? String == "position" }, "\(Self.contested(dry))")
        #expect(position["chosenRevision"] as? String == a1, "the group's place is A1's: \(position)")
        let flags = Dictionary(
            uniqueKeysWithValues: (position["values"] as? [[String: Any]] ?? []).map {
                ($0["revision"] as! String, $0["unchanged"] as! Bool)
            })
        #expect(flags == [a1: false, a2: true, b: false], "\(position)")
    }

    @Test(
        "Nested groups and many heads: each line of resolve --merge's text names the group merged before it as 'the N above' and at most six heads besides, then how many more, while --json lists every head"
    )
    func manyHeadsNamedBriefly() throws {
        let store = try Store()
        #expect(try store.run(["init", "--device", "test"]).status == 0)
        func items(note: String) -> String { Self.survey([Self.name(), Self.extra(5, answer: note)]) }
        let history = try History(store, items(note: "o"))
        let id = history.id
        func save(_ note: String, base: String) throws -> String {
            try history.save(items(note: note), base: base)
        }
        // O ← R2 ← R3 ← R4; heads X1 on R2, X2 on R3, Y1 and Y2 on R4, and eight more on O.
        let r2 = try save("r2", base: history.origin)
        let r3 = try save("r3", base: r2)
        let r4 = try save("r4", base: r3)
        let x1 = try save("x1", base: r2)
        let x2 = try save("x2", base: r3)
        let y1 = try save("y1", base: r4)
        let y2 = try save("y2", base: r4)
        let others = try (1...8).map { try save("o\($0)", base: history.origin) }
        func short(_ revision: String) -> String { revision.prefix(14) + "…" }

        let text = try store.run(["resolve", id, "--merge", "--dry-run"]).stdout
        let lines = text.split(separator: "\n").map(String.init)
        let first = try #require(lines.first { $0.hasPrefix("first merged 2 heads (") }, "\(text)")
        #expect(first.contains(short(y1)) && first.contains(short(y2)), "\(text)")
        let second = try #require(
            lines.first { $0.hasPrefix("then merged 3 heads (the 2 above, ") }, "\(text)")
        #expect(second.contains(short(x2)) && !second.contains(short(y1)), "\(text)")
        let third = try #require(
            lines.first { $0.hasPrefix("then merged 4 heads (the 3 above, ") }, "\(text)")
        #expect(third.contains(short(x1)) && !third.contains(short(x2)), "\(text)")
        let last = try #require(lines.first { $0.hasPrefix("merged 12 heads (the 4 above, ") }, "\(text)")
        #expect(last.contains(", and 2 more) from base "), "\(text)")
        #expect(others.filter { last.contains(short($0)) }.count == 6, "\(text)")

        let dry = try store.json(["resolve", id, "--merge", "--dry-run"]) as! [String: Any]
        #expect(Set(dry["heads"] as? [String] ?? []) == Set([x1, x2, y1, y2] + others))
        let groups = try #require(dry["groups"] as? [[String: Any]], "\(dry)")
        #expect(
            groups.map { Set($0["heads"] as? [String] ?? []) } == [
                [y1, y2], [y1, y2, x2], [y1, y2, x2, x1],
            ])
    }

    @Test(
        "Three heads on two replicas, two saved from A (one on each device) and one from O: each replica merges the two from A first, carries their contest of the rating into the merge with the third, and both write the same resolution"
    )
    func groupedMergeConverges() throws {
        let (laptop, phone, write) = try Self.twoReplicas()
        func items(name: String = "Ada", note: String = "none", rate: Int = 8) -> String {
            Self.survey([
                Self.binary(), Self.name(name), Self.rate(rate), Self.dish(), Self.extra(5, answer: note),
            ])
        }
        func save(_ replica: SyncTests.Replica, _ id: String, _ content: String, _ file: String, base: String)
            throws -> String
        {
            let saved =
                try replica.json(["save", id, "--from", try write(content, file), "--base", base])
                as! [String: Any]
            return saved["revision"] as! String
        }
        let created = try laptop.json(["new", "--from", try write(items(), "o.json")]) as! [String: Any]
        let id = created["id"] as! String
        let o = created["revision"] as! String
        let a = try save(laptop, id, items(name: "Grace", note: "from A"), "a.json", base: o)
        #expect(try laptop.run(["sync", phone.path]).status == 0)
        // Apart: the laptop sets the name back and changes the note; the phone rates 4
        // from A and, from O (an edit made before A arrived), rates 9.
        let h1 = try save(laptop, id, items(name: "Ada", note: "from H1"), "h1.json", base: a)
        let h2 = try save(phone, id, items(name: "Grace", note: "from A", rate: 4), "h2.json", base: a)
        let h3 = try save(phone, id, items(rate: 9), "h3.json", base: o)
        #expect(try laptop.run(["sync", phone.path]).status == 0)

        let dry = try phone.json(["resolve", id, "--merge", "--dry-run"]) as! [String: Any]
        let groups = try #require(dry["groups"] as? [[String: Any]], "\(dry)")
        #expect(groups.count == 1 && Set(groups.first?["heads"] as? [String] ?? []) == [h1, h2], "\(groups)")
        let contested = Self.contested(dry)
        #expect(contested.count == 1 && contested.first?["field"] as? String == "answer", "\(contested)")
        let values = (contested.first?["values"] as? [[String: Any]] ?? []).map {
            ($0["revision"] as? String ?? "", $0["value"] as? Double, $0["unchanged"] as? Bool ?? false)
        }
        #expect(
            Set(values.map { "\($0.0) \($0.1.map(String.init(describing:)) ?? "-") \($0.2)" })
                == ["\(h1) 8.0 true", "\(h2) 4.0 false", "\(h3) 9.0 false"],
            "every head's own rating: \(values)")

        let written = try laptop.json(["resolve", id, "--merge"]) as! [String: Any]
        let again = try phone.json(["resolve", id, "--merge"]) as! [String: Any]
        #expect(written["revision"] as? String == again["revision"] as? String, "the resolutions converge")
        let answers = Self.items(try phone.json(["show", id]) as! [String: Any]).map { $0["answer"] }
        #expect(answers[1] as? String == "Ada" && answers[4] as? String == "from H1", "H1's changes since A")
        #expect(try laptop.run(["sync", phone.path]).status == 0)
        #expect(try laptop.state() == phone.state())
        #expect((try laptop.json(["conflicts"]) as! [Any]).isEmpty)
    }

    @Test(
        "A merge with no group lists none: groups is [] and the text has no such line"
    )
    func noGroups() throws {
        let store = try Store()
        let (id, _, _) = try Self.conflict(
            store,
            heads: [
                Self.survey([Self.binary(), Self.name("Grace"), Self.rate(), Self.dish()]),
                Self.survey([Self.binary(), Self.name(), Self.rate(9), Self.dish()]),
                Self.survey([Self.binary(0), Self.name(), Self.rate(), Self.dish()]),
            ])
        let dry = try store.json(["resolve", id, "--merge", "--dry-run"]) as! [String: Any]
        #expect((dry["groups"] as? [Any])?.isEmpty == true, "\(dry)")
        let text = try store.run(["resolve", id, "--merge", "--dry-run"])
        #expect(!text.stdout.contains("first merged"), "\(text.stdout)")
    }
}
