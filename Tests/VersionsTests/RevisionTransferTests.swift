import Foundation
import Packages
import Synchronization
import Testing

@testable import Versions

/// Sync's decisions by example, on real folders: which revisions go which way, in which
/// order, when tombstones go, what is skipped, what is never sent, and what is repaired.
@Suite("Revision transfer: sync's decisions")
struct RevisionTransferTests {
    static let document = UUID(uuidString: "0B7E4C1A-2D3F-4A5B-8C6D-7E8F9A0B1C2D")!

    /// A store in a new folder whose clock advances a second per reading.
    static func store(_ name: String) throws -> RevisionStore {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "transfer-\(name)-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let wall = ManualClock(1_795_168_800_000)
        let store = RevisionStore(root: root, device: Device(id: name, name: name)) {
            wall.set(wall.milliseconds + 1_000)
            return wall.milliseconds
        }
        try RevisionStore.writer(root: root, calls: .live).prepare()
        return store
    }

    static func write(_ store: RevisionStore, _ text: String, after parents: [RevisionMetadata] = []) throws
        -> RevisionMetadata
    {
        try store.write(document: document, parents: parents, content: Data(text.utf8), formatVersion: 2)
    }

    static func names(_ store: RevisionStore) -> Set<String> {
        Set(
            (try? FileManager.default.contentsOfDirectory(
                atPath: store.root + "/" + StoreLayout.folder(of: document))) ?? [])
    }

    static func contentPath(_ store: RevisionStore, _ revision: RevisionMetadata) -> String {
        store.root + "/" + StoreLayout.package(revision.id, of: document) + "/" + StoreLayout.contentFile
    }

