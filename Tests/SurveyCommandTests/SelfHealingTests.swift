import Foundation
import Testing

/// A `Survey.plist` torn under its final name on one replica (as a copy that was never
/// fsynced, then a power loss, leaves it) is repaired from another replica's intact copy
/// by `survey sync` and by `survey verify --repair-from`; a revision no replica has intact
/// is reported and left as it is.
@Suite("Self-healing replicas")
struct SelfHealingTests {
    /// Two stores holding the same three documents; returns them and the documents.
    static func replicas(in directory: URL) throws -> (a: String, b: String, ids: [String]) {
        let a = directory.appendingPathComponent("a").path, b = directory.appendingPathComponent("b").path
        #expect(try CommandRunner.run(["init", "--store", a]).status == 0)
        #expect(try CommandRunner.run(["init", "--store", b]).status == 0)
        var ids: [String] = []
        for index in 0..<3 {
            let created = try CommandRunner.run(["new", "--title", "Document \(index)", "--store", a])
            ids.append(created.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        #expect(try CommandRunner.run(["sync", b, "--store", a]).status == 0)
        return (a, b, ids)
    }

    /// The content file of a document's only revision.
    static func content(_ store: String, _ id: String) throws -> String {
        let folder = store + "/Documents/" + id
        let package = try #require(
            try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasSuffix(".survey") })
        return folder + "/" + package + "/Survey.plist"
    }

    /// Cuts the file short under its own name, keeping its first `bytes` bytes.
    static func tear(_ path: String, keeping bytes: Int) throws {
        #expect(truncate(path, off_t(bytes)) == 0)
    }

