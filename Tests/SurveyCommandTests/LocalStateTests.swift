import Foundation
import Packages
import PropertyList
import SurveyStore
import Surveys
import Synchronization
import Testing
import Versions

/// Per-device state: kept under the local folder, never a revision, never synced, gone
/// with the document's content.
@Suite("Per-device state", .serialized)
struct LocalStateTests {
    static let state: [String: PropertyList] = [
        "LastOpenedItem": .integer(3), "SortOrder": .string("title"), "Scroll": .real(0.25),
    ]

    /// Every file under `Documents/`, with its bytes.
    static func documents(_ store: String) throws -> [String: Data] {
        var result: [String: Data] = [:]
        let root = store + "/" + StoreLayout.documentsFolder
        guard let enumerator = FileManager.default.enumerator(atPath: root) else { return result }
        while let relative = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isDirectory)
            result[relative] =
                isDirectory.boolValue
                ? Data("folder".utf8) : try Data(contentsOf: URL(fileURLWithPath: root + "/" + relative))
        }
        return result
    }

    /// A new store at `store` in a temporary folder of its own, its device "here"; the
    /// caller removes the folder.
    static func newStore() throws -> (directory: URL, path: String, store: SurveyStore) {
        let directory = try CommandRunner.temporaryDirectory()
        let path = directory.appendingPathComponent("store").path
        return (directory, path, try SurveyStore.create(at: path, deviceName: "here"))
    }

    @Test("Reading and writing it round-trips, leaves Documents/ byte-identical, and makes no revision")
    func roundTrip() throws {
        let (directory, path, store) = try Self.newStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (id, revision) = try store.create(Survey(title: "Stateful", items: []))
        #expect(try store.localState(of: id) == nil)
        #expect(try store.localState() == nil)
        let before = try Self.documents(path)
        try store.setLocalState(Self.state, of: id)
        try store.setLocalState(["Window": .string("list")])
        try store.setLocalState(Self.state.merging(["SortOrder": .string("date")]) { $1 }, of: id)
        #expect(try store.localState(of: id)?["SortOrder"] == .string("date"))
        #expect(try store.localState(of: id)?["LastOpenedItem"] == .integer(3))
        #expect(try store.localState() == ["Window": .string("list")])
        #expect(try Self.documents(path) == before)
        #expect(try store.graph(of: id).revisions.keys.map(\.self) == [revision.id])
        // On disk: a property list under the local folder, nothing left in tmp.
        let file = path + "/" + StoreLayout.stateFile(of: id)
        #expect(file.contains("/Local.nosync/state/"))
        #expect(
            try PropertyList(xml: Data(contentsOf: URL(fileURLWithPath: file)))["SortOrder"]
                == .string("date"))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: path + "/" + StoreLayout.temporaryFolder)
                .isEmpty)
        // Removing it.
        try store.setLocalState(nil, of: id)
        #expect(try store.localState(of: id) == nil)
        #expect(!FileManager.default.fileExists(atPath: file))
        // A document that does not exist, a read-only store, a damaged file.
        #expect(throws: StoreError.noSuchDocument(UUID(uuidString: "00000000-0000-0000-0000-000000000001")!))
        {
            try store.setLocalState(Self.state, of: UUID(uuidString: "00000000-0000-0000-0000-000000000001")!)
        }
        let reader = try SurveyStore.openForReading(at: path)
        #expect(throws: StoreError.readOnly(path)) { try reader.setLocalState(Self.state) }
        #expect(try reader.localState() == ["Window": .string("list")])
        try Data("<plist><array/></plist>".utf8).write(
            to: URL(fileURLWithPath: path + "/" + StoreLayout.storeStateFile))
        #expect(throws: LocalStateError.self) { try store.localState() }
        #expect(try Self.documents(path) == before)
    }

    @Test(
        "State over the 1 MiB its reader takes is refused and the old state stays (it was written, then could not be read)"
    )
    func oversizedStateRefused() throws {
        let (directory, _, store) = try Self.newStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (id, _) = try store.create(Survey(title: "Stateful", items: []))
        try store.setLocalState(Self.state, of: id)
        let large: [String: PropertyList] = ["Blob": .data(Data(count: 800_000))]  // over 1 MiB in base64
        for set in [{ try store.setLocalState(large, of: id) }, { try store.setLocalState(large) }] {
            let error = #expect(throws: FileSystemError.self) { try set() }
            #expect(error?.code == .tooLarge && error?.operation == .write, "\(String(describing: error))")
        }
        #expect(try store.localState(of: id) == Self.state)
        #expect(try store.localState() == nil)
        let fits: [String: PropertyList] = ["Blob": .data(Data(count: 700_000))]
        try store.setLocalState(fits, of: id)
        #expect(try store.localState(of: id) == fits)
    }

    @Test("It is removed once the document's content is gone (deleted, then pruned), not before")
    func removedWithContent() throws {
        let (directory, path, store) = try Self.newStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (id, _) = try store.create(Survey(title: "Doomed", items: []))
        let (kept, _) = try store.create(Survey(title: "Kept", items: []))
        try store.setLocalState(Self.state, of: id)
        try store.setLocalState(Self.state, of: kept)
        try store.delete(id)
        // Deleted but restorable: the state stays.
        #expect(try store.localState(of: id) == Self.state)
        let pruned = try CommandRunner.run(["prune", id.uuidString.lowercased(), "--store", path])
        #expect(pruned.status == 0, "\(pruned.stderr)")
        #expect(try store.localState(of: id) == nil)
        #expect(!FileManager.default.fileExists(atPath: path + "/" + StoreLayout.stateFile(of: id)))
        #expect(try store.localState(of: kept) == Self.state)
    }

    @Test("A document whose content is gone takes no new state; removing state still works")
    func noStateWithoutContent() throws {
        let (directory, path, store) = try Self.newStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (id, _) = try store.create(Survey(title: "Doomed", items: []))
        try store.delete(id)
        _ = try store.prune(id)
        #expect(throws: StoreError.noSuchDocument(id)) { try store.setLocalState(Self.state, of: id) }
        #expect(!FileManager.default.fileExists(atPath: path + "/" + StoreLayout.stateFile(of: id)))
        try store.setLocalState(nil, of: id)
        #expect(try store.localState(of: id) == nil)
    }

    @Test(
        "A new state waits for a prune holding the document's lock, and is refused once that prune took the content"
    )
    func stateAfterAConcurrentPrune() throws {
        let (directory, path, store) = try Self.newStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (id, _) = try store.create(Survey(title: "Doomed", items: []))
        let deletion = try store.delete(id)
        // The lock `survey prune` takes, held here while the state is set on another thread.
        let lock = try FileLock(path: path + "/" + StoreLayout.lock(of: id), mode: .exclusive, root: path)
        let outcome = Locked<Result<Void, any Error>?>(nil)
        let setter = Thread {
            let result = Result { try store.setLocalState(Self.state, of: id) }
            outcome.withLock { $0 = result }
        }
        setter.start()
        Thread.sleep(forTimeInterval: 0.5)
        #expect(outcome.withLock { $0 == nil }, "the state was set without waiting for the lock")
        // The prune, as the command makes it under that lock.
        let revisions = RevisionStore(root: path, device: store.device)
        #expect(try revisions.prune(id).count == 1)
        #expect(try revisions.graph(of: id).graph.winner?.id == deletion.id)
        lock.unlock()
        let deadline = Date().addingTimeInterval(30)
        while outcome.withLock({ $0 == nil }), Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        guard case .failure(let error) = outcome.withLock({ $0 }) else {
            Issue.record("state set for a document whose content is gone")
            return
        }
        #expect(error as? StoreError == .noSuchDocument(id), "\(error)")
        #expect(!FileManager.default.fileExists(atPath: path + "/" + StoreLayout.stateFile(of: id)))
    }

    @Test(
        "A store opened without Local.nosync/ makes nothing until it writes; per-device state then comes with the device identity"
    )
    func stateOfACopyWithoutLocalState() throws {
        let (directory, path, creator) = try Self.newStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (id, _) = try creator.create(Survey(title: "T", items: []))
        let local = path + "/" + StoreLayout.localFolder
        try FileManager.default.removeItem(atPath: local)
        let store = try SurveyStore.open(at: path)
        #expect(try store.localState(of: id) == nil)
        #expect(!FileManager.default.fileExists(atPath: local))
        try store.setLocalState(Self.state, of: id)
        #expect(try store.localState(of: id) == Self.state)
        let device = try PropertyList(
            xml: Data(contentsOf: URL(fileURLWithPath: path + "/" + StoreLayout.deviceFile)), file: nil)
        #expect(device["DeviceID"] == .string(store.device.id), "\(device)")
        #expect(try SurveyStore.open(at: path).device == store.device)
    }

    @Test("survey sync and rsync with the documented excludes never copy it", CommandRunner.needs("rsync"))
    func neverSynced() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let here = directory.appendingPathComponent("here").path
        let there = directory.appendingPathComponent("there").path
        let copy = directory.appendingPathComponent("copy").path
        let store = try SurveyStore.create(at: here, deviceName: "here")
        let (id, _) = try store.create(Survey(title: "Private", items: []))
        try store.setLocalState(Self.state, of: id)
        try store.setLocalState(["Window": .string("list")])
        _ = try SurveyStore.create(at: there, deviceName: "there")
        let sync = try CommandRunner.run(["sync", there, "--store", here])
        #expect(sync.status == 0, "\(sync.stderr)")
        let other = try SurveyStore.open(at: there)
        #expect(try other.documentIDs() == [id])
        #expect(try other.localState(of: id) == nil)
        #expect(try other.localState() == nil)
        #expect(!FileManager.default.fileExists(atPath: there + "/" + StoreLayout.stateFolder))
        // rsync as README documents it (exclude *.nosync), into an empty folder.
        guard let rsync = CommandRunner.requireTool("rsync") else { return }
        let result = try CommandRunner.run(
            ["-a", "--exclude=*.nosync", here + "/", copy + "/"], executable: URL(fileURLWithPath: rsync))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: copy + "/" + StoreLayout.folder(of: id)))
        #expect(!FileManager.default.fileExists(atPath: copy + "/" + StoreLayout.localFolder))
        #expect(try Self.documents(copy) == Self.documents(here))
        // Syncing back changes nothing here.
        let back = try CommandRunner.run(["sync", here, "--store", there])
        #expect(back.status == 0, "\(back.stderr)")
        #expect(try store.localState(of: id) == Self.state)
    }
}
