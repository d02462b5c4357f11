import Foundation
import Packages
import Testing
import Versions

@Suite("Merge bases and deterministic resolutions")
struct MergeBaseTests {
    static let document = UUID(uuidString: "6F1C2B8E-3D4A-4C1B-9E2F-1A2B3C4D5E02")!

    func revision(_ parents: [RevisionMetadata], _ content: String, clock: inout HybridClock)
        -> RevisionMetadata
    {
        try! RevisionMetadata.make(
            documentID: Self.document, parents: parents, content: Data(content.utf8), formatVersion: 2,
            device: Device(id: "d", name: "d"), clock: &clock)
    }

    @Test("The merge base is the lowest common ancestor; a criss-cross history gives two, newest first")
    func bases() {
        let wall = ManualClock(1_795_168_800_000)
        var clock = HybridClock(wallClock: { wall.milliseconds })
        let root = revision([], "root", clock: &clock)
        let middle = revision([root], "middle", clock: &clock)
        let a = revision([middle], "a", clock: &clock)
        let b = revision([middle], "b", clock: &clock)
        let c = revision([middle], "c", clock: &clock)
        var graph = RevisionGraph([root, middle, a, b, c])
        #expect(graph.mergeBases(of: [a.id, b.id]).map(\.id) == [middle.id])
        #expect(graph.mergeBases(of: [a.id, b.id, c.id]).map(\.id) == [middle.id])
        #expect(
            graph.mergeBases(of: [a.id, middle.id]).map(\.id) == [middle.id],
            "a head that is an ancestor of another is the base")
        // Criss-cross: x and y each merge a and b.
        let x = revision([a, b], "x", clock: &clock)
        let y = revision([a, b], "y", clock: &clock)
        graph.insert(x)
        graph.insert(y)
        #expect(graph.mergeBases(of: [x.id, y.id]).map(\.id) == [b.id, a.id])
        let stranger = revision([], "unrelated", clock: &clock)
        graph.insert(stranger)
        #expect(graph.mergeBases(of: [x.id, stranger.id]).isEmpty)
    }

    @Test(
        "Merge base levels: one level for one merge base; in a criss-cross history the merge bases of the merge bases, level by level, deletions left out of the next level"
    )
    func baseLevels() {
        let wall = ManualClock(1_795_168_800_000)
        var clock = HybridClock(wallClock: { wall.milliseconds })
        let root = revision([], "root", clock: &clock)
        let a = revision([root], "a", clock: &clock)
        let b = revision([root], "b", clock: &clock)
        var graph = RevisionGraph([root, a, b])
        #expect(graph.mergeBaseLevels(of: [a.id, b.id]).map { $0.map(\.id) } == [[root.id]])
        // Criss-cross: m1 and m2 each merge a and b; x and y each merge m1 and m2.
        let m1 = revision([a, b], "m1", clock: &clock)
        let m2 = revision([a, b], "m2", clock: &clock)
        let x = revision([m1, m2], "x", clock: &clock)
        let y = revision([m1, m2], "y", clock: &clock)
        for revision in [m1, m2, x, y] { graph.insert(revision) }
        #expect(
            graph.mergeBaseLevels(of: [x.id, y.id]).map { $0.map(\.id) } == [
                [m2.id, m1.id], [b.id, a.id], [root.id],
            ])
        // A deletion among the merge bases has no content: the next level is that of the others.
        let deletion = try! RevisionMetadata.make(
            documentID: Self.document, parents: [a], content: nil, formatVersion: 2,
            device: Device(id: "d", name: "d"), clock: &clock)
        let p = revision([deletion, b], "p", clock: &clock)
        let q = revision([deletion, b], "q", clock: &clock)
        for revision in [deletion, p, q] { graph.insert(revision) }
        #expect(graph.mergeBaseLevels(of: [p.id, q.id]).map { $0.map(\.id) } == [[b.id, deletion.id]])
        let stranger = revision([], "unrelated", clock: &clock)
        graph.insert(stranger)
        #expect(graph.mergeBaseLevels(of: [x.id, stranger.id]).isEmpty)
    }

    @Test(
        "A resolution's metadata depends only on its parents and content: two stores write the same revision")
    func deterministicResolution() throws {
        let folders = try (0..<2).map { index -> String in
            let path = FileManager.default.temporaryDirectory.appendingPathComponent(
                "resolution-\(UUID().uuidString)-\(index)"
            ).path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            return path
        }
        let stores = [
            RevisionStore(
                root: folders[0], device: Device(id: "laptop", name: "Laptop"),
                wallClock: { 1_795_168_800_000 }),
            RevisionStore(
                root: folders[1], device: Device(id: "phone", name: "Phone"), wallClock: { 1_895_168_800_000 }
            ),
        ]
        for store in stores {
            try RevisionStore.writer(root: store.root, calls: store.calls).createRoot()
            try RevisionStore.writer(root: store.root, calls: store.calls).prepare()
        }
        var clock = HybridClock(wallClock: { 1_795_168_800_000 })
        let root = revision([], "root", clock: &clock)
        let a = revision([root], "a", clock: &clock)
        let b = revision([root], "b", clock: &clock)
        let written = try stores.map {
            try $0.writeResolution(
                document: Self.document, parents: [b, a], content: Data("m".utf8), formatVersion: 2)
        }
        #expect(written[0] == written[1])
        #expect(written[0].parents == [a.id, b.id].sorted())
        #expect(
            written[0].timestamp
                == HybridTimestamp(milliseconds: b.timestamp.milliseconds, counter: b.timestamp.counter + 1))
        #expect(written[0].timestamp > a.timestamp && written[0].timestamp > b.timestamp)
        #expect(written[0].device == RevisionStore.resolutionDevice)
        let reread = try stores[1].graph(of: Self.document).graph
        #expect(reread.revisions[written[0].id] == written[0])
        for folder in folders { try? FileManager.default.removeItem(atPath: folder) }
    }
}
