import Foundation
import Testing
import Versions

/// A wall clock the test sets by hand.
final class ManualClock: @unchecked Sendable {
    private let lock = NSLock()
    private var now: Int64
    init(_ now: Int64) { self.now = now }
    var milliseconds: Int64 { lock.withLock { now } }
    func set(_ value: Int64) { lock.withLock { now = value } }
}

@Suite("Revision ids, timestamps, heads, winner and conflicts")
struct RevisionGraphTests {
    static let document = UUID(uuidString: "6F1C2B8E-3D4A-4C1B-9E2F-1A2B3C4D5E01")!
    static let laptop = Device(id: "laptop-1", name: "Laptop")
    static let phone = Device(id: "phone-1", name: "Phone")
    static let start: Int64 = 1_795_168_800_000

    func clock(_ wall: ManualClock) -> HybridClock {
        HybridClock(wallClock: { wall.milliseconds })
    }

    func revision(
        _ parents: [RevisionMetadata], _ content: String?, device: Device = laptop, clock: inout HybridClock
    )
        -> RevisionMetadata
    {
        // The tests' device names and numbers are all valid.
        try! RevisionMetadata.make(
            documentID: Self.document, parents: parents, content: content.map { Data($0.utf8) },
            formatVersion: 2,
            device: device, clock: &clock)
    }

    @Test("Ids are generation and SHA-256, derived from the bytes: the same revision made twice has one id")
    func ids() throws {
        let wall = ManualClock(Self.start)
        var a = clock(wall)
        var b = clock(wall)
        let first = revision([], "v1", clock: &a)
        let again = revision([], "v1", clock: &b)
        #expect(first.id == again.id)
        #expect(first.id.generation == 1)
        #expect(RevisionID(first.id.description) == first.id)
        #expect(first.id.description.count == 2 + 64)
        let child = revision([first], "v2", clock: &a)
        #expect(child.id.generation == 2)
        #expect(child.parents == [first.id])
        #expect(revision([], "other", clock: &b).id != first.id)
    }

    @Test("Metadata round-trips through DocumentMetadata.plist, and a flipped byte is detected")
    func metadataPlist() throws {
        var hlc = clock(ManualClock(Self.start))
        let metadata = revision([], "content", clock: &hlc)
        let data = try metadata.plistData()
        #expect(try RevisionMetadata(plist: data) == metadata)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("<key>DocumentUUID</key>") && text.contains("<key>FormatVersion</key>"))
        let tampered = Data(text.replacingOccurrences(of: "Laptop", with: "Lapt0p").utf8)
        #expect(throws: VersionsError.self) { try RevisionMetadata(plist: tampered) }
    }

    @Test("The newest head wins; equal timestamps fall to the greater revision id")
    func winnerOrder() {
        let wall = ManualClock(Self.start)
        var laptop = clock(wall)
        var phone = clock(wall)
        let base = revision([], "base", clock: &laptop)
        phone.observe(base.timestamp)
        wall.set(Self.start + 1000)
        let older = revision([base], "laptop edit", clock: &laptop)
        wall.set(Self.start + 2000)
        let newer = revision([base], "phone edit", device: Self.phone, clock: &phone)
        let graph = RevisionGraph([base, older, newer])
        #expect(Set(graph.heads.map(\.id)) == [older.id, newer.id])
        #expect(graph.winner?.id == newer.id)
        #expect(graph.conflicts.map(\.id) == [older.id])
        #expect(graph.isInConflict)
        // Whatever order the revisions arrive in, the winner is the same.
        #expect(RevisionGraph([newer, older, base]).winner?.id == newer.id)

        let tieA = RevisionMetadata(
            documentID: Self.document,
            id: RevisionID(generation: 2, digest: String(repeating: "a", count: 64)),
            parents: [base.id], timestamp: newer.timestamp, device: Self.laptop, formatVersion: 2,
            isDeleted: false, contentDigest: "x")
        var tieB = tieA
        tieB.id = RevisionID(generation: 2, digest: String(repeating: "b", count: 64))
        #expect(RevisionGraph([base, tieA, tieB]).winner?.id == tieB.id)
    }

    @Test("A deletion never beats a live edit, however new it is")
    func deletionLoses() {
        let wall = ManualClock(Self.start)
        var hlc = clock(wall)
        let base = revision([], "base", clock: &hlc)
        wall.set(Self.start + 1000)
        let edit = revision([base], "edit", clock: &hlc)
        wall.set(Self.start + 999_000)
        let deletion = revision([base], nil, device: Self.phone, clock: &hlc)
        let graph = RevisionGraph([base, edit, deletion])
        #expect(graph.winner?.id == edit.id)
        #expect(!graph.isDeleted)
        #expect(!graph.isInConflict, "only one head is not a deletion")
        #expect(RevisionGraph([base, deletion]).isDeleted)
    }

    @Test("A device whose clock is an hour behind still makes a child newer than its parent")
    func clockBehind() {
        let ahead = ManualClock(Self.start)
        var phone = clock(ahead)
        let parent = revision([], "from the phone", device: Self.phone, clock: &phone)
        let behind = ManualClock(Self.start - 3_600_000)
        var laptop = clock(behind)
        let child = revision([parent], "edited on the laptop", clock: &laptop)
        #expect(child.timestamp > parent.timestamp)
        #expect(RevisionGraph([parent, child]).winner?.id == child.id)
    }

    @Test("A timestamp far ahead of the local clock is flagged and does not drag the clock along")
    func farFuture() {
        let wall = ManualClock(Self.start)
        var hlc = clock(wall)
        let future = HybridTimestamp(milliseconds: Self.start + 10 * 86_400_000)
        #expect(hlc.isFarAhead(future))
        let accepted = hlc.observe(future)
        #expect(accepted == false)
        #expect(hlc.latest < future)
        let near = hlc.observe(HybridTimestamp(milliseconds: Self.start + 60_000))
        #expect(near)
        // A child of a far-future parent takes this device's clock: the stamp is not
        // inherited, so it cannot make every later edit win every conflict.
        let child = hlc.next(after: [future])
        #expect(child < future)
        #expect(!hlc.isFarAhead(child))
    }

    @Test("A resolution naming every head leaves one head")
    func resolution() {
        let wall = ManualClock(Self.start)
        var hlc = clock(wall)
        let base = revision([], "base", clock: &hlc)
        let a = revision([base], "a", clock: &hlc)
        let b = revision([base], "b", device: Self.phone, clock: &hlc)
        let resolved = revision([a, b], "merged", clock: &hlc)
        let graph = RevisionGraph([base, a, b, resolved])
        #expect(graph.heads.map(\.id) == [resolved.id])
        #expect(!graph.isInConflict)
        #expect(resolved.id.generation == 3)
    }
}
