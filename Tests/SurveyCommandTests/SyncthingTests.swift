import Foundation
import Testing

/// Two stores kept in step by two real Syncthing instances, as README suggests, on
/// loopback only.
@Suite("Replicas: Syncthing", .serialized, CommandRunner.needs("syncthing"))
struct SyncthingTests {
    typealias Replica = SyncTests.Replica

    /// Two replicas, each with its own Syncthing sharing its store folder with the other.
    struct Pair {
        let directory: URL
        let a: Replica
        let b: Replica
        let laptop: SyncthingInstance
        let phone: SyncthingInstance
        /// The folders have `ignoreDelete`: deletions made on one side stay needed on the other.
        var ignoreDelete = false

        func file(_ rating: Int, name: String = "Ada") throws -> String {
            let url = directory.appendingPathComponent("\(rating)-\(name).json")
            try Data(StoreCommandTests.edited(rating: rating, name: name).utf8).write(to: url)
            return url.path
        }

        /// Scans both folders now, then waits (at most 60 s) until both instances are idle,
        /// need nothing, and each sees the other complete, twice in a row.
        func settle(_ step: String) throws {
            try laptop.scan()
            try phone.scan()
            let deadline = Date().addingTimeInterval(60)
            var settledPolls = 0
            while settledPolls < 2 {
                let reason =
                    try laptop.unsettled(with: phone, ignoringDeletes: ignoreDelete)
                    ?? phone.unsettled(with: laptop, ignoringDeletes: ignoreDelete)
                settledPolls = reason == nil ? settledPolls + 1 : 0
                if let reason, Date() > deadline {
                    throw SyncthingError(
                        "\(step): not in step within 60 s: \(reason)\nlaptop:\n\(laptop.logTail())\nphone:\n\(phone.logTail())"
                    )
                }
                usleep(250_000)
            }
        }

        func waitUntil(_ step: String, connected: Bool) throws {
            // Unpaused devices may wait for Syncthing's next reconnect attempt (up to a
            // minute) before they connect again.
            let seconds: Double = connected ? 120 : 30
            let deadline = Date().addingTimeInterval(seconds)
            while try laptop.isConnected(to: phone) != connected || phone.isConnected(to: laptop) != connected
            {
                guard Date() < deadline else {
                    throw SyncthingError(
                        "\(step): still \(connected ? "dis" : "")connected after \(Int(seconds)) s")
                }
                usleep(100_000)
            }
        }
    }

    /// Every name under `path` (hidden ones and `Local.nosync` included), relative to it.
    static func allNames(under path: String) -> [String] {
        var names: [String] = []
        let enumerator = FileManager.default.enumerator(atPath: path)
        while let name = enumerator?.nextObject() as? String { names.append(name) }
        return names.sorted()
    }

    /// Two stores made by `survey init` (laptop and phone) before they meet, each shared by
    /// its own Syncthing; runs `body` once both instances are connected and in step, and
    /// always stops both. The temporary folder is removed unless `body` throws.
    static func withPair(
        _ syncthing: String, phoneReceiveLimit: Int = 0, ignoreDelete: Bool = false,
        _ body: (Pair) throws -> Void
    ) throws {
        let started = Date()
        let directory = try CommandRunner.temporaryDirectory()
        let a = Replica(path: directory.appendingPathComponent("laptop").path)
        let b = Replica(path: directory.appendingPathComponent("phone").path)
        #expect(try a.run(["init", "--device", "laptop"]).status == 0)
        #expect(try b.run(["init", "--device", "phone"]).status == 0)
        let laptop = try SyncthingInstance(
            name: "laptop", executable: syncthing,
            home: directory.appendingPathComponent("syncthing-laptop").path, folder: a.path)
        let phone = try SyncthingInstance(
            name: "phone", executable: syncthing,
            home: directory.appendingPathComponent("syncthing-phone").path, folder: b.path)
        try laptop.configure(peers: [laptop, phone], ignoreDelete: ignoreDelete)
        try phone.configure(
            peers: [laptop, phone], receiveLimit: phoneReceiveLimit, ignoreDelete: ignoreDelete)
        defer { SyncthingInstance.stop([laptop, phone]) }
        try laptop.start()
        try phone.start()
        let pair = Pair(
            directory: directory, a: a, b: b, laptop: laptop, phone: phone, ignoreDelete: ignoreDelete)
        try pair.waitUntil("start", connected: true)
        // The same Store.plist was made on both sides: it must not become a conflict.
        try pair.settle("first exchange")
        try body(pair)
        print("Syncthing scenario took \(Int(Date().timeIntervalSince(started))) s")
        SyncthingInstance.stop([laptop, phone])
        try? FileManager.default.removeItem(at: directory)
    }

