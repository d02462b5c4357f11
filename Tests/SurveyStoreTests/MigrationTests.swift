import Foundation
import Packages
import PropertyList
import Surveys
import Synchronization
import Testing
import Versions

@_spi(Testing) @testable import SurveyStore

@Suite("Migrating winners in older formats")
struct MigrationTests {
    /// Format-1 content with one item.
    static func formatOne(_ item: [String: PropertyList]) throws -> Data {
        try PropertyList.dictionary(["title": .string("Old"), "items": .array([.dictionary(item)])]).xmlData()
    }

    /// Format-1 content whose one text field is answered `answer`.
    static func named(_ answer: String) throws -> Data {
        try formatOne([
            "title": .string("Name"), "type": .string("TextField"),
            "result": .dictionary(["text": .string(answer)]),
        ])
    }

    /// A new store in a folder of its own, and that folder.
    static func store() throws -> (SurveyStore, String) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "migration-\(UUID().uuidString)"
        ).path
        return (try SurveyStore.create(at: path, deviceName: "laptop"), path)
    }

    @Test(
        "migrate reports a winner that does not migrate to a valid survey, with its error, and migrates every other document (it threw at the first)"
    )
    func invalidWinnerIsReported() throws {
        let (store, path) = try Self.store()
        defer { try? SurveyStore.removeFolder(path) }
        let good = try Self.named("Ada")
        let bad = try Self.formatOne([
            "title": .string("b"), "type": .string("Binary"), "value1": .string("n"), "value2": .string("y"),
            "result": .dictionary(["text": .string("2")]),
        ])
        let ids = (1...3).map { UUID(uuidString: String(format: "%08X-0000-4000-8000-000000000000", $0))! }
        var winners: [RevisionMetadata] = []
        for (index, id) in ids.enumerated() {
            winners.append(
                try store.revisions.write(
                    document: id, parents: [], content: index == 1 ? bad : good, formatVersion: 1))
        }
        for dryRun in [true, false] {
            let report = try store.migrate(dryRun: dryRun)
            #expect(report.migrated.map(\.document) == [ids[0], ids[2]])
            #expect(report.migrated.allSatisfy { ($0.to == nil) == dryRun })
            #expect(report.notMigrated.map(\.document) == [ids[1]])
            #expect(report.notMigrated.map(\.from) == [winners[1]])
            let error = try #require(report.notMigrated.first?.error as? SurveyError)
            #expect(error.rule == .answerOutOfRange && error.position == 1 && error.title == "b", "\(error)")
        }
        #expect(try store.documents().map(\.revision.formatVersion) == [2, 1, 2])
        let again = try store.migrate()
        #expect(again.migrated.isEmpty && again.notMigrated.map(\.document) == [ids[1]])
    }

    @Test(
        "A document whose lock file is a folder is reported as not migrated, and every other document is migrated (the first such lock stopped the whole run)"
    )
    func unusableLockIsReported() throws {
        let (store, path) = try Self.store()
        defer { try? SurveyStore.removeFolder(path) }
        let ids = (1...3).map { UUID(uuidString: String(format: "%08X-0000-4000-8000-000000000000", $0))! }
        for id in ids {
            _ = try store.revisions.write(
                document: id, parents: [], content: try Self.named("Ada"), formatVersion: 1)
        }
        try FileManager.default.createDirectory(
            atPath: path + "/" + StoreLayout.lock(of: ids[1]), withIntermediateDirectories: true)
        let report = try store.migrate()
        #expect(report.migrated.map(\.document) == [ids[0], ids[2]])
        #expect(report.notMigrated.map(\.document) == [ids[1]])
        let error = try #require(report.notMigrated.first?.error as? FileSystemError)
        #expect(error.isUnusableLock, "\(error)")
        #expect(try store.documents().map(\.revision.formatVersion) == [2, 1, 2])
    }

    @Test(
        "migrate leaves a document whose folder holds a revision it cannot read yet (which may supersede the winner) and names it, and names a document no revision of which can be read; once the copies complete, it migrates the newest (it migrated the superseded winner, a conflict once the copy completed, and passed over the other, saying every winner was current)"
    )
    func unreadableRevisionsHoldMigrationBack() throws {
        let (store, path) = try Self.store()
        defer { try? SurveyStore.removeFolder(path) }
        let ids = (1...3).map { UUID(uuidString: String(format: "%08X-0000-4000-8000-000000000000", $0))! }
        let first = try store.revisions.write(
            document: ids[0], parents: [], content: try Self.named("Ada"), formatVersion: 1)
        let child = try store.revisions.write(
            document: ids[0], parents: [first], content: try Self.named("Grace"), formatVersion: 1)
        let only = try store.revisions.write(
            document: ids[1], parents: [], content: try Self.named("Ada"), formatVersion: 1)
        _ = try store.revisions.write(
            document: ids[2], parents: [], content: try Self.named("Ada"), formatVersion: 1)
        // Half-copied: each metadata file has arrived, neither content file yet.
        let contents = [(ids[0], child.id), (ids[1], only.id)].map { id, revision in
            path + "/" + StoreLayout.package(revision, of: id) + "/" + StoreLayout.contentFile
        }
        for content in contents {
            try FileManager.default.moveItem(atPath: content, toPath: content + ".away")
        }
        for dryRun in [true, false] {
            let report = try store.migrate(dryRun: dryRun)
            #expect(report.migrated.map(\.document) == [ids[2]], "\(report.migrated)")
            #expect(report.notMigrated.map(\.document) == [ids[0]] && report.notMigrated.first?.from == first)
            #expect(
                report.notMigrated.first?.error as? StoreError == .unseenForMigration(ids[0], [child.id]),
                "\(report.notMigrated)")
            #expect(
                report.unreadable.map(\.path) == [path + "/" + StoreLayout.folder(of: ids[1])]
                    && report.unreadable.first?.remedy == .verifyThenRepair, "\(report.unreadable)")
        }
        for content in contents {
            try FileManager.default.moveItem(atPath: content + ".away", toPath: content)
        }
        let report = try store.migrate()
        #expect(report.migrated.map(\.document) == [ids[0], ids[1]], "\(report.migrated)")
        #expect(
            report.migrated.first?.from == child && report.notMigrated.isEmpty && report.unreadable.isEmpty)
        #expect(try !store.graph(of: ids[0]).isInConflict)
    }

    @Test(
        "A revision that cannot be read but that the winner's history names (the winner's parent, half-copied or damaged) does not hold migration back: it cannot supersede the winner"
    )
    func unreadableAncestorDoesNotHoldBack() throws {
        let (store, path) = try Self.store()
        defer { try? SurveyStore.removeFolder(path) }
        let id = UUID(uuidString: "00000001-0000-4000-8000-000000000000")!
        let first = try store.revisions.write(
            document: id, parents: [], content: try Self.named("Ada"), formatVersion: 1)
        let child = try store.revisions.write(
            document: id, parents: [first], content: try Self.named("Grace"), formatVersion: 1)
        try FileManager.default.removeItem(
            atPath: path + "/" + StoreLayout.package(first.id, of: id) + "/" + StoreLayout.contentFile)
        let report = try store.migrate()
        #expect(
            report.migrated.map(\.document) == [id] && report.migrated.first?.from == child
                && report.notMigrated.isEmpty, "\(report.migrated) \(report.notMigrated)")
    }

    @Test(
        "An edit read before a migration and saved after it is in conflict with the migration, and the two merge cleanly, keeping the edit (as README says)"
    )
    func editRacingMigrationMergesCleanly() throws {
        let (store, path) = try Self.store()
        defer { try? SurveyStore.removeFolder(path) }
        let id = UUID(uuidString: "00000001-0000-4000-8000-000000000000")!
        let old = try store.revisions.write(
            document: id, parents: [], content: try Self.named("Ada"), formatVersion: 1)
        // The editor read the winner (format 1, migrated in memory), then migrate ran.
        var edited = try store.survey(id, old)
        edited.title = "Edited"
        #expect(try store.migrate().migrated.map(\.document) == [id])
        _ = try store.save(edited, to: id, base: old.id)
        #expect(try store.graph(of: id).isInConflict)
        let plan = try #require(try store.mergePlan(id))
        #expect(
            plan.contestedCount == 0 && plan.result?.survey == edited, "\(String(describing: plan.result))")
    }

    @Test("migrate names the documents whose winners are in a newer format, and leaves them as they are")
    func newerWinnersAreNamed() throws {
        let (store, path) = try Self.store()
        defer { try? SurveyStore.removeFolder(path) }
        let ids = (1...3).map { UUID(uuidString: String(format: "%08X-0000-4000-8000-000000000000", $0))! }
        let newer = try store.revisions.write(
            document: ids[0], parents: [], content: Data("a later format".utf8), formatVersion: 3)
        _ = try store.revisions.write(
            document: ids[1], parents: [], content: try Self.named("Ada"), formatVersion: 1)
        _ = try store.create(try Survey(title: "Current", items: []), id: ids[2])
        for dryRun in [true, false] {
            let report = try store.migrate(dryRun: dryRun)
            #expect(report.newer.map(\.id) == [ids[0]] && report.newer.first?.revision == newer)
            #expect(report.migrated.map(\.document) == [ids[1]] && report.notMigrated.isEmpty)
        }
        #expect(try store.graph(of: ids[0]).revisions.count == 1)
    }

    @Test(
        "migrate decides again under each document's lock: a revision saved after the winners were read is not migrated over (that made a conflict), and a winner in an older format that arrived meanwhile is the one migrated"
    )
    func winnerChangedBeforeTheLock() throws {
        let (store, path) = try Self.store()
        defer { try? SurveyStore.removeFolder(path) }
        let old = try Self.named("Ada")
        let saved = UUID(uuidString: "00000001-0000-4000-8000-000000000000")!
        let synced = UUID(uuidString: "00000002-0000-4000-8000-000000000000")!
        let firstOfSaved = try store.revisions.write(
            document: saved, parents: [], content: old, formatVersion: 1)
        let firstOfSynced = try store.revisions.write(
            document: synced, parents: [], content: old, formatVersion: 1)
        // Between reading the winners and taking each document's lock (as another process
        // would): a save in the current format to one, a revision in the older format to
        // the other.
        let other = try SurveyStore.open(at: path)
        let fired = Locked<Set<UUID>>([])
        var calls = SystemCalls.live
        calls.openat = { directory, name, flags, mode in
            for id in [saved, synced]
            where name.hasSuffix(StoreLayout.folderName(of: id) + ".lock")
                && fired.withLock({ $0.insert(id).inserted })
            {
                if id == saved {
                    _ = try? other.save(try Survey(title: "Edited", items: []), to: id, base: firstOfSaved.id)
                } else {
                    _ = try? other.revisions.write(
                        document: id, parents: [firstOfSynced], content: Self.named("Grace"), formatVersion: 1
                    )
                }
            }
            return SystemCalls.live.openat(directory, name, flags, mode)
        }
        let hooked = try SurveyStore.open(at: path, calls: calls)
        let report = try hooked.migrate()
        #expect(fired.withLock { $0 } == [saved, synced], "the hook did not run")
        // The save stands alone: nothing was migrated over it.
        let edited = try store.revisions.graph(of: saved).graph
        #expect(edited.heads.count == 1, "\(edited.heads.map(\.id))")
        #expect(try store.open(saved).survey.title == "Edited")
        // The older revision that arrived is the one migrated.
        let migrated = try store.revisions.graph(of: synced).graph
        #expect(migrated.heads.count == 1, "\(migrated.heads.map(\.id))")
        let winner = try #require(migrated.winner)
        #expect(winner.formatVersion == SurveyStore.formatVersion)
        #expect(winner.parents.count == 1 && winner.parents[0] != firstOfSynced.id)
        #expect(try store.open(synced).survey.items.first?.answer == .text("Grace"))
        #expect(report.migrated.map(\.document) == [synced])
        #expect(report.migrated.first?.from.id == winner.parents.first)
        #expect(report.notMigrated.isEmpty)
        #expect(store.verify().isEmpty)
    }

    @Test(
        "FormatCheck.check fails a document folder it cannot list (an I/O error) instead of passing it with nothing checked"
    )
    func checkOfAnUnlistableFolder() throws {
        let (store, path) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (listed, _) = try store.create(try Survey(title: "Listed", items: []))
        let (unlistable, _) = try store.create(try Survey(title: "Unlistable", items: []))
        let folderName = StoreLayout.folderName(of: unlistable)
        var calls = SystemCalls.live
        calls.openat = { directory, name, flags, mode in
            name.hasSuffix(folderName) && flags & O_DIRECTORY != 0
                ? .failure(.io) : SystemCalls.live.openat(directory, name, flags, mode)
        }
        let results = FormatCheck.check(path, calls: calls)
        let folder = path + "/" + StoreLayout.folder(of: unlistable)
        let failed = try #require(results.first { $0.path == folder }, "\(results)")
        #expect(failed.status == .invalid)
        #expect(
            failed.message?.contains("Input/output error") == true, "\(String(describing: failed.message))")
        #expect(
            results.contains { $0.status == .current && $0.document == listed.uuidString.lowercased() },
            "\(results)")
        // The store itself unlistable: one failure, not a store without documents.
        calls.openat = { directory, name, flags, mode in
            name.hasSuffix(StoreLayout.documentsFolder) && flags & O_DIRECTORY != 0
                ? .failure(.io) : SystemCalls.live.openat(directory, name, flags, mode)
        }
        let whole = FormatCheck.check(path, calls: calls)
        #expect(whole.map(\.status) == [.invalid], "\(whole)")
    }
}
