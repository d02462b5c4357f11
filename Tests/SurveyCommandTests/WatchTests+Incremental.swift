import Foundation
import SurveyStore
import TestSupport
import Testing

/// The feed counts a package renamed into place without reading its folder again; these
/// are the cases where that shortcut could go wrong, each observed through both watchers
/// and both mechanisms: a child arriving before its parent, tombstones, rsync copying
/// packages out of order. And the watch's lifetime when its sequence is dropped.
extension WatchTests {
    /// Another store beside the scratch store (device "other") with one document of two
    /// revisions, titled `titles.0` then `titles.1`; returns the store's path, the document
    /// and both revisions.
    static func twoRevisionsElsewhere(_ scratch: Scratch, titles: (String, String)) throws -> (
        other: String, id: String, first: String, second: String
    ) {
        let other = scratch.directory.appendingPathComponent("other").path
        try scratch.run(["init", "--device", "other"], store: other)
        let id = try scratch.run(["new", "--title", titles.0], store: other)
        let first = try scratch.revision(["show", id], store: other)
        let second = try scratch.revision(["edit", id, "--title", titles.1], store: other)
        return (other, id, first, second)
    }

    /// Moves the package (or tombstone) `name` of document `id` from store `from` into the
    /// scratch store: copied to a staging folder beside it, then renamed into place.
    static func moveIn(_ name: String, of id: String, from other: String, into scratch: Scratch) throws {
        let staging = scratch.directory.appendingPathComponent("staging").path
        try? FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: true)
        let folder = scratch.store + "/Documents/" + id
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        try FileManager.default.copyItem(
            atPath: other + "/Documents/" + id + "/" + name, toPath: staging + "/" + name)
        #expect(rename(staging + "/" + name, folder + "/" + name) == 0)
    }

    @Test(
        "A package renamed in before its parent: created with the child, then the parent, heads the child's",
        arguments: FolderWatcher.Mechanism.allCases)
    func childBeforeParent(mechanism: FolderWatcher.Mechanism) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let (other, id, first, second) = try Self.twoRevisionsElsewhere(scratch, titles: ("Parent", "Child"))

        let watchers = try Watchers(scratch.store, mechanism: mechanism)
        try Self.moveIn(second + ".survey", of: id, from: other, into: scratch)
        var expected = [SeenChange(event: "created", id: id, revision: second, heads: [second])]
        watchers.expect(expected)
        try Self.moveIn(first + ".survey", of: id, from: other, into: scratch)
        expected.append(SeenChange(event: "revision-added", id: id, revision: first, heads: [second]))
        watchers.expect(expected)
        #expect(try Self.heads(of: id, in: scratch) == [second])
        watchers.stop()
    }

    @Test(
        "A tombstone before the revision that puts it into effect, and a prune: each revision once, nothing for tombstones",
        arguments: FolderWatcher.Mechanism.allCases)
    func tombstones(mechanism: FolderWatcher.Mechanism) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let (other, id, first, second) = try Self.twoRevisionsElsewhere(scratch, titles: ("One", "Two"))
        try scratch.run(["sync", other])

        let watchers = try Watchers(scratch.store, mechanism: mechanism)
        // Elsewhere a third revision, and the first two pruned: their tombstones arrive
        // here first (the second's pending: nothing here supersedes it yet), then the third.
        let third = try scratch.revision(["edit", id, "--title", "Three"], store: other)
        try scratch.run(["prune", id], store: other)
        try Self.moveIn(second + ".pruned", of: id, from: other, into: scratch)
        try Self.moveIn(first + ".pruned", of: id, from: other, into: scratch)
        usleep(mechanism == .polling ? 1_500_000 : 500_000)
        #expect(watchers.library.collected.changes.isEmpty, "\(watchers.library.collected.changes)")
        #expect(watchers.command.collected.changes.isEmpty, "\(watchers.command.collected.changes)")
        try Self.moveIn(third + ".survey", of: id, from: other, into: scratch)
        var expected = [SeenChange(event: "revision-added", id: id, revision: third, heads: [third])]
        watchers.expect(expected)

        // A prune here: tombstones replace packages, and nothing is reported; the next
        // revision is reported once.
        try scratch.run(["edit", id, "--title", "Four"])
        let fourth = try Self.heads(of: id, in: scratch)[0]
        expected.append(SeenChange(event: "revision-added", id: id, revision: fourth, heads: [fourth]))
        watchers.expect(expected)
        try scratch.run(["prune", id])
        let fifth = try scratch.revision(["edit", id, "--title", "Five"])
        expected.append(SeenChange(event: "revision-added", id: id, revision: fifth, heads: [fifth]))
        watchers.expect(expected)
        watchers.stop()
    }

    @Test(
        "rsync bringing a child package, then its parent: each once, the child's heads throughout",
        CommandRunner.needs("rsync"), arguments: FolderWatcher.Mechanism.allCases)
    func rsyncOutOfOrder(mechanism: FolderWatcher.Mechanism) throws {
        guard let rsync = CommandRunner.requireTool("rsync") else { return }
        let scratch = try Scratch()
        defer { scratch.remove() }
        let (other, id, first, second) = try Self.twoRevisionsElsewhere(scratch, titles: ("Parent", "Child"))

        let watchers = try Watchers(scratch.store, mechanism: mechanism)
        let childOnly = try CommandRunner.run(
            [
                "-a", "--include=/\(id)/", "--include=/\(id)/\(second).survey/***", "--exclude=*",
                other + "/Documents/", scratch.store + "/Documents/",
            ], executable: URL(fileURLWithPath: rsync))
        #expect(childOnly.status == 0, "\(childOnly.stderr)")
        var expected = [SeenChange(event: "created", id: id, revision: second, heads: [second])]
        watchers.expect(expected)
        let rest = try CommandRunner.run(
            ["-a", "--exclude=*.nosync", other + "/Documents/", scratch.store + "/Documents/"],
            executable: URL(fileURLWithPath: rsync))
        #expect(rest.status == 0, "\(rest.stderr)")
        expected.append(SeenChange(event: "revision-added", id: id, revision: first, heads: [second]))
        watchers.expect(expected)
        watchers.stop()
    }

    /// The threads of this process that run a change feed (named `store-changes` in
    /// `/proc/self/task/*/comm`).
    static func feedThreads() -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter {
            (try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8))?.hasPrefix(
                "store-changes") == true
        }.count
    }

    /// Waits (ten seconds at most) until `probe` gives `value`; returns what it gave last.
    static func wait(for value: Int, _ probe: () -> Int) -> Int {
        let deadline = Date().addingTimeInterval(10)
        var seen = probe()
        while seen != value, Date() < deadline {
            usleep(10_000)
            seen = probe()
        }
        return seen
    }

    @Test(
        "A sequence dropped without being iterated, or after one change, stops its thread and closes its descriptors",
        arguments: FolderWatcher.Mechanism.allCases)
    func droppedSequence(mechanism: FolderWatcher.Mechanism) async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let store = try await SurveyStore.openForReading(at: scratch.store)
        let threads = Self.feedThreads()
        let descriptors = Self.inotifyDescriptors()
        let inotify = mechanism == .inotify ? 1 : 0
        do {
            let changes = try store.changes(mechanism: mechanism)
            #expect(Self.wait(for: threads + 1, Self.feedThreads) == threads + 1)
            #expect(Self.inotifyDescriptors() == descriptors + inotify)
            _ = changes
        }
        #expect(Self.wait(for: threads, Self.feedThreads) == threads, "never iterated")
        #expect(Self.wait(for: descriptors, Self.inotifyDescriptors) == descriptors)

        // Iterated until one change, then the loop left: the iterator and the sequence go.
        do {
            let changes = try store.changes(mechanism: mechanism)
            let id = try scratch.run(["new", "--title", "Seen"])
            for try await change in changes {
                #expect(change.document?.uuidString.lowercased() == id)
                break
            }
        }
        #expect(Self.wait(for: threads, Self.feedThreads) == threads, "iterated once")
        #expect(Self.wait(for: descriptors, Self.inotifyDescriptors) == descriptors)
    }
}

