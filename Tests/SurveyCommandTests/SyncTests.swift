import Foundation
import TestSupport
import Testing

/// Replicas kept in step by `survey sync` and by engines that only copy files.
@Suite("Replicas: survey sync, rsync and friends", .serialized)
struct SyncTests {
    struct Replica {
        let path: String

        @discardableResult
        func run(_ arguments: [String]) throws -> CommandRunner.Result {
            try CommandRunner.run(arguments + ["--store", path])
        }

        func json(_ arguments: [String]) throws -> Any {
            let result = try run(arguments + ["--json"])
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        }

        /// What every replica must agree on: documents, versions and conflicts, without
        /// the per-replica `futureTimestamp` judgement.
        func state() throws -> String {
            var parts: [String] = []
            let list = try json(["list"]) as! [[String: Any]]
            parts.append(try canonical(list))
            for row in list {
                parts.append(try canonical(try json(["versions", row["id"] as! String])))
            }
            parts.append(try canonical(try json(["conflicts"])))
            return parts.joined(separator: "\n")
        }

        private func canonical(_ value: Any) throws -> String {
            String(
                decoding: try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]),
                as: UTF8.self)
        }
    }

    let directory: URL
    let a: Replica
    let b: Replica

    init() throws {
        directory = try CommandRunner.temporaryDirectory()
        a = Replica(path: directory.appendingPathComponent("laptop").path)
        b = Replica(path: directory.appendingPathComponent("phone").path)
        #expect(try a.run(["init", "--device", "laptop"]).status == 0)
        #expect(try b.run(["init", "--device", "phone"]).status == 0)
    }

    func file(_ rating: Int, name: String = "Ada") throws -> String {
        let url = directory.appendingPathComponent("\(rating)-\(name).json")
        try Data(StoreCommandTests.edited(rating: rating, name: name).utf8).write(to: url)
        return url.path
    }

    func sync(_ from: Replica, _ to: Replica) throws -> [String: Any] {
        try from.json(["sync", to.path]) as! [String: Any]
    }

    /// A document on both replicas; returns its id and first revision.
    func shared() throws -> (String, String) {
        let created = try a.json(["new", "--from", file(8)]) as! [String: Any]
        _ = try sync(a, b)
        return (created["id"] as! String, created["revision"] as! String)
    }

    @Test(
        "Offline edits on both devices: after sync, the same winner and conflict set on both; a resolution on one clears both"
    )
    func offlineEdits() throws {
        let (id, base) = try shared()
        #expect(try a.run(["save", id, "--from", file(9), "--base", base]).status == 0)
        #expect(try b.run(["save", id, "--from", file(2, name: "Grace"), "--base", base]).status == 0)
        let report = try sync(a, b)
        #expect(report["sent"] as? Int == 1 && report["received"] as? Int == 1)
        #expect((report["conflictsAppeared"] as? [String]) == [id])
        #expect(try a.state() == b.state())
        #expect((try a.json(["conflicts"]) as! [Any]).count == 1)

        #expect(try b.run(["resolve", id, "--accept"]).status == 0)
        let resolved = try sync(b, a)
        #expect((resolved["conflictsResolved"] as? [String]) == [id])
        #expect(try a.state() == b.state())
        #expect((try a.json(["conflicts"]) as! [Any]).isEmpty)

        let again = try sync(a, b)
        #expect(again["sent"] as? Int == 0 && again["received"] as? Int == 0, "a second sync copies nothing")
    }

    @Test(
        "sync's text output: a count line, then one document id a line, for conflicts appeared, resolved, merged and left unmerged; nothing about conflicts when there is none"
    )
    func textOutputListsOneIdALine() throws {
        // Three documents edited on both devices: two conflicts that contest a field (both
        // sides change the rating), one that merges cleanly (one changes the name).
        typealias M = MergeCommandTests
        func write(_ items: [M.Item], _ name: String) throws -> String {
            let url = directory.appendingPathComponent(name)
            try Data(M.survey(items).utf8).write(to: url)
            return url.path
        }
        let base = try write([M.binary(), M.name(), M.rate()], "base.json")
        let ours = try write([M.binary(), M.name(), M.rate(9)], "ours.json")
        let theirs = try write([M.binary(), M.name(), M.rate(2)], "theirs.json")
        let theirName = try write([M.binary(), M.name("Grace"), M.rate()], "their-name.json")
        var ids: [String] = []
        for _ in 0..<3 {
            let created = try a.json(["new", "--from", base]) as! [String: Any]
            ids.append(created["id"] as! String)
        }
        let first = try a.run(["sync", b.path])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout == "sent 3, received 0 revision(s) and tombstone(s) over 3 document(s)\n")
        for (index, id) in ids.enumerated() {
            #expect(try a.run(["save", id, "--from", ours]).status == 0)
            #expect(try b.run(["save", id, "--from", index == 2 ? theirName : theirs]).status == 0)
        }
        let contested = ids[0..<2].sorted(), clean = ids[2]
        let text = try a.run(["sync", b.path])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(
            text.stdout == """
                sent 3, received 3 revision(s) and tombstone(s) over 3 document(s)
                now in conflict (3):
                \(ids.sorted().map { "  \($0)\n" }.joined())
                """, "\(text.stdout)")
        // --merge on the next sync: the clean one merged on both sides, the others listed.
        let merging = try b.run(["sync", a.path, "--merge"])
        #expect(merging.status == 0, "\(merging.stderr)")
        #expect(
            merging.stdout == """
                sent 0, received 0 revision(s) and tombstone(s) over 3 document(s)
                merged on both sides (1):
                  \(clean)
                still in conflict, not merged (2):
                \(contested.map { "  \($0)\n" }.joined())
                """, "\(merging.stdout)")
        // Resolved on one side: the other hears of it, one id a line.
        for id in contested { #expect(try b.run(["resolve", id, "--accept"]).status == 0) }
        let resolved = try a.run(["sync", b.path])
        #expect(resolved.status == 0, "\(resolved.stderr)")
        #expect(
            resolved.stdout == """
                sent 0, received 2 revision(s) and tombstone(s) over 3 document(s)
                conflicts resolved (2):
                \(contested.map { "  \($0)\n" }.joined())
                """, "\(resolved.stdout)")
    }

    @Test("Resolutions made on both devices at once form a new conflict that resolves the same way")
    func concurrentResolutions() throws {
        let (id, base) = try shared()
        #expect(try a.run(["save", id, "--from", file(9), "--base", base]).status == 0)
        #expect(try b.run(["save", id, "--from", file(2), "--base", base]).status == 0)
        _ = try sync(a, b)
        #expect(try a.run(["resolve", id, "--from", file(5)]).status == 0)
        #expect(try b.run(["resolve", id, "--from", file(6)]).status == 0)
        _ = try sync(a, b)
        #expect(try a.state() == b.state())
        #expect(((try a.json(["list"]) as! [[String: Any]])[0]["conflicts"] as? Int) == 1)
        #expect(try a.run(["resolve", id, "--accept"]).status == 0)
        _ = try sync(a, b)
        #expect(try a.state() == b.state())
        #expect(((try b.json(["list"]) as! [[String: Any]])[0]["conflicts"] as? Int) == 0)
    }

    @Test("A deletion racing an edit: the edit survives as the winner on both")
    func deletionRacesEdit() throws {
        let (id, base) = try shared()
        #expect(try a.run(["delete", id]).status == 0)
        #expect(try b.run(["save", id, "--from", file(3), "--base", base]).status == 0)
        _ = try sync(b, a)
        for replica in [a, b] {
            let row = (try replica.json(["list"]) as! [[String: Any]])[0]
            #expect(row["deleted"] as? Bool == false)
            let shown = try replica.json(["show", id]) as! [String: Any]
            #expect(((shown["items"] as! [[String: Any]])[2]["answer"] as? Double) == 3)
        }
        #expect(try a.state() == b.state())
    }

    @Test(
        "A deletion among the heads of a document in conflict is named by conflicts, as deletions in --json and in its text row (both left it out), as versions shows it deleted; a deletion racing one edit is no conflict, and no row"
    )
    func conflictsNameDeletions() throws {
        let (id, base) = try shared()
        // A third device, a copy of the second (cp -a) that takes an identity of its own.
        let c = Replica(path: directory.appendingPathComponent("tablet").path)
        let copy = try CommandRunner.run(["-a", b.path, c.path], executable: URL(fileURLWithPath: "/bin/cp"))
        #expect(copy.status == 0, "\(copy.stderr)")
        #expect(try c.run(["init", "--device", "tablet"]).status == 0)
        let deletion = try a.json(["delete", id]) as! [String: Any]
        let deleted = try #require(deletion["revision"] as? String)
        let phone = try b.json(["save", id, "--from", file(3), "--base", base]) as! [String: Any]
        // A deletion that raced one edit: the edit is current, and nothing is in conflict.
        _ = try sync(b, a)
        for replica in [a, b] {
            #expect((try replica.json(["conflicts"]) as! [Any]).isEmpty)
            let text = try replica.run(["conflicts"])
            #expect(text.status == 0 && text.stdout.isEmpty, "\(text.stdout)")
            let states = (try replica.json(["versions", id]) as! [[String: Any]]).map {
                ($0["revision"] as! String, $0["state"] as! String)
            }
            #expect(states.contains { $0 == (deleted, "deleted") }, "\(states)")
        }
        // A second edit, on the tablet, makes a conflict that the deletion is a head of.
        let tablet = try c.json(["save", id, "--from", file(4), "--base", base]) as! [String: Any]
        // Two-way: the laptop and the tablet hold everything, then the phone does.
        _ = try sync(c, a)
        _ = try sync(a, b)
        let edits = try [phone, tablet].map { try #require($0["revision"] as? String) }
        for replica in [a, b, c] {
            let rows = try replica.json(["conflicts"]) as! [[String: Any]]
            #expect(rows.count == 1, "\(rows)")
            let row = try #require(rows.first)
            let current = try #require(row["current"] as? String)
            #expect(Set([current] + (row["conflicts"] as? [String] ?? [])) == Set(edits), "\(row)")
            #expect(row["deletions"] as? [String] == [deleted], "\(row)")
            let text = try replica.run(["conflicts"])
            #expect(
                text.stdout.hasPrefix("\(id)  ")
                    && text.stdout.contains(
                        "  winner \(current)  conflicts \(edits.first { $0 != current }!)  deletions \(deleted)  merge"
                    ), "\(text.stdout)")
            let states = (try replica.json(["versions", id]) as! [[String: Any]]).map {
                ($0["revision"] as! String, $0["state"] as! String)
            }
            #expect(states.contains { $0 == (deleted, "deleted") }, "\(states)")
        }
        // Resolved, it supersedes the deletion too: no row, and no deletion among the heads.
        #expect(try a.run(["resolve", id, "--accept"]).status == 0)
        #expect((try a.json(["conflicts"]) as! [Any]).isEmpty)
        let states = (try a.json(["versions", id]) as! [[String: Any]]).map { $0["state"] as! String }
        #expect(!states.contains("deleted") && !states.contains("conflict"), "\(states)")
    }

    func rsync(_ from: Replica, _ to: Replica) throws {
        guard let rsync = CommandRunner.requireTool("rsync") else { return }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: rsync)
        process.arguments = ["-a", "--exclude=*.nosync", from.path + "/", to.path + "/"]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }

    @Test(
        "rsync both ways (no --delete) converges, and pruned content copied back is cleaned up, not resurrected",
        CommandRunner.needs("rsync"))
    func rsyncUnion() throws {
        guard CommandRunner.requireTool("rsync") != nil else { return }
        let (id, base) = try shared()
        #expect(try a.run(["save", id, "--from", file(9), "--base", base]).status == 0)
        #expect(try b.run(["save", id, "--from", file(1), "--base", base]).status == 0)
        try rsync(a, b)
        try rsync(b, a)
        #expect(try a.state() == b.state())
        #expect(try a.run(["resolve", id, "--accept"]).status == 0)
        #expect(try a.run(["prune", id]).status == 0)
        // b still has every package; copying both ways brings them back to a.
        try rsync(b, a)
        try rsync(a, b)
        for replica in [a, b] {
            // Copies of pruned revisions are notes for verify, and the next command that
            // writes (here prune) removes them.
            #expect(try replica.run(["verify"]).status == 0)
            #expect(try replica.run(["prune"]).status == 0)
            let versions = try replica.json(["versions", id]) as! [[String: Any]]
            #expect(versions.count == 4)
            #expect(versions.filter { $0["pruned"] as? Bool == true }.count == 3)
            let packages = try FileManager.default.contentsOfDirectory(
                atPath: replica.path + "/Documents/\(id)"
            ).filter { $0.hasSuffix(".survey") }
            #expect(packages.count == 1, "the losers' content is gone after the next command that writes")
            #expect(try replica.run(["verify"]).status == 0)
        }
        #expect(try a.state() == b.state())
    }

    @Test("An interrupted copy (a package without its content) is not mistaken for a revision")
    func interruptedCopy() throws {
        let (id, _) = try shared()
        #expect(try a.run(["edit", id, "--answer", "3=4"]).status == 0)
        let revision = ((try a.json(["list"]) as! [[String: Any]])[0]["revision"]) as! String
        let source = a.path + "/Documents/\(id)/\(revision).survey"
        let target = b.path + "/Documents/\(id)/\(revision).survey"
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: source + "/DocumentMetadata.plist", toPath: target + "/DocumentMetadata.plist")
        _ = FileManager.default.createFile(
            atPath: target + "/.Survey.plist.Xy12ab", contents: Data("<?xml ver".utf8))
        #expect((try b.json(["versions", id]) as! [Any]).count == 1)
        #expect(try b.run(["verify"]).status != 0, "verify reports the incomplete package")
        // A sync completes the half-copied package, adding only what it lacks.
        let report = try sync(a, b)
        #expect(report["sent"] as? Int == 1)
        #expect((try b.json(["versions", id]) as! [Any]).count == 2)
        try FileManager.default.removeItem(atPath: target + "/.Survey.plist.Xy12ab")
        #expect(try b.run(["verify"]).status == 0)
    }

    @Test("Three replicas synced in a ring in random order converge")
    func ring() throws {
        let c = Replica(path: directory.appendingPathComponent("tablet").path)
        #expect(try c.run(["init", "--device", "tablet"]).status == 0)
        let replicas = [a, b, c]
        // Seeded: the seed is printed, and SURVEYSTORE_SEED replays a run.
        let seed = SeededRandom.seed(fallback: 1185)
        let replay = "seed \(seed); replay with SURVEYSTORE_SEED=\(seed)"
        print("random \(replay)")
        var generator = SeededRandom(seed: seed)
        let (id, base) = try shared()
        _ = try sync(b, c)
        for (index, replica) in replicas.enumerated() {
            #expect(try replica.run(["save", id, "--from", file(index + 1), "--base", base]).status == 0)
        }
        #expect(try c.run(["new", "--title", "Only on the tablet"]).status == 0)
        for _ in 0..<4 {
            let pairs = [(0, 1), (1, 2), (2, 0)].shuffled(using: &generator)
            for (x, y) in pairs { _ = try sync(replicas[x], replicas[y]) }
        }
        #expect(try a.state() == b.state(), "\(replay)")
        #expect(try b.state() == c.state(), "\(replay)")
        #expect((try a.json(["list"]) as! [Any]).count == 2, "\(replay)")
    }

    @Test("A copied store (Local.nosync included) gets a new device id")
    func copiedStore() throws {
        _ = try shared()
        let copy = directory.appendingPathComponent("copy").path
        try FileManager.default.copyItem(atPath: a.path, toPath: copy)
        let original = try String(contentsOfFile: a.path + "/Local.nosync/Device.plist", encoding: .utf8)
        // Reading changes nothing; the first command that writes takes a new id.
        #expect(try CommandRunner.run(["list", "--store", copy]).status == 0)
        #expect(try String(contentsOfFile: copy + "/Local.nosync/Device.plist", encoding: .utf8) == original)
        #expect(try CommandRunner.run(["init", "--store", copy]).status == 0)
        let copied = try String(contentsOfFile: copy + "/Local.nosync/Device.plist", encoding: .utf8)
        #expect(original != copied)
        #expect(try CommandRunner.run(["init", "--store", a.path]).status == 0)
        #expect(
            try String(contentsOfFile: a.path + "/Local.nosync/Device.plist", encoding: .utf8) == original)
    }

    @Test(
        "A copy interrupted after the tombstones of a resolved conflict but before the resolution: a sync with a replica that holds the heads copies them, both end with the same heads, and no conflict is said resolved (the receiver refused them for their pending tombstones, and the two went on apart)"
    )
    func pendingTombstonesDoNotStopTheirRevisions() throws {
        let (id, base) = try shared()
        let c = Replica(path: directory.appendingPathComponent("tablet").path)
        #expect(try c.run(["init", "--device", "tablet"]).status == 0)
        _ = try sync(a, c)
        #expect(try a.run(["save", id, "--from", file(9), "--base", base]).status == 0)
        #expect(try b.run(["save", id, "--from", file(2, name: "Grace"), "--base", base]).status == 0)
        _ = try sync(a, b)
        #expect(try a.run(["resolve", id, "--merge"]).status == 0)
        #expect(try a.run(["prune"]).status == 0)
        // As an `rsync -a` from a to c stopped before the resolution (3-…): names in order.
        let folder = "/Documents/" + id + "/"
        let names = try FileManager.default.contentsOfDirectory(atPath: a.path + folder).sorted()
        #expect(names.contains { $0.hasPrefix("3-") && $0.hasSuffix(".survey") }, "\(names)")
        for name in names {
            if name.hasPrefix("3-") { break }
            if !FileManager.default.fileExists(atPath: c.path + folder + name) {
                try FileManager.default.copyItem(
                    atPath: a.path + folder + name, toPath: c.path + folder + name)
            }
        }
        func heads(_ replica: Replica) throws -> [String] {
            (try replica.json(["versions", id]) as! [[String: Any]]).filter {
                ["current", "conflict"].contains($0["state"] as? String)
            }.compactMap { $0["revision"] as? String }.sorted()
        }
        let report = try sync(c, b)
        #expect(report["received"] as? Int == 2, "\(report)")
        #expect((report["conflictsResolved"] as? [String]) == [], "\(report)")
        let (onC, onB) = (try heads(c), try heads(b))
        #expect(onC == onB && onB.count == 2, "\(onC) \(onB)")
        #expect((try sync(c, b))["received"] as? Int == 0)
        // The resolution arriving settles every replica on it.
        _ = try sync(a, c)
        _ = try sync(c, b)
        let settled = try heads(a)
        #expect(settled.count == 1)
        for replica in [a, b, c] {
            #expect(try heads(replica) == settled, "\(replica.path)")
            #expect(try replica.run(["verify"]).status == 0, "\(replica.path)")
        }
    }

    @Test(
        "A revision whose tombstone arrived alone is not copied when the sync also brings a revision that supersedes it (it was copied, then pruned as a copy of a pruned revision)"
    )
    func pendingTombstoneOfAnAncestorCopiesNothingTwice() throws {
        let (id, base) = try shared()
        let c = Replica(path: directory.appendingPathComponent("tablet").path)
        #expect(try c.run(["init", "--device", "tablet"]).status == 0)
        #expect(try a.run(["save", id, "--from", file(9), "--base", base]).status == 0)
        _ = try sync(a, b)
        #expect(try a.run(["prune"]).status == 0)
        // Only the tombstone reached c (a copy interrupted after it).
        let folder = "/Documents/" + id + "/"
        try FileManager.default.createDirectory(atPath: c.path + folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: a.path + folder + base + ".pruned", toPath: c.path + folder + base + ".pruned")
        let report = try sync(c, b)
        #expect(report["received"] as? Int == 1, "\(report)")
        #expect((try sync(c, b))["received"] as? Int == 0)
        let verify = try c.run(["verify"])
        #expect(
            verify.status == 0 && !verify.stderr.contains("copy of a pruned revision"), "\(verify.stderr)")
        #expect(!FileManager.default.fileExists(atPath: c.path + folder + base + ".survey"))
    }

    @Test("survey sync killed at random moments never leaves a store failing verify after its next command")
    func killedSync() throws {
        let (id, base) = try shared()
        for index in 0..<40 {
            #expect(
                try a.run(["save", id, "--from", file(index % 10, name: "A\(index)"), "--base", base]).status
                    == 0)
        }
        // Seeded: the seed is printed, and SURVEYSTORE_SEED replays a run.
        let seed = SeededRandom.seed(fallback: 1223)
        let replay = "seed \(seed); replay with SURVEYSTORE_SEED=\(seed)"
        print("random \(replay)")
        var generator = SeededRandom(seed: seed)
        var kills = 0
        for round in 0..<50 {
            if round % 10 == 0 {
                #expect(
                    try b.run(["save", id, "--from", file(round % 10, name: "B\(round)"), "--base", base])
                        .status == 0)
            }
            let arguments =
                round % 2 == 0 ? ["sync", b.path, "--store", a.path] : ["sync", a.path, "--store", b.path]
            if try CommandRunner.runKilled(
                arguments, after: UInt32.random(in: 1_000...60_000, using: &generator))
            {
                kills += 1
            }
            for replica in [a, b] {
                #expect(try replica.run(["list"]).status == 0, "round \(round), \(replay)")
                // The next command that writes finishes what the kill interrupted.
                #expect(try replica.run(["init"]).status == 0, "round \(round), \(replay)")
                let verify = try replica.run(["verify"])
                #expect(verify.status == 0, "round \(round), \(replay): \(verify.stderr)")
            }
        }
        _ = try sync(a, b)
        #expect(try a.state() == b.state(), "\(replay)")
        print("killed survey sync \(kills) times in 50 rounds")
        #expect(kills > 0, "no sync was killed before it finished: the test tested nothing (\(replay))")
    }
}