    @Test(
        "survey sync repairs a torn Survey.plist from the other replica, in either direction, and reports it")
    func syncRepairs() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (a, b, ids) = try Self.replicas(in: directory)
        let tornOnA = try Self.content(a, ids[0]), tornOnB = try Self.content(b, ids[1])
        let intactA = try Data(contentsOf: URL(fileURLWithPath: tornOnA))
        let intactB = try Data(contentsOf: URL(fileURLWithPath: tornOnB))
        try Self.tear(tornOnA, keeping: 40)
        try Self.tear(tornOnB, keeping: 0)
        #expect(try CommandRunner.run(["verify", "--store", a]).status == 1)
        // Reading it says what is damaged and how to repair it.
        let show = try CommandRunner.run(["show", ids[0], "--store", a])
        #expect(show.status == 65, "\(show.stderr)")
        #expect(
            show.stderr.contains("the content does not match the digest")
                && show.stderr.contains("`survey verify --store \(a) --repair-from OTHER_STORE`")
                && show.stderr.contains(
                    "`survey sync --store \(a) OTHER_STORE` does too when the damage changed the file's size"),
            "\(show.stderr)")

        let sync = try CommandRunner.run(["sync", b, "--json", "--store", a])
        #expect(sync.status == 0, "\(sync.stderr)")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(sync.stdout.utf8)) as? [String: Any])
        #expect(Set(report["repaired"] as? [String] ?? []) == [tornOnA, tornOnB], "\(report)")
        #expect((report["damaged"] as? [String])?.isEmpty == true)
        #expect(report["sent"] as? Int == 0 && report["received"] as? Int == 0)
        #expect(sync.stderr.contains("repaired: \(tornOnA)"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: tornOnA)) == intactA)
        #expect(try Data(contentsOf: URL(fileURLWithPath: tornOnB)) == intactB)
        for store in [a, b] {
            #expect(try CommandRunner.run(["verify", "--store", store]).status == 0)
            for id in ids { #expect(try CommandRunner.run(["show", id, "--store", store]).status == 0) }
        }
        // Text output names the repair too; a second sync has nothing to do.
        let again = try CommandRunner.run(["sync", b, "--store", a])
        #expect(again.status == 0 && !again.stdout.contains("repaired"), "\(again.stdout)")
    }

    @Test("survey verify --repair-from repairs from a copy and copies nothing else")
    func verifyRepairs() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (a, b, ids) = try Self.replicas(in: directory)
        // Something only b has, which a repair must not copy.
        let onlyB = try CommandRunner.run(["new", "--title", "Only on b", "--store", b]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let torn = try Self.content(a, ids[2])
        let intact = try Data(contentsOf: URL(fileURLWithPath: torn))
        try Self.tear(torn, keeping: 17)

        let verify = try CommandRunner.run(["verify", "--repair-from", b, "--json", "--store", a])
        #expect(verify.status == 0, "\(verify.stderr)")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(verify.stdout.utf8)) as? [String: Any])
        #expect(report["clean"] as? Bool == true)
        let repaired = try #require(report["repaired"] as? [[String: Any]])
        #expect(repaired.map { $0["path"] as? String } == [torn])
        #expect(try Data(contentsOf: URL(fileURLWithPath: torn)) == intact)
        #expect(
            try CommandRunner.run(["show", onlyB, "--store", a]).status == 66,
            "nothing but the repair was copied")
        #expect(!FileManager.default.fileExists(atPath: a + "/Documents/" + onlyB))
        let text = try CommandRunner.run(["verify", "--repair-from", b, "--store", a])
        #expect(text.status == 0 && text.stdout.contains("repaired 0 revision(s)"), "\(text.stdout)")
    }

    @Test(
        "A whole package moved into another document's folder: verify --repair-from names the document it belongs to and where it goes, not a missing copy"
    )
    func misplacedPackage() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (a, b, ids) = try Self.replicas(in: directory)
        let package = URL(fileURLWithPath: try Self.content(a, ids[0])).deletingLastPathComponent()
        let moved = a + "/Documents/" + ids[1] + "/" + package.lastPathComponent
        try FileManager.default.moveItem(atPath: package.path, toPath: moved)
        let repair = try CommandRunner.run(["verify", "--repair-from", b, "--store", a])
        #expect(repair.status == 1)
        #expect(
            repair.stderr.contains(
                "not repaired: \(moved): the package is a revision of document \(ids[0]), not of this one:"
                    + " move it back to Documents/\(ids[0])/"), "\(repair.stderr)")
        #expect(!repair.stderr.contains("has no copy"), "\(repair.stderr)")
        try FileManager.default.moveItem(atPath: moved, toPath: package.path)
        #expect(try CommandRunner.run(["verify", "--store", a]).status == 0)
    }

    @Test("when both copies are torn, sync and verify --repair-from report the revision and change nothing")
    func bothTorn() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (a, b, ids) = try Self.replicas(in: directory)
        let onA = try Self.content(a, ids[0]), onB = try Self.content(b, ids[0])
        try Self.tear(onA, keeping: 10)
        try Self.tear(onB, keeping: 20)
        let tornA = try Data(contentsOf: URL(fileURLWithPath: onA)),
            tornB = try Data(contentsOf: URL(fileURLWithPath: onB))

        let sync = try CommandRunner.run(["sync", b, "--json", "--store", a])
        #expect(sync.status == 1, "the damage that is left makes the exit say so: \(sync.stderr)")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(sync.stdout.utf8)) as? [String: Any])
        #expect(Set(report["damaged"] as? [String] ?? []) == [onA, onB], "\(report)")
        #expect((report["repaired"] as? [String])?.isEmpty == true)
        #expect(sync.stderr.contains(onA) && sync.stderr.contains(onB))

        let verify = try CommandRunner.run(["verify", "--repair-from", b, "--store", a])
        #expect(verify.status == 1)
        #expect(verify.stdout.contains("repaired 0 revision(s)"))
        #expect(verify.stderr.contains(onA))
        #expect(try Data(contentsOf: URL(fileURLWithPath: onA)) == tornA)
        #expect(try Data(contentsOf: URL(fileURLWithPath: onB)) == tornB)
        // The other documents are intact on both sides.
        for id in ids.dropFirst() { #expect(try CommandRunner.run(["show", id, "--store", a]).status == 0) }
    }

    @Test(
        "verify --repair-from says why the other store cannot repair a torn content file: it has no copy, has pruned it, has a damaged or half-copied one, or a link there (it said 'no other copy is intact' for each)"
    )
    func whyNotRepaired() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (a, b, ids) = try Self.replicas(in: directory)
        // A fourth document with two revisions on both sides, the first pruned on b.
        let fourth = try CommandRunner.run(["new", "--title", "Fourth", "--store", a]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let first = try Self.content(a, fourth)
        #expect(try CommandRunner.run(["sync", b, "--store", a]).status == 0)
        #expect(
            try CommandRunner.run(["edit", fourth, "--title", "Fourth, again", "--store", a]).status == 0)
        #expect(try CommandRunner.run(["sync", b, "--store", a]).status == 0)
        #expect(try CommandRunner.run(["prune", "--store", b]).status == 0)

        let torn = try ids.map { try Self.content(a, $0) } + [first]
        for file in torn { try Self.tear(file, keeping: 10) }
        let onB = try ids.map { try Self.content(b, $0) }
        let manager = FileManager.default
        try manager.removeItem(atPath: URL(fileURLWithPath: onB[0]).deletingLastPathComponent().path)
        try manager.removeItem(atPath: onB[1])
        try manager.createSymbolicLink(atPath: onB[1], withDestinationPath: "/etc/hostname")
        try Self.tear(onB[2], keeping: 20)

        let verify = try CommandRunner.run(["verify", "--repair-from", b, "--store", a])
        #expect(verify.status == 1)
        #expect(verify.stdout.contains("repaired 0 revision(s)\n4 problem(s)"), "\(verify.stdout)")
        let lines = verify.stderr.split(separator: "\n").map(String.init)
        let expected = [
            "\(b) has no copy of it", "\(b)'s copy cannot be read: ",
            "\(b)'s copy does not match its digest either",
            "\(b) has pruned it",
        ]
        for (file, why) in zip(torn, expected) {
            let naming = lines.filter { $0.hasPrefix("not repaired: \(file): ") }
            #expect(naming.count == 1, "\(verify.stderr)")
            #expect(
                naming.first?.hasPrefix(
                    "not repaired: \(file): the content does not match its digest, and \(why)")
                    == true, "\(verify.stderr)")
        }
        // A package a copy has not completed on b.
        #expect(try CommandRunner.run(["sync", b, "--store", a]).status == 1)
        try manager.removeItem(atPath: onB[2])
        let halfCopied = try CommandRunner.run(["verify", "--repair-from", b, "--store", a])
        #expect(
            halfCopied.stderr.contains(
                "not repaired: \(torn[2]): the content does not match its digest, and \(b)'s package of it has no content"
            ), "\(halfCopied.stderr)")
    }

    @Test(
        "A package whose metadata is torn and that no other store holds is named by sync (damaged, exit 1), both ways, and left as it is, in a document the other store lacks too (it was left out in silence); everything else syncs"
    )
    func tornMetadataNobodyHasIsNamed() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (a, b, ids) = try Self.replicas(in: directory)
        // A revision only b holds, its metadata cut short; and a new document on a.
        let edited = try CommandRunner.run(["edit", ids[0], "--title", "Only on b", "--json", "--store", b])
        let revision = try #require(
            (try JSONSerialization.jsonObject(with: Data(edited.stdout.utf8)) as? [String: Any])?["revision"]
                as? String)
        let package = b + "/Documents/\(ids[0])/\(revision).survey"
        let metadata = package + "/DocumentMetadata.plist"
        try Self.tear(metadata, keeping: 200)
        let torn = try Data(contentsOf: URL(fileURLWithPath: metadata))
        let fresh = try CommandRunner.run(["new", "--title", "New on a", "--store", a]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        // A document only b has, its second revision's metadata garbled: b's first
        // revision is copied, the damaged one named (it was left out in silence, exit 0).
        let onlyB = try CommandRunner.run(["new", "--title", "Only b has it", "--store", b]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let second = try #require(
            (try JSONSerialization.jsonObject(
                with: Data(
                    try CommandRunner.run(["edit", onlyB, "--title", "Again", "--json", "--store", b]).stdout
                        .utf8))
                as? [String: Any])?["revision"] as? String)
        let garbled = b + "/Documents/\(onlyB)/\(second).survey"
        try Data("junk\n".utf8).write(to: URL(fileURLWithPath: garbled + "/DocumentMetadata.plist"))
        for (store, other) in [(a, b), (b, a)] {
            let sync = try CommandRunner.run(["sync", other, "--json", "--store", store])
            #expect(sync.status == 1, "\(store): \(sync.stderr)")
            let report = try #require(
                try JSONSerialization.jsonObject(with: Data(sync.stdout.utf8)) as? [String: Any])
            #expect(Set(report["damaged"] as? [String] ?? []) == [package, garbled], "\(report)")
            #expect(sync.stderr.contains("error: \(package): the package is damaged"), "\(sync.stderr)")
            #expect(sync.stderr.contains("error: \(garbled): the package is damaged"), "\(sync.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: metadata)) == torn)
            #expect(!FileManager.default.fileExists(atPath: a + "/Documents/\(ids[0])/\(revision).survey"))
            #expect(!FileManager.default.fileExists(atPath: a + "/Documents/\(onlyB)/\(second).survey"))
        }
        #expect(try CommandRunner.run(["show", fresh, "--store", b]).status == 0)
        #expect(try CommandRunner.run(["show", onlyB, "--store", a]).stdout.contains("Only b has it"))
    }

    @Test(
        "sync's conflict lists follow both stores: a conflict that only damage made, repaired, is not called new; one the copy made on the other store (a child sent without its damaged parent) is, once; a sync that changes nothing reports none"
    )
    func conflictListsWithDamage() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func sync(_ store: String, with other: String) throws -> [String: Any] {
            let result = try CommandRunner.run(["sync", other, "--json", "--store", store])
            return try #require(
                try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        }
        func edit(_ store: String, _ id: String, _ title: String) throws -> String {
            let edited = try CommandRunner.run(["edit", id, "--title", title, "--json", "--store", store])
            return try #require(
                (try JSONSerialization.jsonObject(with: Data(edited.stdout.utf8)) as? [String: Any])?[
                    "revision"]
                    as? String)
        }
        func inConflict(_ store: String) throws -> Int {
            let listed = try CommandRunner.run(["conflicts", "--json", "--store", store])
            return (try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [Any])?.count ?? -1
        }
        // b's copy of a's second revision has its metadata torn: on b its child's parent
        // cannot be read, so b shows a conflict that a holds none of.
        let (a, b, ids) = try Self.replicas(in: directory)
        let second = try edit(a, ids[0], "Second")
        _ = try edit(a, ids[0], "Third")
        _ = try sync(a, with: b)
        try Self.tear(b + "/Documents/\(ids[0])/\(second).survey/DocumentMetadata.plist", keeping: 200)
        #expect(try inConflict(b) == 1)
        let repairing = try sync(b, with: a)
        #expect((repairing["repaired"] as? [String])?.count == 1, "\(repairing)")
        #expect((repairing["conflictsAppeared"] as? [String]) == [], "\(repairing)")
        #expect(try inConflict(a) == 0 && inConflict(b) == 0)

        // A revision only b holds, its content torn, under an intact child: the child
        // reaches a without it, and a is in conflict (its parent missing) until it comes.
        let id = ids[1]
        let onlyOnB = try edit(b, id, "Only on b")
        _ = try edit(b, id, "Its child")
        try Self.tear(b + "/Documents/\(id)/\(onlyOnB).survey/Survey.plist", keeping: 10)
        let first = try sync(b, with: a)
        #expect((first["conflictsAppeared"] as? [String]) == [id], "\(first)")
        #expect(try inConflict(a) == 1 && inConflict(b) == 0)
        for (store, other) in [(a, b), (b, a)] {
            let again = try sync(store, with: other)
            #expect((again["conflictsAppeared"] as? [String]) == [], "\(again)")
            #expect((again["conflictsResolved"] as? [String]) == [], "\(again)")
        }
    }

    @Test(
        "Metadata that does not verify is repaired from the other replica by sync (both ways) and by verify --repair-from, with damaged content after it; never copied over nor counted as received"
    )
    func metadataRepaired() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (a, b, ids) = try Self.replicas(in: directory)
        func metadata(_ store: String, _ id: String) throws -> String {
            try Self.content(store, id).replacingOccurrences(
                of: "Survey.plist", with: "DocumentMetadata.plist")
        }
        let garbledOnA = try metadata(a, ids[0]), otherOnB = try metadata(b, ids[1])
        let intact = try [garbledOnA, otherOnB].map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: garbledOnA))
        // On b, another revision's metadata (valid, but not this package's), and the
        // content torn as well.
        try FileManager.default.removeItem(atPath: otherOnB)
        try FileManager.default.copyItem(atPath: try metadata(b, ids[2]), toPath: otherOnB)
        let tornOnB = try Self.content(b, ids[1])
        let intactContent = try Data(contentsOf: URL(fileURLWithPath: tornOnB))
        try Self.tear(tornOnB, keeping: 30)
        let unreadable = try CommandRunner.run(["show", ids[0], "--store", a])
        #expect(unreadable.status == 65, "\(unreadable.stderr)")

        let sync = try CommandRunner.run(["sync", b, "--json", "--store", a])
        #expect(sync.status == 0, "\(sync.stderr)")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(sync.stdout.utf8)) as? [String: Any])
        #expect(Set(report["repaired"] as? [String] ?? []) == [garbledOnA, otherOnB, tornOnB], "\(report)")
        #expect(report["sent"] as? Int == 0 && report["received"] as? Int == 0, "\(report)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: garbledOnA)) == intact[0])
        #expect(try Data(contentsOf: URL(fileURLWithPath: otherOnB)) == intact[1])
        #expect(try Data(contentsOf: URL(fileURLWithPath: tornOnB)) == intactContent)
        for store in [a, b] {
            #expect(try CommandRunner.run(["verify", "--store", store]).status == 0)
            for id in ids { #expect(try CommandRunner.run(["show", id, "--store", store]).status == 0) }
        }
        let again = try CommandRunner.run(["sync", b, "--store", a])
        #expect(again.stdout.hasPrefix("sent 0, received 0") && !again.stdout.contains("repaired"))

        // verify --repair-from: one revision, its metadata and content both damaged.
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: garbledOnA))
        let tornOnA = try Self.content(a, ids[0])
        let contentA = try Data(contentsOf: URL(fileURLWithPath: tornOnA))
        try Self.tear(tornOnA, keeping: 5)
        let verify = try CommandRunner.run(["verify", "--repair-from", b, "--store", a])
        #expect(verify.status == 0, "\(verify.stderr)")
        #expect(verify.stdout.contains("repaired 1 revision(s)"), "\(verify.stdout)")
        #expect(verify.stderr.contains("repaired: \(garbledOnA): the metadata did not verify"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: garbledOnA)) == intact[0])
        #expect(try Data(contentsOf: URL(fileURLWithPath: tornOnA)) == contentA)
        // A copy the other store does not have is reported, and left as it is.
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: garbledOnA))
        let empty = directory.appendingPathComponent("empty").path
        #expect(try CommandRunner.run(["init", "--store", empty]).status == 0)
        let none = try CommandRunner.run(["verify", "--repair-from", empty, "--store", a])
        #expect(none.status == 1)
        #expect(none.stdout.contains("repaired 0 revision(s)"), "\(none.stdout)")
        #expect(none.stderr.contains("DocumentMetadata.plist:1:1: the document has no root element"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: garbledOnA)) == Data("garbage".utf8))
    }

    @Test(
        "A torn tombstone is repaired from the other replica by sync and by verify --repair-from (sync used to skip the document as unchanged)"
    )
    func tombstoneRepaired() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (a, b, ids) = try Self.replicas(in: directory)
        #expect(try CommandRunner.run(["edit", ids[0], "--title", "Edited", "--store", a]).status == 0)
        #expect(try CommandRunner.run(["prune", "--store", a]).status == 0)
        #expect(try CommandRunner.run(["sync", b, "--store", a]).status == 0)
        let folder = a + "/Documents/" + ids[0]
        let name = try #require(
            try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasSuffix(".pruned") })
        let tombstone = folder + "/" + name
        let intact = try Data(contentsOf: URL(fileURLWithPath: tombstone))
        try Self.tear(tombstone, keeping: 100)
        #expect(try CommandRunner.run(["verify", "--store", a]).status == 1)

        let sync = try CommandRunner.run(["sync", b, "--json", "--store", a])
        #expect(sync.status == 0, "\(sync.stderr)")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(sync.stdout.utf8)) as? [String: Any])
        #expect(report["repaired"] as? [String] == [tombstone], "\(report)")
        #expect(report["sent"] as? Int == 0 && report["received"] as? Int == 0, "\(report)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: tombstone)) == intact)
        #expect(try CommandRunner.run(["verify", "--store", a]).status == 0)

        try Self.tear(tombstone, keeping: 40)
        let verify = try CommandRunner.run(["verify", "--repair-from", b, "--store", a])
        #expect(verify.status == 0, "\(verify.stderr)")
        #expect(verify.stdout.contains("repaired 1 revision(s)"), "\(verify.stdout)")
        #expect(verify.stderr.contains("repaired: \(tombstone): the tombstone did not verify"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: tombstone)) == intact)
    }
}