extension WatchTests {
    @Test(
        "Revisions saved and pruned while the watch is held up (stopped, as a watch slow to wake or between polls is) are each reported once (the pruned one was never reported)",
        arguments: FolderWatcher.Mechanism.allCases)
    func prunedBeforeRead(mechanism: FolderWatcher.Mechanism) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let id = try scratch.run(["new", "--title", "One"])
        let first = try scratch.revision(["show", id])
        let watch = try CommandWatch(store: scratch.store, mechanism: mechanism)
        #expect(kill(watch.process.processIdentifier, SIGSTOP) == 0)
        let second = try scratch.revision(["edit", id, "--title", "Two"])
        let third = try scratch.revision(["edit", id, "--title", "Three"])
        try scratch.run(["prune"])
        // The second's content is gone: only its place in the history is left to report.
        let versions = try scratch.run(["versions", id]).split(separator: "\n")
        #expect(
            versions.contains { $0.hasPrefix(second) && $0.hasSuffix("(pruned)") },
            "\(versions)")
        #expect(kill(watch.process.processIdentifier, SIGCONT) == 0)
        let expected = [
            SeenChange(event: "revision-added", id: id, revision: second, heads: [third]),
            SeenChange(event: "revision-added", id: id, revision: third, heads: [third]),
        ]
        let seen = watch.collected.settle(count: expected.count)
        #expect(seen.map(\.key) == expected.map(\.key), "\(seen)")
        #expect(seen.allSatisfy { $0.heads == [third] }, "\(seen)")
        #expect(!seen.contains { $0.revision == first })
        #expect(watch.stop() == 0)
    }
}