extension SyncTests {
    func unison(_ first: Replica, _ second: Replica) throws {
        guard let unison = CommandRunner.requireTool("unison") else { return }
        let archive = directory.appendingPathComponent("unison-archive").path
        try FileManager.default.createDirectory(atPath: archive, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: unison)
        process.arguments = [
            first.path, second.path, "-batch", "-auto", "-ui", "text", "-ignore", "Name *.nosync", "-perms",
            "0",
        ]
        process.environment = ProcessInfo.processInfo.environment.merging(["UNISON": archive]) { _, new in new
        }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "unison failed")
    }

    @Test(
        "unison keeps replicas converged: offline edits, a resolution and a prune",
        CommandRunner.needs("unison"))
    func unisonReplicas() throws {
        guard CommandRunner.requireTool("unison") != nil else { return }
        let created = try a.json(["new", "--from", file(8)]) as! [String: Any]
        let id = created["id"] as! String, base = created["revision"] as! String
        try unison(a, b)
        #expect(try a.state() == b.state())
        #expect(try a.run(["save", id, "--from", file(9), "--base", base]).status == 0)
        #expect(try b.run(["save", id, "--from", file(4), "--base", base]).status == 0)
        try unison(a, b)
        #expect(try a.state() == b.state())
        #expect((try b.json(["conflicts"]) as! [Any]).count == 1)
        #expect(try b.run(["resolve", id, "--accept"]).status == 0)
        #expect(try b.run(["prune", id]).status == 0)
        try unison(a, b)
        #expect(try a.state() == b.state())
        for replica in [a, b] {
            #expect((try replica.json(["conflicts"]) as! [Any]).isEmpty)
            #expect(try replica.run(["verify"]).status == 0)
        }
    }
}

