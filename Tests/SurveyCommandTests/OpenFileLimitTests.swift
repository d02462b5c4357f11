import Foundation
import PropertyList
import SurveyStore
import Testing
import Versions

/// Commands over many documents under a low limit of open files (`ulimit -n`): a sync, an
/// import and a migration of hundreds of documents work under any limit, as they do under
/// Linux's usual 1,024 or macOS's 256, rather than failing with "Too many open files" once
/// a store has more documents than the limit.
@Suite("Many documents under a low limit of open files", .serialized)
struct OpenFileLimitTests {
    /// Runs `survey` with the soft limit of open files at `limit`.
    static func run(_ arguments: [String], limit: Int) throws -> CommandRunner.Result {
        try CommandRunner.run(arguments, prefix: limiting(to: limit))
    }

    /// A prefix for ``CommandRunner/run(_:in:environment:executable:prefix:input:timeLimit:)``
    /// that runs the rest of the command line with the limit of open files at `limit`.
    static func limiting(to limit: Int) -> [String] {
        ["/bin/sh", "-c", "ulimit -n \(limit) && exec \"$0\" \"$@\""]
    }

    /// A store at `path` with `count` documents of one revision each, written by an app
    /// of format 1 (so that `migrate` has them to migrate).
    static func store(at path: String, documents count: Int) throws {
        _ = try SurveyStore.create(at: path, deviceName: "old app")
        let revisions = RevisionStore(
            root: path, device: Device(id: "old-app-1", name: "old app"), wallClock: { 1_700_000_000_000 })
        let content = try PropertyList.dictionary([
            "title": .string("Old"),
            "items": .array([.dictionary(["title": .string("Name"), "type": .string("TextField")])]),
        ]).xmlData()
        for index in 1...count {
            let id = UUID(uuidString: String(format: "%08x-0000-4000-8000-000000000000", index))!
            _ = try revisions.write(document: id, parents: [], content: content, formatVersion: 1)
        }
    }

    static func documents(_ store: String) throws -> [[String: Any]] {
        let result = try CommandRunner.run(["list", "--json", "--store", store])
        #expect(result.status == 0, "\(result.stderr)")
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]] ?? []
    }

    static func expectClean(_ store: String) throws {
        let verify = try CommandRunner.run(["verify", "--store", store])
        #expect(verify.status == 0 && verify.stdout.contains("clean"), "\(verify.stdout)\(verify.stderr)")
    }

    @Test(
        "survey sync of 300 documents both ways with ulimit -n 40: every document copied, both stores clean (it failed with Too many open files: a batch held every document folder it wrote into open, and 32 documents were read at once)"
    )
    func syncUnderLowLimit() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let a = directory.appendingPathComponent("a").path
        let b = directory.appendingPathComponent("b").path
        try Self.store(at: a, documents: 300)
        #expect(try CommandRunner.run(["init", "--store", b, "--device", "phone"]).status == 0)
        #expect(try CommandRunner.run(["new", "--store", b, "--title", "On the phone"]).status == 0)

        let result = try Self.run(["sync", b, "--json", "--store", a], limit: 40)
        #expect(result.status == 0, "\(result.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        #expect(report?["sent"] as? Int == 300 && report?["received"] as? Int == 1, "\(result.stdout)")
        #expect(try Self.documents(a).count == 301)
        #expect(try Self.documents(b).count == 301)
        try Self.expectClean(a)
        try Self.expectClean(b)
    }

    @Test(
        "survey import of 300 packages with ulimit -n 40: all imported (it failed: a batch of 256 held each document's lock open at once)"
    )
    func importUnderLowLimit() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (_, copies) = try ImportManyTests.packages(300, in: directory)
        let store = directory.appendingPathComponent("imported").path
        #expect(try CommandRunner.run(["init", "--store", store]).status == 0)

        let result = try Self.run(["import", "--store", store] + copies, limit: 40)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try Self.documents(store).count == 300)
        try Self.expectClean(store)
    }

    @Test(
        "survey migrate of 150 format-1 documents with ulimit -n 40: every one migrated (it failed: a batch of 128 held each document's lock open at once)"
    )
    func migrateUnderLowLimit() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("old").path
        try Self.store(at: store, documents: 150)

        let result = try Self.run(["migrate", "--store", store], limit: 40)
        #expect(result.status == 0, "\(result.stderr)")
        let formats = try Self.documents(store).map { $0["formatVersion"] as? Int }
        #expect(formats.count == 150 && formats.allSatisfy { $0 == 2 }, "\(formats)")
        try Self.expectClean(store)
    }
}
