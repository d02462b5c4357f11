import Foundation
import Surveys
import TestSupport
import Testing
import Versions

@testable import SurveyStore

/// Entries a user may not read (another user's files, a folder made unreadable with
/// `chmod 000`, or kept so by a sync engine that copies modes): one such document is left
/// out of listings, named, and the others are listed.
@Suite("Unreadable entries", .serialized)
struct UnreadableEntryTests {
    /// What is made unreadable in the second document.
    enum Entry: String, CaseIterable, CustomTestStringConvertible {
        case documentFolder, package, metadata
        var testDescription: String { rawValue }
    }

    @Test(
        "list and conflicts list every other document when one document's folder, package or metadata cannot be read, and name it (they failed whole, exit 1)",
        CommandRunner.needs("setpriv"), arguments: Entry.allCases)
    func listingPassesOverUnreadableDocument(_ entry: Entry) throws {
        let directory = try CommandRunner.temporaryDirectory()
        let root = directory.appendingPathComponent("store").path
        let store = try SurveyStore.create(at: root, deviceName: "laptop")
        let (readable, _) = try store.create(try Survey(title: "Readable", items: []))
        let (unreadable, revision) = try store.create(try Survey(title: "Hidden away", items: []))
        let folder = root + "/" + StoreLayout.folder(of: unreadable)
        let package = root + "/" + StoreLayout.package(revision.id, of: unreadable)
        let target =
            switch entry {
            case .documentFolder: folder
            case .package: package
            case .metadata: package + "/" + StoreLayout.metadataFile
            }
        try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: target)
        defer {
            try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: target)
            try? FileManager.default.removeItem(at: directory)
        }
        var prefix: [String] = []
        if getuid() == 0 {
            // root reads anything: the commands run as nobody instead.
            guard let setpriv = CommandRunner.requireTool("setpriv") else { return }
            prefix = [setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
        }
        let list = try CommandRunner.run(["list", "--json", "--store", root], prefix: prefix)
        #expect(list.status == 0, "\(list.stderr)")
        let rows = try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]]
        #expect(rows?.map { $0["id"] as? String } == [readable.uuidString.lowercased()], "\(list.stdout)")
        #expect(
            list.stderr.contains("warning: \(folder): cannot be read")
                && list.stderr.contains("Permission denied"),
            "\(list.stderr)")
        let conflicts = try CommandRunner.run(["conflicts", "--store", root], prefix: prefix)
        #expect(conflicts.status == 0, "\(conflicts.stderr)")
        #expect(conflicts.stderr.contains(folder), "\(conflicts.stderr)")
    }
}
