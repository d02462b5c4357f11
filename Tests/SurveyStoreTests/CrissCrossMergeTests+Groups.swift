import Foundation
import Surveys
import Testing
import Versions

@_spi(Testing) @testable import SurveyStore

extension CrissCrossMergeTests {
    @Test(
        "The merge plan names each group merged first, its heads and its base; a group whose base was pruned merges two-way and says why"
    )
    func planNamesTheGroups() throws {
        let (path, store, write) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (o, a, h1, h2, h3) = try Self.forked(write)
        let plan = try #require(try store.mergePlan(Self.document))
        #expect(plan.groups.count == 1)
        let group = try #require(plan.groups.first)
        #expect(group.heads.map(\.id) == [h2.id, h1.id], "in winner order")
        #expect(group.bases.map(\.id) == [a.id] && group.base?.id == a.id && !group.isTwoWay)
        #expect(group.mergeBases.map(\.id) == [a.id] && group.twoWayReason == nil)
        #expect(plan.bases.map(\.id) == [o.id] && plan.heads.map(\.id) == [h3.id, h2.id, h1.id])
    }

    @Test(
        "A group whose base's content was pruned (before the group's second head arrived) merges two-way, and the plan says why; the last pass still merges from its base"
    )
    func groupWithPrunedBase() throws {
        let (path, store, write) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let o = try write(Self.survey(), [])
        let a = try write(Self.survey(name: "Grace", note: "from A"), [o])
        _ = try write(Self.survey(rate: 9), [o])
        _ = try write(Self.survey(name: "Ada", note: "from H1"), [a])
        // A is no merge base of the two heads (O is): pruned.
        #expect(try store.prune(Self.document).contains(a.id))
        _ = try write(Self.survey(name: "Grace", note: "from A"), [a])
        let twoWay = try #require(try store.mergePlan(Self.document))
        let damaged = try #require(twoWay.groups.first)
        #expect(damaged.isTwoWay && damaged.mergeBases.map(\.id) == [a.id])
        #expect(
            damaged.twoWayReason == "the content of the merge base \(a.id) has been pruned or cannot be read",
            "\(damaged.twoWayReason ?? "nil")")
        let result = try #require(twoWay.result)
        #expect(twoWay.bases.map(\.id) == [o.id] && !twoWay.isTwoWay)
        #expect(
            result.contested.map(\.item) == [Self.id(1), Self.id(2)],
            "the two heads of the group differ in the name and the note, contested without a base")
        #expect(result.contested.allSatisfy { $0.values.count == 3 }, "every head's value is listed")
        #expect(result.survey.items[2].answer == .number(9), "the third head's rating")
    }
}
