import Foundation
import PropertyList
import Testing
import Versions

@testable import SurveyStore

@Suite("Migrating winners in older formats")
struct MigrationTests {
    /// Format-1 content with one item.
    static func formatOne(_ item: [String: PropertyList]) throws -> Data {
        try PropertyList.dictionary(["title": .string("Old"), "items": .array([.dictionary(item)])]).xmlData()
    }

    @Test(
        "migrate reports a winner that does not migrate to a valid survey, with its error, and migrates every other document (it threw at the first)"
    )
    func invalidWinnerIsReported() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "migration-\(UUID().uuidString)"
        ).path
        defer { try? SurveyStore.removeFolder(path) }
        let store = try SurveyStore.create(at: path, deviceName: "laptop")
        let good = try Self.formatOne([
            "title": .string("Name"), "type": .string("TextField"),
            "result": .dictionary(["text": .string("Ada")]),
        ])
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
}
