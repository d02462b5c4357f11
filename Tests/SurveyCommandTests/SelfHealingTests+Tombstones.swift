import Foundation
import Testing

/// A tombstone torn by a copy (an interrupted `cp` or file-sync engine) beside the package
/// it stands for: the package holds its revision's only intact metadata.
extension SelfHealingTests {
    /// A store with one document of four revisions (titles a to d), a copy of it taken then,
    /// and revision 3's tombstone torn beside its package (its metadata's first 300 bytes).
    static func tornTombstone(in directory: URL) throws -> (
        store: String, copy: String, id: String, tombstone: String, metadata: Data
    ) {
        let store = directory.appendingPathComponent("store").path
        let copy = directory.appendingPathComponent("copy").path
        #expect(try CommandRunner.run(["init", "--store", store, "--device", "laptop"]).status == 0)
        let id = try CommandRunner.run(["new", "--store", store, "--title", "a"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        for title in ["b", "c", "d"] {
            #expect(try CommandRunner.run(["edit", id, "--store", store, "--title", title]).status == 0)
        }
        try FileManager.default.copyItem(atPath: store, toPath: copy)
        let folder = store + "/Documents/" + id
        let package = try #require(
            try FileManager.default.contentsOfDirectory(atPath: folder).first {
                $0.hasPrefix("3-") && $0.hasSuffix(".survey")
            })
        let metadata = try Self.bytes(folder + "/" + package + "/DocumentMetadata.plist")
        let tombstone = folder + "/" + package.dropLast(".survey".count) + ".pruned"
        try metadata.prefix(300).write(to: URL(fileURLWithPath: tombstone))
        return (store, copy, id, tombstone, metadata)
    }

    @Test(
        "prune replaces a torn tombstone beside its package with the revision's metadata before it removes the package (it removed the package and kept the torn tombstone, so the revision's metadata was intact nowhere and verify never came clean)"
    )
    func pruneReplacesTornTombstone() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (store, _, id, tombstone, metadata) = try Self.tornTombstone(in: directory)

        let prune = try CommandRunner.run(["prune", "--store", store])
        #expect(prune.status == 0, "\(prune.stderr)")
        #expect(try Self.bytes(tombstone) == metadata, "the tombstone holds the revision's metadata")
        let remaining = try FileManager.default.contentsOfDirectory(atPath: store + "/Documents/" + id)
        #expect(remaining.filter { $0.hasSuffix(".pruned") }.count == 3, "\(remaining)")
        #expect(remaining.filter { $0.hasSuffix(".survey") }.count == 1, "\(remaining)")
        let verify = try CommandRunner.run(["verify", "--store", store])
        #expect(verify.status == 0 && verify.stdout.hasPrefix("clean"), "\(verify.stdout)\(verify.stderr)")
        let shown = try CommandRunner.run(["show", id, "--store", store])
        #expect(shown.status == 0 && shown.stdout.hasPrefix("d\n"), "\(shown.stdout)\(shown.stderr)")
    }

