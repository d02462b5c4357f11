import Foundation
import Packages
import Surveys
import Synchronization
import Testing
import Versions

@_spi(Testing) @testable import SurveyStore

/// Merges whose heads have several best common ancestors: a criss-cross history, where two
/// devices each merged the same two revisions their own way and then edited again.
@Suite("resolve --merge of a criss-cross history: a virtual base")
struct CrissCrossMergeTests {
    static let document = UUID(uuidString: "C1255C05-0B7E-4F0A-9C3B-2F6E8D9A0011")!

    static func id(_ number: Int) -> UUID {
        UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", number))!
    }

    /// The base: a name, a note, a rating and a dish.
    static func survey(
        name: String = "Ada", note: String = "none", rate: Double = 8, dish: String? = nil,
        title: String = "Visit"
    ) -> Survey {
        try! Survey(
            title: title,
            items: [
                Item(id: id(1), title: "Name", kind: .textField(subtitle: nil), answer: .text(name)),
                Item(id: id(2), title: "Note", kind: .textField(subtitle: nil), answer: .text(note)),
                Item(
                    id: id(3), title: "Rate", kind: .slider(minimum: 0, maximum: 10, roundToInteger: true),
                    answer: .number(rate)),
                Item(
                    id: id(4), title: "Dish", kind: .picker(options: ["Soup", "Fish", "Cake"]),
                    answer: dish.map(Answer.text)),
            ])
    }