    /// What both replicas must show once in step: the same documents, versions and
    /// conflicts; no Syncthing conflict copy or temporary anywhere; `Local.nosync` each
    /// replica's own; `verify` clean.
    static func expectClean(_ pair: Pair, devices: [Data], sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        #expect(try pair.a.state() == pair.b.state(), sourceLocation: sourceLocation)
        for (replica, device) in zip([pair.a, pair.b], devices) {
            let everything = Self.allNames(under: replica.path)
            #expect(
                everything.filter { $0.contains(".sync-conflict") }.isEmpty, "\(replica.path): \(everything)",
                sourceLocation: sourceLocation)
            #expect(
                everything.filter { $0.contains(".syncthing.") }.isEmpty,
                "Syncthing temporaries left: \(everything)", sourceLocation: sourceLocation)
            let local = try Data(
                contentsOf: URL(fileURLWithPath: replica.path + "/Local.nosync/Device.plist"))
            #expect(
                local == device, "\(replica.path): Local.nosync/Device.plist stays this replica's own",
                sourceLocation: sourceLocation)
            let verify = try replica.run(["verify"])
            #expect(
                verify.status == 0, "verify \(replica.path): \(verify.stdout) \(verify.stderr)",
                sourceLocation: sourceLocation)
        }
    }

    static func device(_ replica: Replica) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: replica.path + "/Local.nosync/Device.plist"))
    }

    /// Runs `laptop` and `phone` while the two are disconnected, then reconnects them and
    /// waits until they are in step.
    static func offlineEdits(
        _ pair: Pair, _ step: String, laptop: () throws -> Void, phone: () throws -> Void
    ) throws {
        try pair.laptop.pause(pair.phone)
        try pair.phone.pause(pair.laptop)
        try pair.waitUntil("\(step): pause", connected: false)
        try laptop()
        try phone()
        try pair.laptop.scan()
        try pair.phone.scan()
        try pair.laptop.pause(pair.phone, false)
        try pair.phone.pause(pair.laptop, false)
        try pair.waitUntil("\(step): resume", connected: true)
        try pair.settle(step)
    }

    @Test(
        "Syncthing on loopback: a new document reaches the other side, offline edits become one conflict on both, a resolution and a prune converge, nothing comes back"
    )
    func twoInstances() throws {
        guard let syncthing = CommandRunner.requireTool("syncthing") else { return }
        try Self.withPair(syncthing) { pair in
            try twoInstances(pair)
        }
    }

    func twoInstances(_ pair: Pair) throws {
        let (a, b) = (pair.a, pair.b)
        let deviceA = try Self.device(a)
        let deviceB = try Self.device(b)
        #expect(deviceA != deviceB)

        // A document made on the laptop appears on the phone.
        let created = try a.json(["new", "--from", pair.file(8)]) as! [String: Any]
        let id = created["id"] as! String
        let base = created["revision"] as! String
        try pair.settle("new document")
        let shown = try b.run(["show", id, "--json"])
        #expect(shown.status == 0, "show on the phone: \(shown.stderr)")
        #expect(try a.state() == b.state())

        // Offline edits on both sides: one conflict, with the same winner, on both.
        try Self.offlineEdits(pair, "offline edits") { () throws in
            #expect(try a.run(["save", id, "--from", pair.file(9), "--base", base]).status == 0)
        } phone: { () throws in
            #expect(
                try b.run(["save", id, "--from", pair.file(2, name: "Grace"), "--base", base]).status == 0)
        }
        #expect(try a.state() == b.state())
        for replica in [a, b] {
            let conflicts = try replica.json(["conflicts"]) as! [[String: Any]]
            #expect(conflicts.count == 1, "\(replica.path): \(conflicts)")
        }
        let winnerA = (try a.json(["list"]) as! [[String: Any]]).first?["revision"] as? String
        let winnerB = (try b.json(["list"]) as! [[String: Any]]).first?["revision"] as? String
        #expect(winnerA != nil && winnerA == winnerB)

        // A resolution and a prune on the laptop reach the phone; the next command that
        // writes on the phone (prune) removes whatever pruned content is still there.
        #expect(try a.run(["resolve", id, "--accept"]).status == 0)
        #expect(try a.run(["prune", id]).status == 0)
        try pair.settle("resolve and prune")
        #expect(try b.run(["prune"]).status == 0)
        try pair.settle("prune on the phone")
        // Further rounds bring nothing back.
        for round in 1...3 {
            #expect(try a.run(["list"]).status == 0)
            #expect(try b.run(["init"]).status == 0)
            try pair.settle("round \(round)")
        }

        for replica in [a, b] {
            #expect((try replica.json(["conflicts"]) as! [Any]).isEmpty, "\(replica.path)")
            let versions = try replica.json(["versions", id]) as! [[String: Any]]
            #expect(versions.count == 4, "\(replica.path): \(versions)")
            #expect(
                versions.filter { $0["pruned"] as? Bool == true }.count == 3, "\(replica.path): \(versions)")
            let names = try FileManager.default.contentsOfDirectory(atPath: replica.path + "/Documents/\(id)")
            #expect(names.filter { $0.hasSuffix(".survey") }.count == 1, "\(replica.path): \(names.sorted())")
            #expect(names.filter { $0.hasSuffix(".pruned") }.count == 3, "\(replica.path): \(names.sorted())")
            #expect(names.count == 4, "nothing else in the document folder: \(names.sorted())")
        }
        #expect(
            (try a.json(["list"]) as! [[String: Any]]).first?["revision"] as? String
                == (try b.json(["list"]) as! [[String: Any]]).first?["revision"] as? String)
        try Self.expectClean(pair, devices: [deviceA, deviceB])
    }

    @Test(
        "Syncthing on loopback: both sides resolve and prune while apart, writing the same resolution and tombstones; they meet without conflict copies or a conflict"
    )
    func concurrentPrunes() throws {
        guard let syncthing = CommandRunner.requireTool("syncthing") else { return }
        try Self.withPair(syncthing) { pair in
            try concurrentPrunes(pair)
        }
    }

    func concurrentPrunes(_ pair: Pair) throws {
        let (a, b) = (pair.a, pair.b)
        let devices = [try Self.device(a), try Self.device(b)]
        let created = try b.json(["new", "--from", pair.file(5)]) as! [String: Any]
        let id = created["id"] as! String
        let base = created["revision"] as! String
        try pair.settle("new document")
        try Self.offlineEdits(pair, "offline edits") { () throws in
            #expect(try a.run(["save", id, "--from", pair.file(6), "--base", base]).status == 0)
        } phone: { () throws in
            #expect(try b.run(["save", id, "--from", pair.file(7), "--base", base]).status == 0)
        }
        #expect((try a.json(["conflicts"]) as! [Any]).count == 1)
        // Apart again, each side resolves and prunes: the same three tombstones on both,
        // the same three packages removed on both, and the same resolution (a resolution
        // depends only on the heads and the content).
        try Self.offlineEdits(pair, "offline resolutions and prunes") { () throws in
            #expect(try a.run(["resolve", id, "--accept"]).status == 0)
            #expect(try a.run(["prune", id]).status == 0)
        } phone: { () throws in
            #expect(try b.run(["resolve", id, "--accept"]).status == 0)
            #expect(try b.run(["prune", id]).status == 0)
        }
        try Self.expectClean(pair, devices: devices)
        for replica in [a, b] {
            let versions = try replica.json(["versions", id]) as! [[String: Any]]
            #expect(versions.count == 4, "\(replica.path): \(versions)")
            #expect(
                versions.filter { $0["pruned"] as? Bool == true }.count == 3, "\(replica.path): \(versions)")
            #expect(
                (try replica.json(["conflicts"]) as! [Any]).isEmpty, "the two resolutions are one revision")
        }
        // Nothing is left to resolve; a prune on either side changes nothing.
        #expect(try b.run(["resolve", id, "--accept"]).status == 0)
        #expect(try a.run(["prune"]).status == 0)
        try pair.settle("prune on the laptop")
        for replica in [a, b] {
            #expect((try replica.json(["conflicts"]) as! [Any]).isEmpty)
            let names = try FileManager.default.contentsOfDirectory(atPath: replica.path + "/Documents/\(id)")
            #expect(names.filter { $0.hasSuffix(".survey") }.count == 1, "\(replica.path): \(names.sorted())")
            #expect(names.filter { $0.hasSuffix(".pruned") }.count == 3, "\(replica.path): \(names.sorted())")
        }
        try Self.expectClean(pair, devices: devices)
    }

    @Test(
        "Syncthing on loopback: while a prune's superseding revision is still on its way, and after the sender goes away mid-transfer, the document stays readable on the receiver (without and with the folder's ignoreDelete)",
        arguments: [false, true]
    )
    func pruneArrivesBeforeItsRevision(ignoreDelete: Bool) throws {
        guard let syncthing = CommandRunner.requireTool("syncthing") else { return }
        // The phone receives at 200 KiB/s, so that a 2 MB revision takes about 10 s to arrive.
        try Self.withPair(syncthing, phoneReceiveLimit: 200, ignoreDelete: ignoreDelete) { pair in
            try pruneArrivesBeforeItsRevision(pair, ignoreDelete: ignoreDelete)
        }
    }

    func pruneArrivesBeforeItsRevision(_ pair: Pair, ignoreDelete: Bool) throws {
        let (a, b) = (pair.a, pair.b)
        let created = try a.json(["new", "--from", pair.file(8)]) as! [String: Any]
        let id = created["id"] as! String
        let base = created["revision"] as! String
        try pair.settle("new document")
        try Self.offlineEdits(pair, "offline edits") { () throws in
            #expect(try a.run(["save", id, "--from", pair.file(9), "--base", base]).status == 0)
        } phone: { () throws in
            #expect(try b.run(["save", id, "--from", pair.file(2), "--base", base]).status == 0)
        }
        let winner = (try b.json(["list"]) as! [[String: Any]]).first?["revision"] as? String
        #expect(winner != nil)

        // Apart, the laptop resolves with large content and prunes the three others.
        try pair.laptop.pause(pair.phone)
        try pair.phone.pause(pair.laptop)
        try pair.waitUntil("pause", connected: false)
        let large =
            #"{"title": "Visitor feedback", "items": [{"title": "Notes", "kind": "textField", "answer": "\#(String(repeating: "x", count: 2_000_000))"}]}"#
        let largeFile = pair.directory.appendingPathComponent("large.json")
        try Data(large.utf8).write(to: largeFile)
        #expect(try a.run(["resolve", id, "--from", largeFile.path]).status == 0)
        #expect(try a.run(["prune", id]).status == 0)
        let resolution = (try a.json(["list"]) as! [[String: Any]]).first?["revision"] as? String ?? "?"
        try pair.laptop.scan()
        try pair.laptop.pause(pair.phone, false)
        try pair.phone.pause(pair.laptop, false)

        // Wait until the phone has the tombstones and is receiving the resolution's content.
        // Unpaused devices may take until Syncthing's next dial to reconnect (up to a minute
        // on a loaded machine), so the wait is generous; the transfer itself then takes 10 s.
        let folder = b.path + "/Documents/\(id)"
        let deadline = Date().addingTimeInterval(120)
        while true {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            let package =
                (try? FileManager.default.contentsOfDirectory(atPath: folder + "/\(resolution).survey")) ?? []
            if names.filter({ $0.hasSuffix(".pruned") }).count == 3
                && package.contains(where: { $0.hasPrefix(".syncthing.") })
            {
                break
            }
            guard Date() < deadline else {
                throw SyncthingError("the phone never started receiving \(resolution): \(names)")
            }
            usleep(100_000)
        }
        func expectReadable(_ when: String, evenWithoutIgnoreDelete: Bool) throws {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
            let rows = try b.json(["list"]) as! [[String: Any]]
            let shown = try b.run(["show", id, "--json"])
            let readable = {
                #expect(
                    rows.count == 1, "\(when): the document is listed on the phone; its folder holds \(names)"
                )
                #expect(shown.status == 0, "\(when): show on the phone: \(shown.stderr)")
            }
            if ignoreDelete {
                readable()
            } else if evenWithoutIgnoreDelete {
                // While the resolution is on its way, Syncthing moves each pruned package's
                // metadata onto its tombstone (the same bytes: its "rename shortcut"); the
                // tombstone stands in for it, so the document stays readable, unless
                // Syncthing has already removed the pruned content too (it may, depending on
                // when its pull pass ends).
                withKnownIssue(
                    "Syncthing may remove pruned content before the revision superseding it has arrived",
                    isIntermittent: true
                ) {
                    readable()
                }
            } else {
                // Known problem: Syncthing applies the other deletions at the end of a pull
                // pass even when a pull failed, so once the sender is gone the phone is left
                // with pending tombstones and no revision's content: the document is gone
                // from it until the resolution arrives whole.
                withKnownIssue(
                    "Syncthing dismantles pruned packages before the revision superseding them has arrived"
                ) {
                    readable()
                }
            }
        }
        try expectReadable("while the resolution is on its way", evenWithoutIgnoreDelete: true)

        // The laptop goes away mid-transfer.
        try pair.phone.pause(pair.laptop)
        try pair.waitUntil("the laptop goes away", connected: false)
        let idle = Date().addingTimeInterval(30)
        while try pair.phone.json("/rest/db/status?folder=\(SyncthingInstance.folderID)")["state"] as? String
            != "idle"
        {
            guard Date() < idle else { throw SyncthingError("the phone's folder never went idle") }
            usleep(100_000)
        }
        try expectReadable("after the laptop went away mid-transfer", evenWithoutIgnoreDelete: false)

        // Once the laptop is back, the phone completes the resolution.
        try pair.phone.pause(pair.laptop, false)
        try pair.waitUntil("the laptop is back", connected: true)
        let arrival = Date().addingTimeInterval(60)
        while (try b.json(["list"]) as! [[String: Any]]).first?["revision"] as? String != resolution {
            guard Date() < arrival else {
                throw SyncthingError("the resolution never arrived whole on the phone")
            }
            usleep(250_000)
        }
        // With ignoreDelete the phone still has the pruned packages (Syncthing waits for it
        // to delete them, so the two are not in step yet): the next command that writes
        // removes them, as after rsync without --delete.
        #expect(try b.run(["prune"]).status == 0)
        try pair.settle("prune on the phone")
        for replica in [a, b] {
            #expect(
                (try replica.json(["list"]) as! [[String: Any]]).first?["revision"] as? String == resolution)
            let names = try FileManager.default.contentsOfDirectory(atPath: replica.path + "/Documents/\(id)")
            #expect(
                names.filter { $0.hasSuffix(".survey") } == ["\(resolution).survey"],
                "\(replica.path): \(names.sorted())")
            #expect(names.filter { $0.hasSuffix(".pruned") }.count == 3, "\(replica.path): \(names.sorted())")
        }
        try Self.expectClean(pair, devices: [try Self.device(a), try Self.device(b)])
    }
}
