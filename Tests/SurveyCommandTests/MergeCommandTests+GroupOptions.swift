import Foundation
import Testing

/// Grouped merges (rule 12) of binary, multiTF and picker items whose options a revision
/// reordered or renamed: an answer, a place in the options, never lands on another option,
/// and no head's answer is dropped without a contest.
extension MergeCommandTests {
    /// One item's survey in the interchange form.
    static func oneItem(_ kind: String, _ options: [String], answer: Any?, title: String = "T") -> String {
        var item: [String: Any] = [
            "id": "00000000-0000-4000-8000-000000000001", "kind": kind, "title": "Q", "options": options,
        ]
        if let answer { item["answer"] = answer }
        let data = try! JSONSerialization.data(withJSONObject: ["title": title, "items": [item]])
        return String(decoding: data, as: UTF8.self)
    }

    /// O, then A on O, G1 and G2 on A, H3 on O: the grouped merge's heads.
    struct Forks {
        let store: Store
        let id: String
        let g1: String, g2: String, h3: String

        init(o: String, a: String, g1: String, g2: String, h3: String) throws {
            store = try Store()
            #expect(try store.run(["init", "--device", "test"]).status == 0)
            let history = try History(store, o)
            id = history.id
            let revisionA = try history.save(a, base: history.origin)
            self.g1 = try history.save(g1, base: revisionA)
            self.g2 = try history.save(g2, base: revisionA)
            self.h3 = try history.save(h3, base: history.origin)
        }

        /// Merges (preferring the head `prefer` names: `g1`, `g2` or `h3`), and returns the
        /// merge's report, the merged item's options and the labels its answer chooses.
        func merged(prefer: String? = nil) throws -> (
            merge: [String: Any], options: [String], chosen: [String]
        ) {
            let revision = ["g1": g1, "g2": g2, "h3": h3][prefer ?? ""]
            let (merge, shown) = try MergeCommandTests.merge(
                store, id, revision.map { ["--prefer", $0] } ?? [])
            let item = MergeCommandTests.items(shown).first ?? [:]
            let options = item["options"] as? [String] ?? []
            var chosen: [String] = []
            if let index = item["answer"] as? Int, options.indices.contains(index) {
                chosen = [options[index]]
            } else if let flags = item["answer"] as? [Bool] {
                chosen = zip(options, flags).filter(\.1).map(\.0)
            } else if let label = item["answer"] as? String {
                chosen = [label]
            }
            return (merge, options, chosen)
        }
    }

    @Test(
        "A group's head that reorders a multiTF back and so ticks O's option again, its place unchanged since A: contested with the third head's tick (it was lost, 'nothing contested'), each preferred head's options and tick together"
    )
    func groupReorderBackIsContested() throws {
        func forks() throws -> Forks {
            try Forks(
                o: Self.oneItem("multiTF", ["A", "B", "C"], answer: [false, true, false]),
                a: Self.oneItem("multiTF", ["B", "A", "C"], answer: [false, true, false]),
                g1: Self.oneItem("multiTF", ["B", "A", "C"], answer: [false, true, false], title: "T2"),
                g2: Self.oneItem("multiTF", ["C", "B", "A"], answer: [false, true, false]),
                h3: Self.oneItem("multiTF", ["A", "B", "C"], answer: [false, false, true]))
        }
        let strict = try forks()
        #expect(try strict.store.run(["resolve", strict.id, "--merge", "--strict"]).status == 75)
        for (prefer, expected) in [("g2", ["B"]), ("h3", ["C"])] {
            let merged = try forks().merged(prefer: prefer)
            #expect(merged.chosen == expected, "\(prefer): \(merged.options) \(merged.chosen)")
            #expect(!Self.contested(merged.merge).isEmpty)
        }
    }

    @Test(
        "A binary item reordered at A, set back by a group's head: its answer is contested with the third head's, not silently replaced"
    )
    func groupBinaryReorderBackIsContested() throws {
        func forks() throws -> Forks {
            try Forks(
                o: Self.oneItem("binary", ["No", "Yes"], answer: 1),
                a: Self.oneItem("binary", ["Yes", "No"], answer: 1),
                g1: Self.oneItem("binary", ["Yes", "No"], answer: 1, title: "T2"),
                g2: Self.oneItem("binary", ["No", "Yes"], answer: 1),
                h3: Self.oneItem("binary", ["No", "Yes"], answer: 0))
        }
        let strict = try forks()
        #expect(try strict.store.run(["resolve", strict.id, "--merge", "--strict"]).status == 75)
        #expect(try forks().merged(prefer: "g2").chosen == ["Yes"])
        #expect(try forks().merged(prefer: "h3").chosen == ["No"])
    }