    /// A store, and a writer of revisions with any parents, each a second newer than the last.
    static func store() throws -> (
        path: String, store: SurveyStore, write: (Survey, [RevisionMetadata]) throws -> RevisionMetadata
    ) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "criss-cross-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let store = try SurveyStore.create(at: path, deviceName: "here")
        let clock = Atomic<Int64>(1_795_168_800_000)
        let writer = RevisionStore(
            root: path, device: Device(id: "elsewhere", name: "elsewhere"),
            wallClock: { clock.add(1000, ordering: .sequentiallyConsistent).newValue })
        return (
            path, store,
            { survey, parents in
                try writer.write(
                    document: Self.document, parents: parents, content: try survey.plistData(),
                    formatVersion: SurveyStore.formatVersion)
            }
        )
    }

    /// The history: the base O; A (the name, the note and the dish changed) and B, newer
    /// (the rating and the dish); M1, A and B merged taking B's dish, and M2 taking A's; X,
    /// M1 with the name set back to the base's; Y, M2 with the note changed again.
    static func crissCross(_ write: (Survey, [RevisionMetadata]) throws -> RevisionMetadata) throws -> (
        a: RevisionMetadata, b: RevisionMetadata, x: RevisionMetadata, y: RevisionMetadata
    ) {
        let o = try write(survey(), [])
        let a = try write(survey(name: "Grace", note: "from A", dish: "Soup"), [o])
        let b = try write(survey(rate: 9, dish: "Cake"), [o])
        let m1 = try write(survey(name: "Grace", note: "from A", rate: 9, dish: "Cake"), [a, b])
        let m2 = try write(survey(name: "Grace", note: "from A", rate: 9, dish: "Soup"), [a, b])
        let x = try write(survey(name: "Ada", note: "from A", rate: 9, dish: "Cake"), [m1])
        let y = try write(survey(name: "Grace", note: "from Y", rate: 9, dish: "Soup"), [m2])
        return (a, b, x, y)
    }

    @Test(
        "Criss-cross: X sets the name back to the base's, Y changes A's note again; both apply, and only the dish the two merges chose differently is contested (from one merge base, the name was lost and the note contested)"
    )
    func twoHeads() throws {
        let (path, store, write) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (a, b, x, y) = try Self.crissCross(write)
        let plan = try #require(try store.mergePlan(Self.document))
        #expect(Set(plan.heads.map(\.id)) == [x.id, y.id])
        #expect(plan.mergeBases.map(\.id) == [b.id, a.id])
        #expect(!plan.isTwoWay && plan.base == nil, "the base is virtual, the merge of A and B")
        let result = try #require(plan.result)
        let items = result.survey.items
        #expect(items[0].answer == .text("Ada"), "X set the name back; the change is kept")
        #expect(items[1].answer == .text("from Y"), "only Y changed the note since A")
        #expect(items[2].answer == .number(9))
        #expect(
            result.contested.map(\.field) == ["answer"] && result.contested.first?.item == Self.id(4),
            "\(result.contested.map { ($0.item, $0.field) })")
        let dish = try #require(result.contested.first)
        #expect(Set(dish.values.map(\.value)) == [.string("Cake"), .string("Soup")])
        #expect(dish.values.allSatisfy { !$0.isUnchanged }, "A and B disagreed: neither head kept the base's")
        // The same merge whichever head is preferred, but for the contested dish.
        let preferred = try #require(try store.mergePlan(Self.document, prefer: y.id)?.result)
        #expect(preferred.survey.items.dropLast() == items.dropLast())
        #expect(preferred.survey.items[3].answer == .text("Soup"))
    }

    @Test(
        "Prune of a criss-cross document in conflict keeps its merge bases and their own merge base, so the merge is the same after it"
    )
    func pruneKeepsTheVirtualBase() throws {
        let (path, store, write) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try Self.crissCross(write)
        let before = try #require(try store.mergePlan(Self.document)?.result)
        let pruned = try store.prune(Self.document)
        let graph = try store.graph(of: Self.document)
        let root = try #require(graph.revisions.values.first { $0.parents.isEmpty })
        #expect(!pruned.contains(root.id), "O, the merge base of A and B, is kept")
        #expect(pruned.count == 2, "M1 and M2 are pruned: \(pruned)")
        let after = try #require(try store.mergePlan(Self.document)?.result)
        #expect(after.survey == before.survey && after.contested == before.contested)
    }

    /// The history of ``threeHeadsFromDifferentForks()``: the base O; A (the name and the
    /// note changed); H1 from A (the name set back to O's, the note changed again), H2 from
    /// A (unchanged), H3 from O (the rating).
    static func forked(_ write: (Survey, [RevisionMetadata]) throws -> RevisionMetadata) throws -> (
        o: RevisionMetadata, a: RevisionMetadata, h1: RevisionMetadata, h2: RevisionMetadata,
        h3: RevisionMetadata
    ) {
        let o = try write(Self.survey(), [])
        let a = try write(Self.survey(name: "Grace", note: "from A"), [o])
        let h1 = try write(Self.survey(name: "Ada", note: "from H1"), [a])
        let h2 = try write(Self.survey(name: "Grace", note: "from A"), [a])
        let h3 = try write(Self.survey(rate: 9), [o])
        return (o, a, h1, h2, h3)
    }

    @Test(
        "Three heads: two saved from A, the third from the base O. The two are merged first, from A: H1's note and its name set back to O's both apply, and nothing is contested"
    )
    func threeHeadsFromDifferentForks() throws {
        let (path, store, write) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (o, _, _, _, _) = try Self.forked(write)
        let plan = try #require(try store.mergePlan(Self.document))
        #expect(plan.heads.count == 3 && plan.mergeBases.map(\.id) == [o.id])
        let result = try #require(plan.result)
        #expect(result.survey.items[2].answer == .number(9), "the third head's rating")
        // Merged from A first (the base the first two share), H1's two changes apply.
        #expect(result.survey.items[0].answer == .text("Ada"), "H1 set the name back to O's")
        #expect(result.survey.items[1].answer == .text("from H1"), "only H1 changed the note since A")
        #expect(result.isClean, "\(result.contested.map { ($0.item, $0.field) })")
        #expect(Set(result.order) == Set(plan.heads.map(\.id.description)), "the order names every head")
    }

    @Test(
        "Four heads from two forks (H1, H2 from A; H3, H4 from B; A and B from O): each pair is merged first from its own fork, so each head's edits since its fork are kept, and what a pair contested is contested with each of its heads' values"
    )
    func fourHeadsFromTwoForks() throws {
        let (path, store, write) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let o = try write(Self.survey(), [])
        let a = try write(Self.survey(name: "Grace", note: "from A"), [o])
        let b = try write(Self.survey(rate: 2, dish: "Fish", title: "Visit B"), [o])
        // H1 sets the name back to O's; H2 changes A's note; both change the dish, differently.
        let h1 = try write(Self.survey(name: "Ada", note: "from A", dish: "Soup"), [a])
        let h2 = try write(Self.survey(name: "Grace", note: "from H2", dish: "Cake"), [a])
        // H3 sets the rating back to O's; H4 sets the title back to O's.
        let h3 = try write(Self.survey(rate: 8, dish: "Fish", title: "Visit B"), [b])
        let h4 = try write(Self.survey(rate: 2, dish: "Fish", title: "Visit"), [b])
        let plan = try #require(try store.mergePlan(Self.document))
        #expect(plan.mergeBases.map(\.id) == [o.id])
        let result = try #require(plan.result)
        let items = result.survey.items
        #expect(result.survey.title == "Visit", "H4 set the title back to O's")
        #expect(items[0].answer == .text("Ada"), "H1 set the name back to O's")
        #expect(items[1].answer == .text("from H2"), "H2 changed A's note")
        #expect(items[2].answer == .number(8), "H3 set the rating back to O's")
        // The dish: B's Fish against the pair from A, which contested it (Soup, Cake).
        #expect(
            result.contested.map(\.field) == ["answer"] && result.contested.first?.item == Self.id(4),
            "\(result.contested.map { ($0.item, $0.field) })")
        let dish = try #require(result.contested.first)
        #expect(
            Set(dish.values.map(\.label)) == Set([h1, h2, h3, h4].map(\.id.description)),
            "every head's value is listed: \(dish.values.map(\.label))")
        #expect(
            Set(dish.values.map(\.value)) == [.string("Soup"), .string("Cake"), .string("Fish")])
        #expect(dish.values.allSatisfy { !$0.isUnchanged })
        #expect(
            Set([h1, h2, h3, h4].map(\.id.description)).contains(dish.chosen), "the chosen value names a head"
        )
    }

    @Test(
        "A grouped merge is the same whichever head is preferred, but for the fields it contests; the heads of a group contested by only that group keep their contest, which lists every head"
    )
    func groupedMergeIndependentOfPreferredHead() throws {
        let (path, store, write) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let o = try write(Self.survey(), [])
        let a = try write(Self.survey(name: "Grace", note: "from A"), [o])
        // H1 and H2 change the dish differently since A; H1 sets the name back; H3 the rating.
        let h1 = try write(Self.survey(name: "Ada", note: "from A", dish: "Soup"), [a])
        let h2 = try write(Self.survey(name: "Grace", note: "from H2", dish: "Cake"), [a])
        let h3 = try write(Self.survey(rate: 9), [o])
        let plain = try #require(try store.mergePlan(Self.document)?.result)
        for head in [h1, h2, h3] {
            let plan = try #require(try store.mergePlan(Self.document, prefer: head.id))
            let result = try #require(plan.result)
            let items = result.survey.items
            #expect(items[0].answer == .text("Ada") && items[1].answer == .text("from H2"))
            #expect(items[2].answer == .number(9))
            #expect(items.dropLast() == plain.survey.items.dropLast(), "preferring \(head.id)")
            #expect(result.contested.map(\.field) == ["answer"], "\(result.contested.map(\.field))")
            let dish = try #require(result.contested.first)
            #expect(dish.values.map(\.label).count == 3)
            let h3Value = dish.values.first { $0.label == h3.id.description }
            #expect(h3Value?.isUnchanged == true, "H3 left the dish as in O")
            if head.id == h3.id {
                #expect(dish.values.map(\.label).first == h3.id.description, "the preferred head first")
            } else {
                #expect(dish.chosen == head.id.description, "the preferred head's dish is taken")
                #expect(items[3].answer == (head.id == h1.id ? .text("Soup") : .text("Cake")))
            }
        }
    }

    @Test(
        "Prune of a document whose heads merge in groups keeps each group's base, so the merge is the same after it"
    )
    func pruneKeepsGroupBases() throws {
        let (path, store, write) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (o, a, _, _, _) = try Self.forked(write)
        let before = try #require(try store.mergePlan(Self.document))
        let pruned = try store.prune(Self.document)
        #expect(!pruned.contains(a.id) && !pruned.contains(o.id), "A, the base of the group, and O are kept")
        let after = try #require(try store.mergePlan(Self.document))
        #expect(after.bases.map(\.id) == [o.id] && !after.isTwoWay)
        #expect(
            after.result?.survey == before.result?.survey
                && after.result?.contested == before.result?.contested)
        #expect(after.result?.isClean == true)
    }
}