    /// Cuts a content file short under its own name, as a copy torn by a power loss.
    static func tear(_ path: String, keeping bytes: Int = 3) throws {
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: UInt64(bytes))
        try handle.close()
    }

    static func cleanUp(_ stores: RevisionStore...) {
        for store in stores { try? FileManager.default.removeItem(atPath: store.root) }
    }

    @Test("each side receives the revisions it lacks, and the concurrent edits show as a conflict")
    func bothWays() throws {
        let here = try Self.store("here"), there = try Self.store("there")
        defer { Self.cleanUp(here, there) }
        let base = try Self.write(here, "base")
        let transfer = RevisionTransfer(between: here, and: there)
        let first = try transfer.sync([Self.document], width: 1)
        #expect(
            first == [
                {
                    var o = RevisionTransfer.DocumentOutcome(); o.sent = 1; return o
                }()
            ])
        let mine = try Self.write(here, "mine", after: [base])
        let theirs = try Self.write(there, "theirs", after: [base])
        let outcome = try #require(try transfer.sync([Self.document], width: 1).first)
        #expect(outcome.sent == 1 && outcome.received == 1)
        #expect(outcome.conflictAppeared && !outcome.conflictResolved)
        for store in [here, there] {
            #expect(Set(try store.read(Self.document).live.keys) == [base.id, mine.id, theirs.id])
        }
        // Nothing left to copy: the folders hold the same names, and the document is skipped.
        #expect(try transfer.plan(Self.document).skipped)
        #expect(try transfer.sync([Self.document], width: 1) == [RevisionTransfer.DocumentOutcome()])
    }

    @Test("parents are written before their children")
    func parentsFirst() throws {
        let here = try Self.store("here"), there = try Self.store("there")
        defer { Self.cleanUp(here, there) }
        var chain: [RevisionMetadata] = []
        for index in 0..<4 { chain.append(try Self.write(here, "v\(index)", after: chain.suffix(1))) }
        let plan = try RevisionTransfer(between: here, and: there).plan(Self.document)
        #expect(plan.toRemote.packages.map(\.revision) == chain.map(\.id))
        #expect(plan.toLocal.packages.isEmpty && plan.toRemote.tombstones.isEmpty)
    }

    @Test(
        "tombstones go after the revisions, disown the receiver's stale copy, and are not sent twice"
    )
    func tombstonesLast() throws {
        let here = try Self.store("here"), there = try Self.store("there")
        defer { Self.cleanUp(here, there) }
        let first = try Self.write(here, "first")
        let transfer = RevisionTransfer(between: here, and: there)
        _ = try transfer.sync([Self.document], width: 1)
        let second = try Self.write(here, "second", after: [first])
        #expect(try here.prune(Self.document) == [first.id])
        let plan = try transfer.plan(Self.document)
        #expect(plan.toRemote.packages.map(\.revision) == [second.id])
        #expect(plan.toRemote.tombstones.map(\.id) == [first.id])
        #expect(plan.toRemote.disowns, "the receiver still has the pruned revision's package")
        let outcome = try #require(try transfer.sync([Self.document], width: 1).first)
        #expect(outcome.sent == 2 && outcome.tombstonesSent == 1)
        // The receiver removed its copy of the pruned revision, and kept the tombstone.
        #expect(
            Self.names(there) == [StoreLayout.tombstoneName(first.id), StoreLayout.packageName(second.id)])
        #expect(try there.read(Self.document).pruned == [first.id])
        #expect(try transfer.plan(Self.document).skipped)
    }

    @Test("a tombstone whose successor the receiver lacks arrives pending and removes nothing")
    func pendingTombstone() throws {
        let here = try Self.store("here"), there = try Self.store("there")
        defer { Self.cleanUp(here, there) }
        let first = try Self.write(here, "first")
        _ = try RevisionTransfer(between: here, and: there).sync([Self.document], width: 1)
        // Only the tombstone reaches a third store that has the first revision (as a file
        // copy would): a plan for it sends the successor first, the tombstone after.
        let second = try Self.write(here, "second", after: [first])
        _ = try here.prune(Self.document)
        let tombstone = try #require(try here.read(Self.document).tombstones[first.id])
        try Data(try tombstone.plistData()).write(
            to: URL(fileURLWithPath: there.root + "/" + StoreLayout.tombstone(first.id, of: Self.document)))
        let read = try there.read(Self.document)
        #expect(
            read.pending == [first.id] && read.pruned.isEmpty, "no successor yet: the tombstone is pending")
        #expect(read.live[first.id] != nil)
        let plan = try RevisionTransfer(between: here, and: there).plan(Self.document)
        #expect(plan.toRemote.packages.map(\.revision) == [second.id])
        #expect(plan.toRemote.tombstones.isEmpty, "the receiver has that tombstone already")
    }

    @Test("a revision whose content does not match its digest is not sent, and is reported")
    func damagedNotSent() throws {
        let here = try Self.store("here"), there = try Self.store("there")
        defer { Self.cleanUp(here, there) }
        let good = try Self.write(here, "a good revision")
        let bad = try Self.write(here, "a revision torn on this side", after: [good])
        try Self.tear(Self.contentPath(here, bad))
        let outcome = try #require(
            try RevisionTransfer(between: here, and: there).sync([Self.document], width: 1).first)
        #expect(outcome.sent == 1)
        #expect(outcome.damaged.map(\.path) == [Self.contentPath(here, bad)])
        #expect(outcome.repaired.isEmpty)
        #expect(Self.names(there) == [StoreLayout.packageName(good.id)])
    }

    @Test("a torn copy on either side is replaced by the other side's intact copy", arguments: [false, true])
    func repairsEitherSide(tornHere: Bool) throws {
        let here = try Self.store("here"), there = try Self.store("there")
        defer { Self.cleanUp(here, there) }
        let revision = try Self.write(here, "content long enough to tear")
        let transfer = RevisionTransfer(between: here, and: there)
        _ = try transfer.sync([Self.document], width: 1)
        let torn = tornHere ? here : there
        try Self.tear(Self.contentPath(torn, revision))
        #expect(
            !here.holdsSameFiles(Self.document, as: there), "a content file of another size is not skipped")
        let outcome = try #require(try transfer.sync([Self.document], width: 1).first)
        #expect(outcome.repaired.map(\.path) == [Self.contentPath(torn, revision)])
        #expect(outcome.damaged.isEmpty && outcome.sent == 0 && outcome.received == 0)
        #expect(
            try torn.content(of: Self.document, revision: revision)
                == Data("content long enough to tear".utf8))
        #expect(here.holdsSameFiles(Self.document, as: there))
    }

    @Test("when both copies are damaged, both are reported and neither is changed")
    func bothDamaged() throws {
        let here = try Self.store("here"), there = try Self.store("there")
        defer { Self.cleanUp(here, there) }
        let revision = try Self.write(here, "content long enough to tear")
        let transfer = RevisionTransfer(between: here, and: there)
        _ = try transfer.sync([Self.document], width: 1)
        try Self.tear(Self.contentPath(here, revision), keeping: 3)
        try Self.tear(Self.contentPath(there, revision), keeping: 5)
        let outcome = try #require(try transfer.sync([Self.document], width: 1).first)
        #expect(outcome.repaired.isEmpty)
        #expect(
            Set(outcome.damaged.map(\.path)) == [
                Self.contentPath(here, revision), Self.contentPath(there, revision),
            ])
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: Self.contentPath(here, revision))) == Data("con".utf8))
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: Self.contentPath(there, revision)))
                == Data("conte".utf8))
    }

    @Test(
        "repair from a copy checks every digest (even a same-size change) and copies nothing else"
    )
    func repairFromRemote() throws {
        let here = try Self.store("here"), there = try Self.store("there")
        defer { Self.cleanUp(here, there) }
        let revision = try Self.write(here, "abcdef")
        _ = try RevisionTransfer(between: here, and: there).sync([Self.document], width: 1)
        _ = try Self.write(there, "only there", after: [revision])
        try Data("abcdeX".utf8).write(to: URL(fileURLWithPath: Self.contentPath(here, revision)))
        let report = try RevisionTransfer(between: here, and: there).repairFromRemote()
        #expect(report.repaired.map(\.path) == [Self.contentPath(here, revision)])
        #expect(report.unrepaired.isEmpty)
        #expect(try here.content(of: Self.document, revision: revision) == Data("abcdef".utf8))
        #expect(Self.names(here) == [StoreLayout.packageName(revision.id)], "nothing else was copied")
        // No intact copy anywhere: reported, left as it is.
        try Data("abcdeY".utf8).write(to: URL(fileURLWithPath: Self.contentPath(here, revision)))
        try Data("abcdeZ".utf8).write(to: URL(fileURLWithPath: Self.contentPath(there, revision)))
        let none = try RevisionTransfer(between: here, and: there).repairFromRemote()
        #expect(none.repaired.isEmpty && none.unrepaired.map(\.path) == [Self.contentPath(here, revision)])
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: Self.contentPath(here, revision)))
                == Data("abcdeY".utf8))
    }

    @Test("documents are synced several at once with the same result as one by one")
    func concurrentWidth() throws {
        let here = try Self.store("here"), there = try Self.store("there")
        defer { Self.cleanUp(here, there) }
        var ids: [UUID] = []
        for index in 0..<40 {
            let id = UUID()
            ids.append(id)
            _ = try (index.isMultiple(of: 2) ? here : there).write(
                document: id, parents: [], content: Data("document \(index)".utf8), formatVersion: 2)
        }
        ids.sort { $0.uuidString < $1.uuidString }
        var seen: [Int] = []
        let outcomes = try RevisionTransfer(between: here, and: there).sync(ids, width: 8) { seen.append($0) }
        #expect(outcomes.map(\.sent).reduce(0, +) == 20 && outcomes.map(\.received).reduce(0, +) == 20)
        #expect(seen.last == 40)
        #expect(try here.documentIDs().count == 40 && there.documentIDs().count == 40)
    }

    @Test(
        "a revision whose metadata was moved onto its tombstone is sent rebuilt, the tombstone after"
    )
    func metadataMovedOntoTombstone() throws {
        let here = try Self.store("here"), there = try Self.store("there")
        defer { Self.cleanUp(here, there) }
        let first = try Self.write(here, "first")
        let second = try Self.write(here, "second", after: [first])
        let package = here.root + "/" + StoreLayout.package(second.id, of: Self.document)
        // What Syncthing does when a prune of `second` arrives before its successor: the
        // metadata is moved onto the tombstone, the content stays.
        try FileManager.default.moveItem(
            atPath: package + "/" + StoreLayout.metadataFile,
            toPath: here.root + "/" + StoreLayout.tombstone(second.id, of: Self.document))
        #expect(try here.read(Self.document).live[second.id] != nil, "still readable here")
        let outcome = try #require(
            try RevisionTransfer(between: here, and: there).sync([Self.document], width: 1).first)
        #expect(outcome.sent == 3 && outcome.tombstonesSent == 1, "\(outcome)")
        let read = try there.read(Self.document)
        #expect(Set(read.live.keys) == [first.id, second.id])
        #expect(read.pending == [second.id])
        #expect(try there.content(of: Self.document, revision: second) == Data("second".utf8))
    }

    @Test(
        "a document is skipped unread only when both folders hold the same complete packages of the same sizes, never through a link"
    )
    func skipsOnlyTheSame() throws {
        let here = try Self.store("here"), there = try Self.store("there")
        defer { Self.cleanUp(here, there) }
        let first = try Self.write(here, "first")
        let second = try Self.write(here, "second", after: [first])
        _ = try RevisionTransfer(between: here, and: there).sync([Self.document], width: 1)
        #expect(here.holdsSameFiles(Self.document, as: there), "the same after a sync")
        #expect(there.holdsSameFiles(Self.document, as: here))
        let package = there.root + "/" + StoreLayout.package(second.id, of: Self.document)
        let outside = there.root + "-outside"
        defer { try? FileManager.default.removeItem(atPath: outside) }
        let manager = FileManager.default

        // A package folder replaced by a link to an identical copy outside the store.
        try manager.moveItem(atPath: package, toPath: outside)
        try manager.createSymbolicLink(atPath: package, withDestinationPath: outside)
        #expect(
            !here.holdsSameFiles(Self.document, as: there), "a linked package folder is never looked through")
        #expect(!there.holdsSameFiles(Self.document, as: here))
        try manager.removeItem(atPath: package)
        try manager.moveItem(atPath: outside, toPath: package)
        #expect(here.holdsSameFiles(Self.document, as: there))

        // A content file replaced by a link to a file of the same size.
        let content = package + "/" + StoreLayout.contentFile
        try manager.moveItem(atPath: content, toPath: outside)
        try manager.createSymbolicLink(atPath: content, withDestinationPath: outside)
        #expect(
            !here.holdsSameFiles(Self.document, as: there), "a linked content file is never looked through")
        try manager.removeItem(atPath: content)
        try manager.moveItem(atPath: outside, toPath: content)

        // Metadata missing on one side (a half-copied package).
        let metadata = package + "/" + StoreLayout.metadataFile
        try manager.moveItem(atPath: metadata, toPath: outside)
        #expect(!here.holdsSameFiles(Self.document, as: there), "a package without its metadata is read")
        try manager.moveItem(atPath: outside, toPath: metadata)
        #expect(here.holdsSameFiles(Self.document, as: there))

        // A torn content file, and a torn metadata file: sizes differ.
        try Self.tear(content)
        #expect(!here.holdsSameFiles(Self.document, as: there), "a torn content file is noticed")
        try Data("second".utf8).write(to: URL(fileURLWithPath: content))
        #expect(here.holdsSameFiles(Self.document, as: there))
        let bytes = try Data(contentsOf: URL(fileURLWithPath: metadata))
        try Self.tear(metadata, keeping: bytes.count - 1)
        #expect(!here.holdsSameFiles(Self.document, as: there), "a torn metadata file is noticed")
        try bytes.write(to: URL(fileURLWithPath: metadata))

        // A tombstone beside its package, and a stray file.
        let tombstone = there.root + "/" + StoreLayout.tombstone(first.id, of: Self.document)
        try bytes.write(to: URL(fileURLWithPath: tombstone))
        try bytes.write(
            to: URL(fileURLWithPath: here.root + "/" + StoreLayout.tombstone(first.id, of: Self.document)))
        #expect(!here.holdsSameFiles(Self.document, as: there), "a package beside its tombstone is read")
    }
}

