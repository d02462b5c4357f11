import Foundation
import Packages
import PackagesTesting
import PropertyList
import Testing
import Versions

@_spi(Testing) @testable import SurveyStore
@testable import Surveys

/// Simulated power loss at every system call of every mutating operation.
///
/// Each scenario prepares a store on a ``SimulatedDisk`` (which keeps file bytes only
/// once fsynced and directory entries only once their directory is fsynced), counts the
/// calls the operation makes (opening the store included), and then, for every call
/// index and for the instant right after the operation returns, runs the operation
/// again on a fresh copy with the power going at that call. The disk found after the
/// power loss is opened like the next command would, and must hold: every revision
/// known before the operation, every revision visible complete and verifiable, the
/// operation's own result if it was acknowledged (it returned), and `verify` clean.
@Suite("Simulated power loss", .serialized)
struct PowerLossTests {
    static let root = "/store"
    static let document = UUID(uuidString: "6a0e3f5c-9d1b-4c2e-8f7a-1b2c3d4e5f60")!

    /// A clock that advances one millisecond per reading, the same in every run.
    final class Clock: @unchecked Sendable {
        private let lock = NSLock()
        private var now: Int64 = 1_800_000_000_000
        var read: @Sendable () -> Int64 {
            {
                self.lock.withLock {
                    self.now += 1; return self.now
                }
            }
        }
    }

    static func survey(_ title: String, rating: Int) throws -> Survey {
        try Survey(
            title: title,
            items: [
                Item(
                    id: UUID(uuidString: "00000000-0000-4000-8000-000000000001")!, title: "Rate",
                    kind: .slider(minimum: 0, maximum: 100, roundToInteger: true),
                    answer: .number(Double(rating))),
                Item(
                    id: UUID(uuidString: "00000000-0000-4000-8000-000000000002")!, title: "Name",
                    kind: .textField(subtitle: nil), answer: .text(title)),
            ])
    }

    static func open(_ disk: SimulatedDisk, at root: String = root) throws -> SurveyStore {
        try SurveyStore.open(at: root, calls: disk.table, wallClock: Clock().read)
    }

    /// What an operation returned, for its scenario to check.
    enum Outcome {
        case revision(RevisionMetadata?)
        case pruned([RevisionID])
        case migrated([SurveyStore.Migration])
        case synced
    }

    /// A prepared disk, the operation to crash, and what must hold after it.
    struct Scenario {
        var name: String
        var disk: SimulatedDisk
        /// Stores the operation changes (sync changes two).
        var roots: [String] = [PowerLossTests.root]
        var operation: (SimulatedDisk) throws -> Outcome
        /// Problems with the store(s) after an acknowledged operation.
        var acknowledged: (SimulatedDisk, Outcome) throws -> [String]
        /// Problems naming this revision's digest not matching are expected until the
        /// operation is acknowledged (damage it was asked to repair).
        var repairing: String? = nil
    }

    // MARK: The harness

    /// The revision ids (pruned ones included) of every document of the store at `root`.
    static func knownRevisions(_ disk: SimulatedDisk, _ root: String) throws -> Set<String> {
        let store = RevisionStore(root: root, device: Device(id: "x", name: "x"), calls: disk.table)
        var known = Set<String>()
        for id in try store.documentIDs() {
            for revision in try store.graph(of: id).graph.revisions.keys { known.insert("\(id)/\(revision)") }
        }
        return known
    }

