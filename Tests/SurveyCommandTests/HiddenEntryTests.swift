import Foundation
import Surveys
import TestSupport
import Testing
import Versions

@testable import SurveyStore

/// What Finder, copies to other file systems and sync engines leave in a store under
/// hidden names (`.DS_Store`, AppleDouble `._` files, rsync's, Syncthing's and Unison's
/// temporaries) is no part of it: every command passes over it, as docs/FORMAT.md says.
@Suite("Hidden entries", .serialized)
struct HiddenEntryTests {
    /// A store with one document at its second revision, and hidden entries at every
    /// level: in `Documents/`, in the document folder, beside and inside both packages,
    /// and a complete, verifying revision that supersedes the head under a hidden name.
    struct Fixture {
        var root: String
        var id: UUID
        var first: RevisionMetadata
        var head: RevisionMetadata
        var hidden: [String]

        init() throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("hidden-\(UUID())").path
            let store = try SurveyStore.create(at: root, deviceName: "laptop")
            (id, first) = try store.create(try Survey(title: "First", items: []))
            head = try store.save(try Survey(title: "Head", items: []), to: id, base: first.id)
            let folder = root + "/" + StoreLayout.folder(of: id)
            let headPackage = StoreLayout.packageName(head.id)
            let firstPackage = StoreLayout.packageName(first.id)
            hidden = [
                root + "/Documents/.DS_Store", folder + "/.DS_Store", folder + "/._" + headPackage,
                folder + "/" + firstPackage + "/.DS_Store", folder + "/" + headPackage + "/._Survey.plist",
                folder + "/" + headPackage + "/.Survey.plist.Xy12Ab",
                folder + "/" + headPackage + "/.syncthing.Survey.plist.tmp",
                folder + "/~syncthing~" + firstPackage + ".tmp",
                folder + "/" + headPackage + "/.rsync-partial",
            ]
            for path in hidden.dropLast() {
                try Data("left behind".utf8).write(to: URL(fileURLWithPath: path))
            }
            try FileManager.default.createDirectory(atPath: hidden.last!, withIntermediateDirectories: false)
            // A child of the head, complete and verifying, under a hidden name.
            let content = try Survey(title: "Hidden", items: []).plistData()
            let later = head.timestamp.milliseconds + 1_000
            var clock = HybridClock(wallClock: { later })
            let child = try RevisionMetadata.make(
                documentID: id, parents: [head], content: content, formatVersion: SurveyStore.formatVersion,
                device: Device(id: "other-device", name: "phone"), clock: &clock)
            let package = folder + "/." + StoreLayout.packageName(child.id)
            try FileManager.default.createDirectory(atPath: package, withIntermediateDirectories: false)
            try child.plistData().write(to: URL(fileURLWithPath: package + "/" + StoreLayout.metadataFile))
            try content.write(to: URL(fileURLWithPath: package + "/" + StoreLayout.contentFile))
            hidden.append(package)
        }
    }

    @Test(
        "Readers pass over hidden entries without a warning, and a revision under a hidden name is none"
    )
    func readersPassOver() throws {
        let fixture = try Fixture()
        defer { try? FileManager.default.removeItem(atPath: fixture.root) }
        let id = fixture.id.uuidString.lowercased()
        let store = ["--store", fixture.root]
        for command in [
            ["list"] + store, ["conflicts"] + store, ["show", id] + store, ["versions", id] + store,
            ["check", fixture.root],
        ] {
            let result = try CommandRunner.run(command)
            #expect(result.status == 0, "\(command): \(result.stderr)")
            #expect(!result.stderr.contains("warning"), "\(command) warns: \(result.stderr)")
        }
        let show = try CommandRunner.run(["show", id, "--json", "--store", fixture.root])
        let shown = try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [String: Any]
        #expect(shown?["revision"] as? String == fixture.head.id.description, "\(show.stdout)")
        // The control: a stray file that is not hidden is still named.
        let stray = fixture.root + "/" + StoreLayout.folder(of: fixture.id) + "/notes.txt"
        try Data("notes".utf8).write(to: URL(fileURLWithPath: stray))
        let list = try CommandRunner.run(["list", "--store", fixture.root])
        #expect(list.stderr.contains("warning: \(stray): an unexpected file"), "\(list.stderr)")
    }

    @Test("verify names each hidden entry in a note and calls the store clean")
    func verifyNotes() throws {
        let fixture = try Fixture()
        defer { try? FileManager.default.removeItem(atPath: fixture.root) }
        let verify = try CommandRunner.run(["verify", "--json", "--store", fixture.root])
        #expect(verify.status == 0, "\(verify.stdout)")
        let report = try JSONSerialization.jsonObject(with: Data(verify.stdout.utf8)) as? [String: Any]
        #expect(report?["clean"] as? Bool == true)
        let notes = (report?["notes"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
        #expect(Set(notes) == Set(fixture.hidden), "\(verify.stdout)")
    }

    @Test("A document holding hidden entries is listed from the summary cache")
    func cacheKeepsTheRow() throws {
        let fixture = try Fixture()
        defer { try? FileManager.default.removeItem(atPath: fixture.root) }
        // A row is recorded only from files changed before the listing's clock tick.
        usleep(20_000)
        let list = try CommandRunner.run(["list", "--store", fixture.root])
        #expect(list.status == 0, "\(list.stderr)")
        let report = try SurveyStore.openForReading(at: fixture.root).summariesReport()
        #expect(report.fromCache == 1)
        #expect(report.documents.map(\.revision.id) == [fixture.head.id])
    }

    @Test("sync copies no hidden entry, and prune removes a package with what is hidden in it")
    func syncAndPrune() throws {
        let fixture = try Fixture()
        defer { try? FileManager.default.removeItem(atPath: fixture.root) }
        let other = fixture.root + "-other"
        defer { try? FileManager.default.removeItem(atPath: other) }
        _ = try SurveyStore.create(at: other, deviceName: "phone")
        let sync = try CommandRunner.run(["sync", other, "--store", fixture.root])
        #expect(sync.status == 0, "\(sync.stderr)")
        let copied = try FileManager.default.subpathsOfDirectory(atPath: other + "/Documents")
        #expect(
            !copied.contains { $0.split(separator: "/").contains { $0.hasPrefix(".") } }, "\(copied)")
        #expect(copied.contains { $0.hasSuffix(StoreLayout.packageName(fixture.head.id)) })
        let prune = try CommandRunner.run(["prune", "--store", fixture.root])
        #expect(prune.status == 0, "\(prune.stderr)")
        let folder = fixture.root + "/" + StoreLayout.folder(of: fixture.id)
        #expect(
            !FileManager.default.fileExists(atPath: folder + "/" + StoreLayout.packageName(fixture.first.id)))
        #expect(
            FileManager.default.fileExists(atPath: folder + "/" + StoreLayout.tombstoneName(fixture.first.id))
        )
        // Hidden entries outside the pruned package are left where they are.
        #expect(FileManager.default.fileExists(atPath: folder + "/.DS_Store"))
    }
}

