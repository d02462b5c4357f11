import Foundation
import TestSupport
import Testing

/// What a store folder filled by other machines must survive: read-only access, rsync
/// interrupted anywhere, and prunes racing syncs and edits.
@Suite("Replica safety", .serialized)
struct ReplicaSafetyTests {
    /// A store with documents A (three revisions, the first pruned) and B.
    static func makeStore(_ path: String, in directory: URL) throws -> [String] {
        func run(_ arguments: [String]) throws -> String {
            let result = try CommandRunner.run(arguments + ["--store", path])
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        _ = try run(["init", "--device", "laptop"])
        let sample = directory.appendingPathComponent("sample.json")
        try Data(StoreCommandTests.sample.utf8).write(to: sample)
        let a = try run(["new", "--from", sample.path])
        _ = try run(["edit", a, "--answer", "3=5"])
        _ = try run(["edit", a, "--answer", "3=6"])
        _ = try run(["prune", a, "--keep-history", "1"])
        let b = try run(["new", "--title", "B"])
        return [a, b]
    }

    static func readCommands(_ store: String, _ documents: [String], _ outside: String) -> [[String]] {
        [
            ["list"], ["list", "--json"], ["conflicts", "--json"], ["show", documents[0]],
            ["show", documents[0], "--json"],
            ["versions", documents[0], "--json"], ["export", documents[0], "-o", outside + "/a.json"],
            ["export", documents[0], "--package", outside + "/a.survey"], ["verify"], ["check", store],
            // Dry runs read only: they lock, clean and write nothing.
            ["prune", "--dry-run"], ["prune", documents[0], "--dry-run", "--json"], ["migrate", "--dry-run"],
            ["resolve", "--all", "--merge", "--dry-run"], ["resolve", documents[0], "--merge", "--dry-run"],
        ]
    }

    /// Every kind of command that writes, each given something to write to the store made
    /// by ``makeStore(_:in:)``: a survey and a foreign package in `outside`, and `other`,
    /// a store holding a document the first lacks (made by ``makeWriteInputs(_:_:)``).
    static func writeCommands(_ documents: [String], _ outside: String, other: String) -> [[String]] {
        [
            ["new", "--title", "Z"], ["edit", documents[0], "--title", "Z"],
            ["save", documents[1], "--from", outside + "/sample.json"], ["delete", documents[1]], ["prune"],
            ["import", outside + "/foreign.survey"], ["sync", other], ["init", "--device", "Other"],
        ]
    }

    /// The inputs of ``writeCommands(_:_:other:)``; returns the other store.
    static func makeWriteInputs(_ directory: URL, _ outside: String) throws -> String {
        let other = directory.appendingPathComponent("other").path
        #expect(try CommandRunner.run(["init", "--store", other]).status == 0)
        let id = try CommandRunner.run(["new", "--title", "Foreign", "--store", other]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(
            try CommandRunner.run(["export", id, "--package", outside + "/foreign.survey", "--store", other])
                .status == 0)
        try Data(StoreCommandTests.sample.utf8).write(to: URL(fileURLWithPath: outside + "/sample.json"))
        return other
    }

    @Test(
        "A head still arriving (its content not there yet) keeps prune from removing the merge base, here and on the replica it syncs with"
    )
    func pruneWaitsForAHeadArriving() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let a = directory.appendingPathComponent("a").path, b = directory.appendingPathComponent("b").path
        func run(_ arguments: [String], _ store: String) throws -> CommandRunner.Result {
            try CommandRunner.run(arguments + ["--store", store])
        }
        func output(_ arguments: [String], _ store: String) throws -> String {
            let result = try run(arguments, store)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        func contested(_ store: String) throws -> Int? {
            let rows = try JSONSerialization.jsonObject(
                with: Data(try run(["conflicts", "--json"], store).stdout.utf8))
            return ((rows as? [[String: Any]])?.first?["contested"]) as? Int
        }
        _ = try output(["init"], a)
        _ = try output(["init"], b)
        let example = FormatCommandTests.fixtures + "/../examples/visitor-feedback.json"
        let id = try output(["new", "--from", example], a)
        _ = try output(["sync", b], a)
        _ = try output(["edit", id, "--answer", "5=9"], a)
        let head = try output(["edit", id, "--answer", "3=Eve"], b)
        _ = try output(["sync", b], a)
        #expect(try contested(b) == 0, "the two edits merge cleanly")
        // The head from b is still arriving on a: its metadata is there, its content not.
        try FileManager.default.removeItem(atPath: a + "/Documents/\(id)/\(head).survey/Survey.plist")

        let all = try run(["prune", "--json"], a)
        #expect(all.status == 0, "\(all.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(all.stdout.utf8)) as? [String: Any]
        let row = (report?["documents"] as? [[String: Any]])?.first
        #expect(
            (row?["pruned"] as? [String]) == [] && (row?["skipped"] as? String)?.contains(head) == true,
            "\(all.stdout)")
        let one = try run(["prune", id], a)
        #expect(
            one.status == 1 && one.stderr.contains("is not pruned") && one.stderr.contains(head),
            "\(one.stderr)")

        _ = try output(["sync", b], a)
        #expect(try contested(b) == 0, "b's merge base is still there")
        #expect(try contested(a) == 0, "a's too, its head completed by the sync")
        // Once complete, the document prunes, keeping what the conflict's merge needs.
        _ = try output(["prune"], a)
        _ = try output(["sync", b], a)
        #expect(try contested(b) == 0 && contested(a) == 0)
    }

