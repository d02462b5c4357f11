import Foundation
import Packages
import Surveys
import Synchronization
import Testing
import Versions

@_spi(Testing) @testable import SurveyStore

/// A sync that fails part way publishes nothing it had not finished and leaves nothing
/// behind in either store: what it had written aside for the documents it read before
/// the failure is removed, on one worker or several.
@Suite("A failed sync leaves nothing behind")
struct SyncFailureTests {
    static func path(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent(
            "sync-failure-\(name)-\(UUID().uuidString)"
        )
        .path
    }

    /// The entries of `store`'s temporary folder.
    static func temporaries(_ store: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: store + "/" + StoreLayout.temporaryFolder)
    }

    @Test(
        "A lock that fails with EIO on the last document to sync: the earlier documents' packages, already written aside in the other store, are removed",
        arguments: [1, 2])
    func failedLockPartWay(concurrency: Int) throws {
        let source = Self.path("source"), target = Self.path("target")
        defer {
            try? FileManager.default.removeItem(atPath: source)
            try? FileManager.default.removeItem(atPath: target)
        }
        let good = try SurveyStore.create(at: source, deviceName: "laptop")
        var documents: [UUID] = []
        for index in 0..<4 {
            documents.append(try good.create(try Survey(title: "Survey \(index)", items: [])).id)
        }
        // Sync goes through the documents in the order of their ids; the last one's lock
        // cannot be taken in the source store.
        let last = documents.max { $0.uuidString < $1.uuidString }!
        let lockName = StoreLayout.folderName(of: last) + ".lock"
        var calls = SystemCalls.live
        calls.openat = { directory, name, flags, mode in
            name.hasSuffix(lockName) ? .failure(.io) : SystemCalls.live.openat(directory, name, flags, mode)
        }
        let failing = try SurveyStore.open(at: source, calls: calls)
        let receiving = try SurveyStore.create(at: target, deviceName: "phone")
        let error = #expect(throws: OperationError.self) {
            try failing.sync(with: receiving, concurrency: concurrency)
        }
        #expect(error?.errorCode == "io", "\(String(describing: error))")
        #expect(try Self.temporaries(target) == [], "written aside and never published")
        #expect(try Self.temporaries(source) == [])
        #expect(try receiving.documents().isEmpty)
        #expect(receiving.verify().filter { !$0.isNote }.isEmpty)

        // The same sync without the failure copies every document.
        let report = try good.sync(with: receiving, concurrency: concurrency)
        #expect(report.sent == documents.count)
        #expect(Set(try receiving.documents().map(\.id)) == Set(documents))
        #expect(try Self.temporaries(target) == [])
    }

    @Test(
        "A repair whose listing of the other store's documents fails with EIO fails naming the error; it does not say the other store has no copy of a document whose folder a file stands in"
    )
    func repairListingTheOtherStoreFails() throws {
        let local = Self.path("local"), remote = Self.path("remote")
        defer {
            try? FileManager.default.removeItem(atPath: local)
            try? FileManager.default.removeItem(atPath: remote)
        }
        let theirs = try SurveyStore.create(at: remote, deviceName: "phone")
        let id = try theirs.create(try Survey(title: "Kept there", items: [])).id
        let mine = try SurveyStore.create(at: local, deviceName: "laptop")
        // A file where that document's folder belongs: named by the repair, which says
        // whether the other store has the document to copy.
        let blocked = local + "/" + StoreLayout.folder(of: id)
        #expect(FileManager.default.createFile(atPath: blocked, contents: Data("x".utf8)))
        let clean = try mine.repair(from: SurveyStore.openForReading(at: remote))
        #expect(clean.unrepaired.map(\.message).contains { !$0.contains("does not have it either") })
        // The other store's first listing (its documents, for that message) fails.
        let armed = Atomic<Bool>(true)
        var calls = SystemCalls.live
        calls.listDirectory = { descriptor in
            if armed.compareExchange(expected: true, desired: false, ordering: .sequentiallyConsistent)
                .exchanged
            {
                return .failure(.io)
            }
            return SystemCalls.live.listDirectory(descriptor)
        }
        let failing = try SurveyStore.openForReading(at: remote, calls: calls)
        let error = #expect(throws: FileSystemError.self) { try mine.repair(from: failing) }
        #expect(error?.errno == .io, "\(String(describing: error))")
        let fired = !armed.load(ordering: .sequentiallyConsistent)
        #expect(fired, "the hook did not run")
    }
}