    /// Runs `scenario` with the power lost at every call and right after it returns.
    /// - Returns: The problems found, each naming the crash point; and the points checked.
    static func check(_ scenario: Scenario, disk wrap: (SimulatedDisk) -> SimulatedDisk = { $0 }) throws -> (
        problems: [String], points: Int
    ) {
        let base = scenario.disk.synced()
        var before: [String: Set<String>] = [:]
        for root in scenario.roots { before[root] = try knownRevisions(base, root) }
        let probe = base.synced()
        _ = try scenario.operation(probe)
        let total = probe.calls
        var problems: [String] = []
        for point in 1...(total + 1) {
            let run = base.synced()
            let crashPoint =
                point <= total ? "power lost at call \(point) of \(total)" : "power lost right after success"
            if point <= total { run.powerLossAtCall = point }
            let outcome = try? scenario.operation(run)
            run.powerOff()
            let disk = run.afterPowerLoss()
            let problemsBefore = problems.count
            defer {
                if outcome == nil, let repairing = scenario.repairing {
                    let here = problems[problemsBefore...].filter {
                        !($0.contains(repairing) && $0.contains("digest"))
                    }
                    problems.removeSubrange(problemsBefore...)
                    problems += here
                }
            }
            for root in scenario.roots {
                let store: SurveyStore
                do {
                    store = try open(disk, at: root)
                } catch {
                    problems.append("\(scenario.name), \(crashPoint): \(root) does not open: \(error)")
                    continue
                }
                for problem in store.verify() where !problem.isNote {
                    problems.append("\(scenario.name), \(crashPoint): verify: \(problem)")
                }
                let known = try knownRevisions(disk, root)
                for lost in before[root]!.subtracting(known).sorted() {
                    problems.append("\(scenario.name), \(crashPoint): revision \(lost) was lost")
                }
                // Every revision visible has readable, verified content (or is pruned or a deletion).
                for id in try store.revisions.documentIDs() {
                    let (graph, pruned) = try store.revisions.graph(of: id)
                    for revision in graph.revisions.values
                    where !pruned.contains(revision.id) && !revision.isDeleted {
                        do {
                            _ = try store.survey(id, revision)
                        } catch {
                            problems.append(
                                "\(scenario.name), \(crashPoint): revision \(revision.id) unreadable: \(error)"
                            )
                        }
                    }
                }
            }
            if let outcome {
                problems += try scenario.acknowledged(disk, outcome).map {
                    "\(scenario.name), \(crashPoint): \($0)"
                }
            }
        }
        return (problems, total + 1)
    }