    @Test(
        "A damaged tombstone is repaired only from another store's tombstone: where the other store holds the revision whole, verify --repair-from says to remove the damaged file and prunes nothing, and an empty file under a merge base's tombstone name never makes a sync prune that base on either side (it did, and the merge turned two-way)"
    )
    func damagedTombstoneIsNoPrune() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (store, copy, id, tombstone, _) = try Self.tornTombstone(in: directory)
        try FileManager.default.removeItem(atPath: String(tombstone.dropLast(".pruned".count)) + ".survey")
        let repair = try CommandRunner.run(["verify", "--store", store, "--repair-from", copy])
        #expect(repair.status == 1, "\(repair.stdout)\(repair.stderr)")
        #expect(
            repair.stderr.contains("the tombstone is damaged, and the other store holds")
                && repair.stderr.contains("remove the damaged file"), "\(repair.stderr)")
        #expect(try Self.bytes(tombstone).count == 300, "left as it is")
        // Removed, the revision comes back from the other store.
        try FileManager.default.removeItem(atPath: tombstone)
        #expect(try CommandRunner.run(["sync", copy, "--store", store]).status == 0)
        for side in [store, copy] {
            let verify = try CommandRunner.run(["verify", "--store", side])
            #expect(verify.status == 0, "\(side): \(verify.stdout)\(verify.stderr)")
        }
        #expect(try CommandRunner.run(["show", id, "--store", store]).stdout.hasPrefix("d\n"))

        // A conflict whose merge base prune keeps, and an empty file under its tombstone's name.
        let a = directory.appendingPathComponent("a").path, b = directory.appendingPathComponent("b").path
        #expect(try CommandRunner.run(["init", "--store", a]).status == 0)
        let doc = try CommandRunner.run(["new", "--store", a, "--title", "base"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        try FileManager.default.copyItem(atPath: a, toPath: b)
        #expect(try CommandRunner.run(["edit", doc, "--store", a, "--title", "from a"]).status == 0)
        #expect(try CommandRunner.run(["edit", doc, "--store", b, "--title", "from b"]).status == 0)
        #expect(try CommandRunner.run(["sync", b, "--store", a]).status == 0)
        let folder = a + "/Documents/" + doc
        let base = try #require(
            try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasPrefix("1-") })
        try Data().write(to: URL(fileURLWithPath: folder + "/" + base.dropLast(".survey".count) + ".pruned"))
        for _ in 0..<2 { _ = try CommandRunner.run(["sync", b, "--store", a]) }
        _ = try CommandRunner.run(["prune", "--store", a])
        _ = try CommandRunner.run(["prune", "--store", b])
        for side in [a, b] {
            #expect(
                FileManager.default.fileExists(atPath: side + "/Documents/" + doc + "/" + base), "\(side)")
            let merge = try CommandRunner.run(["resolve", doc, "--merge", "--dry-run", "--store", side])
            #expect(merge.stdout.contains("from base 1-"), "\(side): \(merge.stdout)")
        }
    }

    @Test(
        "A whole package renamed as another revision, or moved into another document's folder, is never replaced by verify --repair-from or sync from an intact copy of the revision its name says (it was, and the revision it held, a head no other store had, was gone)"
    )
    func misplacedPackageIsNeverReplaced() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let a = directory.appendingPathComponent("a").path, b = directory.appendingPathComponent("b").path
        #expect(try CommandRunner.run(["init", "--store", a]).status == 0)
        let doc = try CommandRunner.run(["new", "--store", a, "--title", "one"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try CommandRunner.run(["edit", doc, "--store", a, "--title", "two"]).status == 0)
        try FileManager.default.copyItem(atPath: a, toPath: b)
        let only = try CommandRunner.run(["edit", doc, "--store", a, "--title", "only in a"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        // The head only a holds, renamed as revision 2 (whose package is removed).
        let folder = a + "/Documents/" + doc
        let second = try #require(
            try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasPrefix("2-") })
        try FileManager.default.removeItem(atPath: folder + "/" + second)
        try FileManager.default.moveItem(
            atPath: folder + "/" + only + ".survey", toPath: folder + "/" + second)
        let content = try Self.bytes(folder + "/" + second + "/Survey.plist")

        let repair = try CommandRunner.run(["verify", "--store", a, "--repair-from", b])
        #expect(repair.status == 1, "\(repair.stdout)\(repair.stderr)")
        #expect(
            repair.stderr.contains(
                "the package holds revision \(only), not \(second.dropLast(".survey".count)): rename it \(only).survey"
            ),
            "\(repair.stderr)")
        _ = try CommandRunner.run(["sync", b, "--store", a])
        #expect(try Self.bytes(folder + "/" + second + "/Survey.plist") == content, "never replaced")
        // Renamed back, it is the head again, and a sync brings revision 2 back.
        try FileManager.default.moveItem(
            atPath: folder + "/" + second, toPath: folder + "/" + only + ".survey")
        #expect(try CommandRunner.run(["sync", b, "--store", a]).status == 0)
        #expect(try CommandRunner.run(["show", doc, "--store", b]).stdout.hasPrefix("only in a\n"))
        for side in [a, b] { #expect(try CommandRunner.run(["verify", "--store", side]).status == 0) }
    }
}
