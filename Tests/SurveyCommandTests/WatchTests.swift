import Foundation
import SurveyStore
import Surveys
import TestSupport
import Testing
import Versions

/// Change notifications, observed both through `store.changes()` in this process and
/// through `survey watch --json` as a child process, while other processes change the
/// store: `survey` commands, `survey sync`, rsync, and a package copied file by file.
@Suite("Watching a store", .serialized, .timeLimit(.minutes(5)))
struct WatchTests {
    /// A scratch folder with a store in it, and a runner of `survey` on that store.
    struct Scratch {
        let directory: URL
        var store: String { directory.appendingPathComponent("store").path }

        init() throws {
            directory = try CommandRunner.temporaryDirectory()
            _ = try run(["init", "--device", "watched"])
        }

        /// Runs `survey ARGUMENTS --store STORE`; expects success; returns stdout trimmed.
        @discardableResult
        func run(
            _ arguments: [String], store: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
        ) throws -> String {
            let result = try CommandRunner.run(arguments + ["--store", store ?? self.store], timeLimit: 60)
            #expect(result.status == 0, "\(arguments): \(result.stderr)", sourceLocation: sourceLocation)
            return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// Runs `survey ARGUMENTS --json --store STORE` and returns its `revision`.
        func revision(_ arguments: [String], store: String? = nil) throws -> String {
            let output = try run(arguments + ["--json"], store: store)
            let object = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any]
            return (object?["revision"] as? String) ?? ""
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    /// Both watchers of one store.
    struct Watchers {
        let library: LibraryWatch
        let command: CommandWatch

        init(_ store: String, mechanism: FolderWatcher.Mechanism = .inotify) throws {
            library = try LibraryWatch(store: store, mechanism: mechanism)
            command = try CommandWatch(store: store, mechanism: mechanism)
        }

        /// Waits for `expected` (in this order) from both, then checks that nothing else came.
        /// Each watch's changes, with its name for messages.
        var both: [(name: String, collected: Collected)] {
            [("store.changes()", library.collected), ("survey watch --json", command.collected)]
        }

        func expect(_ expected: [SeenChange], sourceLocation: SourceLocation = #_sourceLocation) {
            for (name, collected) in both {
                let seen = collected.settle(count: expected.count)
                // Heads depend on how a burst was split: each change's own part must match,
                // and the last change's heads.
                #expect(
                    seen.map(\.key) == expected.map(\.key),
                    "\(name) saw:\n\(seen.map(\.description).joined(separator: "\n"))",
                    sourceLocation: sourceLocation)
                #expect(
                    seen.last?.heads == expected.last?.heads, "\(name): \(seen)",
                    sourceLocation: sourceLocation)
                #expect(
                    collected.failure == nil, "\(name): \(collected.failure ?? "")",
                    sourceLocation: sourceLocation)
            }
        }

