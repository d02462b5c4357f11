import Foundation
import Surveys
import Testing
import Versions

@testable import SurveyStore

/// The library's answers behind the command's messages: look-ups by prefix, deletion and
/// restore, device names, export destinations.
@Suite("Look-ups, deletion and restore")
struct LookupAndDeletionTests {
    static func store() throws -> (SurveyStore, String) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("lookup-\(UUID().uuidString)").path
        return (try SurveyStore.create(at: path, deviceName: "laptop"), path)
    }

    static let survey = try! Survey(title: "T", items: [])

    @Test("document(matching:) takes a unique prefix in any letter case")
    func documentLookup() throws {
        let (store, _) = try Self.store()
        let a = UUID(uuidString: "AAAA0000-0000-4000-8000-000000000001")!
        let c = UUID(uuidString: "CCCC0000-0000-4000-8000-000000000001")!
        try store.create(Self.survey, id: a)
        try store.create(Self.survey, id: c)
        #expect(try store.document(matching: "aa") == a)
        #expect(try store.document(matching: "CcC") == c)
    }

    @Test("An ambiguous prefix throws with every match; none throws noSuchDocument")
    func documentLookupErrors() throws {
        let (store, _) = try Self.store()
        let a = UUID(uuidString: "BBBB0000-0000-4000-8000-000000000001")!
        let b = UUID(uuidString: "BBBB0000-0000-4000-8000-000000000002")!
        try store.create(Self.survey, id: a)
        try store.create(Self.survey, id: b)
        #expect(throws: LookupError.ambiguousDocument("bbbb", [a, b].sorted { $0.uuidString < $1.uuidString })) {
            _ = try store.document(matching: "bbbb")
        }
        #expect(throws: LookupError.noSuchDocument("nope")) { _ = try store.document(matching: "nope") }
        #expect(throws: LookupError.noSuchDocument("")) { _ = try store.document(matching: "") }
        #expect(try store.document(matching: "BBBB0000-0000-4000-8000-000000000002") == b)
    }

    @Test("Deleting twice writes one deletion; opening says who deleted it and what can be kept; keep restores it")
    func deleteAndRestore() throws {
        let (store, _) = try Self.store()
        let (id, first) = try store.create(Self.survey)
        let deletion = try store.delete(id)
        #expect(try store.deletion(of: id) == deletion)
        #expect(try store.delete(id) == deletion)
        #expect(try store.graph(of: id).revisions.count == 2)
        do {
            _ = try store.open(id)
            Issue.record("a deleted document opened")
        } catch let error as DocumentDeletedError {
            #expect(error.deletion == deletion && error.restorable == [first.id])
            #expect(error.description.contains("\"laptop\""))
        }
        let restored = try #require(try store.resolve(id, .keep(first.id.description)))
        #expect(restored.parents == [deletion.id])
        #expect(try store.deletion(of: id) == nil)
        #expect(try store.open(id).survey == Self.survey)
    }

    @Test("resolve refuses a revision to keep that does not exist, in conflict or not")
    func resolveUnknownKeep() throws {
        let (store, _) = try Self.store()
        let (id, _) = try store.create(Self.survey)
        #expect(throws: StoreError.noSuchRevision("9-junk")) { try store.resolve(id, .keep("9-junk")) }
    }

    @Test("Device names that XML cannot carry, or empty, are refused before a store is created")
    func deviceNames() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("device-\(UUID().uuidString)").path
        for name in ["a\rb", "", "bell\u{7}"] {
            #expect(throws: DeviceNameError.self) { try SurveyStore.create(at: path, deviceName: name) }
        }
        #expect(!FileManager.default.fileExists(atPath: path))
        try SurveyStore.checkDeviceName("Ada's phone\twith a tab")
    }

    @Test("Export destinations: the folder must exist; a package never lands on something there")
    func exportDestinations() throws {
        let (_, path) = try Self.store()
        #expect(throws: ExportError.noSuchFolder(path + "/missing")) { try SurveyStore.checkExportDestination(path + "/missing/x", replacing: true) }
        #expect(throws: ExportError.exists(path + "/Documents")) { try SurveyStore.checkExportDestination(path + "/Documents", replacing: false) }
        #expect(throws: ExportError.isFolder(path + "/Documents")) { try SurveyStore.checkExportDestination(path + "/Documents", replacing: true) }
        try SurveyStore.checkExportDestination(path + "/Store.plist", replacing: true)
        try SurveyStore.checkExportDestination("relative-name", replacing: false)
    }
}