extension RevisionTransferTests {
    @Test("a sync reads each metadata file it copies once, and copies its bytes as they are")
    func metadataReadOnce() throws {
        let here = try Self.store("here"), there = try Self.store("there")
        defer { Self.cleanUp(here, there) }
        let base = try Self.write(here, "base")
        let child = try Self.write(here, "child", after: [base])
        // One metadata file in another form than the writer's (re-indented): the same
        // revision, other bytes, which the copy keeps.
        let reindented =
            here.root + "/" + StoreLayout.package(base.id, of: Self.document) + "/"
            + StoreLayout.metadataFile
        let original = try String(contentsOfFile: reindented, encoding: .utf8)
        try original.replacingOccurrences(of: "\t", with: "  ").write(
            toFile: reindented, atomically: false, encoding: .utf8)
        let opened = MetadataOpens()
        let source = RevisionStore(
            root: here.root, device: Device(id: "here", name: "here"), calls: opened.calls)
        let outcomes = try RevisionTransfer(between: source, and: there).sync([Self.document], width: 1)
        #expect(outcomes.first?.sent == 2)
        let reads = opened.paths
        #expect(reads.count == 2, "each metadata file read once: \(reads)")
        #expect(Set(reads.map { String($0.split(separator: "/").suffix(2).first ?? "") }).count == 2)
        for revision in [base, child] {
            let file =
                "/" + StoreLayout.package(revision.id, of: Self.document) + "/" + StoreLayout.metadataFile
            #expect(
                FileManager.default.contents(atPath: here.root + file)
                    == FileManager.default.contents(atPath: there.root + file))
        }
        #expect(try there.read(Self.document).live.keys.sorted() == [base.id, child.id].sorted())
    }

    /// `completePackage` reads a package's metadata file itself, neither answering from
    /// what the store remembers (a status look-up instead of a read) nor remembering what
    /// it read for later reads: its caller, the change feed, keeps what it learns.
    @Test("completePackage reads the metadata afresh and leaves the store's memory alone")
    func completePackageReadsAfresh() throws {
        let here = try Self.store("fresh")
        defer { Self.cleanUp(here) }
        let base = try Self.write(here, "base")
        let opened = MetadataOpens()
        let store = RevisionStore(
            root: here.root, device: Device(id: "here", name: "here"), calls: opened.calls)
        // A read remembers the metadata: a second read only looks its file up.
        _ = try store.read(Self.document)
        _ = try store.read(Self.document)
        #expect(opened.paths.count == 1)
        // completePackage reads the file although the store remembers it.
        #expect(try store.completePackage(base.id, of: Self.document) == base)
        #expect(opened.paths.count == 2)
        // A package first read by completePackage is read again by the next read.
        let child = try Self.write(here, "child", after: [base])
        #expect(try store.completePackage(child.id, of: Self.document) == child)
        #expect(opened.paths.count == 3)
        _ = try store.read(Self.document)
        #expect(opened.paths.count == 4, "the child's metadata read by the read")
    }
}

/// The live system calls, recording the path of each metadata file they open.
final class MetadataOpens: Sendable {
    private let opened = Locked<[String]>([])
    /// The package folders open now, by descriptor: a metadata file opened through one is
    /// named by the folder's path.
    private let folders = Locked<[Int32: String]>([:])

    /// The paths opened so far, in order.
    var paths: [String] { opened.withLock { $0 } }

    var calls: SystemCalls {
        var calls = SystemCalls.live
        calls.openat = { [self] directory, path, flags, mode in
            let result = SystemCalls.live.openat(directory, path, flags, mode)
            if path.hasSuffix(StoreLayout.metadataFile) {
                let folder = folders.withLock { $0[directory] }
                opened.withLock { $0.append(folder.map { $0 + "/" + path } ?? path) }
            } else if path.hasSuffix(StoreLayout.packageSuffix), case .success(let descriptor) = result {
                folders.withLock { $0[descriptor] = path }
            }
            return result
        }
        return calls
    }
}
