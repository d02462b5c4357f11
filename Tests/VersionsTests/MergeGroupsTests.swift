import Foundation
import Packages
import Testing
import Versions

@Suite("Merge passes: heads that share history the others lack are merged first")
struct MergeGroupsTests {
    static let document = UUID(uuidString: "6F1C2B8E-3D4A-4C1B-9E2F-1A2B3C4D5E03")!

    /// A graph writer: each revision a second newer than the last.
    struct Writer {
        let wall: ManualClock
        var clock: HybridClock
        var graph = RevisionGraph()

        init() {
            let wall = ManualClock(1_795_168_800_000)
            self.wall = wall
            clock = HybridClock(wallClock: { wall.milliseconds })
        }

        mutating func write(_ parents: [RevisionMetadata], _ content: String) -> RevisionMetadata {
            wall.set(wall.milliseconds + 1000)
            let revision = try! RevisionMetadata.make(
                documentID: MergeGroupsTests.document, parents: parents, content: Data(content.utf8),
                formatVersion: 2, device: Device(id: "d", name: "d"), clock: &clock)
            graph.insert(revision)
            return revision
        }
    }

    typealias Part = RevisionGraph.MergeGroup.Part

    /// The passes as (parts, first level of bases) for comparison.
    static func shape(_ groups: [RevisionGraph.MergeGroup]) -> [[String]] {
        groups.map { group in
            group.parts.map {
                switch $0 {
                case .head(let id): id.description
                case .group(let index): "group \(index)"
                }
            } + ["from"] + (group.baseLevels.first ?? []).map(\.id.description)
        }
    }

    @Test("Heads that share only the base of them all merge in one pass, as mergeBaseLevels gives it")
    func onePass() {
        var writer = Writer()
        let o = writer.write([], "o")
        let heads = (0..<3).map { writer.write([o], "h\($0)") }
        let groups = writer.graph.mergeGroups(of: heads.map(\.id))
        #expect(groups.count == 1)
        #expect(groups[0].parts == heads.reversed().map { Part.head($0.id) }, "the winner first")
        #expect(groups[0].baseLevels.map { $0.map(\.id) } == [[o.id]])
        #expect(writer.graph.mergeGroups(of: [heads[0].id, heads[1].id]).map(\.parts).count == 1)
        #expect(writer.graph.mergeGroups(of: []).isEmpty)
    }

    @Test(
        "Two heads saved from A and one from A's parent O: the two merge first, from A; then the group with the third, from O; in any order of the heads"
    )
    func threeHeads() {
        var writer = Writer()
        let o = writer.write([], "o")
        let a = writer.write([o], "a")
        let h1 = writer.write([a], "h1")
        let h2 = writer.write([a], "h2")
        let h3 = writer.write([o], "h3")
        let groups = writer.graph.mergeGroups(of: [h1.id, h2.id, h3.id])
        #expect(
            Self.shape(groups) == [
                [h2.id.description, h1.id.description, "from", a.id.description],
                [h3.id.description, "group 0", "from", o.id.description],
            ])
        #expect(groups.map(\.heads) == [[h2.id, h1.id], [h3.id, h2.id, h1.id]])
        for order in [[h3, h1, h2], [h2, h3, h1], [h1, h2, h3]] {
            #expect(writer.graph.mergeGroups(of: order.map(\.id)) == groups)
        }
    }

    @Test(
        "Nested forks: the heads that share the most recent revision merge first, then with the heads that share an older one, then with the rest"
    )
    func nested() {
        var writer = Writer()
        let o = writer.write([], "o")
        let a = writer.write([o], "a")
        let deeper = writer.write([a], "a'")
        let h1 = writer.write([deeper], "h1")
        let h2 = writer.write([a], "h2")
        let h3 = writer.write([o], "h3")
        let h4 = writer.write([deeper], "h4")
        let groups = writer.graph.mergeGroups(of: [h1.id, h2.id, h3.id, h4.id])
        #expect(
            Self.shape(groups) == [
                [h4.id.description, h1.id.description, "from", deeper.id.description],
                // The group first: it holds the winner, h4.
                ["group 0", h2.id.description, "from", a.id.description],
                ["group 1", h3.id.description, "from", o.id.description],
            ])
    }

    @Test("Two forks of two heads each: each pair merges from its fork, then the two pairs from O")
    func twoForks() {
        var writer = Writer()
        let o = writer.write([], "o")
        let a = writer.write([o], "a")
        let b = writer.write([o], "b")
        let h1 = writer.write([a], "h1")
        let h2 = writer.write([a], "h2")
        let h3 = writer.write([b], "h3")
        let h4 = writer.write([b], "h4")
        let groups = writer.graph.mergeGroups(of: [h1.id, h2.id, h3.id, h4.id])
        #expect(groups.count == 3)
        #expect(Set(groups.prefix(2).map { Set($0.heads) }) == [[h1.id, h2.id], [h3.id, h4.id]])
        #expect(Set(groups.prefix(2).map { $0.baseLevels.first?.map(\.id) ?? [] }) == [[a.id], [b.id]])
        // Equally deep: the group whose least head id is least goes first.
        #expect(groups[0].heads.min()! < groups[1].heads.min()!)
        #expect(groups[2].parts == [.group(0), .group(1)] || groups[2].parts == [.group(1), .group(0)])
        #expect(groups[2].baseLevels.map { $0.map(\.id) } == [[o.id]])
    }

    @Test(
        "Groups that overlap (H2 merged both forks): the pair that shares more revisions merges first; the group then merges with the third head from the base they share, its history that of both its heads"
    )
    func overlapping() {
        var writer = Writer()
        let o = writer.write([], "o")
        let a = writer.write([o], "a")
        let longer = writer.write([a], "a2")
        let b = writer.write([o], "b")
        let h1 = writer.write([longer], "h1")
        let h2 = writer.write([longer, b], "h2")
        let h3 = writer.write([b], "h3")
        let groups = writer.graph.mergeGroups(of: [h1.id, h2.id, h3.id])
        #expect(
            Self.shape(groups) == [
                [h2.id.description, h1.id.description, "from", longer.id.description],
                [h3.id.description, "group 0", "from", b.id.description],
            ])
    }
}
