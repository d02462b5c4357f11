import Foundation
import SurveyStore
import Synchronization
import Testing

// This file imports the façade only: every type it names comes through `import SurveyStore`.

/// The API an app holds: document values, typed revisions, look-ups for tools, async calls
/// from many tasks.
@Suite("The API an app holds")
struct AppAPITests {
    static func store() throws -> (SurveyStore, String) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "app-api-\(UUID().uuidString)"
        ).path
        return (try SurveyStore.create(at: path, deviceName: "laptop"), path)
    }

    static func survey(_ title: String) throws -> Survey { try Survey(title: title, items: []) }

    static func requireSendable<T: Sendable>(_: T.Type) {}

    /// A document created with title "A", then saved twice from the same opened value
    /// (titles "One" and "Two"): a conflict between heads `a` and `b`.
    static func twoEdits(_ store: SurveyStore) throws -> (
        id: UUID, first: RevisionMetadata, a: RevisionID, b: RevisionID
    ) {
        let (id, first) = try store.create(try survey("A"))
        var one = try store.open(id)
        var two = one
        one.survey.title = "One"
        two.survey.title = "Two"
        let a = try store.save(one).base.id, b = try store.save(two).base.id
        return (id, first, a, b)
    }

    @Test(
        "SurveyStore.create refuses a folder inside another store's Documents or Local.nosync, through a link too, writing nothing (only the command line refused it)"
    )
    func createInsideAStore() throws {
        let (store, path) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try store.create(try Self.survey("Kept"))
        let link = path + "-link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path + "/Local.nosync")
        defer { try? FileManager.default.removeItem(atPath: link) }
        let before = try FileManager.default.subpathsOfDirectory(atPath: path).sorted()
        // As realpath(3) gives it (on macOS, /private/var…, which resolvingSymlinksInPath drops).
        let resolved = try #require(realpath(path, nil))
        defer { free(resolved) }
        let physical = String(cString: resolved)
        for (inside, folder) in [
            (path + "/Documents/new", "Documents"), (path + "/Local.nosync", "Local.nosync"),
            (link + "/tmp/x/", "Local.nosync"),
        ] {
            #expect(throws: StoreError.insideStore(inside, store: physical, folder: folder)) {
                try SurveyStore.create(at: inside)
            }
        }
        #expect(try FileManager.default.subpathsOfDirectory(atPath: path).sorted() == before)
        #expect(store.verify().isEmpty)
        let refusal = StoreError.insideStore("a", store: "/s", folder: "Documents")
        #expect(refusal.errorCode == "insideStore" && refusal.category == .usage)
        // Beside it: made.
        let beside = try SurveyStore.create(at: path + "-beside")
        try? FileManager.default.removeItem(atPath: beside.root)
    }

    @Test(
        "A second task waiting on one StoreChanges gets ConcurrentIterationError and the first goes on (the second took the first's place, and the first hung even once cancelled)"
    )
    func secondConsumerIsRefused() async throws {
        let (store, path) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let changes = try store.changes()
        let first = Task { () -> StoreChange? in
            for try await change in changes { return change }
            return nil
        }
        try await Task.sleep(for: .milliseconds(300))
        let second = Task { () -> (any Error)? in
            do {
                for try await _ in changes {}
                return nil
            } catch {
                return error
            }
        }
        let refused = await second.value
        #expect(
            refused as? ConcurrentIterationError == ConcurrentIterationError(),
            "\(String(describing: refused))")
        let (id, _) = try await store.create(try Self.survey("Seen"))
        let seen = try await first.value
        #expect(seen?.document == id && seen?.kind == .created, "\(String(describing: seen))")
        // An empty revision name says what to give.
        #expect(throws: StoreError.noSuchRevision("")) { try store.revisionID(matching: "", in: id) }
        #expect(
            "\(StoreError.noSuchRevision(""))" == "no revision named: give a revision id or a prefix of one")
    }

    @Test(
        "open gives the document at its winner; save(document) saves on its own base, returns the next"
    )
    func openAndSave() throws {
        Self.requireSendable(SurveyStore.self)
        let (store, path) = try Self.store()
        defer { try? SurveyStore.removeFolder(path) }
        let (id, first) = try store.create(try Self.survey("A"))
        var document = try store.open(id)
        #expect(
            document.id == id && document.base == first && document.state == .normal
                && document.survey.title == "A")
        document.survey.title = "B"
        let saved = try store.save(document)
        #expect(saved.base.parents == [first.id] && saved.state == .normal && saved.survey.title == "B")
        #expect(try store.revision(id) == saved.base)
        // The same content again: nothing is written and the base stays.
        let again = try store.save(saved)
        #expect(again.base == saved.base)
        #expect(try store.graph(of: id).revisions.count == 2)
    }

    @Test(
        "Two saves of one opened document are both kept: the second returns the conflict; resolve ends it"
    )
    func conflictAndResolve() throws {
        let (store, path) = try Self.store()
        defer { try? SurveyStore.removeFolder(path) }
        let (id, _) = try store.create(try Self.survey("A"))
        var one = try store.open(id)
        var two = one
        one.survey.title = "One"
        two.survey.title = "Two"
        let first = try store.save(one)
        #expect(first.state == .normal)
        let second = try store.save(two)
        let winner = try store.revision(id)
        guard case .inConflict(let heads) = second.state else {
            Issue.record("the second save did not report the conflict: \(second.state)")
            return
        }
        #expect(Set(heads.map(\.id)) == [first.base.id, second.base.id] && heads.first == winner)
        #expect(second.isInConflict && !first.isInConflict)
        // Each opening names the heads its base is in conflict with, as the store does.
        let base = try store.graph(of: id).revisions.values.first { $0.parents.isEmpty }!
        for revision in [first.base, second.base, base] {
            let opened = try store.open(id, revision: revision.id)
            #expect(
                opened.conflicts.map(\.id) == (try store.conflicts(of: id, at: revision)), "\(revision.id)")
        }
        #expect(try store.open(id, revision: base.id).conflicts.map(\.id) == [heads[1].id])
        #expect(try store.open(id, revision: heads[1].id).conflicts.map(\.id) == [heads[0].id])
        let resolved = try store.resolve(second, .keep(first.base.id))
        #expect(resolved.conflicts.isEmpty)
        #expect(resolved.state == .normal && resolved.survey.title == "One")
        #expect(Set(resolved.base.parents) == Set(heads.map(\.id)))
    }

    @Test(
        "A deleted document opens only at an earlier revision, in state deleted; saving it restores it"
    )
    func deletedDocument() throws {
        let (store, path) = try Self.store()
        defer { try? SurveyStore.removeFolder(path) }
        let (id, first) = try store.create(try Self.survey("A"))
        let deletion = try store.delete(id)
        #expect(throws: DocumentDeletedError.self) { try store.open(id) }
        var document = try store.open(id, revision: first.id)
        #expect(document.state == .deleted(deletion) && document.base == first)
        document.survey.title = "Back"
        let restored = try store.save(document)
        #expect(restored.state == .normal && restored.base.parents == [first.id])
        #expect(try store.deletion(of: id) == nil)
        #expect(try store.open(id).survey.title == "Back")
    }

    @Test(
        "revisionID(matching:in:) takes an id or a unique prefix; ambiguous, empty, unknown text refused"
    )
    func revisionLookUp() throws {
        let (store, path) = try Self.store()
        defer { try? SurveyStore.removeFolder(path) }
        let (id, first, a, b) = try Self.twoEdits(store)
        #expect(try store.revisionID(matching: first.id.description, in: id) == first.id)
        #expect(try store.revisionID(matching: String(a.description.prefix(20)), in: id) == a)
        #expect(try store.revisionID(matching: String(a.description.prefix(20)).uppercased(), in: id) == a)
        #expect(try store.revisionID(matching: "1-", in: id) == first.id)
        #expect(
            throws: LookupError.ambiguousRevision("2-", [a, b].sorted { $0.description < $1.description })
        ) {
            try store.revisionID(matching: "2-", in: id)
        }
        #expect(throws: StoreError.noSuchRevision("")) { try store.revisionID(matching: "", in: id) }
        #expect(throws: StoreError.noSuchRevision("3-")) { try store.revisionID(matching: "3-", in: id) }
        #expect(throws: StoreError.noSuchRevision("1- among the heads")) {
            try store.revisionID(matching: "1-", in: id, headsOnly: true)
        }
        // A typed id the document does not have.
        let unknown = RevisionID(generation: 7, digest: String(repeating: "a", count: 64))
        #expect(throws: StoreError.noSuchRevision(unknown.description)) {
            try store.open(id, revision: unknown)
        }
    }

    @Test(
        "history(of:): current, conflict, deleted or superseded for each revision; pruned ones flagged"
    )
    func history() throws {
        let (store, path) = try Self.store()
        defer { try? SurveyStore.removeFolder(path) }
        let (id, first, a, b) = try Self.twoEdits(store)
        let winner = try store.revision(id).id
        let loser = winner == a ? b : a
        let deletion = try store.delete(id, base: loser)
        var states = Dictionary(
            uniqueKeysWithValues: try store.history(of: id).map { ($0.revision.id, $0.state) })
        #expect(
            states == [winner: .current, deletion.id: .deleted, loser: .superseded, first.id: .superseded])
        #expect(try store.history(of: id).first?.revision.id == winner)
        let pruned = try store.prune(id)
        #expect(Set(pruned) == [first.id, loser])
        let entries = try store.history(of: id)
        #expect(Set(entries.filter(\.isPruned).map(\.revision.id)) == [first.id, loser])
        states = Dictionary(uniqueKeysWithValues: entries.map { ($0.revision.id, $0.state) })
        #expect(states[winner] == .current)
        #expect(throws: StoreError.noSuchDocument(UUID(uuidString: "00000000-0000-4000-8000-000000000000")!))
        {
            try store.history(of: UUID(uuidString: "00000000-0000-4000-8000-000000000000")!)
        }
    }

    @Test(
        "history(of:) lists the heads first, winner first, then the other revisions newest first: an older head in conflict and a deletion are not listed below superseded edits"
    )
    func historyOrder() throws {
        let (store, path) = try Self.store()
        defer { try? SurveyStore.removeFolder(path) }
        let (id, first, a, b) = try Self.twoEdits(store)
        // b is the newer of the two heads; an edit on it leaves a, older, in conflict.
        #expect(try store.revision(id).id == b)
        var document = try store.open(id)
        document.survey.title = "Three"
        let c = try store.save(document).base.id
        var order = try store.history(of: id).map { ($0.revision.id, $0.state) }
        #expect(order.map(\.0) == [c, a, b, first.id], "\(order)")
        #expect(order.map(\.1) == [.current, .conflict, .superseded, .superseded])
        // Deleting the winner's line leaves a as the winner and the deletion a head: both
        // come before the edits they superseded, the deletion after the head that is not one.
        let deletion = try store.delete(id, base: c)
        order = try store.history(of: id).map { ($0.revision.id, $0.state) }
        #expect(order.map(\.0) == [a, deletion.id, c, b, first.id], "\(order)")
        #expect(order.map(\.1) == [.current, .deleted, .superseded, .superseded, .superseded])
    }

    @Test("Syncing a store with itself, under another path, is refused as such, and nothing changes")
    func syncWithItself() throws {
        let (store, path) = try Self.store()
        defer { try? SurveyStore.removeFolder(path) }
        let (id, _) = try store.create(try Self.survey("A"))
        let same = try SurveyStore.open(at: path + "/.")
        #expect(throws: SyncError.sameStore(path + "/.")) { try store.sync(with: same) }
        #expect(try store.graph(of: id).revisions.count == 1)
    }

    @Test("Many tasks share one store: concurrent async saves from one base are all kept, each a head")
    func concurrentAsyncSaves() async throws {
        let (store, path) = try Self.store()
        defer { try? SurveyStore.removeFolder(path) }
        let (id, first) = try await store.create(try Self.survey("A"))
        let opened = try await store.open(id)
        let saved = try await withThrowingTaskGroup(of: RevisionMetadata.self) { group in
            for n in 0..<16 {
                group.addTask {
                    var document = opened
                    document.survey.title = "Edit \(n)"
                    return try await store.save(document).base
                }
            }
            var all: [RevisionMetadata] = []
            for try await revision in group { all.append(revision) }
            return all
        }
        #expect(Set(saved.map(\.id)).count == 16 && saved.allSatisfy { $0.parents == [first.id] })
        let heads = try store.graph(of: id).heads
        #expect(Set(heads.map(\.id)) == Set(saved.map(\.id)))
        let reopened = try await store.open(id)
        guard case .inConflict(let conflicting) = reopened.state else {
            Issue.record("sixteen heads, not in conflict: \(reopened.state)")
            return
        }
        #expect(conflicting.count == 16)
        let merged = try await store.resolve(reopened, .acceptWinner)
        #expect(merged.state == .normal && Set(merged.base.parents) == Set(saved.map(\.id)))
    }

    @Test(
        "Per-device state set from many tasks at once, through the async forms: one whole state kept, no revision made"
    )
    func concurrentAsyncLocalState() async throws {
        let (store, path) = try Self.store()
        defer { try? SurveyStore.removeFolder(path) }
        let (id, _) = try await store.create(try Self.survey("A"))
        let states: [[String: PropertyList]] = (0..<16).map { n in
            ["LastOpenedItem": .integer(PropertyList.Integer(Int64(n))), "Scroll": .real(Double(n) / 16)]
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for state in states {
                group.addTask {
                    try await store.setLocalState(state, of: id)
                    try await store.setLocalState(state)
                }
            }
            try await group.waitForAll()
        }
        let documentState = try await store.localState(of: id)
        let storeState = try await store.localState()
        #expect(documentState.map { states.contains($0) } == true, "\(String(describing: documentState))")
        #expect(storeState.map { states.contains($0) } == true, "\(String(describing: storeState))")
        #expect(try store.graph(of: id).revisions.count == 1)
        try await store.setLocalState(nil, of: id)
        #expect(try await store.localState(of: id) == nil)
    }

    @Test("An async call in a task cancelled before it starts throws CancellationError and writes nothing")
    func cancelledBeforeStart() async throws {
        let (store, path) = try Self.store()
        defer { try? SurveyStore.removeFolder(path) }
        let (id, _) = try await store.create(try Self.survey("A"))
        let survey = try Self.survey("B")
        let task = Task<RevisionMetadata, any Error> {
            while !Task.isCancelled { await Task.yield() }
            return try await store.save(survey, to: id)
        }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(try store.graph(of: id).revisions.count == 1)
    }

    @Test(
        "importPackages, repair(from:), deleteDocument, exportPackage and pruneEveryDocument have async forms: in a task cancelled before they start they throw CancellationError and write nothing; otherwise they do what the blocking forms do"
    )
    func everyWritingCallHasAnAsyncForm() async throws {
        let (store, path) = try Self.store()
        let (other, otherPath) = try Self.store()
        let outside = FileManager.default.temporaryDirectory.appendingPathComponent(
            "app-api-export-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: false)
        defer {
            for folder in [path, otherPath, outside] { try? SurveyStore.removeFolder(folder) }
        }
        let (id, first) = try await other.create(try Self.survey("A"))
        var edited = try await other.open(id)
        edited.survey.title = "B"
        edited = try await other.save(edited)
        try await other.exportPackage(id, revision: first.id, to: outside + "/first.survey")
        try await other.exportPackage(id, to: outside + "/second.survey")
        let packages = [outside + "/first.survey", outside + "/second.survey"]
        let listing = { try FileManager.default.subpathsOfDirectory(atPath: path + "/Documents").sorted() }
        let before = try listing()

        /// Runs `call` in a task cancelled before it starts.
        func cancelled(_ call: @escaping @Sendable () async throws -> Void) async {
            let task = Task<Void, any Error> {
                while !Task.isCancelled { await Task.yield() }
                try await call()
            }
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
        }
        await cancelled { _ = try await store.importPackages(at: packages) }
        await cancelled { _ = try await store.repair(from: other) }
        await cancelled { _ = try await other.deleteDocument(id) }
        await cancelled { try await other.exportPackage(id, to: outside + "/third.survey") }
        await cancelled { try await other.pruneEveryDocument { _, _, _, _ in } }
        #expect(try listing() == before)
        #expect(try other.graph(of: id).revisions.count == 2 && other.deletion(of: id) == nil)
        #expect(!FileManager.default.fileExists(atPath: outside + "/third.survey"))

        // Not cancelled, each does its work.
        let imported = try await store.importPackages(at: packages)
        #expect(imported.count == 2 && imported.allSatisfy { (try? $0.get()) != nil }, "\(imported)")
        #expect(try store.graph(of: id).revisions.count == 2)
        let repair = try await store.repair(from: other)
        #expect(repair.repaired.isEmpty && repair.unrepaired.isEmpty)
        let exported = try await other.exportPackage(id, to: outside + "/third.survey")
        #expect(exported == edited.base && FileManager.default.fileExists(atPath: outside + "/third.survey"))
        let deletion = try await other.deleteDocument(id)
        #expect(deletion.isNew && deletion.revision.isDeleted)
        let pruned = Mutex<[UUID]>([])
        try await other.pruneEveryDocument { _, _, document, _ in pruned.withLock { $0.append(document) } }
        #expect(pruned.withLock { $0 } == [id])
    }

    @Test(
        "documentID(matching:), matchDocument: a unique prefix names the document, with what was skipped"
    )
    func documentLookUp() throws {
        let (store, path) = try Self.store()
        defer { try? SurveyStore.removeFolder(path) }
        let (id, _) = try store.create(try Self.survey("A"))
        let folder = path + "/" + StoreLayout.folder(of: id)
        try Data("stray".utf8).write(to: URL(fileURLWithPath: folder + "/notes.txt"))
        let prefix = String(id.uuidString.prefix(6))
        #expect(try store.documentID(matching: prefix) == id)
        let match = try store.matchDocument(prefix.lowercased())
        #expect(
            match.id == id && match.skipped.count == 1
                && match.skipped.first?.path.hasSuffix("/notes.txt") == true)
        #expect(throws: LookupError.noSuchDocument("zz")) { try store.documentID(matching: "zz") }
    }

    @Test("exportedContent gives the revision's survey as JSON or a plist; a deletion is refused")
    func exportedContent() throws {
        let (store, path) = try Self.store()
        defer { try? SurveyStore.removeFolder(path) }
        let survey = try Survey(json: Data(Survey.exampleJSON.utf8))
        let (id, first) = try store.create(survey)
        let json = try store.exportedContent(id, as: .json)
        let plist = try store.exportedContent(id, revision: first.id, as: .plist)
        #expect(json.revision == first && plist.revision == first)
        #expect(try Survey(data: json.data, file: "export.json") == survey)
        #expect(plist.data == (try survey.plistData()))
        let deletion = try store.delete(id)
        #expect(throws: DocumentDeletedError.self) { try store.exportedContent(id, as: .json) }
        #expect(throws: DocumentDeletedError.self) {
            try store.exportedContent(id, revision: deletion.id, as: .plist)
        }
    }
}