    @Test(
        "Options renamed, and renamed and reordered, inside a group against a reorder outside it: one contest of the unit (options and answer), and the merged answer means what every head meant (it landed on the other option, with a contest of options beside one of kind)",
        arguments: ["every head chose yes", "every head chose no"])
    func groupRenamesAgainstAReorder(_ shape: String) throws {
        func forks() throws -> Forks {
            shape == "every head chose yes"
                ? try Forks(
                    o: Self.oneItem("binary", ["No", "Yes"], answer: 1),
                    a: Self.oneItem("binary", ["No", "Yes!"], answer: 1),
                    g1: Self.oneItem("binary", ["Yes!", "Nope"], answer: 0),
                    g2: Self.oneItem("binary", ["Yes!", "Nah"], answer: 0),
                    h3: Self.oneItem("binary", ["Yes", "No"], answer: 0))
                : try Forks(
                    o: Self.oneItem("binary", ["No", "Yes"], answer: 0),
                    a: Self.oneItem("binary", ["Yes", "No"], answer: 1),
                    g1: Self.oneItem("binary", ["Yes", "No"], answer: 1, title: "T2"),
                    g2: Self.oneItem("binary", ["Oui", "Non"], answer: 1),
                    h3: Self.oneItem("binary", ["No", "Yes!"], answer: 0))
        }
        let meant: Set<String> = shape == "every head chose yes" ? ["Yes", "Yes!"] : ["No", "Non"]
        for prefer in [nil, "g1", "g2", "h3"] {
            let merged = try forks().merged(prefer: prefer)
            #expect(
                merged.chosen.count == 1 && meant.contains(merged.chosen[0]),
                "\(merged.options) \(merged.chosen)")
            let fields = Self.contested(merged.merge).map { $0["field"] as? String }
            #expect(fields == ["kind"], "\(fields)")
        }
    }

    @Test(
        "A picker whose whole item a group took (rule 9) is still reported when the merge then takes another head's options: the group's head whose answer was dropped is listed (it appeared nowhere)"
    )
    func groupWholeItemCarriedUnderAnotherOptionsContest() throws {
        for prefer in [nil, "g2", "h3"] {
            let forks = try Forks(
                o: Self.oneItem("picker", ["Red", "Green", "Blue"], answer: "Red"),
                a: Self.oneItem("picker", ["Red", "Green", "Navy"], answer: "Red"),
                g1: Self.oneItem("picker", ["Green", "Navy"], answer: "Navy"),
                g2: Self.oneItem("picker", ["Red", "Green", "Navy blue"], answer: "Red"),
                h3: Self.oneItem("picker", ["Red", "Blue", "Green"], answer: "Red"))
            let merged = try forks.merged(prefer: prefer)
            let contests = Self.contested(merged.merge)
            let item = try #require(contests.first { $0["field"] as? String == "item" }, "\(contests)")
            let values = item["values"] as? [[String: Any]] ?? []
            #expect(
                values.contains {
                    $0["revision"] as? String == forks.g1
                        && ($0["value"] as? [String: Any])?["answer"] as? String == "Navy"
                }, "\(values)")
        }
    }

    @Test(
        "A group's own contest of an answer is not carried beside this merge's contest of the unit (options and answer) that stands for it: one contest, listing each head's options and answer (a second one named an answer on another option than the merged one)"
    )
    func groupAnswerContestInsideAUnitContest() throws {
        let forks = try Forks(
            o: Self.oneItem("binary", ["A", "B"], answer: 0),
            a: Self.oneItem("binary", ["A", "Ba"], answer: 1),
            g1: Self.oneItem("binary", ["A", "Bap"], answer: nil),
            g2: Self.oneItem("binary", ["X0", "X1"], answer: 0),
            h3: Self.oneItem("binary", ["A", "Br"], answer: 0))
        let merged = try forks.merged()
        let contests = Self.contested(merged.merge)
        #expect(contests.map { $0["field"] as? String } == ["kind"], "\(contests)")
        let values = contests.first?["values"] as? [[String: Any]] ?? []
        #expect(
            Set(values.compactMap { $0["revision"] as? String }) == [forks.g1, forks.g2, forks.h3],
            "\(values)")
    }
}
