import Foundation
import Testing
import Versions

@_spi(Testing) @testable import SurveyStore

/// What the library says mends a failure is for an app to show: it names no command of
/// the `survey` tool, and it comes as a ``Remedy`` value a tool or app phrases in terms of
/// its own (the command line's wording is `survey`'s, checked by its own tests).
@Suite("Remedies an app can show")
struct RemedyTests {
    static func store() throws -> (SurveyStore, String) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "remedy-\(UUID().uuidString)"
        ).path
        return (try SurveyStore.create(at: path, deviceName: "laptop"), path)
    }

    /// Records an issue when `text` quotes a command or names an option.
    static func expectNoCommand(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(
            !text.contains("`") && !text.contains("--") && !text.contains("survey verify")
                && !text.contains("survey init"), "\(text)", sourceLocation: sourceLocation)
    }

    @Test(
        "A torn Store.plist is tornLayout, mended by writing the layout again; any other bad one has no remedy"
    )
    func tornLayout() throws {
        let (_, path) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let file = path + "/" + StoreLayout.layoutFile
        try Data().write(to: URL(fileURLWithPath: file))
        let torn = try #require(throws: StoreError.self) { try SurveyStore.open(at: path) }
        guard case .tornLayout(file, _) = torn else {
            Issue.record("\(torn)")
            return
        }
        #expect(torn.remedy == .writeLayoutAgain(path) && torn.errorCode == "damagedStore")
        #expect(torn.description == torn.problem + Remedy.writeLayoutAgain(path).advice)
        Self.expectNoCommand(torn.description)

        try Data("not a layout".utf8).write(to: URL(fileURLWithPath: file))
        let damaged = try #require(throws: StoreError.self) { try SurveyStore.open(at: path) }
        guard case .damagedStore(file, _) = damaged else {
            Issue.record("\(damaged)")
            return
        }
        #expect(damaged.remedy == nil && damaged.description == damaged.problem)
    }

    @Test(
        "Beside a revision that cannot be read yet, prune and merge say to let the copy finish or repair it, naming no command"
    )
    func unseenRevisions() throws {
        let (store, path) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (id, base) = try store.create(try Survey(title: "Base", items: []))
        _ = try store.save(try Survey(title: "One", items: []), to: id, base: base.id)
        _ = try store.save(try Survey(title: "Two", items: []), to: id, base: base.id)
        try FileManager.default.removeItem(
            atPath: path + "/" + StoreLayout.package(base.id, of: id) + "/" + StoreLayout.contentFile)

        let merge = try #require(throws: StoreError.self) { try store.resolveMerge(id, dryRun: true) }
        #expect(merge.remedy == .finishCopyThenMerge(count: 1))
        #expect(
            merge.description.hasSuffix(
                "; let the copy finish, or repair it from a replica that holds it intact, then merge, or resolve the conflict by keeping a head, accepting the winner or saving new content"
            ))
        Self.expectNoCommand(merge.description)

        let prune = try #require(throws: StoreError.self) { try store.prune(id) }
        #expect(prune.remedy == .finishCopyThenPrune(count: 1))
        #expect(
            prune.description == prune.problem
                + "; let the copy finish, or repair it from a replica that holds it intact, then prune")
        Self.expectNoCommand(prune.description)
    }

    @Test(
        "A document with no revision that can be read: opening it and listing the store say verifying names what is wrong"
    )
    func noReadableRevision() throws {
        let (store, path) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (id, first) = try store.create(try Survey(title: "Only", items: []))
        try Data("no metadata".utf8).write(
            to: URL(
                fileURLWithPath: path + "/" + StoreLayout.package(first.id, of: id) + "/"
                    + StoreLayout.metadataFile))

        let error = try #require(throws: StoreError.self) { try store.open(id) }
        #expect(error == .noReadableRevision(id, skipped: 1) && error.remedy == .verifyThenRepair)
        Self.expectNoCommand(error.description)

        let issues = try store.documentsReport().issues
        let issue = try #require(issues.first { $0.remedy != nil })
        #expect(issue.remedy == .verifyThenRepair)
        #expect(issue.description.hasSuffix(issue.message + Remedy.verifyThenRepair.advice))
        Self.expectNoCommand(issue.description)
    }

    @Test(
        "A document whose only revision is still being copied is named by the listing and is no readable document rather than none (it was 'there is no document', and a store of such copies was called empty)"
    )
    func onlyRevisionStillCopied() throws {
        let (store, path) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (id, first) = try store.create(try Survey(title: "Arriving", items: []))
        try FileManager.default.removeItem(
            atPath: path + "/" + StoreLayout.package(first.id, of: id) + "/" + StoreLayout.contentFile)
        let error = try #require(throws: StoreError.self) { try store.open(id) }
        #expect(error == .noReadableRevision(id, skipped: 1))
        let (documents, issues) = try store.documentsReport()
        #expect(documents.isEmpty)
        #expect(issues.map(\.path) == [path + "/" + StoreLayout.folder(of: id)])
        #expect(
            issues.first?.message
                == "no revision of this document is complete yet (1 is still being copied, or its copy was interrupted), so it is not listed until one is"
        )
    }

    @Test(
        "A current revision whose content is damaged is repaired from a replica; one whose content is no survey is replaced"
    )
    func unreadableWinner() throws {
        let (store, path) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: path) }
        // Damaged: the same size, other bytes.
        let (damaged, revision) = try store.create(try Survey(title: "Damaged", items: []))
        let content =
            path + "/" + StoreLayout.package(revision.id, of: damaged) + "/" + StoreLayout.contentFile
        var bytes = try Data(contentsOf: URL(fileURLWithPath: content))
        bytes[bytes.count - 2] ^= 0x20
        try bytes.write(to: URL(fileURLWithPath: content))
        // No survey: bytes that match their digest but are no property list, on top of a
        // first revision.
        let (malformed, first) = try store.create(try Survey(title: "Malformed", items: []))
        _ = try store.revisions.write(
            document: malformed, parents: [first], content: Data("no survey".utf8), formatVersion: 2)

        let issues = try store.documentsReport().issues
        let repair = try #require(issues.first { $0.path.hasSuffix(damaged.uuidString.lowercased()) })
        #expect(repair.remedy == .repairFromReplica)
        Self.expectNoCommand(repair.description)
        let replace = try #require(issues.first { $0.path.hasSuffix(malformed.uuidString.lowercased()) })
        #expect(replace.remedy == .replaceContent(malformed, otherHeads: [], hasHistory: true))
        #expect(
            replace.description.hasSuffix("; save new content on top, such as an earlier revision's content)")
        )
        Self.expectNoCommand(replace.description)
    }

    @Test(
        "Resolving by keeping a head that is no survey throws, naming its file, and writes nothing (a resolution carried it); another head, or content in a newer format, is kept; either head's remedy is the other kept"
    )
    func keepingNoSurvey() throws {
        let (store, path) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (id, base) = try store.create(try Survey(title: "Base", items: []))
        let good = try store.save(try Survey(title: "Good", items: []), to: id, base: base.id)
        // Written later, so the winner.
        let bad = try store.revisions.write(
            document: id, parents: [base], content: Data("no survey".utf8), formatVersion: 2)
        let graph = try store.graph(of: id)
        #expect(graph.winner?.id == bad.id && graph.heads.count == 2)
        let file = path + "/" + StoreLayout.package(bad.id, of: id) + "/" + StoreLayout.contentFile
        for resolution in [SurveyStore.Resolution.acceptWinner, .keep(bad.id)] {
            let error = try #require(throws: (any Error).self) { try store.resolve(id, resolution) }
            #expect("\(error)".hasPrefix(file + ":"), "\(resolution): \(error)")
            #expect(try store.graph(of: id).heads.map(\.id).sorted() == graph.heads.map(\.id).sorted())
        }
        // The remedy offers only another head that reads: none for the good head, whose
        // other head is the bad one.
        let noSurvey = try #require(throws: (any Error).self) { try store.survey(id, bad) }
        #expect(
            store.remedy(forUnreadable: noSurvey, of: id, revision: nil)
                == .replaceContent(id, otherHeads: [good.id], hasHistory: true, inConflict: true))
        #expect(
            store.remedy(forUnreadable: noSurvey, of: id, revision: good.id)
                == .replaceContent(id, otherHeads: [], hasHistory: true, inConflict: true))
        #expect(store.remedy(forUnreadable: noSurvey, of: id, revision: base.id) == nil)
        #expect(
            Remedy.replaceContent(id, otherHeads: [], hasHistory: true, inConflict: true).advice.hasSuffix(
                "; save new content on top of every head, such as an earlier revision's content)"))
        // A newer format's content cannot be checked here: keeping it keeps its bytes.
        let newer = try store.revisions.write(
            document: id, parents: [base], content: Data("format 3".utf8), formatVersion: 3)
        let kept = try #require(try store.resolve(id, .keep(newer.id)))
        #expect(kept.formatVersion == 3 && Set(kept.parents) == [good.id, bad.id, newer.id])
        #expect(try store.revisions.content(of: id, revision: kept) == Data("format 3".utf8))

        // A refusal changes nothing in the store: a copy of a pruned revision that came
        // back (as an engine brings one) is still there, which a resolution would remove.
        let (other, first) = try store.create(try Survey(title: "First", items: []))
        let middle = try store.save(try Survey(title: "Middle", items: []), to: other, base: first.id)
        let noSurveyHead = try store.revisions.write(
            document: other, parents: [middle], content: Data("no survey".utf8), formatVersion: 2)
        _ = try store.save(try Survey(title: "Winner", items: []), to: other, base: middle.id)
        let firstPackage = path + "/" + StoreLayout.package(first.id, of: other)
        let aside = path + "-aside"
        defer { try? FileManager.default.removeItem(atPath: aside) }
        try FileManager.default.copyItem(atPath: firstPackage, toPath: aside)
        #expect(try store.prune(other).contains(first.id))
        try FileManager.default.copyItem(atPath: aside, toPath: firstPackage)
        func tree() throws -> [String: Data] {
            var files: [String: Data] = [:]
            let enumerator = try #require(FileManager.default.enumerator(atPath: path))
            while let name = enumerator.nextObject() as? String {
                var isFolder: ObjCBool = false
                _ = FileManager.default.fileExists(atPath: path + "/" + name, isDirectory: &isFolder)
                files[name] =
                    isFolder.boolValue
                    ? Data() : try Data(contentsOf: URL(fileURLWithPath: path + "/" + name))
            }
            return files
        }
        let before = try tree()
        #expect(before.keys.contains { $0.hasSuffix(StoreLayout.packageName(first.id)) })
        #expect(throws: (any Error).self) { try store.resolve(other, .keep(noSurveyHead.id)) }
        #expect(try tree() == before)
    }

    @Test("A strict merge refused names no option of the command")
    func strictMergeRefused() throws {
        let (store, path) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (id, base) = try store.create(try Survey(title: "Base", items: []))
        _ = try store.save(try Survey(title: "One", items: []), to: id, base: base.id)
        _ = try store.save(try Survey(title: "Two", items: []), to: id, base: base.id)
        let refusal = try #require(throws: SurveyStore.MergeRefusal.self) {
            try store.resolveMerge(id, strict: true)
        }
        #expect(refusal.problem.hasSuffix(": the merge contests 1 field(s); nothing written"))
        Self.expectNoCommand(refusal.description)
    }

    @Test("A deleted document's error says how to restore it: keep an earlier revision, or save on top")
    func deletedDocument() throws {
        let (store, path) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (id, first) = try store.create(try Survey(title: "Gone", items: []))
        let deletion = try store.delete(id)
        let error = try #require(throws: DocumentDeletedError.self) { try store.open(id) }
        #expect(error.remedy == .restoreDeleted(id, deletion: deletion.id, restorable: first.id))
        #expect(
            error.description.hasSuffix(
                "; restore it by keeping revision \(first.id), or by saving content on top of the deletion, revision \(deletion.id)"
            ))
        Self.expectNoCommand(error.description)
    }
}
