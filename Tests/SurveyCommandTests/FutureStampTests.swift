import Foundation
import Testing

/// A revision stamped far in the future (a device whose clock ran ahead) is flagged, not
/// trusted: it cannot hold a document hostage.
@Suite("Timestamps from the future", .serialized)
struct FutureStampTests {
    /// Writes, beside the head of `document`, a sibling stamped in 2100 by device
    /// "Time traveller", with the head's content, as another replica would have made it:
    /// the metadata written the way the store writes it (Python's plistlib writes the
    /// bytes CoreFoundation does), so that it verifies.
    static func forgeFutureSibling(store: String, document: String, python: String) throws {
        let script = #"""
            import glob, hashlib, os, plistlib, shutil, sys, datetime
            folder = sys.argv[1]
            packages = sorted(glob.glob(folder + "/*.survey"), key=lambda p: int(os.path.basename(p).split("-")[0]))
            head = packages[-1]
            with open(head + "/DocumentMetadata.plist", "rb") as f:
                meta = plistlib.load(f)
            meta.pop("RevisionID")
            ms = 4102444800000  # 2100-01-01
            meta.update(TimestampMilliseconds=ms, TimestampCounter=0, DeviceID="traveller", DeviceName="Time traveller",
                        Modified=datetime.datetime(2100, 1, 1))
            gen = max([int(p.split("-")[0]) for p in meta["Parents"]] or [0]) + 1
            rid = "%d-%s" % (gen, hashlib.sha256(plistlib.dumps(meta)).hexdigest())
            meta["RevisionID"] = rid
            os.mkdir(folder + "/" + rid + ".survey")
            with open(folder + "/" + rid + ".survey/DocumentMetadata.plist", "wb") as f:
                plistlib.dump(meta, f)
            shutil.copyfile(head + "/Survey.plist", folder + "/" + rid + ".survey/Survey.plist")
            print(rid)
            """#
        let result = try CommandRunner.run(
            ["-c", script, store + "/Documents/" + document], executable: URL(fileURLWithPath: python))
        try #require(result.status == 0, "\(result.stderr)")
    }

    @Test(
        "A far-future stamp is flagged by verify, sync, import and versions; an edit on top takes this clock, and a resolution supersedes it",
        CommandRunner.needs("python3"))
    func futureStamp() throws {
        guard let python = CommandRunner.requireTool("python3") else { return }
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let a = directory.appendingPathComponent("a").path, b = directory.appendingPathComponent("b").path
        let documents = try ReplicaSafetyTests.makeStore(a, in: directory)
        let document = documents[0]
        #expect(try CommandRunner.run(["edit", document, "--title", "Edited", "--store", a]).status == 0)
        // The sibling is made from the original head's parent, so the two conflict.
        try Self.forgeFutureSibling(store: a, document: document, python: python)

        let verify = try CommandRunner.run(["verify", "--store", a])
        #expect(verify.status == 0, "a note, not a problem: \(verify.stderr)")
        #expect(verify.stderr.contains("more than a day ahead"), "\(verify.stderr)")
        let conflicts =
            try JSONSerialization.jsonObject(
                with: Data(try CommandRunner.run(["conflicts", "--json", "--store", a]).stdout.utf8))
            as! [[String: Any]]
        #expect((conflicts.first?["aheadOfClock"] as? [String])?.count == 1, "\(conflicts)")
        let versions =
            try JSONSerialization.jsonObject(
                with: Data(try CommandRunner.run(["versions", document, "--json", "--store", a]).stdout.utf8))
            as! [[String: Any]]
        #expect(versions.contains { $0["futureTimestamp"] as? Bool == true })

        #expect(try CommandRunner.run(["init", "--store", b]).status == 0)
        let sync = try CommandRunner.run(["sync", a, "--json", "--store", b])
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(sync.stderr.contains("more than a day ahead"), "\(sync.stderr)")

        // The stamp wins the conflict on every replica alike, but an edit on top of it
        // takes this device's clock instead of inheriting 2100.
        let show =
            try JSONSerialization.jsonObject(
                with: Data(try CommandRunner.run(["show", document, "--json", "--store", a]).stdout.utf8))
            as! [String: Any]
        let future = show["revision"] as! String
        let edit = try CommandRunner.run([
            "edit", document, "--base", future, "--title", "On top", "--json", "--store", a,
        ])
        #expect(edit.status == 0, "\(edit.stderr)")
        let onTop =
            (try JSONSerialization.jsonObject(with: Data(edit.stdout.utf8)) as! [String: Any])["revision"]
            as! String
        let after =
            try JSONSerialization.jsonObject(
                with: Data(try CommandRunner.run(["versions", document, "--json", "--store", a]).stdout.utf8))
            as! [[String: Any]]
        let row = after.first { $0["revision"] as? String == onTop }
        #expect(row?["futureTimestamp"] as? Bool == false, "\(String(describing: row))")
        #expect((row?["modified"] as? String)?.hasPrefix("2100") == false)

        // A resolution supersedes every head: one head left. (Its stamp derives from the
        // heads', so that replicas resolving alike write the same revision; the next edit
        // on top of it takes this device's clock again.)
        #expect(try CommandRunner.run(["resolve", document, "--accept", "--store", a]).status == 0)
        #expect(try CommandRunner.run(["edit", document, "--title", "After", "--store", a]).status == 0)
        let heads =
            (try JSONSerialization.jsonObject(
                with: Data(try CommandRunner.run(["versions", document, "--json", "--store", a]).stdout.utf8))
            as! [[String: Any]])
            .filter { $0["state"] as? String == "current" || $0["state"] as? String == "conflict" }
        #expect(heads.count == 1 && heads[0]["futureTimestamp"] as? Bool == false, "\(heads)")

        // Import flags it too.
        let package = directory.appendingPathComponent("future.survey").path
        #expect(
            try CommandRunner.run([
                "export", document, "--revision", future, "--package", package, "--store", a,
            ]).status == 0)
        let c = directory.appendingPathComponent("c").path
        #expect(try CommandRunner.run(["init", "--store", c]).status == 0)
        let imported = try CommandRunner.run(["import", package, "--store", c])
        #expect(
            imported.status == 0 && imported.stderr.contains("more than a day ahead"), "\(imported.stderr)")
    }
}