    static func expectSurvives(_ scenario: Scenario) throws {
        let (problems, points) = try check(scenario)
        print("power loss: \(scenario.name): \(points) crash points checked, \(problems.count) problems")
        #expect(
            problems.isEmpty,
            "\(problems.count) problems, first: \(problems.prefix(5).joined(separator: "\n"))")
        #expect(points > 20, "\(scenario.name) made too few calls to be a real test: \(points - 1)")
    }

    // MARK: Scenarios

    /// A store with one document of three revisions.
    static func storeWithHistory() throws -> SimulatedDisk {
        let disk = SimulatedDisk()
        _ = try SurveyStore.create(at: root, deviceName: "simulated", calls: disk.table)
        let store = try open(disk)
        let first = try store.create(try survey("first", rating: 1), id: document).revision
        let second = try store.save(try survey("second", rating: 2), to: document, base: first.id)
        try store.save(try survey("third", rating: 3), to: document, base: second.id)
        return disk
    }

    /// A store whose document has two concurrent heads.
    static func storeInConflict() throws -> SimulatedDisk {
        let disk = try storeWithHistory()
        let store = try open(disk)
        let heads = try store.revisions.graph(of: document).graph.heads
        let parent = heads[0].parents[0]
        try store.save(try survey("concurrent", rating: 9), to: document, base: parent)
        #expect(try store.revisions.graph(of: document).graph.isInConflict)
        return disk
    }

    static func revisionProblems(_ disk: SimulatedDisk, _ outcome: Outcome, root: String = root) throws -> (
        RevisionMetadata?, RevisionGraph, [String]
    ) {
        guard case .revision(let written) = outcome, let written else { return (nil, RevisionGraph(), []) }
        let graph = try open(disk, at: root).revisions.graph(of: written.documentID).graph
        guard graph.revisions[written.id] != nil else {
            return (written, graph, ["acknowledged revision \(written.id) is missing"])
        }
        return (written, graph, [])
    }

    @Test("Save: power lost at every call")
    func save() throws {
        try Self.expectSurvives(
            Scenario(
                name: "save", disk: try Self.storeWithHistory(),
                operation: { disk in
                    .revision(
                        try Self.open(disk).save(try Self.survey("edited", rating: 50), to: Self.document))
                },
                acknowledged: { disk, outcome in
                    let (written, graph, problems) = try Self.revisionProblems(disk, outcome)
                    if problems.isEmpty, graph.winner?.id != written?.id {
                        return ["the acknowledged save is not the winner"]
                    }
                    return problems
                }))
    }

    @Test("Create and delete: power lost at every call")
    func createAndDelete() throws {
        let other = UUID(uuidString: "11111111-2222-4333-8444-555555555555")!
        try Self.expectSurvives(
            Scenario(
                name: "create", disk: try Self.storeWithHistory(),
                operation: { disk in
                    .revision(
                        try Self.open(disk).create(try Self.survey("new", rating: 7), id: other).revision)
                },
                acknowledged: { disk, outcome in try Self.revisionProblems(disk, outcome).2 }))
        try Self.expectSurvives(
            Scenario(
                name: "delete", disk: try Self.storeWithHistory(),
                operation: { disk in .revision(try Self.open(disk).delete(Self.document)) },
                acknowledged: { disk, outcome in
                    let (_, graph, problems) = try Self.revisionProblems(disk, outcome)
                    if problems.isEmpty, !graph.isDeleted {
                        return ["the acknowledged deletion does not win"]
                    }
                    return problems
                }))
    }

    @Test("Resolve: power lost at every call")
    func resolve() throws {
        try Self.expectSurvives(
            Scenario(
                name: "resolve", disk: try Self.storeInConflict(),
                operation: { disk in .revision(try Self.open(disk).resolve(Self.document, .acceptWinner)) },
                acknowledged: { disk, outcome in
                    let (written, graph, problems) = try Self.revisionProblems(disk, outcome)
                    if written == nil { return ["resolve wrote nothing for a document in conflict"] }
                    if problems.isEmpty, graph.heads.map(\.id) != [written!.id] {
                        return ["still in conflict after resolve"]
                    }
                    return problems
                }))
    }

    @Test("Prune: power lost at every call")
    func prune() throws {
        try Self.expectSurvives(
            Scenario(
                name: "prune", disk: try Self.storeWithHistory(),
                operation: { disk in .pruned(try Self.open(disk).prune(Self.document)) },
                acknowledged: { disk, outcome in
                    guard case .pruned(let ids) = outcome else { return [] }
                    let store = try Self.open(disk)
                    let pruned = try store.revisions.graph(of: Self.document).pruned
                    var problems: [String] = []
                    if ids.count != 2 { problems.append("prune pruned \(ids.count) revisions, expected 2") }
                    for id in ids where !pruned.contains(id) {
                        problems.append("acknowledged prune of \(id) is undone")
                    }
                    for id in ids
                    where FileReader(calls: disk.table).exists(
                        Self.root + "/Documents/\(Self.document.uuidString.lowercased())/\(id).survey")
                    {
                        problems.append("the package of pruned \(id) is still there")
                    }
                    return problems
                }))
    }

    /// Sync one document at a time (every run makes the same calls in the same order),
    /// and with its default concurrency (the order of calls varies between runs, but every
    /// crash point must still leave both stores consistent).
    @Test("Sync: power lost at every call", arguments: [1, SurveyStore.syncConcurrency])
    func sync(concurrency: Int) throws {
        let disk = try Self.storeWithHistory()
        let other = "/replica"
        _ = try SurveyStore.create(at: other, deviceName: "replica", calls: disk.table)
        let here = try Self.open(disk)
        let there = try Self.open(disk, at: other)
        // The replica gets a copy, both edit, and one prunes: revisions and tombstones go both ways.
        _ = try here.sync(with: there)
        try there.save(try Self.survey("there", rating: 70), to: Self.document)
        _ = try there.prune(Self.document)
        try here.save(try Self.survey("here", rating: 30), to: Self.document)
        try here.create(
            try Self.survey("another", rating: 4),
            id: UUID(uuidString: "22222222-3333-4444-8555-666666666666")!)
        try Self.expectSurvives(
            Scenario(
                name: "sync (\(concurrency) at once)", disk: disk, roots: [Self.root, other],
                operation: { disk in
                    // A sync that names a document it could not read (every call fails once
                    // the power goes) did not finish, as the command's exit 1 says.
                    _ = try Self.finished(
                        Self.open(disk).sync(with: try Self.open(disk, at: other), concurrency: concurrency))
                    return .synced
                },
                acknowledged: { disk, _ in
                    let mine = try Self.knownRevisions(disk, Self.root)
                    let theirs = try Self.knownRevisions(disk, other)
                    var problems: [String] = []
                    if mine != theirs { problems.append("the stores differ after an acknowledged sync") }
                    for root in [Self.root, other] {
                        let store = try Self.open(disk, at: root)
                        if try !store.revisions.graph(of: Self.document).graph.isInConflict {
                            problems.append("\(root): the concurrent edits are not both there")
                        }
                    }
                    return problems
                }))
    }

    @Test("Migrate: power lost at every call")
    func migrate() throws {
        let disk = SimulatedDisk()
        _ = try SurveyStore.create(at: Self.root, deviceName: "simulated", calls: disk.table)
        let store = try Self.open(disk)
        let item = PropertyList.dictionary([
            "title": .string("Your name"), "type": .string("TextField"), "value1": .string("First and last"),
            "result": .dictionary(["text": .string("Ada")]),
        ])
        let content = try PropertyList.dictionary(["title": .string("Old"), "items": .array([item])])
            .xmlData()
        let old = try store.revisions.write(
            document: Self.document, parents: [], content: content, formatVersion: 1)
        try Self.expectSurvives(
            Scenario(
                name: "migrate", disk: disk,
                operation: { disk in .migrated(try Self.open(disk).migrate().migrated) },
                acknowledged: { disk, outcome in
                    guard case .migrated(let migrations) = outcome else { return [] }
                    let winner = try Self.open(disk).revisions.graph(of: Self.document).graph.winner
                    if migrations.count != 1 || winner?.formatVersion != 2 || winner?.parents != [old.id] {
                        return ["the acknowledged migration is not the winner"]
                    }
                    return []
                }))
    }

    /// A fresh sync of several documents into an empty replica: every package of the
    /// batch is written under the temporary folder, made durable by one `syncfs`, renamed
    /// into place, and the renames made durable by a second `syncfs`; with `syncfs`
    /// missing, each file is fsynced instead, and each new package's parent.
    @Test("Batched sync into an empty store: power lost at every call", arguments: [true, false])
    func batchedSync(syncfs: Bool) throws {
        let disk = try Self.storeWithHistory()
        let store = try Self.open(disk)
        for index in 0..<3 {
            _ = try store.create(
                try Self.survey("document \(index)", rating: index),
                id: UUID(uuidString: "3333333\(index)-4444-4555-8666-777777777777")!)
        }
        let other = "/replica"
        _ = try SurveyStore.create(at: other, deviceName: "replica", calls: disk.table)
        func table(_ disk: SimulatedDisk) -> SystemCalls {
            var table = disk.table
            if !syncfs { table.syncfs = { _ in .failure(.notSupported) } }
            return table
        }
        try Self.expectSurvives(
            Scenario(
                name: "batched sync (syncfs \(syncfs ? "used" : "missing"))", disk: disk,
                roots: [Self.root, other],
                operation: { disk in
                    let here = try SurveyStore.open(
                        at: Self.root, calls: table(disk), wallClock: Clock().read)
                    let there = try SurveyStore.open(at: other, calls: table(disk), wallClock: Clock().read)
                    let report = try Self.finished(here.sync(with: there, concurrency: 1))
                    return report.sent == 6 ? .synced : .pruned([])
                },
                acknowledged: { disk, outcome in
                    guard case .synced = outcome else { return ["the sync did not send the six revisions"] }
                    let mine = try Self.knownRevisions(disk, Self.root)
                    return mine == (try Self.knownRevisions(disk, other))
                        ? [] : ["the stores differ after an acknowledged sync"]
                }))
    }

    /// A disk whose store has one document of one revision, and an empty replica (for a
    /// sync of one package into a new document folder); or a store whose replica has a
    /// copy of its document but for the last save (one package into an existing folder).
    static func storesOnePackageApart(intoExistingFolder: Bool) throws -> (SimulatedDisk, String) {
        let other = "/replica"
        let disk: SimulatedDisk
        if intoExistingFolder {
            disk = try storeWithHistory()
        } else {
            disk = SimulatedDisk()
            _ = try SurveyStore.create(at: root, deviceName: "simulated", calls: disk.table)
            _ = try open(disk).create(try survey("first", rating: 1), id: document)
        }
        _ = try SurveyStore.create(at: other, deviceName: "replica", calls: disk.table)
        if intoExistingFolder {
            let here = try open(disk)
            _ = try here.sync(with: try open(disk, at: other), concurrency: 1)
            try here.save(try survey("fourth", rating: 4), to: document)
        }
        return (disk, other)
    }

    /// A sync that sends one package: its batch of one is made durable item by item (each
    /// file and the package folder fsynced before the rename, the parent after it), with
    /// no `syncfs`, and survives a power loss at every call.
    @Test("Sync of one package: power lost at every call", arguments: [false, true])
    func onePackageSync(intoExistingFolder: Bool) throws {
        let (disk, other) = try Self.storesOnePackageApart(intoExistingFolder: intoExistingFolder)
        try Self.expectSurvives(
            Scenario(
                name:
                    "sync of one package into \(intoExistingFolder ? "an existing" : "a new") document folder",
                disk: disk, roots: [Self.root, other],
                operation: { disk in
                    let flushes = Counter()
                    var table = disk.table
                    let syncfs = table.syncfs
                    table.syncfs = {
                        flushes.add()
                        return syncfs($0)
                    }
                    let here = try SurveyStore.open(at: Self.root, calls: table, wallClock: Clock().read)
                    let there = try SurveyStore.open(at: other, calls: table, wallClock: Clock().read)
                    let report = try Self.finished(here.sync(with: there, concurrency: 1))
                    return report.sent == 1 && report.received == 0 && flushes.value == 0
                        ? .synced : .pruned([])
                },
                acknowledged: { disk, outcome in
                    guard case .synced = outcome else {
                        return ["the sync did not send one package without syncfs"]
                    }
                    let mine = try Self.knownRevisions(disk, Self.root)
                    return mine == (try Self.knownRevisions(disk, other))
                        ? [] : ["the stores differ after an acknowledged sync"]
                }))
    }

    /// A replica's copy of the current revision torn under its own name (a copy that was
    /// never fsynced, then a power loss): sync replaces it by the intact copy, and at every
    /// crash point the file holds the torn bytes or the intact ones, never less.
    @Test("Sync repairing a torn revision: power lost at every call")
    func syncRepair() throws {
        let disk = try Self.storeWithHistory()
        let other = "/replica"
        _ = try SurveyStore.create(at: other, deviceName: "replica", calls: disk.table)
        let here = try Self.open(disk)
        _ = try here.sync(with: try Self.open(disk, at: other), concurrency: 1)
        let winner = try #require(try here.revisions.graph(of: Self.document).graph.winner)
        let torn =
            other + "/" + StoreLayout.package(winner.id, of: Self.document) + "/" + StoreLayout.contentFile
        let table = disk.table
        let descriptor = try table.openat(AT_FDCWD, torn, O_WRONLY | O_TRUNC, 0).get()
        _ = Array("<?xml".utf8).withUnsafeBytes { table.write(descriptor, $0) }
        _ = table.fsync(descriptor)
        _ = table.close(descriptor)
        try Self.expectSurvives(
            Scenario(
                name: "sync repairing a torn revision", disk: disk, roots: [Self.root, other],
                operation: { disk in
                    let report = try Self.finished(
                        Self.open(disk).sync(with: try Self.open(disk, at: other), concurrency: 1))
                    return report.repaired.map(\.path) == [torn] ? .synced : .pruned([])
                },
                acknowledged: { disk, outcome in
                    guard case .synced = outcome else { return ["the sync did not report the repair"] }
                    _ = try Self.open(disk, at: other).survey(Self.document, winner)
                    return []
                },
                repairing: winner.id.description))
    }

    /// `report`, or its first document that could not be read thrown: after a power loss
    /// every call fails, and a sync that names a document it could not read (an I/O error)
    /// did not finish, as one that throws.
    static func finished(_ report: SurveyStore.SyncReport) throws -> SurveyStore.SyncReport {
        if let unreadable = report.unreadable.first { throw UnfinishedSync(issue: unreadable) }
        return report
    }

    /// A sync that returned naming a document it could not read.
    struct UnfinishedSync: Error {
        var issue: StoreIssue
    }

    // MARK: The harness can fail

    /// A disk whose `syncfs` does nothing: a batch's bytes are never made durable before
    /// their renames, so an acknowledged sync leaves empty files. The harness must notice.
    @Test("A batch that skipped its flush would be caught")
    func skippedSyncfsIsCaught() throws {
        let disk = try Self.storeWithHistory()
        let other = "/replica"
        _ = try SurveyStore.create(at: other, deviceName: "replica", calls: disk.table)
        try Self.expectLostSyncCaught("batched sync without syncfs", disk: disk, other: other) {
            $0.syncfs = { _ in .success(()) }
        }
    }

    /// A disk whose fsyncs do nothing, under a sync of one package (which calls no
    /// `syncfs`): its files are never made durable, so an acknowledged sync is lost. The
    /// harness must notice.
    @Test("A batch of one that skipped its fsyncs would be caught")
    func skippedFsyncsOfOnePackageAreCaught() throws {
        let (disk, other) = try Self.storesOnePackageApart(intoExistingFolder: true)
        try Self.expectLostSyncCaught("sync of one package without fsyncs", disk: disk, other: other) {
            $0.fsync = { _ in .success(()) }
        }
    }

    /// Runs a sync of the store at ``root`` with `other` through `disk`'s system calls as
    /// `breaking` alters them, and expects the harness to find the two stores differing
    /// right after an acknowledged sync: the alteration loses what the sync wrote.
    static func expectLostSyncCaught(
        _ name: String, disk: SimulatedDisk, other: String, breaking: @escaping (inout SystemCalls) -> Void
    ) throws {
        let scenario = Scenario(
            name: name, disk: disk, roots: [Self.root, other],
            operation: { disk in
                var table = disk.table
                breaking(&table)
                let here = try SurveyStore.open(at: Self.root, calls: table, wallClock: Clock().read)
                _ = try here.sync(
                    with: try SurveyStore.open(at: other, calls: table, wallClock: Clock().read),
                    concurrency: 1)
                return .synced
            },
            acknowledged: { disk, _ in
                try Self.knownRevisions(disk, Self.root) == Self.knownRevisions(disk, other)
                    ? [] : ["the stores differ"]
            })
        let (problems, _) = try Self.check(scenario)
        #expect(
            problems.contains { $0.contains("right after success") && $0.contains("the stores differ") },
            "\(problems.prefix(5).joined(separator: "\n"))")
    }

    /// A disk whose directory fsyncs do nothing: the writer's parent fsync after a rename
    /// is lost, so an acknowledged save can vanish. The harness must notice.
    @Test("A store that skipped directory fsyncs would be caught")
    func skippedDirectoryFsyncIsCaught() throws {
        let disk = try Self.storeWithHistory()
        let scenario = Scenario(
            name: "save without directory fsyncs", disk: disk,
            operation: { disk in
                var table = disk.table
                let directories = DescriptorSet()
                let realOpen = table.openat
                let realFsync = table.fsync
                table.openat = { directory, path, flags, mode in
                    let result = realOpen(directory, path, flags, mode)
                    if case .success(let descriptor) = result, flags & O_DIRECTORY != 0 {
                        directories.insert(descriptor)
                    }
                    return result
                }
                table.fsync = { directories.contains($0) ? .success(()) : realFsync($0) }
                let store = try SurveyStore.open(at: Self.root, calls: table, wallClock: Clock().read)
                return .revision(try store.save(try Self.survey("edited", rating: 50), to: Self.document))
            },
            acknowledged: { disk, outcome in try Self.revisionProblems(disk, outcome).2 })
        let (problems, _) = try Self.check(scenario)
        #expect(
            problems.contains { $0.contains("right after success") && $0.contains("is missing") },
            "\(problems.prefix(5).joined(separator: "\n"))")
    }

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func add() { lock.withLock { count += 1 } }
        var value: Int { lock.withLock { count } }
    }

    final class DescriptorSet: @unchecked Sendable {
        private let lock = NSLock()
        private var set = Set<Int32>()
        func insert(_ value: Int32) { lock.withLock { _ = set.insert(value) } }
        func contains(_ value: Int32) -> Bool { lock.withLock { set.contains(value) } }
    }
}