    @Test(
        "A copy made with cp -al shares lock files: the first command that takes one gives its store a file of its own, where they waited for ever"
    )
    func hardLinkedLocks() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let a = directory.appendingPathComponent("a").path, b = directory.appendingPathComponent("b").path
        #expect(try CommandRunner.run(["init", "--store", a]).status == 0)
        let id = try CommandRunner.run(["new", "--title", "T", "--store", a]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let copy = try CommandRunner.run(["-al", a, b], executable: URL(fileURLWithPath: "/bin/cp"))
        #expect(copy.status == 0, "\(copy.stderr)")
        func linkCounts(_ store: String) throws -> [String: Int] {
            let locks = store + "/Local.nosync/locks"
            var counts: [String: Int] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: locks) {
                let attributes = try FileManager.default.attributesOfItem(atPath: locks + "/" + name)
                counts[name] = (attributes[.referenceCount] as? NSNumber)?.intValue
            }
            return counts
        }
        #expect(try linkCounts(a).values.allSatisfy { $0 == 2 }, "cp -al shares every lock file")
        let verify = try CommandRunner.run(["verify", "--store", a])
        #expect(
            verify.status == 0
                && (verify.stdout + verify.stderr).contains(
                    "a lock file with more than one name (a hard link, as `cp -al` leaves): the next command"
                        + " that takes this lock gives this store a lock file of its own"),
            "\(verify.status) \(verify.stdout) \(verify.stderr)")
        // A write in either store, and a sync between them (which holds both stores' locks
        // of the document at once), each go ahead.
        for arguments in [
            ["edit", id, "--title", "X", "--store", a], ["edit", id, "--title", "Y", "--store", b],
            ["sync", b, "--store", a],
        ] {
            let result = try CommandRunner.run(arguments, timeLimit: 60)
            #expect(result.status == 0, "\(arguments): \(result.status) \(result.stderr)")
        }
        for store in [a, b] {
            let counts = try linkCounts(store)
            #expect(counts.values.allSatisfy { $0 == 1 }, "\(store): \(counts)")
            let again = try CommandRunner.run(["verify", "--store", store])
            #expect(!(again.stdout + again.stderr).contains("more than one name"), "\(again.stderr)")
        }
        #expect(try CommandRunner.run(["conflicts", "--store", b]).stdout.contains(id))
    }

    @Test(
        "An empty document folder (left by a write that failed, or made by hand) holds no document: delete refuses it with 66 and writes nothing"
    )
    func emptyDocumentFolder() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let a = directory.appendingPathComponent("a").path
        _ = try Self.makeStore(a, in: directory)
        let id = UUID().uuidString.lowercased()
        let folder = a + "/Documents/" + id
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        for arguments in [["delete", id], ["delete", id, "--json"], ["show", id]] {
            let result = try CommandRunner.run(arguments + ["--store", a])
            #expect(result.status == 66, "\(arguments): \(result.status) \(result.stdout) \(result.stderr)")
            #expect(result.stderr.contains("there is no document \(id)"), "\(result.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
        #expect(!(try CommandRunner.run(["list", "--store", a]).stdout.contains(id)))
    }

    @Test(
        "verify names what stands in local state's places: a link for the state folder, a folder for Device.plist (empty: replaced by the next write; not empty: every write fails)"
    )
    func localStateJunk() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let a = directory.appendingPathComponent("a").path
        let documents = try Self.makeStore(a, in: directory)
        let manager = FileManager.default
        let state = a + "/Local.nosync/state", device = a + "/Local.nosync/Device.plist"
        try? manager.removeItem(atPath: state)
        try manager.createSymbolicLink(atPath: state, withDestinationPath: directory.path)
        try manager.removeItem(atPath: device)
        try manager.createDirectory(atPath: device + "/inside", withIntermediateDirectories: true)
        var verify = try CommandRunner.run(["verify", "--store", a])
        #expect(verify.status == 1, "\(verify.stderr)")
        #expect(
            (verify.stdout + verify.stderr).contains(
                state + ": a symbolic link where the store's folder belongs"),
            "\(verify.stderr)")
        #expect(
            (verify.stdout + verify.stderr).contains(
                device + ": a folder that is not empty where this device's identity file belongs"),
            "\(verify.stderr)")
        #expect(try CommandRunner.run(["edit", documents[1], "--title", "X", "--store", a]).status == 1)
        try manager.removeItem(atPath: device + "/inside")
        verify = try CommandRunner.run(["verify", "--store", a])
        #expect(
            (verify.stdout + verify.stderr).contains(
                device
                    + ": a folder where this device's identity file belongs: the next command that writes replaces it"
            ), "\(verify.stderr)")
        try manager.removeItem(atPath: state)
        #expect(try CommandRunner.run(["edit", documents[1], "--title", "X", "--store", a]).status == 0)
        verify = try CommandRunner.run(["verify", "--store", a])
        #expect(verify.status == 0, "\(verify.stderr)")
        // A file that reads as no identity: named, and replaced by the next write.
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: device))
        verify = try CommandRunner.run(["verify", "--store", a])
        #expect(
            verify.status == 1
                && (verify.stdout + verify.stderr).contains(device + ": not this device's identity"),
            "\(verify.stderr)")
        #expect(try CommandRunner.run(["edit", documents[1], "--title", "Y", "--store", a]).status == 0)
        #expect(try CommandRunner.run(["verify", "--store", a]).status == 0)
    }

    @Test(
        "A Device.plist edited to hold a DeviceName over 255 bytes of UTF-8 is no identity: verify names it with the rule, and the next write replaces it rather than saving revisions that name it (it was used as it was)"
    )
    func overlongRecordedDeviceName() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let a = directory.appendingPathComponent("a").path
        let documents = try Self.makeStore(a, in: directory)
        let device = a + "/Local.nosync/Device.plist"
        func recorded() throws -> [String: Any] {
            let data = try Data(contentsOf: URL(fileURLWithPath: device))
            return try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any]
                ?? [:]
        }
        let long = String(repeating: "é", count: 150)  // 300 bytes of UTF-8
        var edited = try recorded()
        let oldID = edited["DeviceID"] as? String
        edited["DeviceName"] = long
        try PropertyListSerialization.data(fromPropertyList: edited, format: .xml, options: 0)
            .write(to: URL(fileURLWithPath: device))
        let verify = try CommandRunner.run(["verify", "--store", a])
        #expect(verify.status == 1, "\(verify.stdout) \(verify.stderr)")
        #expect(
            (verify.stdout + verify.stderr).contains(
                device + ": not this device's identity (the device name \"" + String(long.prefix(40))
                    + "…\" cannot be used: it is 300 bytes of UTF-8; a device name has at most 255): the next command that writes replaces it"
            ), "\(verify.stdout) \(verify.stderr)")
        let saved = try CommandRunner.run(["edit", documents[1], "--title", "Y", "--json", "--store", a])
        #expect(saved.status == 0, "\(saved.stderr)")
        let versions = try CommandRunner.run(["versions", documents[1], "--json", "--store", a])
        let rows =
            try JSONSerialization.jsonObject(with: Data(versions.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(rows.first?["device"] as? String != long, "the new revision does not name it")
        #expect(!versions.stdout.contains(long))
        let replaced = try recorded()
        #expect(replaced["DeviceName"] as? String != long && replaced["DeviceID"] as? String != oldID)
        #expect(try CommandRunner.run(["verify", "--store", a]).status == 0)
    }

    @Test(
        "A lock file that is a folder: resolve --all --merge and prune leave that document, name it and do every other (they stopped at it), prune exiting 1 (it exited 0); a state folder that is a link does not stop prune"
    )
    func unusableLockSkipped() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let a = directory.appendingPathComponent("a").path, b = directory.appendingPathComponent("b").path
        func run(_ arguments: [String], _ store: String) throws -> CommandRunner.Result {
            try CommandRunner.run(arguments + ["--store", store])
        }
        #expect(try run(["init"], a).status == 0)
        #expect(try run(["init"], b).status == 0)
        let ids = try (0..<3).map {
            try run(["new", "--title", "D\($0)"], a).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }.sorted()
        #expect(try run(["sync", b], a).status == 0)
        for id in ids {
            #expect(try run(["edit", id, "--title", "A"], a).status == 0)
            #expect(try run(["edit", id, "--title", "B"], b).status == 0)
        }
        #expect(try run(["sync", b], a).status == 0)
        // The middle document's lock file is a folder.
        let lock = a + "/Local.nosync/locks/" + ids[1] + ".lock"
        try? FileManager.default.removeItem(atPath: lock)
        try FileManager.default.createDirectory(atPath: lock, withIntermediateDirectories: false)
        let resolve = try run(["resolve", "--all", "--merge", "--json"], a)
        #expect(resolve.status == 75, "\(resolve.stdout)\(resolve.stderr)")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(resolve.stdout.utf8)) as? [String: Any])
        let resolved = (report["resolved"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
        let unresolved = (report["unresolved"] as? [[String: Any]]) ?? []
        #expect(resolved == [ids[0], ids[2]], "\(report)")
        #expect(unresolved.first?["id"] as? String == ids[1], "\(report)")
        #expect(
            (unresolved.first?["reason"] as? String)?.contains("lock files hold nothing") == true, "\(report)"
        )
        // The state folder a link: prune does not stop at it.
        let state = a + "/Local.nosync/state"
        try? FileManager.default.removeItem(atPath: state)
        try FileManager.default.createSymbolicLink(atPath: state, withDestinationPath: directory.path)
        #expect(try run(["delete", ids[0]], a).status == 0)
        // Every other document pruned; the one behind the lock file counts as a failure
        // (exit 1, as migrate's), since every write to it fails until the entry is gone.
        let prune = try run(["prune", "--json"], a)
        #expect(prune.status == 1, "\(prune.stderr)")
        #expect(
            prune.stderr.contains(
                "error: 1 document not pruned: its lock file cannot be used (named above, with what mends it)"
            ),
            "\(prune.stderr)")
        let pruned = try #require(
            try JSONSerialization.jsonObject(with: Data(prune.stdout.utf8)) as? [String: Any])
        let rows = (pruned["documents"] as? [[String: Any]]) ?? []
        #expect(
            rows.first { $0["id"] as? String == ids[1] }?["skipped"] as? String
                == "cannot lock \(lock): it is a folder"
                + "; lock files hold nothing: remove it while nothing uses the store (lock files are made again as needed)",
            "\(rows)")
        for id in [ids[0], ids[2]] {
            #expect(
                (rows.first { $0["id"] as? String == id }?["pruned"] as? [String])?.isEmpty == false,
                "\(rows)")
        }
    }

    @Test(
        "A link where one of the store's own folders belongs is named as the link in an error about a file beneath it (prune said the prune note was a link)"
    )
    func linkOnTheWayIsNamed() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("s").path
        let elsewhere = directory.appendingPathComponent("elsewhere").path
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        #expect(try CommandRunner.run(["init", "--store", store]).status == 0)
        let id = try CommandRunner.run(["new", "--title", "A", "--store", store]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try CommandRunner.run(["edit", id, "--title", "B", "--store", store]).status == 0)
        let pruning = store + "/Local.nosync/pruning"
        try? FileManager.default.removeItem(atPath: pruning)
        try FileManager.default.createSymbolicLink(atPath: pruning, withDestinationPath: elsewhere)
        let prune = try CommandRunner.run(["prune", "--store", store])
        #expect(prune.status == 1, "\(prune.stderr)")
        #expect(
            prune.stderr.contains(
                "cannot look up \(pruning)/\(id): \(pruning), a folder on its way, is a symbolic link, and a link is never followed"
            ), "\(prune.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)
    }

    @Test("Dry runs on a store that came without Local.nosync/ (rsync's exclude, a checkout) create nothing")
    func dryRunsCreateNothing() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("store").path
        let documents = try Self.makeStore(store, in: directory)
        // A conflict to merge, and an older-format winner to migrate.
        let other = directory.appendingPathComponent("other").path
        #expect(try CommandRunner.run(["init", "--store", other]).status == 0)
        #expect(try CommandRunner.run(["sync", store, "--store", other]).status == 0)
        #expect(try CommandRunner.run(["edit", documents[1], "--title", "B1", "--store", store]).status == 0)
        #expect(try CommandRunner.run(["edit", documents[1], "--title", "B2", "--store", other]).status == 0)
        #expect(try CommandRunner.run(["sync", other, "--store", store]).status == 0)
        try FileManager.default.removeItem(atPath: store + "/Local.nosync")
        let format1 = FormatCommandTests.fixtures + "/stores/format1-store"
        let old = directory.appendingPathComponent("old").path
        try FileManager.default.copyItem(atPath: format1, toPath: old)
        let before = (HostileStoreTests.fingerprint(store), HostileStoreTests.fingerprint(old))

        let prune = try CommandRunner.run(["prune", "--dry-run", "--json", "--store", store])
        #expect(prune.status == 0, "\(prune.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(prune.stdout.utf8)) as? [String: Any]
        let rows = report?["documents"] as? [[String: Any]] ?? []
        // A's second revision, kept by the prune with --keep-history 1, would go now.
        #expect(
            rows.count == 1 && (rows.first?["pruned"] as? [String])?.first?.hasPrefix("2-") == true,
            "\(prune.stdout)")
        let merge = try CommandRunner.run([
            "resolve", "--all", "--merge", "--dry-run", "--json", "--store", store,
        ])
        #expect(merge.status == 0 && merge.stdout.contains(documents[1]), "\(merge.stdout) \(merge.stderr)")
        let one = try CommandRunner.run(["resolve", documents[1], "--merge", "--dry-run", "--store", store])
        #expect(one.status == 0, "\(one.stderr)")
        let migrate = try CommandRunner.run(["migrate", "--dry-run", "--json", "--store", old])
        #expect(migrate.status == 0 && migrate.stdout.contains("\"fromFormat\" : 1"), "\(migrate.stdout)")

        #expect(HostileStoreTests.fingerprint(store) == before.0, "a dry run changed the store")
        #expect(HostileStoreTests.fingerprint(old) == before.1, "migrate --dry-run changed the store")
        #expect(!FileManager.default.fileExists(atPath: store + "/Local.nosync"))
        #expect(!FileManager.default.fileExists(atPath: old + "/Local.nosync"))
    }

    @Test(
        "A write command that fails, refuses or writes nothing on a store that came without Local.nosync/ leaves it as it was; the first write makes it"
    )
    func failedWritesCreateNothing() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("store").path
        let documents = try Self.makeStore(store, in: directory)
        let (a, b) = (documents[0], documents[1])
        func run(_ arguments: [String], in path: String = store) throws -> CommandRunner.Result {
            try CommandRunner.run(arguments + ["--store", path])
        }
        func revision(_ arguments: [String]) throws -> String {
            let result = try run(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        // B in conflict (its title on both heads), C deleted, A's content and package kept aside.
        let shown = try JSONSerialization.jsonObject(with: Data(try revision(["show", b, "--json"]).utf8))
        let firstB = try #require((shown as? [String: Any])?["revision"] as? String)
        _ = try revision(["edit", b, "--title", "B1"])
        _ = try revision(["edit", b, "--base", firstB, "--title", "B2"])
        let c = try revision(["new", "--title", "C"])
        _ = try revision(["delete", c])
        let content = directory.appendingPathComponent("a.json").path
        let package = directory.appendingPathComponent("a.survey").path
        _ = try revision(["export", a, "-o", content])
        _ = try revision(["export", a, "--package", package])
        let invalid = directory.appendingPathComponent("invalid.json").path
        try Data(#"{"title": "", "items": []}"#.utf8).write(to: URL(fileURLWithPath: invalid))
        // A copy whose Documents is a file.
        let blocked = directory.appendingPathComponent("blocked").path
        try FileManager.default.copyItem(atPath: store, toPath: blocked)
        try FileManager.default.removeItem(atPath: blocked + "/Documents")
        try Data().write(to: URL(fileURLWithPath: blocked + "/Documents"))
        for path in [store, blocked] { try FileManager.default.removeItem(atPath: path + "/Local.nosync") }
        let before = (HostileStoreTests.fingerprint(store), HostileStoreTests.fingerprint(blocked))

        let attempts: [(arguments: [String], status: Int32)] = [
            // Bad input and missing documents, revisions, items and files.
            (["edit", "00000000", "--title", "X"], 66), (["edit", a, "--answer", "99=1"], 66),
            (["edit", a, "--title", ""], 65), (["edit", a, "--base", "9-0", "--title", "X"], 66),
            (["save", a, "--from", directory.path + "/missing.json"], 66),
            (["save", a, "--from", invalid], 65),
            (["delete", "00000000"], 66), (["resolve", b, "--keep", "9-0"], 66),
            (["resolve", b, "--from", invalid], 65), (["prune", "00000000"], 66),
            (["import", directory.path + "/missing.survey"], 66),
            // Refusals.
            (["save", b, "--from", content, "--base", firstB, "--if-current"], 75),
            (["resolve", b, "--merge", "--strict"], 75), (["resolve", "--all", "--merge", "--strict"], 75),
            // Nothing to write.
            (["edit", a, "--answer", "3=6"], 0), (["save", a, "--from", content], 0), (["delete", c], 0),
            (["resolve", a, "--accept"], 0), (["resolve", a, "--merge"], 0),
            (["prune", a, "--keep-history", "1"], 0),
            (["import", package], 0), (["migrate"], 0),
        ]
        for (arguments, status) in attempts {
            let result = try run(arguments)
            #expect(result.status == status, "\(arguments): \(result.status) \(result.stderr)")
            #expect(HostileStoreTests.fingerprint(store) == before.0, "\(arguments) changed the store")
        }
        for arguments in [
            ["new", "--title", "X"], ["edit", a, "--title", "X"], ["save", a, "--from", content],
            ["delete", a],
            ["resolve", b, "--accept"], ["prune"], ["import", package], ["migrate"],
        ] {
            let result = try run(arguments, in: blocked)
            #expect(
                result.status == 65 && result.stderr.contains("a file where the documents' folder belongs"),
                "\(arguments): \(result.status) \(result.stderr)")
            #expect(
                HostileStoreTests.fingerprint(blocked) == before.1, "\(arguments) changed the blocked store")
        }
        for arguments in Self.readCommands(store, documents, directory.path) {
            _ = try run(arguments)
            #expect(!FileManager.default.fileExists(atPath: store + "/Local.nosync"), "\(arguments)")
        }

        // The first write makes it: its device is the one the new revision names.
        let written = try revision(["edit", a, "--title", "A2"])
        let local = store + "/Local.nosync"
        for path in ["tmp", "locks", "Device.plist"] {
            #expect(FileManager.default.fileExists(atPath: local + "/" + path), "\(path)")
        }
        func plist(_ path: String) throws -> [String: Any] {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            return try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any]
                ?? [:]
        }
        let device = try plist(local + "/Device.plist")["DeviceID"] as? String
        let metadata = try plist(store + "/Documents/\(a)/\(written).survey/DocumentMetadata.plist")
        #expect(device != nil && metadata["DeviceID"] as? String == device, "\(String(describing: device))")
        #expect(try run(["verify"]).status == 0)
    }

    @Test(
        "First writes racing on a store that came without Local.nosync/: every revision names the one device recorded (a process that lost the race named a device of its own)"
    )
    func racingFirstWritesNameOneDevice() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("store").path
        let (writers, rounds) = (4, 6)
        func plist(_ path: String) throws -> [String: Any] {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            return try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any]
                ?? [:]
        }
        for round in 1...rounds {
            try? FileManager.default.removeItem(atPath: store)
            #expect(try CommandRunner.run(["init", "--store", store]).status == 0)
            try FileManager.default.removeItem(atPath: store + "/Local.nosync")
            // Each writer a process of its own, all started at once: new documents, and
            // edits of one made before (a save takes the document's lock first).
            let made = try CommandRunner.run(["new", "--title", "Base", "--json", "--store", store])
            let created = try JSONSerialization.jsonObject(with: Data(made.stdout.utf8)) as? [String: Any]
            let base = try #require(created?["id"] as? String)
            let baseRevision = try #require(created?["revision"] as? String)
            try FileManager.default.removeItem(atPath: store + "/Local.nosync")
            let processes = try (0..<writers).map { index in
                let process = Process()
                process.executableURL = CommandRunner.binary
                process.arguments =
                    index % 2 == 0
                    ? ["new", "--title", "W\(index)", "--store", store]
                    : ["edit", base, "--title", "E\(index)", "--store", store]
                process.standardOutput = FileHandle.nullDevice
                try process.run()
                return process
            }
            for process in processes {
                process.waitUntilExit()
                #expect(process.terminationStatus == 0, "round \(round)")
            }
            let device = try plist(store + "/Local.nosync/Device.plist")["DeviceID"] as? String
            let documents = store + "/Documents"
            var named: [String] = []
            for folder in try FileManager.default.contentsOfDirectory(atPath: documents) {
                for package in try FileManager.default.contentsOfDirectory(atPath: documents + "/" + folder) {
                    // The base was written before Local.nosync/ was removed the second time.
                    if package == baseRevision + ".survey" { continue }
                    let metadata = try plist(documents + "/\(folder)/\(package)/DocumentMetadata.plist")
                    named.append(metadata["DeviceID"] as? String ?? "?")
                }
            }
            #expect(named.count >= writers / 2, "round \(round): \(named)")
            #expect(named.allSatisfy { $0 == device }, "round \(round): \(named) against \(device ?? "none")")
        }
    }

    @Test(
        "Every read command works on a read-only mount, and every write fails cleanly changing nothing",
        CommandRunner.needs("unshare", "mount"))
    func readOnlyMount() throws {
        guard let unshare = CommandRunner.requireTool("unshare"),
            let mount = CommandRunner.requireTool("mount")
        else { return }
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("store").path
        let documents = try Self.makeStore(store, in: directory)
        let outside = directory.appendingPathComponent("out").path
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        let other = try Self.makeWriteInputs(directory, outside)
        let before = HostileStoreTests.fingerprint(store)
        // A user and mount namespace of its own: the store is bind-mounted read-only over
        // itself, for the commands run inside it only.
        let probe = try CommandRunner.run(
            [
                "-rm", "sh", "-c",
                "\(mount) --bind \(store) \(store) && \(mount) -o remount,bind,ro \(store) && touch \(store)/x",
            ],
            executable: URL(fileURLWithPath: unshare))
        if !probe.stderr.contains("Read-only file system") {
            if CommandRunner.isCI {
                Issue.record("cannot make a read-only mount here: \(probe.stderr)")
            } else {
                print("note: skipping the read-only mount check: \(probe.stderr)")
            }
            return
        }
        let survey = CommandRunner.binary.path
        let writes = Self.writeCommands(documents, outside, other: other)
        for command in Self.readCommands(store, documents, outside) + writes {
            let line = ([survey] + command + (command[0] == "check" ? [] : ["--store", store])).map {
                "'\($0)'"
            }.joined(separator: " ")
            try? FileManager.default.removeItem(atPath: outside + "/a.survey")
            let result = try CommandRunner.run(
                [
                    "-rm", "sh", "-c",
                    "\(mount) --bind \(store) \(store) && \(mount) -o remount,bind,ro \(store) && exec \(line)",
                ],
                executable: URL(fileURLWithPath: unshare))
            if writes.contains(command) {
                #expect(
                    result.status == 1, "\(command) on a read-only store: \(result.status) \(result.stderr)")
                #expect(result.stderr.contains("Read-only file system"), "\(command): \(result.stderr)")
            } else {
                #expect(result.status == 0, "\(command) on a read-only mount: \(result.stderr)")
            }
        }
        #expect(HostileStoreTests.fingerprint(store) == before, "the store changed")
    }

    @Test(
        "On a full disk every write fails cleanly: the error named, no temporary or note left, verify clean, and the same command succeeds once there is room",
        CommandRunner.needs("unshare", "mount"))
    func fullDisk() throws {
        guard let unshare = CommandRunner.requireTool("unshare"),
            let mount = CommandRunner.requireTool("mount")
        else { return }
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let base = directory.appendingPathComponent("base").path
        let documents = try Self.makeStore(base, in: directory)
        let outside = directory.appendingPathComponent("out").path
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        let other = try Self.makeWriteInputs(directory, outside)
        let disk = directory.appendingPathComponent("disk").path
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        let survey = CommandRunner.binary.path
        for (index, command) in Self.writeCommands(documents, outside, other: other).enumerated() {
            // A small tmpfs in a mount namespace of its own holds a copy of the store, then
            // is filled; the command runs on it, and the store is copied out as it is left.
            let after = directory.appendingPathComponent("after-\(index)").path
            let line = ([survey] + command + ["--store", disk + "/store"]).map { "'\($0)'" }.joined(
                separator: " ")
            let result = try CommandRunner.run(
                [
                    "-rm", "sh", "-c",
                    "\(mount) -t tmpfs -o size=1m tmpfs '\(disk)' && cp -a '\(base)' '\(disk)/store'"
                        + " && '\(survey)' init --store '\(disk)/store' >/dev/null"
                        + " && { dd if=/dev/zero of='\(disk)/fill' bs=4k 2>/dev/null; sync; }"
                        + "; \(line); status=$?; cp -a '\(disk)/store' '\(after)'; exit $status",
                ],
                executable: URL(fileURLWithPath: unshare))
            if index == 0, !result.stderr.contains("No space left on device"), result.status != 1 {
                if CommandRunner.isCI {
                    Issue.record("cannot mount a tmpfs here: \(result.stderr)")
                } else {
                    print("note: skipping the full-disk check: \(result.stderr)")
                }
                return
            }
            #expect(
                result.status == 1 && result.stderr.contains("No space left on device")
                    && result.stderr.contains(disk + "/store"),
                "\(command) on a full disk: \(result.status) \(result.stderr)")
            #expect(!result.stderr.contains("Fatal error"), "\(command): \(result.stderr)")
            for folder in ["tmp", "pruning"] {
                let left =
                    (try? FileManager.default.contentsOfDirectory(atPath: after + "/Local.nosync/" + folder))
                    ?? []
                #expect(left.isEmpty, "\(command) left in Local.nosync/\(folder): \(left)")
            }
            #expect(
                HostileStoreTests.fingerprint(after + "/Documents")
                    == HostileStoreTests.fingerprint(base + "/Documents"),
                "\(command) changed the store on a full disk")
            let verify = try CommandRunner.run(["verify", "--store", after])
            #expect(verify.status == 0, "\(command): verify: \(verify.stdout)\(verify.stderr)")
            // With room again (a copy on the test's disk) the same command succeeds.
            let rerun = try CommandRunner.run(command + ["--store", after])
            #expect(rerun.status == 0, "\(command) once there is room: \(rerun.stderr)")
            #expect(try CommandRunner.run(["verify", "--store", after]).status == 0)
        }
    }

    @Test(
        "init of a new store on a full disk fails naming the error; what it left is no store to list and verify, and init once there is room completes it into a working store",
        CommandRunner.needs("unshare", "mount"))
    func fullDiskInit() throws {
        guard let unshare = CommandRunner.requireTool("unshare"),
            let mount = CommandRunner.requireTool("mount")
        else { return }
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let disk = directory.appendingPathComponent("disk").path
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        let survey = CommandRunner.binary.path
        let after = directory.appendingPathComponent("after").path
        // A full tmpfs in a mount namespace of its own; init runs on it, and what it left
        // is copied out (nothing when it made nothing).
        let result = try CommandRunner.run(
            [
                "-rm", "sh", "-c",
                "\(mount) -t tmpfs -o size=1m tmpfs '\(disk)'"
                    + " && { dd if=/dev/zero of='\(disk)/fill' bs=4k 2>/dev/null; sync; }"
                    + "; '\(survey)' init --store '\(disk)/store'; status=$?"
                    + "; mkdir '\(after)' && { ! test -e '\(disk)/store' || cp -a '\(disk)/store' '\(after)/store'; }"
                    + "; exit $status",
            ],
            executable: URL(fileURLWithPath: unshare))
        if !result.stderr.contains("No space left on device"), result.status != 1 {
            if CommandRunner.isCI {
                Issue.record("cannot mount a tmpfs here: \(result.stderr)")
            } else {
                print("note: skipping the full-disk init check: \(result.stderr)")
            }
            return
        }
        #expect(
            result.status == 1 && result.stderr.contains("No space left on device")
                && result.stderr.contains(disk + "/store"),
            "init on a full disk: \(result.status) \(result.stderr)")
        let store = after + "/store"
        // Whatever it left is no store yet: commands say so, and how to make one.
        for command in [["list"], ["verify"], ["new", "--title", "T"]] {
            let refused = try CommandRunner.run(command + ["--store", store])
            #expect(
                refused.status == 66
                    && refused.stderr
                        == "error: there is no store at \(store) (create one with `survey init --store \(store)`)\n",
                "\(command) after a failed init: \(refused.status) \(refused.stderr)")
        }
        let again = try CommandRunner.run(["init", "--store", store])
        #expect(again.status == 0, "init once there is room: \(again.stderr)")
        #expect(try CommandRunner.run(["new", "--title", "T", "--store", store]).status == 0)
        let verify = try CommandRunner.run(["verify", "--store", store])
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
    }

    @Test(
        "Every read command works for a user who may only read the store, and every write fails cleanly",
        CommandRunner.needs("setpriv"))
    func readOnlyUser() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer {
            _ = try? CommandRunner.run(
                ["-R", "u+w", directory.path], executable: URL(fileURLWithPath: "/bin/chmod"))
            try? FileManager.default.removeItem(at: directory)
        }
        let store = directory.appendingPathComponent("store").path
        let documents = try Self.makeStore(store, in: directory)
        let outside = directory.appendingPathComponent("out").path
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: outside)
        let other = try Self.makeWriteInputs(directory, outside)
        let before = HostileStoreTests.fingerprint(store)
        var prefix: [String] = []
        if getuid() == 0 {
            // root reads and writes anything: the commands run as nobody instead.
            guard let setpriv = CommandRunner.requireTool("setpriv") else { return }
            prefix = [setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
        } else {
            #expect(
                try CommandRunner.run(["-R", "a-w", store], executable: URL(fileURLWithPath: "/bin/chmod"))
                    .status == 0)
        }
        for command in Self.readCommands(store, documents, outside) {
            let result = try CommandRunner.run(
                command + (command[0] == "check" ? [] : ["--store", store]), prefix: prefix)
            #expect(result.status == 0, "\(command) as a user who may only read: \(result.stderr)")
        }
        for command in Self.writeCommands(documents, outside, other: other) {
            let result = try CommandRunner.run(command + ["--store", store], prefix: prefix)
            #expect(
                result.status == 1 && result.stderr.contains("Permission denied"),
                "\(command): \(result.status) \(result.stderr)")
        }
        #expect(HostileStoreTests.fingerprint(store) == before, "the store changed")
    }

    @Test(
        "rsync interrupted after each file of a transfer carrying new revisions and tombstones: every document stays readable",
        CommandRunner.needs("rsync"))
    func interruptedRsync() throws {
        guard let rsync = CommandRunner.requireTool("rsync") else { return }
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("laptop").path,
            target = directory.appendingPathComponent("phone").path
        let documents = try Self.makeStore(source, in: directory)
        #expect(try CommandRunner.run(["init", "--store", target]).status == 0)
        #expect(try CommandRunner.run(["sync", source, "--store", target]).status == 0)
        // The laptop moves on: new revisions, then a prune that tombstones all the phone has.
        for answer in ["3=7", "3=8"] {
            #expect(
                try CommandRunner.run(["edit", documents[0], "--answer", answer, "--store", source]).status
                    == 0)
        }
        #expect(
            try CommandRunner.run(["edit", documents[1], "--title", "B2", "--store", source]).status == 0)
        #expect(try CommandRunner.run(["prune", "--store", source]).status == 0)
        let expected = try documents.map {
            try CommandRunner.run(["show", $0, "--json", "--store", source]).stdout
        }

        // What rsync sends, in its own order; an rsync killed after the Nth file has
        // renamed exactly the first N into place (it writes each aside, then renames).
        let listing = try CommandRunner.run(
            ["-a", "--dry-run", "--out-format=%n", "--exclude=*.nosync", source + "/", target + "/"],
            executable: URL(fileURLWithPath: rsync))
        let files = listing.stdout.split(separator: "\n").map(String.init).filter { !$0.hasSuffix("/") }
        #expect(files.contains { $0.hasSuffix(".pruned") } && files.contains { $0.hasSuffix("Survey.plist") })
        for count in 1...files.count {
            let copy = directory.appendingPathComponent("phone-\(count)").path
            #expect(
                try CommandRunner.run(
                    ["-a", target + "/", copy + "/"], executable: URL(fileURLWithPath: rsync)
                ).status == 0)
            let list = directory.appendingPathComponent("files").path
            try Data(files.prefix(count).joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: list))
            let partial = try CommandRunner.run(
                ["-a", "--files-from=" + list, source + "/", copy + "/"],
                executable: URL(fileURLWithPath: rsync))
            #expect(partial.status == 0, "\(partial.stderr)")
            for document in documents {
                for command in [
                    ["show", document], ["versions", document], ["edit", document, "--title", "T\(count)"],
                ] {
                    let result = try CommandRunner.run(command + ["--store", copy])
                    #expect(
                        result.status == 0,
                        "after \(count) of \(files.count) files, \(command): \(result.stderr)")
                }
            }
            #expect(
                try CommandRunner.run(["prune", "--store", copy]).status == 0, "after \(count) files: prune")
            try FileManager.default.removeItem(atPath: copy)
        }
        // The whole transfer: the phone holds what the laptop holds.
        #expect(
            try CommandRunner.run(
                ["-a", "--exclude=*.nosync", source + "/", target + "/"],
                executable: URL(fileURLWithPath: rsync)
            ).status == 0)
        let shown = try documents.map {
            try CommandRunner.run(["show", $0, "--json", "--store", target]).stdout
        }
        #expect(shown == expected)
        #expect(try CommandRunner.run(["verify", "--store", target]).status == 0)
    }

    @Test("Two syncs, two prunes and an editor at once never leave a revision with an unknown parent")
    func pruneSyncRace() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let a = directory.appendingPathComponent("a").path, b = directory.appendingPathComponent("b").path
        let documents = try Self.makeStore(a, in: directory)
        #expect(try CommandRunner.run(["init", "--store", b]).status == 0)
        #expect(try CommandRunner.run(["sync", a, "--store", b]).status == 0)
        for round in 1...15 {
            let commands: [[String]] = [
                ["sync", b, "--store", a], ["sync", a, "--store", b], ["prune", "--store", a],
                ["prune", "--store", b],
                ["edit", documents[0], "--answer", "3=\(round % 10)", "--store", a],
                ["edit", documents[0], "--answer", "2=r\(round)", "--store", b],
            ]
            let processes = try commands.map { arguments -> (Process, Pipe) in
                let process = Process()
                process.executableURL = CommandRunner.binary
                process.arguments = arguments
                process.standardOutput = FileHandle.nullDevice
                let errors = Pipe()
                process.standardError = errors
                try process.run()
                return (process, errors)
            }
            for ((process, errors), arguments) in zip(processes, commands) {
                let message = String(
                    decoding: ChildProcess.readAll(errors.fileHandleForReading), as: UTF8.self)
                process.waitUntilExit()
                #expect(
                    process.terminationReason == .exit && process.terminationStatus == 0,
                    "round \(round): \(arguments): \(message)")
            }
            for store in [a, b] {
                let verify = try CommandRunner.run(["verify", "--store", store])
                #expect(
                    verify.status == 0 && !verify.stderr.contains("is not in this store"),
                    "round \(round), \(store): \(verify.stderr)")
            }
        }
    }

    @Test(
        "survey sync between a pruning and a non-pruning store, killed at random moments: every document stays readable after every kill"
    )
    func killedSyncWithPrunes() throws {
        let seed = SeededRandom.seed(fallback: 612)
        var random = SeededRandom(seed: seed)
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let pruning = directory.appendingPathComponent("pruning").path,
            keeping = directory.appendingPathComponent("keeping").path
        var documents = try Self.makeStore(pruning, in: directory)
        #expect(try CommandRunner.run(["init", "--store", keeping]).status == 0)
        for index in 0..<6 {
            documents.append(
                try CommandRunner.run(["new", "--title", "D\(index)", "--store", pruning]).stdout
                    .trimmingCharacters(in: .whitespacesAndNewlines))
        }
        #expect(try CommandRunner.run(["sync", keeping, "--store", pruning]).status == 0)
        var kills = 0
        for round in 0..<20 {
            // The pruning store moves on and prunes everything it can; the other keeps all.
            for document in documents where Bool.random(using: &random) {
                _ = try CommandRunner.run(["edit", document, "--title", "R\(round)", "--store", pruning])
            }
            _ = try CommandRunner.run(["prune", "--store", pruning])
            let arguments =
                Bool.random(using: &random)
                ? ["sync", keeping, "--jobs", "1", "--store", pruning]
                : ["sync", pruning, "--jobs", "1", "--store", keeping]
            if try CommandRunner.runKilled(
                arguments, after: UInt32.random(in: 1_000...40_000, using: &random))
            {
                kills += 1
            }
            for store in [pruning, keeping] {
                for document in documents {
                    let shown = try CommandRunner.run(["show", document, "--store", store])
                    // A document the kill kept from reaching the other store yet is absent (66); none is unreadable.
                    #expect(
                        shown.status == 0 || (shown.status == 66 && store == keeping),
                        "seed \(seed) (replay with SURVEYSTORE_SEED=\(seed)), round \(round), \(store): \(shown.stderr)"
                    )
                }
            }
        }
        #expect(kills > 5, "seed \(seed): only \(kills) syncs were killed")
        #expect(try CommandRunner.run(["sync", keeping, "--store", pruning]).status == 0)
        for store in [pruning, keeping] {
            #expect(try CommandRunner.run(["verify", "--store", store]).status == 0)
        }
    }

    @Test(
        "A revision with a bad digest, content over the size limit, or a folder where its document's lock file belongs, is skipped and reported by sync; every other document still syncs, both ways",
        arguments: ["a bit flipped", "too large", "lock is a folder"])
    func syncSkipsDamage(damage: String) throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let a = directory.appendingPathComponent("a").path, b = directory.appendingPathComponent("b").path
        #expect(try CommandRunner.run(["init", "--store", a]).status == 0)
        #expect(try CommandRunner.run(["init", "--store", b]).status == 0)
        var ids: [String] = []
        for (index, store) in [a, b, a, b, a, b].enumerated() {
            ids.append(
                try CommandRunner.run(["new", "--title", "D\(index)", "--store", store]).stdout
                    .trimmingCharacters(in: .whitespacesAndNewlines))
        }
        // Damage the content of the first document's only revision on a.
        let folder = a + "/Documents/" + ids[0]
        let package =
            folder + "/"
            + (try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasSuffix(".survey") }!)
        var named = package + "/Survey.plist"
        if damage == "lock is a folder" {
            named = a + "/Local.nosync/locks/" + ids[0] + ".lock"
            try? FileManager.default.removeItem(atPath: named)
            try FileManager.default.createDirectory(
                atPath: named + "/inside", withIntermediateDirectories: true)
        } else if damage == "too large" {
            // Sparse: over the 256 MiB limit without taking the space.
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: package + "/Survey.plist"))
            try handle.truncate(atOffset: 300 << 20)
            try handle.close()
        } else {
            var content = try Data(contentsOf: URL(fileURLWithPath: package + "/Survey.plist"))
            content[content.count / 2] ^= 0x01
            try content.write(to: URL(fileURLWithPath: package + "/Survey.plist"))
        }

        let sync = try CommandRunner.run(["sync", b, "--jobs", "1", "--json", "--store", a])
        #expect(sync.status == 1, "\(sync.stderr)")
        #expect(sync.stderr.contains(named), "\(sync.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(sync.stdout.utf8)) as! [String: Any]
        #expect(report["sent"] as? Int == 2 && report["received"] as? Int == 3, "\(report)")
        #expect((report["damaged"] as? [String])?.count == 1)
        for (index, id) in ids.enumerated() where index > 0 {
            for store in [a, b] {
                #expect(
                    try CommandRunner.run(["show", id, "--store", store]).status == 0, "\(id) in \(store)")
            }
        }
        #expect(try CommandRunner.run(["show", ids[0], "--store", b]).status == 66)
        if damage != "lock is a folder" {
            // Unreadable content is invalid data, whatever is wrong with it.
            let show = try CommandRunner.run(["show", ids[0], "--store", a])
            #expect(show.status == 65, "\(show.stderr)")
        }
    }

    @Test(
        "A link or a file where Documents/ belongs: every command that reads or writes documents refuses with 65 and says why, verify names it, and nothing on either side changes",
        arguments: ["link", "file"])
    func documentsFolderBlocked(kind: String) throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let a = directory.appendingPathComponent("a").path, b = directory.appendingPathComponent("b").path
        let documents = try Self.makeStore(a, in: directory)
        #expect(try CommandRunner.run(["init", "--store", b]).status == 0)
        let onB = try CommandRunner.run(["new", "--title", "On b", "--store", b]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let package = directory.appendingPathComponent("package").path
        #expect(try CommandRunner.run(["export", onB, "--package", package, "--store", b]).status == 0)
        let aside = directory.appendingPathComponent("elsewhere").path
        try FileManager.default.moveItem(atPath: a + "/Documents", toPath: aside)
        if kind == "link" {
            try FileManager.default.createSymbolicLink(atPath: a + "/Documents", withDestinationPath: aside)
        } else {
            try Data("not a folder".utf8).write(to: URL(fileURLWithPath: a + "/Documents"))
        }
        let before = (HostileStoreTests.fingerprint(aside), HostileStoreTests.fingerprint(b))
        let commands: [[String]] = [
            ["list"], ["conflicts"], ["show", documents[0]], ["show", String(documents[0].prefix(6))],
            ["edit", documents[0], "--title", "X"], ["delete", documents[1]], ["prune"], ["migrate"],
            ["resolve", "--all", "--merge"], ["sync", b], ["versions", documents[0]], ["import", package],
            ["init"],
        ]
        for command in commands {
            let result = try CommandRunner.run(command + ["--store", a])
            #expect(result.status == 65, "\(command): \(result.status) \(result.stderr)")
            let what = kind == "link" ? "symbolic link" : "file"
            #expect(
                result.stderr.contains(a + "/Documents: a \(what) where"), "\(command): \(result.stderr)")
        }
        // From the other side, and as the copy a repair reads from.
        for command in [["sync", a], ["verify", "--repair-from", a]] {
            let result = try CommandRunner.run(command + ["--store", b])
            #expect(result.status == 65, "\(command): \(result.stderr)")
        }
        // check of the store names it, where it passed over no document.
        let check = try CommandRunner.run(["check", a])
        #expect(check.status == 65 && check.stdout.contains(a + "/Documents"), "\(check.stdout)")
        let verify = try CommandRunner.run(["verify", "--store", a])
        #expect(
            verify.status == 1 && (verify.stdout + verify.stderr).contains(a + "/Documents: "),
            "\(verify.stdout)\(verify.stderr)")
        #expect(HostileStoreTests.fingerprint(aside) == before.0)
        #expect(HostileStoreTests.fingerprint(b) == before.1)
    }

    @Test(
        "A package whose metadata a sync engine moved onto its tombstone, before the revision superseding it arrived, stays readable"
    )
    func metadataMovedOntoTombstone() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let laptop = directory.appendingPathComponent("laptop").path,
            phone = directory.appendingPathComponent("phone").path
        let documents = try Self.makeStore(laptop, in: directory)
        let document = documents[0]
        try FileManager.default.copyItem(atPath: laptop, toPath: phone)
        #expect(try CommandRunner.run(["edit", document, "--title", "Newer", "--store", laptop]).status == 0)
        #expect(try CommandRunner.run(["prune", document, "--store", laptop]).status == 0)
        let expected = try CommandRunner.run(["show", document, "--json", "--store", phone]).stdout
        // What Syncthing does on the phone: each tombstone holds the same bytes as the pruned
        // package's metadata, so the metadata is moved onto it; the superseding revision's
        // content has not arrived yet.
        let source = laptop + "/Documents/" + document, target = phone + "/Documents/" + document
        for name in try FileManager.default.contentsOfDirectory(atPath: source)
        where name.hasSuffix(".pruned") {
            let package = target + "/" + name.dropLast(".pruned".count) + ".survey"
            if FileManager.default.fileExists(atPath: package + "/DocumentMetadata.plist") {
                try FileManager.default.moveItem(
                    atPath: package + "/DocumentMetadata.plist", toPath: target + "/" + name)
            } else if !FileManager.default.fileExists(atPath: target + "/" + name) {
                try FileManager.default.copyItem(atPath: source + "/" + name, toPath: target + "/" + name)
            }
        }
        for name in try FileManager.default.contentsOfDirectory(atPath: source)
        where name.hasSuffix(".survey") {
            try FileManager.default.createDirectory(
                atPath: target + "/" + name, withIntermediateDirectories: true)
            if !FileManager.default.fileExists(atPath: target + "/" + name + "/DocumentMetadata.plist") {
                try FileManager.default.copyItem(
                    atPath: source + "/" + name + "/DocumentMetadata.plist",
                    toPath: target + "/" + name + "/DocumentMetadata.plist")
            }
        }
        let shown = try CommandRunner.run(["show", document, "--json", "--store", phone])
        #expect(shown.status == 0 && shown.stdout == expected, "\(shown.stderr)")
        // The rest arrives: the phone holds what the laptop holds.
        #expect(try CommandRunner.run(["sync", laptop, "--store", phone]).status == 0)
        #expect(try CommandRunner.run(["prune", "--store", phone]).status == 0)
        #expect(
            try CommandRunner.run(["show", document, "--json", "--store", phone]).stdout
                == CommandRunner.run(["show", document, "--json", "--store", laptop]).stdout)
        #expect(try CommandRunner.run(["verify", "--store", phone]).status == 0)
    }
}
