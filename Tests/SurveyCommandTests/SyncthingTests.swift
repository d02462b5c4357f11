import Foundation
import Testing

/// Two stores kept in step by two real Syncthing instances, as README suggests, on
/// loopback only.
@Suite("Replicas: Syncthing", .serialized)
struct SyncthingTests {
    typealias Replica = SyncTests.Replica

    /// Two replicas, each with its own Syncthing sharing its store folder with the other.
    struct Pair {
        let directory: URL
        let a: Replica
        let b: Replica
        let laptop: SyncthingInstance
        let phone: SyncthingInstance

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
                let reason = try laptop.unsettled(with: phone) ?? phone.unsettled(with: laptop)
                settledPolls = reason == nil ? settledPolls + 1 : 0
                if let reason, Date() > deadline {
                    throw SyncthingError(
                        "\(step): not in step within 60 s: \(reason)\nlaptop:\n\(laptop.logTail())\nphone:\n\(phone.logTail())")
                }
                usleep(250_000)
            }
        }

        func waitUntil(_ step: String, connected: Bool) throws {
            let deadline = Date().addingTimeInterval(30)
            while try laptop.isConnected(to: phone) != connected || phone.isConnected(to: laptop) != connected {
                guard Date() < deadline else { throw SyncthingError("\(step): still \(connected ? "dis" : "")connected after 30 s") }
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

    @Test(
        "Syncthing on loopback: a new document reaches the other side, offline edits become one conflict on both, a resolution and a prune converge, nothing comes back"
    )
    func twoInstances() throws {
        guard let syncthing = CommandRunner.requireTool("syncthing") else { return }
        let started = Date()
        let directory = try CommandRunner.temporaryDirectory()
        let a = Replica(path: directory.appendingPathComponent("laptop").path)
        let b = Replica(path: directory.appendingPathComponent("phone").path)
        #expect(try a.run(["init", "--device", "laptop"]).status == 0)
        #expect(try b.run(["init", "--device", "phone"]).status == 0)
        let deviceA = try Data(contentsOf: URL(fileURLWithPath: a.path + "/Local.nosync/Device.plist"))
        let deviceB = try Data(contentsOf: URL(fileURLWithPath: b.path + "/Local.nosync/Device.plist"))
        #expect(deviceA != deviceB)

        let laptop = try SyncthingInstance(
            name: "laptop", executable: syncthing, home: directory.appendingPathComponent("syncthing-laptop").path, folder: a.path)
        let phone = try SyncthingInstance(
            name: "phone", executable: syncthing, home: directory.appendingPathComponent("syncthing-phone").path, folder: b.path)
        for instance in [laptop, phone] { try instance.configure(peers: [laptop, phone]) }
        defer {
            laptop.stop()
            phone.stop()
        }
        try laptop.start()
        try phone.start()
        let pair = Pair(directory: directory, a: a, b: b, laptop: laptop, phone: phone)
        try pair.waitUntil("start", connected: true)
        // Both stores were made by `survey init` before they met: the same Store.plist on both.
        try pair.settle("first exchange")

        // A document made on the laptop appears on the phone.
        let created = try a.json(["new", "--from", pair.file(8)]) as! [String: Any]
        let id = created["id"] as! String
        let base = created["revision"] as! String
        try pair.settle("new document")
        let shown = try b.run(["show", id, "--json"])
        #expect(shown.status == 0, "show on the phone: \(shown.stderr)")
        #expect(try a.state() == b.state())

        // Offline edits on both sides: one conflict, with the same winner, on both.
        try laptop.pause(phone)
        try phone.pause(laptop)
        try pair.waitUntil("pause", connected: false)
        #expect(try a.run(["save", id, "--from", pair.file(9), "--base", base]).status == 0)
        #expect(try b.run(["save", id, "--from", pair.file(2, name: "Grace"), "--base", base]).status == 0)
        try laptop.scan()
        try phone.scan()
        try laptop.pause(phone, false)
        try phone.pause(laptop, false)
        try pair.waitUntil("resume", connected: true)
        try pair.settle("offline edits")
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

        #expect(try a.state() == b.state())
        for (replica, device) in [(a, deviceA), (b, deviceB)] {
            #expect((try replica.json(["conflicts"]) as! [Any]).isEmpty, "\(replica.path)")
            let versions = try replica.json(["versions", id]) as! [[String: Any]]
            #expect(versions.count == 4, "\(replica.path): \(versions)")
            #expect(versions.filter { $0["pruned"] as? Bool == true }.count == 3, "\(replica.path): \(versions)")
            let names = try FileManager.default.contentsOfDirectory(atPath: replica.path + "/Documents/\(id)")
            #expect(names.filter { $0.hasSuffix(".survey") }.count == 1, "\(replica.path): \(names.sorted())")
            #expect(names.filter { $0.hasSuffix(".pruned") }.count == 3, "\(replica.path): \(names.sorted())")
            #expect(names.count == 4, "nothing else in the document folder: \(names.sorted())")
            let everything = Self.allNames(under: replica.path)
            #expect(everything.filter { $0.contains(".sync-conflict") }.isEmpty, "\(replica.path): \(everything)")
            #expect(everything.filter { $0.contains(".syncthing.") }.isEmpty, "no Syncthing temporaries left: \(everything)")
            let local = try Data(contentsOf: URL(fileURLWithPath: replica.path + "/Local.nosync/Device.plist"))
            #expect(local == device, "\(replica.path): Local.nosync/Device.plist is this replica's own")
            let verify = try replica.run(["verify"])
            #expect(verify.status == 0, "verify \(replica.path): \(verify.stdout) \(verify.stderr)")
        }
        #expect(
            (try a.json(["list"]) as! [[String: Any]]).first?["revision"] as? String
                == (try b.json(["list"]) as! [[String: Any]]).first?["revision"] as? String)
        print("Syncthing scenario took \(Int(Date().timeIntervalSince(started))) s")
        // Removed once Syncthing has stopped; a step that throws leaves it for a look.
        laptop.stop()
        phone.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}
