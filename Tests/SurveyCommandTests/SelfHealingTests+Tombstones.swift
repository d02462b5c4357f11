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
        "A torn tombstone whose package is gone is repaired by verify --repair-from and by sync from a replica that holds the revision whole, its package's metadata being the tombstone's bytes (it said the other store had no copy of it)"
    )
    func tornTombstoneRepairedFromPackage() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (store, copy, id, tombstone, metadata) = try Self.tornTombstone(in: directory)
        // The package gone, as a prune before the fix above left it.
        try FileManager.default.removeItem(
            atPath: String(tombstone.dropLast(".pruned".count)) + ".survey")
        let before = try CommandRunner.run(["verify", "--store", store])
        #expect(before.status == 1, "\(before.stdout)\(before.stderr)")
        let damaged = directory.appendingPathComponent("damaged").path
        try FileManager.default.copyItem(atPath: store, toPath: damaged)

        let repair = try CommandRunner.run(["verify", "--store", store, "--repair-from", copy])
        #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
        #expect(
            repair.stderr.contains("\(tombstone): the tombstone did not verify; replaced by"),
            "\(repair.stderr)")
        #expect(try Self.bytes(tombstone) == metadata)
        #expect(try CommandRunner.run(["verify", "--store", store]).status == 0)

        let sync = try CommandRunner.run(["sync", copy, "--store", damaged])
        #expect(sync.status == 0, "\(sync.stderr)")
        let synced = damaged + "/" + tombstone.dropFirst(store.count)
        #expect(try Self.bytes(synced) == metadata)
        for side in [damaged, copy] {
            let verify = try CommandRunner.run(["verify", "--store", side])
            #expect(verify.status == 0, "\(side): \(verify.stdout)\(verify.stderr)")
        }
        #expect(try CommandRunner.run(["show", id, "--store", damaged]).stdout.hasPrefix("d\n"))
    }
}