/// A document whose folder holds nothing readable is named as such, not as missing.
@Suite("A document with nothing readable")
struct NothingReadableTests {
    @Test(
        "Opening a document whose every package was skipped exits 65, says how many items were skipped, and names each in a warning"
    )
    func everyPackageSkipped() throws {
        let store = try StoreCommandTests.Store()
        defer { try? FileManager.default.removeItem(at: store.directory) }
        let (id, revision) = try store.makeDocument()
        let metadata = "\(store.path)/Documents/\(id)/\(revision).survey/DocumentMetadata.plist"
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: metadata))
        for command in [
            ["show", id], ["versions", id], ["export", id], ["edit", id, "--title", "New"], ["diff", id],
        ] {
            let result = try store.run(command)
            #expect(result.status == 65, "\(command): \(result.status) \(result.stderr)")
            #expect(
                result.stderr.contains(
                    "error: document \(id) has no revision that can be read: 1 item in its folder was skipped"
                ),
                "\(command): \(result.stderr)")
            #expect(result.stderr.contains("warning: \(store.path)/Documents/\(id)/\(revision).survey"))
        }
        let json = try store.run(["show", id, "--json"])
        let error = (try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])?[
            "error"]
        #expect((error as? [String: Any])?["code"] as? String == "noReadableRevision", "\(json.stdout)")
        // A folder with nothing in it is no document at all.
        try FileManager.default.removeItem(atPath: "\(store.path)/Documents/\(id)/\(revision).survey")
        let empty = try store.run(["show", id])
        #expect(empty.status == 66, "\(empty.stderr)")
        #expect(empty.stderr.contains("error: there is no document \(id)"), "\(empty.stderr)")
    }
}
