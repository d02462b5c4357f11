import Foundation
import Surveys
import Testing
import Versions

@_spi(Testing) @testable import SurveyStore

/// A tombstone brought by another replica removes this store's copy of a pruned revision
/// only once a revision that supersedes it can be read in its place.
@Suite("Copies of pruned revisions")
struct PrunedCopyTests {
    /// A store with one document at its first revision (`head`), a tombstone for that
    /// revision (another device pruned it), and a child of it whose content is `content`,
    /// written with a digest that matches: a package that verifies.
    static func storeWithTombstonedHead(childContent content: Data) throws -> (
        store: SurveyStore, id: UUID, head: RevisionMetadata, path: String
    ) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pruned-\(UUID())").path
        let store = try SurveyStore.create(at: path, deviceName: "laptop")
        let (id, head) = try store.create(try Survey(title: "Kept", items: []))
        var clock = HybridClock(wallClock: { head.timestamp.milliseconds + 1_000 })
        let child = try RevisionMetadata.make(
            documentID: id, parents: [head], content: content, formatVersion: SurveyStore.formatVersion,
            device: Device(id: "other-device", name: "phone"), clock: &clock)
        let package = path + "/" + StoreLayout.package(child.id, of: id)
        try FileManager.default.createDirectory(atPath: package, withIntermediateDirectories: false)
        try child.plistData().write(to: URL(fileURLWithPath: package + "/" + StoreLayout.metadataFile))
        try content.write(to: URL(fileURLWithPath: package + "/" + StoreLayout.contentFile))
        try head.plistData().write(
            to: URL(fileURLWithPath: path + "/" + StoreLayout.tombstone(head.id, of: id)))
        return (store, id, head, path)
    }

    @Test("A successor whose content matches its digest but is no survey does not remove the copy")
    func unreadableSuccessorKeepsCopy() throws {
        let (store, id, head, path) = try Self.storeWithTombstonedHead(childContent: Data("garbage".utf8))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let content = path + "/" + StoreLayout.package(head.id, of: id) + "/" + StoreLayout.contentFile
        let before = try Data(contentsOf: URL(fileURLWithPath: content))
        // Every command that writes cleans the document first; prune then refuses the
        // unreadable winner.
        #expect(throws: StoreError.self) { _ = try store.prune(id) }
        _ = try store.documents()
        #expect(
            FileManager.default.contents(atPath: content) == before, "the only readable content was removed")
        #expect(try store.survey(id, head).title == "Kept")
    }

    @Test("verify names unreadable content that matches its digest once: PATH:LINE:COLUMN: message")
    func unreadableContentNamedOnce() throws {
        let (store, id, _, path) = try Self.storeWithTombstonedHead(childContent: Data("garbage".utf8))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let problem = try #require(store.verify().first { $0.path.hasSuffix(StoreLayout.contentFile) })
        #expect(problem.path.hasPrefix(path + "/Documents/\(id.uuidString.lowercased())/"))
        #expect(problem.description == problem.path + ":1:1: the document has no root element", "\(problem)")
    }

    @Test("A successor that reads as a survey removes the copy (the test above can fail)")
    func readableSuccessorRemovesCopy() throws {
        let readable = try Survey(title: "Newer", items: []).plistData()
        let (store, id, head, path) = try Self.storeWithTombstonedHead(childContent: readable)
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try store.prune(id)
        #expect(!FileManager.default.fileExists(atPath: path + "/" + StoreLayout.package(head.id, of: id)))
        #expect(try store.open(id).survey.title == "Newer")
    }

    /// ``storeWithTombstonedHead(childContent:)`` with a successor that reads as a survey:
    /// the head's package is a copy the next write that goes ahead removes (`copy`), and
    /// `child` the one current revision.
    static func storeWithRemovableCopy() throws -> (
        store: SurveyStore, id: UUID, path: String, copy: String, child: RevisionMetadata
    ) {
        let readable = try Survey(title: "Newer", items: []).plistData()
        let (store, id, head, path) = try storeWithTombstonedHead(childContent: readable)
        let child = try #require(try store.revisions.graph(of: id).graph.heads.first)
        return (store, id, path, path + "/" + StoreLayout.package(head.id, of: id), child)
    }

    @Test(
        "A write that refuses or finds nothing to do leaves a removable copy of a pruned revision where it is; the next write that goes ahead removes it (a refused save removed it first)"
    )
    func refusalsRemoveNothing() throws {
        let (store, id, path, copy, child) = try Self.storeWithRemovableCopy()
        defer { try? FileManager.default.removeItem(atPath: path) }
        // A save refused as not current, a save of the content already there, a resolution
        // of a document not in conflict.
        #expect(throws: StoreError.self) {
            try store.save(
                try Survey(title: "Stale", items: []), to: id, base: child.parents[0], ifCurrent: true)
        }
        #expect(FileManager.default.fileExists(atPath: copy), "a refused save removed the copy")
        #expect(try store.save(try Survey(title: "Newer", items: []), to: id, base: child.id) == child)
        #expect(FileManager.default.fileExists(atPath: copy), "a save that wrote nothing removed the copy")
        #expect(try store.resolve(id, .acceptWinner) == nil)
        #expect(
            FileManager.default.fileExists(atPath: copy), "a resolution with nothing to resolve removed it")
        // An import of a revision the document has.
        let exported = path + "-exported.survey"
        defer { try? FileManager.default.removeItem(atPath: exported) }
        _ = try store.exportPackage(id, revision: child.id, to: exported)
        #expect(try store.importPackage(at: exported) == .alreadyPresent(id, child))
        #expect(FileManager.default.fileExists(atPath: copy), "an import that added nothing removed it")
        // A save that goes ahead cleans the document first.
        let kept = path + "-copy"
        defer { try? FileManager.default.removeItem(atPath: kept) }
        try FileManager.default.copyItem(atPath: copy, toPath: kept)
        _ = try store.save(try Survey(title: "Newest", items: []), to: id, base: child.id)
        #expect(!FileManager.default.fileExists(atPath: copy))
        #expect(try store.open(id).survey.title == "Newest")
        // The copy brought back again: a deletion that goes ahead removes it, a deletion of
        // the deleted document does not.
        try FileManager.default.copyItem(atPath: kept, toPath: copy)
        let deletion = try store.deleteDocument(id)
        #expect(deletion.isNew)
        #expect(!FileManager.default.fileExists(atPath: copy), "a deletion that went ahead kept the copy")
        try FileManager.default.copyItem(atPath: kept, toPath: copy)
        let again = try store.deleteDocument(id)
        #expect(!again.isNew && again.revision == deletion.revision)
        #expect(FileManager.default.fileExists(atPath: copy), "a deletion of the deleted document removed it")
    }

    @Test(
        "A merge that writes its resolution removes a removable copy of a pruned revision, as every write that goes ahead does; a dry run and a document not in conflict leave it"
    )
    func mergeCleansWhenItWrites() throws {
        let (store, id, path, copy, child) = try Self.storeWithRemovableCopy()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let kept = path + "-copy"
        defer { try? FileManager.default.removeItem(atPath: kept) }
        try FileManager.default.copyItem(atPath: copy, toPath: kept)
        #expect(try store.resolveMerge(id) == nil)
        #expect(
            FileManager.default.fileExists(atPath: copy), "a merge with nothing to merge removed the copy")
        // Two saves on the same base make a conflict (the first removes the copy; it is
        // brought back).
        try store.save(try Survey(title: "A", items: []), to: id, base: child.id)
        try store.save(try Survey(title: "B", items: []), to: id, base: child.id)
        try FileManager.default.copyItem(atPath: kept, toPath: copy)
        #expect(try store.resolveMerge(id, dryRun: true)?.revision == nil)
        #expect(FileManager.default.fileExists(atPath: copy), "a dry run removed the copy")
        let merged = try #require(try store.resolveMerge(id))
        #expect(merged.revision != nil)
        #expect(
            !FileManager.default.fileExists(atPath: copy), "the merge wrote a revision and kept the copy")
        #expect(try store.revisions.graph(of: id).graph.heads.count == 1)
        #expect(store.verify().isEmpty)
    }

    /// A store whose one document has two revisions, the first pruned; returns the first
    /// revision's package path (gone) and the bytes its files held.
    static func storeWithPrunedFirstRevision() throws -> (
        store: SurveyStore, id: UUID, path: String, package: String, metadata: Data, content: Data
    ) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pruned-\(UUID())").path
        let store = try SurveyStore.create(at: path, deviceName: "laptop")
        let (id, first) = try store.create(try Survey(title: "First", items: []))
        try store.save(try Survey(title: "Second", items: []), to: id, base: first.id)
        let package = path + "/" + StoreLayout.package(first.id, of: id)
        let metadata = try Data(contentsOf: URL(fileURLWithPath: package + "/" + StoreLayout.metadataFile))
        let content = try Data(contentsOf: URL(fileURLWithPath: package + "/" + StoreLayout.contentFile))
        _ = try store.prune(id)
        return (store, id, path, package, metadata, content)
    }

    @Test(
        "A damaged copy of a pruned revision (metadata that does not verify) is a copy brought back: a note, no warning, removed by the next write"
    )
    func damagedCopyOfPrunedRevision() throws {
        let (store, id, path, package, _, content) = try Self.storeWithPrunedFirstRevision()
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(!FileManager.default.fileExists(atPath: package))
        // A copy comes back with its metadata torn.
        try FileManager.default.createDirectory(atPath: package, withIntermediateDirectories: false)
        try Data("<?xml".utf8).write(to: URL(fileURLWithPath: package + "/" + StoreLayout.metadataFile))
        try content.write(to: URL(fileURLWithPath: package + "/" + StoreLayout.contentFile))

        let reader = try SurveyStore.openForReading(at: path)
        #expect(try reader.skippedItems(of: id).isEmpty)
        let issues = reader.verify()
        #expect(issues.allSatisfy { $0.isNote }, "\(issues)")
        #expect(issues.contains { $0.path == package && $0.message.hasPrefix("a copy of a pruned revision") })
        // The next command that changes the document removes it.
        try store.save(try Survey(title: "Third", items: []), to: id)
        #expect(!FileManager.default.fileExists(atPath: package))
        #expect(store.verify().isEmpty)
    }

    @Test(
        "A half-made copy of a pruned revision (its metadata alone, as rsync leaves it, or an empty folder) is a copy brought back: a note, removed by the next write",
        arguments: ["metadata only", "empty folder"])
    func halfMadeCopyOfPrunedRevision(shape: String) throws {
        let (store, id, path, package, metadata, _) = try Self.storeWithPrunedFirstRevision()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try FileManager.default.createDirectory(atPath: package, withIntermediateDirectories: false)
        if shape == "metadata only" {
            try metadata.write(to: URL(fileURLWithPath: package + "/" + StoreLayout.metadataFile))
        }

        let reader = try SurveyStore.openForReading(at: path)
        let issues = reader.verify()
        #expect(issues.allSatisfy { $0.isNote }, "\(issues)")
        #expect(
            issues.contains { $0.path == package && $0.message.hasPrefix("a copy of a pruned revision") },
            "\(issues)")
        // check, as a CI step runs it on a store copied in, passes over it as verify does.
        let checked = FormatCheck.check(path)
        #expect(checked.allSatisfy { $0.status == .current } && !checked.isEmpty, "\(checked)")
        try store.save(try Survey(title: "Third", items: []), to: id)
        #expect(!FileManager.default.fileExists(atPath: package))
        #expect(store.verify().isEmpty)
    }

    @Test(
        "A link, a FIFO or a file where a pruned revision's package belonged: a note naming it, removed by the next write (the name only: a link's target stays)",
        arguments: ["link", "FIFO", "file"])
    func somethingElseWherePrunedPackageBelonged(shape: String) throws {
        let (store, id, path, package, _, _) = try Self.storeWithPrunedFirstRevision()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let target = path + "-canary"
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: target) }
        try Data("kept".utf8).write(to: URL(fileURLWithPath: target + "/" + StoreLayout.contentFile))
        switch shape {
        case "link": try FileManager.default.createSymbolicLink(atPath: package, withDestinationPath: target)
        case "FIFO": #expect(mkfifo(package, 0o600) == 0)
        default: try Data("x".utf8).write(to: URL(fileURLWithPath: package))
        }

        let issues = try SurveyStore.openForReading(at: path).verify()
        #expect(issues.allSatisfy { $0.isNote }, "\(issues)")
        #expect(
            issues.contains {
                $0.path == package && $0.message.contains("where a pruned revision's package belonged")
            }, "\(issues)")
        try store.save(try Survey(title: "Third", items: []), to: id)
        var status = stat()
        #expect(lstat(package, &status) != 0, "something is still in the package's place")
        #expect(store.verify().isEmpty)
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: target + "/" + StoreLayout.contentFile))
                == Data("kept".utf8))
    }
}
