import Foundation
import Packages
import Surveys
import Testing
import Versions

@_spi(Testing) @testable import SurveyStore

/// Some file systems do not say in a directory listing what an entry is (`d_type` is
/// `DT_UNKNOWN`): the store looks, so that a link or a file in a document folder's or a
/// package's place is known as one there too.
@Suite("File systems whose listings do not say what an entry is")
struct UnknownKindTests {
    /// The real calls, except that every directory entry's kind is `.unknown`.
    static let withoutKinds: SystemCalls = {
        var calls = SystemCalls.live
        let list = calls.listDirectory
        calls.listDirectory = { descriptor in
            list(descriptor).map { entries in
                entries.map { SystemCalls.DirectoryEntry(name: $0.name, kind: .unknown) }
            }
        }
        return calls
    }()

    @Test(
        "A link where a document's folder or a revision's package belongs is removed, never followed, and the revisions synced in its place"
    )
    func linksInTheWay() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "unknown-kinds-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let a = try SurveyStore.create(
            at: directory.appendingPathComponent("a").path, deviceName: "a", calls: Self.withoutKinds)
        let b = try SurveyStore.create(at: directory.appendingPathComponent("b").path, deviceName: "b")
        let (zero, _) = try b.create(try Survey(title: "Zero", items: []))
        let (one, first) = try b.create(try Survey(title: "One", items: []))
        let (two, _) = try b.create(try Survey(title: "Two", items: []))
        let elsewhere = directory.appendingPathComponent("elsewhere").path
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: URL(fileURLWithPath: elsewhere + "/kept"))
        let folder = a.root + "/" + StoreLayout.folder(of: zero)
        try FileManager.default.createDirectory(
            atPath: a.root + "/" + StoreLayout.documentsFolder, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: folder, withDestinationPath: elsewhere)
        let package = a.root + "/" + StoreLayout.package(first.id, of: one)
        try FileManager.default.createDirectory(
            atPath: a.root + "/" + StoreLayout.folder(of: one), withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: package, withDestinationPath: elsewhere)

        let report = try a.sync(with: b)
        #expect(Set(report.repaired.map(\.path)) == [folder, package], "\(report.repaired)")
        #expect(report.damaged.isEmpty, "\(report.damaged)")
        #expect(report.received == 3)
        for id in [zero, one, two] { #expect(try a.open(id).survey.items.isEmpty) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere) == ["kept"])
        #expect(a.verify().filter { !$0.isNote }.isEmpty)
    }
}

/// A link in a document folder's place that cannot be removed holds back that document
/// alone.
@Suite("Names in the way that cannot be cleared")
struct UnclearableNameTests {
    @Test(
        "A link where a document's folder belongs that cannot be removed is named in damaged; every other document syncs"
    )
    func linkThatStays() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("unclearable-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let b = try SurveyStore.create(at: directory.appendingPathComponent("b").path, deviceName: "b")
        let (held, _) = try b.create(try Survey(title: "Held", items: []))
        let (other, _) = try b.create(try Survey(title: "Other", items: []))
        let name = StoreLayout.folderName(of: held)
        // Removing that one name is refused, as a file system may refuse it.
        var calls = SystemCalls.live
        let unlink = calls.unlinkat
        calls.unlinkat = { folder, path, isDirectory in
            path == name ? .failure(.notPermitted) : unlink(folder, path, isDirectory)
        }
        let a = try SurveyStore.create(
            at: directory.appendingPathComponent("a").path, deviceName: "a", calls: calls)
        try FileManager.default.createDirectory(
            atPath: a.root + "/" + StoreLayout.documentsFolder, withIntermediateDirectories: true)
        let folder = a.root + "/" + StoreLayout.folder(of: held)
        try FileManager.default.createSymbolicLink(atPath: folder, withDestinationPath: directory.path)

        let report = try a.sync(with: b)
        #expect(report.damaged.map(\.path) == [folder], "\(report.damaged)")
        #expect(report.damaged.first?.message.hasPrefix("nothing is copied to it") == true)
        #expect(report.repaired.isEmpty && report.received == 1)
        #expect(try a.open(other).survey.title == "Other")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: folder) == directory.path)
    }
}