        /// Stops both; `survey watch` must exit 0 on `signal`.
        func stop(signal: Int32 = SIGTERM, sourceLocation: SourceLocation = #_sourceLocation) {
            library.stop()
            #expect(
                command.stop(signal: signal) == 0, "survey watch did not exit 0 on signal \(signal)",
                sourceLocation: sourceLocation)
        }
    }

    @Test(
        "Saves, a conflict, its resolution and a deletion by other processes: one change each, in order",
        arguments: FolderWatcher.Mechanism.allCases)
    func otherProcesses(mechanism: FolderWatcher.Mechanism) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let watchers = try Watchers(scratch.store, mechanism: mechanism)
        let id = try scratch.run(["new", "--title", "First"])
        let first = try scratch.revision(["show", id])
        watchers.expect([SeenChange(event: "created", id: id, revision: first, heads: [first])])

        let second = try scratch.revision(["edit", id, "--title", "Second"])
        var expected = [
            SeenChange(event: "created", id: id, revision: first, heads: [first]),
            SeenChange(event: "revision-added", id: id, revision: second, heads: [second]),
        ]
        watchers.expect(expected)

        // Two edits from the same base: a conflict. (Seen one at a time: revisions that
        // arrive within one polling interval are reported in the order of their ids.)
        let left = try scratch.revision(["edit", id, "--title", "Left", "--base", second])
        expected.append(SeenChange(event: "revision-added", id: id, revision: left, heads: [left]))
        watchers.expect(expected)
        let right = try scratch.revision(["edit", id, "--title", "Right", "--base", second])
        let winner = try Self.heads(of: id, in: scratch)
        #expect(Set(winner) == [left, right])
        expected += [
            SeenChange(event: "revision-added", id: id, revision: right, heads: winner),
            SeenChange(event: "conflict-appeared", id: id, revision: winner[0], heads: winner),
        ]
        watchers.expect(expected)

        let resolution = try scratch.revision(["resolve", id, "--accept"])
        expected += [
            SeenChange(event: "revision-added", id: id, revision: resolution, heads: [resolution]),
            SeenChange(event: "conflict-resolved", id: id, revision: resolution, heads: [resolution]),
        ]
        watchers.expect(expected)

        let deletion = try scratch.revision(["delete", id])
        expected += [
            SeenChange(event: "revision-added", id: id, revision: deletion, heads: [deletion]),
            SeenChange(event: "deleted", id: id, revision: deletion, heads: [deletion]),
        ]
        watchers.expect(expected)
        watchers.stop(signal: SIGINT)
    }

    @Test(
        "A deleted document brought back (an earlier revision kept, then an edit that raced a second deletion, copied in by survey sync): restored each time, as a deletion is reported",
        arguments: FolderWatcher.Mechanism.allCases)
    func restoredDocument(mechanism: FolderWatcher.Mechanism) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let other = scratch.directory.appendingPathComponent("other").path
        _ = try scratch.run(["init", "--device", "other"], store: other)
        let id = try scratch.run(["new", "--title", "First"])
        let first = try scratch.revision(["show", id])
        let watchers = try Watchers(scratch.store, mechanism: mechanism)
        let deletion = try scratch.revision(["delete", id])
        var expected = [
            SeenChange(event: "revision-added", id: id, revision: deletion, heads: [deletion]),
            SeenChange(event: "deleted", id: id, revision: deletion, heads: [deletion]),
        ]
        watchers.expect(expected)

        let kept = try scratch.revision(["resolve", id, "--keep", first])
        expected += [
            SeenChange(event: "revision-added", id: id, revision: kept, heads: [kept]),
            SeenChange(event: "restored", id: id, revision: kept, heads: [kept]),
        ]
        watchers.expect(expected)

        // The other device edits while this one deletes: the edit, synced in, wins.
        _ = try scratch.run(["sync", other])
        let second = try scratch.revision(["delete", id])
        let edit = try scratch.revision(["edit", id, "--title", "Elsewhere"], store: other)
        expected += [
            SeenChange(event: "revision-added", id: id, revision: second, heads: [second]),
            SeenChange(event: "deleted", id: id, revision: second, heads: [second]),
        ]
        watchers.expect(expected)
        _ = try scratch.run(["sync", other])
        let heads = try Self.heads(of: id, in: scratch)
        #expect(heads == [edit, second])
        expected += [
            SeenChange(event: "revision-added", id: id, revision: edit, heads: heads),
            SeenChange(event: "restored", id: id, revision: edit, heads: heads),
        ]
        watchers.expect(expected)
        watchers.stop()
    }

    @Test(
        "survey --help's EXIT CODES name a watched store removed, moved away or replaced under 66, each row's lines indented under it, none wrapped out of the table"
    )
    func exitCodesTable() throws {
        let help = try CommandRunner.run(["--help"])
        #expect(help.status == 0)
        let lines = help.stdout.components(separatedBy: "\n")
        guard let start = lines.firstIndex(where: { $0.hasPrefix("EXIT CODES") }) else {
            Issue.record("no EXIT CODES in survey --help:\n\(help.stdout)")
            return
        }
        let table = lines[(start + 1)...].prefix { !$0.isEmpty }
        #expect(table.count > 10)
        for line in table {
            let row = line.range(of: #"^  \d{1,2} +\S"#, options: .regularExpression) != nil
            let continuation = line.hasPrefix("      ") && line.dropFirst(6).first != " "
            #expect(row || continuation, "a line out of the table: '\(line)'")
            #expect(line.count <= 80, "'\(line)'")
        }
        let words = table.joined(separator: " ").split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(words.contains("a watched store removed, moved away or replaced 75"), "\(words)")
    }

    /// The heads of `id`, the winner first, read from the store.
    static func heads(of id: String, in scratch: Scratch) throws -> [String] {
        let store = try SurveyStore.openForReading(at: scratch.store)
        return try store.graph(of: UUID(uuidString: id)!).heads.map(\.id.description)
    }

    @Test(
        "survey sync from another store: each revision it brings once, then the conflict",
        arguments: FolderWatcher.Mechanism.allCases)
    func syncFromAnotherStore(mechanism: FolderWatcher.Mechanism) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let other = scratch.directory.appendingPathComponent("other").path
        try scratch.run(["init", "--device", "other"], store: other)
        let id = try scratch.run(["new", "--title", "Elsewhere"], store: other)
        let first = try scratch.revision(["show", id], store: other)
        let second = try scratch.revision(["edit", id, "--title", "Elsewhere, edited"], store: other)

        let watchers = try Watchers(scratch.store, mechanism: mechanism)
        try scratch.run(["sync", other])
        var expected = [
            SeenChange(event: "created", id: id, revision: first, heads: [second]),
            SeenChange(event: "revision-added", id: id, revision: second, heads: [second]),
        ]
        watchers.expect(expected)

        // Both sides edit; the sync brings the other's edit: a conflict.
        let here = try scratch.revision(["edit", id, "--title", "Here"])
        let there = try scratch.revision(["edit", id, "--title", "There"], store: other)
        expected.append(SeenChange(event: "revision-added", id: id, revision: here, heads: [here]))
        watchers.expect(expected)
        try scratch.run(["sync", other])
        let heads = try Self.heads(of: id, in: scratch)
        #expect(Set(heads) == [here, there])
        expected += [
            SeenChange(event: "revision-added", id: id, revision: there, heads: heads),
            SeenChange(event: "conflict-appeared", id: id, revision: heads[0], heads: heads),
        ]
        watchers.expect(expected)
        watchers.stop()
    }

    @Test(
        "A package whose metadata did not verify, repaired in place by verify --repair-from, then whose content was a link, repaired by sync: its revision is reported once each time",
        arguments: FolderWatcher.Mechanism.allCases)
    func repairedPackage(mechanism: FolderWatcher.Mechanism) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let id = try scratch.run(["new", "--title", "First"])
        let first = try scratch.revision(["show", id])
        let second = try scratch.revision(["edit", id, "--title", "Second"])
        let replica = scratch.directory.appendingPathComponent("replica").path
        try scratch.run(["init", "--device", "replica"], store: replica)
        try scratch.run(["sync", replica])
        let metadata = scratch.store + "/Documents/\(id)/\(second).survey/DocumentMetadata.plist"
        try Data("garbled".utf8).write(to: URL(fileURLWithPath: metadata))
        #expect(try Self.heads(of: id, in: scratch) == [first])

        let watchers = try Watchers(scratch.store, mechanism: mechanism)
        try scratch.run(["verify", "--repair-from", replica])
        watchers.expect([SeenChange(event: "revision-added", id: id, revision: second, heads: [second])])
        watchers.stop()

        // The content moved out of the store and a link left in its place.
        let content = scratch.store + "/Documents/\(id)/\(second).survey/Survey.plist"
        let outside = scratch.directory.appendingPathComponent("outside.plist").path
        try FileManager.default.moveItem(atPath: content, toPath: outside)
        try FileManager.default.createSymbolicLink(atPath: content, withDestinationPath: outside)
        #expect(try Self.heads(of: id, in: scratch) == [first])
        let again = try Watchers(scratch.store, mechanism: mechanism)
        try scratch.run(["sync", replica])
        again.expect([SeenChange(event: "revision-added", id: id, revision: second, heads: [second])])
        again.stop()
        #expect(FileManager.default.fileExists(atPath: outside))
    }

    @Test(
        "rsync copying revisions into the watched store: one change per revision, not per file",
        CommandRunner.needs("rsync"), arguments: FolderWatcher.Mechanism.allCases)
    func rsyncCopies(mechanism: FolderWatcher.Mechanism) throws {
        guard let rsync = CommandRunner.requireTool("rsync") else { return }
        let scratch = try Scratch()
        defer { scratch.remove() }
        let other = scratch.directory.appendingPathComponent("other").path
        try scratch.run(["init", "--device", "other"], store: other)
        let a = try scratch.run(["new", "--title", "A"], store: other)
        let a1 = try scratch.revision(["show", a], store: other)
        let a2 = try scratch.revision(["edit", a, "--title", "A2"], store: other)
        let a3 = try scratch.revision(["edit", a, "--title", "A3"], store: other)
        let b = try scratch.run(["new", "--title", "B"], store: other)
        let b1 = try scratch.revision(["show", b], store: other)

        let watchers = try Watchers(scratch.store, mechanism: mechanism)
        let copy = try CommandRunner.run(
            ["-a", "--exclude=*.nosync", other + "/Documents/", scratch.store + "/Documents/"],
            executable: URL(fileURLWithPath: rsync))
        #expect(copy.status == 0, "\(copy.stderr)")
        // The order of documents depends on the order rsync creates them in: compare per document.
        let expectedA = [
            SeenChange(event: "created", id: a, revision: a1, heads: [a3]),
            SeenChange(event: "revision-added", id: a, revision: a2, heads: [a3]),
            SeenChange(event: "revision-added", id: a, revision: a3, heads: [a3]),
        ]
        let expectedB = [SeenChange(event: "created", id: b, revision: b1, heads: [b1])]
        for (name, collected) in watchers.both {
            let all = collected.settle(count: 4)
            // A child copied before its parent makes both heads for a moment: when the feed
            // reads in between (a loaded machine), that is a conflict appearing, resolved
            // once the parent arrives, and reported as such. Nothing else may come besides
            // the revisions.
            let states = all.filter { $0.event == "conflict-appeared" || $0.event == "conflict-resolved" }
            #expect(
                states.map(\.event)
                    == Array(repeating: ["conflict-appeared", "conflict-resolved"], count: states.count / 2)
                    .flatMap { $0 } && states.allSatisfy { $0.id == a },
                "\(name): \(all)")
            let seen = all.filter { !states.contains($0) }
            #expect(seen.count == 4, "\(name): \(all)")
            // Within a document, revisions arrive in any order rsync copies them; each once.
            #expect(
                Set(seen.filter { $0.id == a }.map(\.revision)) == Set(expectedA.map(\.revision)),
                "\(name): \(seen)")
            #expect(seen.filter { $0.id == a }.first?.event == "created", "\(name): \(seen)")
            #expect(seen.filter { $0.id == a && $0.revision == a3 }.count == 1, "\(name): \(seen)")
            #expect(seen.filter { $0.id == b } == expectedB, "\(name): \(seen)")
            #expect(seen.last(where: { $0.id == a })?.heads == [a3], "\(name): \(seen)")
        }
        watchers.stop()
    }

    @Test(
        "A package copied one file at a time produces nothing until its last file is there, then one change",
        arguments: FolderWatcher.Mechanism.allCases)
    func halfCopiedPackage(mechanism: FolderWatcher.Mechanism) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let (other, id, first, second) = try Self.twoRevisionsElsewhere(
            scratch, titles: ("Copied", "Copied again"))

        let watchers = try Watchers(scratch.store, mechanism: mechanism)
        let folder = "/Documents/" + id
        try FileManager.default.createDirectory(
            atPath: scratch.store + folder, withIntermediateDirectories: false)
        /// Copies one file as rsync does: a temporary name in the same folder, renamed.
        func copy(_ relative: String) throws {
            let data = try Data(contentsOf: URL(fileURLWithPath: other + relative))
            let target = URL(fileURLWithPath: scratch.store + relative)
            let temporary = target.deletingLastPathComponent().appendingPathComponent(
                "." + target.lastPathComponent + ".partial")
            // Written in two halves, with a pause: a reader in between sees half a file.
            try data.prefix(data.count / 2).write(to: temporary)
            usleep(50_000)
            let handle = try FileHandle(forWritingTo: temporary)
            try handle.seekToEnd()
            try handle.write(contentsOf: data.suffix(from: data.count / 2))
            try handle.close()
            #expect(rename(temporary.path, target.path) == 0)
        }
        func package(_ revision: String) -> String { folder + "/" + revision + ".survey" }
        // The first revision: metadata first, then the content.
        try FileManager.default.createDirectory(
            atPath: scratch.store + package(first), withIntermediateDirectories: false)
        try copy(package(first) + "/DocumentMetadata.plist")
        usleep(500_000)
        #expect(watchers.library.collected.changes.isEmpty, "\(watchers.library.collected.changes)")
        #expect(watchers.command.collected.changes.isEmpty, "\(watchers.command.collected.changes)")
        try copy(package(first) + "/Survey.plist")
        var expected = [SeenChange(event: "created", id: id, revision: first, heads: [first])]
        watchers.expect(expected)
        // The second: the content first, then the metadata.
        try FileManager.default.createDirectory(
            atPath: scratch.store + package(second), withIntermediateDirectories: false)
        try copy(package(second) + "/Survey.plist")
        usleep(500_000)
        #expect(watchers.library.collected.changes == expected)
        #expect(watchers.command.collected.changes == expected)
        try copy(package(second) + "/DocumentMetadata.plist")
        expected.append(SeenChange(event: "revision-added", id: id, revision: second, heads: [second]))
        watchers.expect(expected)
        watchers.stop()
    }

    @Test(
        "A package copied in place without a rename (cp -r, scp, rsync --inplace) produces nothing while its content is being written, then one change",
        arguments: FolderWatcher.Mechanism.allCases)
    func packageWrittenInPlace(mechanism: FolderWatcher.Mechanism) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let (other, id, first, second) = try Self.twoRevisionsElsewhere(
            scratch, titles: ("Copied in place", "Copied in place again"))

        let watchers = try Watchers(scratch.store, mechanism: mechanism)
        let folder = "/Documents/" + id
        func package(_ revision: String) -> String { folder + "/" + revision + ".survey" }
        /// Writes one file under its final name, as `cp` does: created, written in two
        /// halves with `pause` between them, closed.
        func write(_ relative: String, pause: () -> Void = {}) throws {
            let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: other + relative)))
            let descriptor = open(scratch.store + relative, O_WRONLY | O_CREAT | O_EXCL, 0o644)
            try #require(descriptor >= 0, "cannot create \(relative)")
            let half = data.count / 2
            #expect(
                data[..<half].withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, half) } == half)
            pause()
            #expect(
                data[half...].withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
                    == data.count - half)
            #expect(close(descriptor) == 0)
        }
        /// Waits long enough for either watch (polling too) to have looked, and checks that
        /// neither reported anything beyond `expected`.
        func expectNothingMore(than expected: [SeenChange], _ when: String) {
            usleep(2_500_000)
            #expect(watchers.library.collected.changes == expected, "\(when)")
            #expect(watchers.command.collected.changes == expected, "\(when)")
        }
        // The whole document's folder, as `cp -r` of it copies it: folders first, the
        // metadata whole, then the content, half of it there for a while.
        try FileManager.default.createDirectory(
            atPath: scratch.store + package(first), withIntermediateDirectories: true)
        try write(package(first) + "/DocumentMetadata.plist")
        try write(package(first) + "/Survey.plist") {
            expectNothingMore(than: [], "with the first revision's content half written")
        }
        var expected = [SeenChange(event: "created", id: id, revision: first, heads: [first])]
        watchers.expect(expected)
        // One more package into the document watched: the content first, half written,
        // then the metadata whole, then the rest of the content.
        try FileManager.default.createDirectory(
            atPath: scratch.store + package(second), withIntermediateDirectories: false)
        let content = package(second) + "/Survey.plist"
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: other + content)))
        let descriptor = open(scratch.store + content, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        try #require(descriptor >= 0)
        let half = data.count / 2
        #expect(data[..<half].withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, half) } == half)
        try write(package(second) + "/DocumentMetadata.plist")
        expectNothingMore(than: expected, "with the second revision's content half written")
        #expect(
            data[half...].withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
                == data.count - half)
        #expect(close(descriptor) == 0)
        expected.append(SeenChange(event: "revision-added", id: id, revision: second, heads: [second]))
        watchers.expect(expected)
        watchers.stop()
    }

    @Test(
        "A revision whose content file is removed and put back (tar extracting over a copy) is reported once",
        arguments: FolderWatcher.Mechanism.allCases)
    func contentPutBackReportedOnce(mechanism: FolderWatcher.Mechanism) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let (other, id, first, second) = try Self.twoRevisionsElsewhere(
            scratch, titles: ("Put back", "Second"))
        let third = try scratch.revision(["edit", id, "--title", "Third"], store: other)
        let folder = "/Documents/" + id
        func package(_ revision: String) -> String { folder + "/" + revision + ".survey" }
        func copy(_ revision: String) throws {
            try FileManager.default.copyItem(
                atPath: other + package(revision), toPath: scratch.store + package(revision))
        }
        try FileManager.default.createDirectory(
            atPath: scratch.store + folder, withIntermediateDirectories: false)
        try copy(first)
        let watchers = try Watchers(scratch.store, mechanism: mechanism)
        try copy(second)
        watchers.expect([SeenChange(event: "revision-added", id: id, revision: second, heads: [second])])
        // The second's content removed (the revision is not counted while it is gone),
        // the third copied in, and the same bytes put back: each poll (polling) sees
        // each state.
        let content = scratch.store + package(second) + "/Survey.plist"
        let bytes = try Data(contentsOf: URL(fileURLWithPath: content))
        try FileManager.default.removeItem(atPath: content)
        usleep(2_500_000)
        try copy(third)
        usleep(2_500_000)
        try bytes.write(to: URL(fileURLWithPath: content))
        usleep(2_500_000)
        for (name, collected) in watchers.both {
            let added = collected.changes.filter { $0.event == "revision-added" || $0.event == "created" }
            #expect(added.map(\.revision) == [second, third], "\(name): \(collected.changes)")
            // While the second's content was gone, its parent was a head beside the third:
            // a conflict that a read in between reports, and its end. Nothing else.
            let others = collected.changes.filter { !added.contains($0) }.map(\.event)
            #expect(
                others.isEmpty || others == ["conflict-appeared", "conflict-resolved"],
                "\(name): \(collected.changes)")
            #expect(collected.changes.last?.heads == [third], "\(name): \(collected.changes)")
        }
        watchers.stop()
    }

    @Test(
        "rsync --inplace writing a revision slowly under its final name: nothing while its content is partly there, then one change",
        CommandRunner.needs("rsync"))
    func rsyncInPlace() throws {
        guard let rsync = CommandRunner.requireTool("rsync") else { return }
        let scratch = try Scratch()
        defer { scratch.remove() }
        let other = scratch.directory.appendingPathComponent("other").path
        try scratch.run(["init", "--device", "other"], store: other)
        // A survey of about 100 KB, which rsync limited to 25 KB a second writes for seconds.
        let items = (0..<300).map { index in
            [
                "id": UUID().uuidString, "kind": "textOnly", "title": "Part \(index + 1)",
                "text": String(repeating: "Words for the page, ", count: 15),
            ]
        }
        let source = scratch.directory.appendingPathComponent("large.json")
        try JSONSerialization.data(withJSONObject: ["title": "Large", "items": items]).write(to: source)
        let id = try scratch.run(["new", "--from", source.path], store: other)
        let revision = try scratch.revision(["show", id], store: other)
        let content = "/Documents/\(id)/\(revision).survey/Survey.plist"
        let size = try #require(
            try FileManager.default.attributesOfItem(atPath: other + content)[.size] as? Int)

        let watchers = try Watchers(scratch.store)
        let copy = Process()
        copy.executableURL = URL(fileURLWithPath: rsync)
        copy.arguments = [
            "-a", "--inplace", "--bwlimit=25", "--exclude=*.nosync", other + "/Documents/",
            scratch.store + "/Documents/",
        ]
        copy.standardOutput = FileHandle.nullDevice
        copy.standardError = FileHandle.nullDevice
        try copy.run()
        // While rsync writes: whenever the content is not all there (looked at after the
        // changes were taken), no change may have been reported.
        var partlyThere = 0
        while copy.isRunning {
            usleep(100_000)
            let library = watchers.library.collected.changes
            let command = watchers.command.collected.changes
            let written =
                (try? FileManager.default.attributesOfItem(atPath: scratch.store + content))?[.size] as? Int
            guard let written, written < size else { continue }
            partlyThere += 1
            #expect(library.isEmpty, "\(written) of \(size) bytes: \(library)")
            #expect(command.isEmpty, "\(written) of \(size) bytes: \(command)")
        }
        copy.waitUntilExit()
        #expect(copy.terminationStatus == 0)
        // The copy was seen half done more than once, so the check above meant something.
        #expect(partlyThere >= 3, "the content was partly there at only \(partlyThere) looks")
        watchers.expect([SeenChange(event: "created", id: id, revision: revision, heads: [revision])])
        watchers.stop()
    }

    /// Whether this process may make a user namespace (where a test may set its own limit
    /// of inotify watches); CI requires it.
    static let userNamespaces: Bool =
        Tools.find("unshare").map { unshare in
            (try? ChildProcess.run(unshare, ["-U", "-r", "true"], timeLimit: 10).status) == 0
        } ?? false

    @Test(
        "A package not complete yet that cannot be watched (the limit of watches reached) ends survey watch with an error naming it, not a completion never reported",
        .enabled(
            if: CommandRunner.isCI || userNamespaces,
            "needs unshare and user namespaces, which this machine does not allow"))
    func packageBeyondTheWatchLimit() throws {
        guard let unshare = CommandRunner.requireTool("unshare") else { return }
        let scratch = try Scratch()
        defer { scratch.remove() }
        let other = scratch.directory.appendingPathComponent("other").path
        try scratch.run(["init", "--device", "other"], store: other)
        let id = try scratch.run(["new", "--title", "Copied"])
        _ = try scratch.run(["sync", other])
        let second = try scratch.revision(["edit", id, "--title", "Copied again"], store: other)
        // Half of the second revision's package copied in: its metadata, not its content.
        let package = "/Documents/" + id + "/" + second + ".survey"
        try FileManager.default.createDirectory(
            atPath: scratch.store + package, withIntermediateDirectories: false)
        try FileManager.default.copyItem(
            atPath: other + package + "/DocumentMetadata.plist",
            toPath: scratch.store + package + "/DocumentMetadata.plist")
        // Three watches in this user namespace: the store's folder, Documents/ and the
        // document's folder.
        let result = try CommandRunner.run(
            ["watch", "--json", "--store", scratch.store],
            prefix: [
                unshare, "-U", "-r", "sh", "-c",
                #"echo 3 > /proc/sys/user/max_inotify_watches && exec "$0" "$@""#,
            ], timeLimit: 20)
        #expect(!result.timedOut, "survey watch went on without watching the package")
        #expect(result.status == 1, "\(result.stderr)")
        let object = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let error = object?["error"] as? [String: Any]
        let message = error?["message"] as? String ?? ""
        #expect(error?["code"] as? String == "watchLimit", "\(result.stdout)")
        #expect(
            message.hasPrefix("cannot watch ") && message.contains(second + ".survey"), "\(result.stdout)")
        #expect(message.contains("the limit of inotify watches is reached"), "\(result.stdout)")
        #expect(!message.contains("No space left on device"), "not a full disk: \(result.stdout)")
    }

    @Test(
        "More events than the kernel queues (20,000 files while the watchers are stopped) ends in a reread",
        CommandRunner.needs("python3"))
    func overflow() throws {
        guard let python = CommandRunner.requireTool("python3") else { return }
        let scratch = try Scratch()
        defer { scratch.remove() }
        let id = try scratch.run(["new", "--title", "Busy"])
        let watchers = try Watchers(scratch.store, mechanism: .inotify)
        let limit =
            Int(
                (try? String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 16384
        let folder = scratch.store + "/Documents/" + id
        // A watcher that cannot read for a while (descheduled, busy): a child process stops
        // this process and `survey watch` (SIGSTOP), creates the files (two events each:
        // created, closed after writing), and continues both (SIGCONT, also if it fails).
        let files = max(20_000, limit)
        let script = """
            import os, signal, sys
            pids = [int(p) for p in sys.argv[2:]]
            try:
                for pid in pids: os.kill(pid, signal.SIGSTOP)
                for i in range(\(files)):
                    os.close(os.open(sys.argv[1] + "/junk-%d" % i, os.O_CREAT | os.O_WRONLY, 0o644))
            finally:
                for pid in pids: os.kill(pid, signal.SIGCONT)
            """
        let flood = try CommandRunner.run(
            ["-c", script, folder, String(getpid()), String(watchers.command.process.processIdentifier)],
            executable: URL(fileURLWithPath: python), timeLimit: 120)
        #expect(flood.status == 0, "\(flood.stderr)")
        let made = files
        for (name, collected) in watchers.both {
            let seen = collected.wait { $0.contains { $0.event == "reread" } }
            #expect(
                seen.contains(SeenChange(event: "reread", id: nil, revision: nil, heads: [])),
                "\(name) after \(made) files, queue \(limit): \(seen)")
            // Junk is no revision: nothing else was reported.
            #expect(seen.allSatisfy { $0.event == "reread" }, "\(name): \(seen)")
        }
        // The watch goes on: a save after the flood is reported.
        let junk = try FileManager.default.contentsOfDirectory(atPath: folder).filter {
            $0.hasPrefix("junk-")
        }
        for name in junk { try FileManager.default.removeItem(atPath: folder + "/" + name) }
        let edit = try scratch.revision(["edit", id, "--title", "Calm"])
        for (name, collected) in watchers.both {
            let seen = collected.wait { $0.contains { $0.revision == edit } }
            #expect(
                seen.filter { $0.revision == edit } == [
                    SeenChange(event: "revision-added", id: id, revision: edit, heads: [edit])
                ], "\(name): \(seen)")
        }
        watchers.stop()
    }

    @Test(
        "Documents/ moved aside, replaced by a link, then put back: each step is a reread, the watch goes on and reports the next save",
        arguments: FolderWatcher.Mechanism.allCases)
    func documentsMovedAside(mechanism: FolderWatcher.Mechanism) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let id = try scratch.run(["new", "--title", "Kept"])
        let watchers = try Watchers(scratch.store, mechanism: mechanism)
        let documents = scratch.store + "/Documents", aside = scratch.store + "/Documents.aside"
        let manager = FileManager.default
        func rereads(_ count: Int) {
            for (name, collected) in watchers.both {
                let seen = collected.wait { $0.filter { $0.event == "reread" }.count >= count }
                #expect(seen.filter { $0.event == "reread" }.count >= count, "\(name): \(seen)")
                #expect(collected.failure == nil, "\(name): \(collected.failure ?? "")")
            }
        }
        try manager.moveItem(atPath: documents, toPath: aside)
        rereads(1)
        try manager.createSymbolicLink(atPath: documents, withDestinationPath: "Documents.aside")
        #expect(try CommandRunner.run(["list", "--store", scratch.store]).status == 65)
        try manager.removeItem(atPath: documents)
        try manager.moveItem(atPath: aside, toPath: documents)
        rereads(2)
        // A save is reported once the watch has read the store again. Polling may still be
        // reading it (a third reread, when its polls fell between the steps above), and a
        // save made meanwhile is in what that reread reads, not a change of its own: so the
        // store is edited again until a save is reported by both, at most three times.
        let watched = watchers.both
        var edits: [String] = []
        for attempt in 1...3 {
            let edit = try scratch.revision(["edit", id, "--title", "Back \(attempt)"])
            edits.append(edit)
            let reported = watched.allSatisfy { _, collected in
                collected.wait(seconds: 10) { $0.contains { $0.revision == edit } }.contains {
                    $0.revision == edit
                }
            }
            if reported { break }
        }
        for (name, collected) in watched {
            let seen = collected.changes
            let changes = seen.filter { $0.event != "reread" }
            #expect(changes.contains { $0.revision == edits.last }, "\(name): \(seen)")
            #expect(
                changes.allSatisfy { change in
                    edits.contains {
                        change == SeenChange(event: "revision-added", id: id, revision: $0, heads: [$0])
                    }
                }, "\(name): \(seen)")
        }
        watchers.stop()
    }

    @Test(
        "A document's folder removed while watched (rm -rf: its packages, then the folder) is a reread, every time, and the watch goes on",
        arguments: FolderWatcher.Mechanism.allCases)
    func documentFolderRemoved(mechanism: FolderWatcher.Mechanism) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let gone = try scratch.run(["new", "--title", "Gone"])
        _ = try scratch.revision(["edit", gone, "--title", "Gone again"])
        let watchers = try Watchers(scratch.store, mechanism: mechanism)
        try FileManager.default.removeItem(atPath: scratch.store + "/Documents/" + gone)
        let watched = watchers.both
        for (name, collected) in watched {
            let seen = collected.wait(seconds: 10) { $0.contains { $0.event == "reread" } }
            #expect(seen.contains { $0.event == "reread" }, "\(name): \(seen)")
            #expect(collected.failure == nil, "\(name): \(collected.failure ?? "")")
        }
        // Still watching: the next document is reported.
        let next = try scratch.run(["new", "--title", "Next"])
        for (name, collected) in watched {
            let seen = collected.wait(seconds: 10) { $0.contains { $0.id == next } }
            #expect(seen.contains { $0.id == next && $0.event == "created" }, "\(name): \(seen)")
        }
        watchers.stop()
    }

    @Test(
        "A watch started on a store whose Documents is a link or a file fails at once, exit 65, as every command does"
    )
    func documentsBlockedAtStart() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        _ = try scratch.run(["new", "--title", "Elsewhere"])
        let documents = scratch.store + "/Documents",
            aside = scratch.directory.appendingPathComponent("aside").path
        try FileManager.default.moveItem(atPath: documents, toPath: aside)
        for blocked in ["link", "file"] {
            if blocked == "link" {
                try FileManager.default.createSymbolicLink(atPath: documents, withDestinationPath: aside)
            } else {
                try Data().write(to: URL(fileURLWithPath: documents))
            }
            let result = try CommandRunner.run(["watch", "--json", "--store", scratch.store], timeLimit: 20)
            #expect(!result.timedOut, "\(blocked): the watch went on")
            #expect(result.status == 65, "\(blocked): \(result.stderr)")
            #expect(result.stdout.contains("\"documentsFolderBlocked\""), "\(blocked): \(result.stdout)")
            #expect(throws: StoreError.self, "\(blocked)") {
                _ = try SurveyStore.openForReading(at: scratch.store).changes()
            }
            try FileManager.default.removeItem(atPath: documents)
        }
    }

    /// This process's inotify descriptors (`anon_inode:inotify` in `/proc/self/fd`).
    static func inotifyDescriptors() -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.filter {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0))
                == "anon_inode:inotify"
        }.count
    }

    @Test("Cancelling the consuming task ends the watch and closes its inotify descriptor")
    func cancellationCloses() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let before = Self.inotifyDescriptors()
        let watch = try LibraryWatch(store: scratch.store)
        #expect(Self.inotifyDescriptors() == before + 1)
        let id = try scratch.run(["new", "--title", "Seen"])
        #expect(watch.collected.settle(count: 1, quiet: 0).map(\.id) == [id])
        watch.stop()
        let deadline = Date().addingTimeInterval(10)
        while Self.inotifyDescriptors() != before, Date() < deadline { usleep(10_000) }
        #expect(Self.inotifyDescriptors() == before)
        #expect(watch.collected.failure == nil)
    }

    @Test(
        "A consumer on the sequence's executor runs on the watch's thread, and its tasks still run once the watch has ended"
    )
    func consumerOnWatchThread() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let store = try await SurveyStore.openForReading(at: scratch.store)
        let changes = try store.changes()
        let collected = Collected()
        let threads = Collected()
        let consumer = Task(executorPreference: changes.executor) {
            do {
                for try await change in changes {
                    // The name the watch's thread gives itself.
                    let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?"
                    threads.appendLine(name.trimmingCharacters(in: .whitespacesAndNewlines))
                    collected.append(SeenChange(change))
                }
            } catch {
                collected.fail("\(error)")
            }
        }
        let id = try scratch.run(["new", "--title", "On the watch's thread"])
        let first = try scratch.revision(["show", id])
        let second = try scratch.revision(["edit", id, "--title", "Edited"])
        let seen = collected.settle(count: 2)
        #expect(
            seen == [
                SeenChange(event: "created", id: id, revision: first, heads: [first]),
                SeenChange(event: "revision-added", id: id, revision: second, heads: [second]),
            ], "\(seen)")
        #expect(threads.rawLines == ["store-changes", "store-changes"])
        consumer.cancel()
        // Ends: its last job, resumed as the watch stops, runs after the watch's thread has gone.
        await consumer.value
        #expect(collected.failure == nil)
        let after = await Task(executorPreference: changes.executor) { 42 }.value
        #expect(after == 42)
    }

    @Test(
        "The per-document sequence reports only that document, including its creation",
        arguments: FolderWatcher.Mechanism.allCases)
    func oneDocument(mechanism: FolderWatcher.Mechanism) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let other = try scratch.run(["new", "--title", "Other"])
        let id = UUID()
        let watch = try LibraryWatch(store: scratch.store, document: id, mechanism: mechanism)
        // `survey import` keeps a package's document id: make one for `id` in another store.
        let elsewhere = scratch.directory.appendingPathComponent("elsewhere").path
        let created = try SurveyStore.create(at: elsewhere, deviceName: "elsewhere")
        let (_, revision) = try created.create(Survey(title: "Mine", items: []), id: id)
        try scratch.run(["edit", other, "--title", "Other, edited"])
        try scratch.run(["sync", elsewhere])
        let seen = watch.collected.settle(count: 1)
        #expect(
            seen == [
                SeenChange(
                    event: "created", id: id.uuidString.lowercased(), revision: revision.id.description,
                    heads: [revision.id.description])
            ])
        watch.stop()
    }

    @Test(
        "survey watch without --json prints one line per change, and bad input fails with the documented exit"
    )
    func plainOutputAndErrors() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let watch = try CommandWatch(store: scratch.store, json: false)
        let id = try scratch.run(["new", "--title", "Plain"])
        let first = try scratch.revision(["show", id])
        let collected = watch.collected
        collected.wait { _ in !collected.rawLines.isEmpty }
        usleep(300_000)
        #expect(watch.collected.rawLines == ["created \(id) \(first) (heads: \(first))"])
        #expect(watch.stop() == 0)
        let missing = try CommandRunner.run(
            ["watch", "--json", "--store", scratch.directory.appendingPathComponent("none").path],
            timeLimit: 30)
        #expect(missing.status == 66, "\(missing.stderr)")
        // The stream's one failure line, parsed as a line-by-line reader would.
        let lines = missing.stdout.split(separator: "\n")
        #expect(lines.count == 1, "\(missing.stdout)")
        let object = lines.first.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) }
        #expect(((object as? [String: Any])?["error"] as? [String: Any])?["exit"] as? Int == 66)
    }

    @Test(
        "survey watch says 'watching PATH' on one line, a line feed in the store's path written out as every path is (it split the line)"
    )
    func watchingLineWritesPathOut() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("two\nlines").path
        #expect(try CommandRunner.run(["init", "--store", store]).status == 0)
        let watch = try CommandWatch(store: store, json: false)
        #expect(watch.said == "watching \(directory.path)/two\\u{A}lines\n", "\(watch.said)")
        #expect(watch.stop() == 0)
    }

    @Test(
        "survey watch --json with a usage error at start-up prints its failure as one line, as every other failure of the stream (it printed a pretty-printed document of seven lines)",
        arguments: [
            ["--store", "STORE", "--json", "--bogus"], ["--json", "extra", "--store", "STORE"],
            ["--store", "", "--json"],
        ])
    func usageErrorIsOneLine(_ arguments: [String]) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let filled = ["watch"] + arguments.map { $0 == "STORE" ? scratch.store : $0 }
        let result = try CommandRunner.run(filled, timeLimit: 30)
        #expect(result.status == 64, "\(filled): \(result.stderr)")
        // The stream's one failure line, parsed as a line-by-line reader would.
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 2 && lines.last?.isEmpty == true, "one line: \(result.stdout)")
        let object = lines.first.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) }
        let error = (object as? [String: Any])?["error"] as? [String: Any]
        #expect(
            error?["code"] as? String == "usage" && error?["exit"] as? Int == 64
                && (error?["message"] as? String)?.isEmpty == false, "\(result.stdout)")
    }

    @Test(
        "survey watch --json that fails after writing lines (its store moved away) ends with one more line, {\"error\": …}"
    )
    func failureAfterLines() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let watch = try CommandWatch(store: scratch.store)
        _ = try scratch.run(["new", "--title", "First"])
        let collected = watch.collected
        collected.wait { _ in collected.rawLines.count >= 1 }
        let moved = scratch.directory.appendingPathComponent("moved").path
        try FileManager.default.moveItem(atPath: scratch.store, toPath: moved)
        let deadline = Date().addingTimeInterval(20)
        while watch.process.isRunning, Date() < deadline { usleep(10_000) }
        #expect(!watch.process.isRunning)
        #expect(watch.process.terminationStatus == 66)
        usleep(200_000)
        #expect(collected.rawLines.count == 2, "\(collected.rawLines)")
        let last = collected.rawLines.last ?? ""
        let object = try? JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any]
        let error = object?["error"] as? [String: Any]
        #expect(
            error?["exit"] as? Int == 66 && error?["code"] as? String == "storeGone", "\(collected.rawLines)")
    }

    /// How a store's folder goes away while it is watched.
    enum Departure: String, CaseIterable, Sendable {
        /// `rm -rf`: its documents first, then the folder, which the watch holds open.
        case removed
        /// Renamed to another name in the same folder.
        case movedAway
        /// Moved aside, and a new store made under its name.
        case replaced
        /// Its documents' folder moved aside first (the watch waits for it to come back),
        /// then the store's folder removed.
        case removedWithoutDocuments
        /// The folder that holds it renamed: nothing watched has an event, the store's path
        /// no longer leads to it.
        case parentMovedAway
        /// Its `Store.plist` removed: every other command says there is no store there.
        case layoutFileRemoved
    }

    @Test(
        "A store's folder removed, moved away or replaced while watched ends the watch (storeGone, exit 66) rather than watch nothing",
        arguments: FolderWatcher.Mechanism.allCases, Departure.allCases)
    func storeGone(mechanism: FolderWatcher.Mechanism, departure: Departure) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        _ = try scratch.run(["new", "--title", "Here"])
        let library = try LibraryWatch(store: scratch.store, mechanism: mechanism)
        let command = try CommandWatch(store: scratch.store, mechanism: mechanism)
        defer { library.stop() }
        let manager = FileManager.default
        let aside = scratch.directory.appendingPathComponent("aside").path
        switch departure {
        case .removed:
            try manager.removeItem(atPath: scratch.store)
        case .movedAway:
            try manager.moveItem(atPath: scratch.store, toPath: aside)
        case .replaced:
            try manager.moveItem(atPath: scratch.store, toPath: aside)
            _ = try scratch.run(["init", "--device", "new"])
        case .removedWithoutDocuments:
            try manager.moveItem(atPath: scratch.store + "/Documents", toPath: aside)
            library.collected.wait { $0.contains { $0.event == "reread" } }
            try manager.removeItem(atPath: scratch.store)
        case .parentMovedAway:
            let moved = scratch.directory.path + "-moved"
            try manager.moveItem(atPath: scratch.directory.path, toPath: moved)
        case .layoutFileRemoved:
            try manager.removeItem(atPath: scratch.store + "/Store.plist")
        }
        defer {
            // Back where the scratch folder's removal looks for it.
            if departure == .parentMovedAway {
                try? manager.moveItem(
                    atPath: scratch.directory.path + "-moved", toPath: scratch.directory.path)
            }
        }
        let deadline = Date().addingTimeInterval(20)
        while command.process.isRunning, Date() < deadline { usleep(10_000) }
        #expect(!command.process.isRunning, "survey watch still runs")
        if !command.process.isRunning {
            #expect(command.process.terminationStatus == 66)
        }
        usleep(100_000)
        let object = (command.collected.rawLines.last?.utf8).flatMap {
            try? JSONSerialization.jsonObject(with: Data($0)) as? [String: Any]
        }
        let error = object?["error"] as? [String: Any]
        #expect(error?["code"] as? String == "storeGone", "\(command.collected.rawLines)")
        #expect(
            (error?["message"] as? String)?.contains(
                "was removed, moved away or replaced while it was watched") == true)
        library.collected.wait { _ in library.collected.failure != nil }
        #expect(
            library.collected.failure?.contains("was removed, moved away or replaced") == true,
            "store.changes(): \(library.collected.failure ?? "no failure")")
        _ = command.stop()
    }

    @Test(
        "Standard output closed while SIGPIPE is ignored: watch and list end with exit 1 and say why (they crashed in FileHandle.write with a backtrace)",
        CommandRunner.needs("bash"))
    func closedOutputWithSigpipeIgnored() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let survey = CommandRunner.binary.path
        // Each command starts once its reader (`true`) has gone, with SIGPIPE ignored as a
        // parent that ignores it leaves it: its first write to standard output fails with EPIPE.
        @Sendable func run(_ command: String) throws -> CommandRunner.Result {
            try CommandRunner.run(
                [
                    "-c", #"trap "" PIPE; (sleep 0.3; exec "$0" \#(command)) | true; exit ${PIPESTATUS[0]}"#,
                    survey,
                ],
                executable: URL(fileURLWithPath: "/bin/bash"), timeLimit: 60)
        }
        _ = try scratch.run(["new", "--title", "One"])
        let list = try run("list --json --store '\(scratch.store)'")
        #expect(list.status == 1, "\(list.stderr)")
        #expect(list.stderr == "error: cannot write to standard output: Broken pipe\n", "\(list.stderr)")
        // The watch writes its first line when a document arrives.
        final class Outcome: @unchecked Sendable { var result: CommandRunner.Result? }
        let watch = Outcome()
        let done = DispatchSemaphore(value: 0)
        let command = "watch --json --store '\(scratch.store)'"
        DispatchQueue(label: "watch").async {
            watch.result = try? run(command)
            done.signal()
        }
        var waited = 0
        repeat {
            usleep(200_000)
            waited += 1
            _ = try scratch.run(["new", "--title", "Two"])
        } while done.wait(timeout: .now()) == .timedOut && waited < 100
        let result = try #require(watch.result)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(
            result.stderr.hasSuffix("error: cannot write to standard output: Broken pipe\n"),
            "\(result.stderr)")
        #expect(!result.stderr.contains("Fatal error"), "\(result.stderr)")
    }

    @Test("SIGTERM while survey watch first reads a large store ends it with 0, as after start-up")
    func signalDuringStartup() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        // 3,000 document folders (copies of one, each read at start-up as misplaced).
        let id = try scratch.run(["new", "--title", "One"])
        let documents = scratch.store + "/Documents"
        for _ in 0..<3000 {
            try FileManager.default.copyItem(
                atPath: documents + "/" + id, toPath: documents + "/" + UUID().uuidString.lowercased())
        }
        let process = Process()
        process.executableURL = CommandRunner.binary
        process.arguments = ["watch", "--json", "--store", scratch.store]
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        // Once SIGTERM is caught (ignored, then handled through a dispatch source), the
        // signal is sent.
        func catchesTerm() -> Bool {
            guard
                let status = try? String(
                    contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)
            else { return false }
            let masks = status.split(separator: "\n").filter {
                $0.hasPrefix("SigIgn:") || $0.hasPrefix("SigCgt:")
            }
            .compactMap {
                UInt64($0.dropFirst("SigIgn:".count).trimmingCharacters(in: .whitespaces), radix: 16)
            }
            return masks.contains { $0 & (1 << (UInt64(SIGTERM) - 1)) != 0 }
        }
        let deadline = Date().addingTimeInterval(30)
        while !catchesTerm(), process.isRunning, Date() < deadline { usleep(1_000) }
        // Caught from the start: the store is still being read ("watching" not said yet).
        var said = pollfd(fd: errors.fileHandleForReading.fileDescriptor, events: Int16(POLLIN), revents: 0)
        let saidAlready = poll(&said, 1, 0) > 0
        #expect(!saidAlready, "SIGTERM was caught only once the store had been read")
        kill(process.processIdentifier, SIGTERM)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        #expect(!process.isRunning)
        #expect(process.terminationReason == .exit && process.terminationStatus == 0)
    }
}