extension SyncTests {
    @Test(
        "An rsync killed mid-copy leaves nothing any command mistakes for a revision",
        CommandRunner.needs("rsync"))
    func killedRsync() throws {
        guard let rsyncPath = CommandRunner.requireTool("rsync") else { return }
        let (id, base) = try shared()
        for index in 0..<60 {
            #expect(
                try a.run(["save", id, "--from", file(index % 10, name: "N\(index)"), "--base", base]).status
                    == 0)
        }
        // Seeded: the seed is printed, and SURVEYSTORE_SEED replays a run.
        let seed = SeededRandom.seed(fallback: 1302)
        let replay = "seed \(seed); replay with SURVEYSTORE_SEED=\(seed)"
        print("random \(replay)")
        var generator = SeededRandom(seed: seed)
        var interrupted = 0
        for round in 0..<6 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: rsyncPath)
            // Slowed down so that the kill lands mid-copy.
            process.arguments = ["-a", "--bwlimit=100", "--exclude=*.nosync", a.path + "/", b.path + "/"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            usleep(UInt32.random(in: 50_000...400_000, using: &generator))
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                interrupted += 1
            }
            process.waitUntilExit()
            // Every revision b lists is complete: its content reads and verifies.
            let versions = try b.json(["versions", id]) as! [[String: Any]]
            for version in versions {
                let shown = try b.run(["show", id, "--revision", version["revision"] as! String, "--json"])
                #expect(
                    shown.status == 0, "round \(round), \(replay), \(version["revision"]!): \(shown.stderr)")
            }
        }
        #expect(interrupted > 0, "no rsync was interrupted (\(replay))")
        try rsync(a, b)
        #expect(try a.state() == b.state(), "\(replay)")
        #expect(try b.run(["verify"]).status == 0, "\(replay)")
    }
}
