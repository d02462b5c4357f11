import Foundation
import PropertyList
import Surveys
import Versions

// The `async` forms of the calls that block on the file system. Each runs its blocking
// form on a queue of its own (``BlockingQueue``), off the caller's executor, and has
// that form's documentation. Each throws `CancellationError`, doing nothing, when its
// task is cancelled before it starts; once started, it runs to its end.

extension SurveyStore {
    /// Creates the store if needed and opens it, off the caller's executor: see
    /// `create(at:deviceName:)`.
    public static func create(at path: String, deviceName: String? = nil) async throws -> SurveyStore {
        try await BlockingQueue.run { try create(at: path, deviceName: deviceName) }
    }

    /// Opens an existing store, off the caller's executor: see `open(at:)`.
    public static func open(at path: String) async throws -> SurveyStore {
        try await BlockingQueue.run { try open(at: path) }
    }

    /// Opens a store for reading only, off the caller's executor: see
    /// `openForReading(at:)`.
    public static func openForReading(at path: String) async throws -> SurveyStore {
        try await BlockingQueue.run { try openForReading(at: path) }
    }

    /// The documents, off the caller's executor: see `documents()`.
    public func documents() async throws -> [Summary] {
        try await BlockingQueue.run { try self.documents() }
    }

    /// The documents and what was skipped, off the caller's executor: see
    /// `documentsReport()`.
    public func documentsReport() async throws -> (documents: [Summary], issues: [StoreIssue]) {
        try await BlockingQueue.run { try self.documentsReport() }
    }

    /// Creates a document, off the caller's executor: see `create(_:id:)`.
    @discardableResult
    public func create(_ survey: Survey, id: UUID? = nil) async throws -> (
        id: UUID, revision: RevisionMetadata
    ) {
        try await BlockingQueue.run { try self.create(survey, id: id) }
    }

    /// Opens a document, off the caller's executor: see `open(_:revision:)`.
    public func open(_ id: UUID, revision: RevisionID? = nil) async throws -> SurveyDocument {
        try await BlockingQueue.run { try self.open(id, revision: revision) }
    }

    /// Saves a document, off the caller's executor: see `save(_:ifCurrent:)`.
    @discardableResult
    public func save(_ document: SurveyDocument, ifCurrent: Bool = false) async throws -> SurveyDocument {
        try await BlockingQueue.run { try self.save(document, ifCurrent: ifCurrent) }
    }

    /// Saves a survey as a new revision, off the caller's executor: see
    /// `save(_:to:base:ifCurrent:)`.
    @discardableResult
    public func save(
        _ survey: Survey, to id: UUID, base: RevisionID? = nil, ifCurrent: Bool = false
    ) async throws -> RevisionMetadata {
        try await BlockingQueue.run { try self.save(survey, to: id, base: base, ifCurrent: ifCurrent) }
    }

    /// Deletes a document, off the caller's executor: see `delete(_:base:)`.
    @discardableResult
    public func delete(_ id: UUID, base: RevisionID? = nil) async throws -> RevisionMetadata {
        try await BlockingQueue.run { try self.delete(id, base: base) }
    }

    /// Deletes a document and tells whether the deletion is new, off the caller's
    /// executor: see `deleteDocument(_:base:)`.
    @discardableResult
    public func deleteDocument(_ id: UUID, base: RevisionID? = nil) async throws -> WriteOutcome {
        try await BlockingQueue.run { try self.deleteDocument(id, base: base) }
    }

    /// Resolves a conflict, off the caller's executor: see `resolve(_:_:)`.
    @discardableResult
    public func resolve(_ id: UUID, _ resolution: Resolution) async throws -> RevisionMetadata? {
        try await BlockingQueue.run { try self.resolve(id, resolution) }
    }

    /// Resolves a document's conflict and opens it again, off the caller's executor:
    /// see `resolve(_:_:)`.
    @discardableResult
    public func resolve(_ document: SurveyDocument, _ resolution: Resolution) async throws -> SurveyDocument {
        try await BlockingQueue.run { try self.resolve(document, resolution) }
    }

    /// Computes a merge of a document's heads, off the caller's executor: see
    /// `mergePlan(_:prefer:)`.
    public func mergePlan(_ id: UUID, prefer: RevisionID? = nil) async throws -> MergePlan? {
        try await BlockingQueue.run { try self.mergePlan(id, prefer: prefer) }
    }

    /// Merges a document's heads and writes the merge, off the caller's executor: see
    /// `resolveMerge(_:prefer:strict:dryRun:)`.
    @discardableResult
    public func resolveMerge(
        _ id: UUID, prefer: RevisionID? = nil, strict: Bool = false, dryRun: Bool = false
    ) async throws -> (plan: MergePlan, revision: RevisionMetadata?)? {
        try await BlockingQueue.run {
            try self.resolveMerge(id, prefer: prefer, strict: strict, dryRun: dryRun)
        }
    }

    /// Prunes a document, off the caller's executor: see `prune(_:keepHistory:dryRun:)`.
    @discardableResult
    public func prune(_ id: UUID, keepHistory: Int = 0, dryRun: Bool = false) async throws -> [RevisionID] {
        try await BlockingQueue.run { try self.prune(id, keepHistory: keepHistory, dryRun: dryRun) }
    }

    /// Prunes every document, off the caller's executor: see
    /// `pruneEveryDocument(keepHistory:dryRun:each:)`. `each` is called on the library's
    /// queue, after each document.
    public func pruneEveryDocument(
        keepHistory: Int = 0, dryRun: Bool = false,
        each:
            @escaping @Sendable (_ position: Int, _ count: Int, _ id: UUID, _ outcome: PruneOutcome) throws ->
            Void
    ) async throws {
        try await BlockingQueue.run {
            try self.pruneEveryDocument(keepHistory: keepHistory, dryRun: dryRun, each: each)
        }
    }

    /// Syncs with another store, off the caller's executor: see
    /// `sync(with:concurrency:progress:)`.
    @discardableResult
    public func sync(
        with other: SurveyStore, concurrency: Int = SurveyStore.syncConcurrency,
        progress: (@Sendable (Int, Int) -> Void)? = nil
    ) async throws -> SyncReport {
        try await BlockingQueue.run {
            try self.sync(with: other, concurrency: concurrency, progress: progress)
        }
    }

    /// Syncs with another store and merges what merges cleanly, off the caller's
    /// executor: see `syncMerging(with:concurrency:progress:)`.
    @discardableResult
    public func syncMerging(
        with other: SurveyStore, concurrency: Int = SurveyStore.syncConcurrency,
        progress: (@Sendable (Int, Int) -> Void)? = nil
    ) async throws -> MergingSyncReport {
        try await BlockingQueue.run {
            try self.syncMerging(with: other, concurrency: concurrency, progress: progress)
        }
    }

    /// Imports a revision package, off the caller's executor: see `importPackage(at:)`.
    public func importPackage(at path: String) async throws -> ImportOutcome {
        try await BlockingQueue.run { try self.importPackage(at: path) }
    }

    /// Imports many revision packages, off the caller's executor: see
    /// `importPackages(at:)`.
    public func importPackages(at paths: [String]) async throws -> [Result<ImportOutcome, any Error>] {
        try await BlockingQueue.run { try self.importPackages(at: paths).map(SendableResult.init) }
            .map(\.result)
    }

    /// Repairs this store from a copy, off the caller's executor: see `repair(from:)`.
    public func repair(from other: SurveyStore) async throws -> RepairReport {
        try await BlockingQueue.run { try self.repair(from: other) }
    }

    /// Copies a revision's package out of the store, off the caller's executor (it
    /// fsyncs): see `exportPackage(_:revision:to:)`.
    @discardableResult
    public func exportPackage(
        _ id: UUID, revision: RevisionID? = nil, to destination: String
    ) async throws -> RevisionMetadata {
        try await BlockingQueue.run { try self.exportPackage(id, revision: revision, to: destination) }
    }

    /// Migrates winners in older formats, off the caller's executor: see
    /// ``migrate(dryRun:progress:written:)``.
    @discardableResult
    public func migrate(dryRun: Bool = false) async throws -> MigrationReport {
        try await BlockingQueue.run { try self.migrate(dryRun: dryRun) }
    }

    /// This device's state for a document, off the caller's executor: see
    /// `localState(of:)`.
    public func localState(of id: UUID) async throws -> [String: PropertyList]? {
        try await BlockingQueue.run { try self.localState(of: id) }
    }

    /// Replaces this device's state for a document, off the caller's executor (it
    /// fsyncs, and waits for the document's lock): see `setLocalState(_:of:)`.
    public func setLocalState(_ state: [String: PropertyList]?, of id: UUID) async throws {
        try await BlockingQueue.run { try self.setLocalState(state, of: id) }
    }

    /// This device's state for the store, off the caller's executor: see `localState()`.
    public func localState() async throws -> [String: PropertyList]? {
        try await BlockingQueue.run { try self.localState() }
    }

    /// Replaces this device's state for the store, off the caller's executor: see
    /// `setLocalState(_:)`.
    public func setLocalState(_ state: [String: PropertyList]?) async throws {
        try await BlockingQueue.run { try self.setLocalState(state) }
    }

    /// Checks the store's integrity, off the caller's executor: see `verify()`.
    ///
    /// - Throws: `CancellationError` when the task is cancelled before it starts.
    public func verify() async throws -> [Problem] {
        try await BlockingQueue.run { self.verify() }
    }
}

/// A result handed back from the library's queue: `any Error` is not `Sendable`, but an
/// error a call throws is handed to its caller all the same, as the `async` forms that
/// throw hand it over.
private struct SendableResult<Success: Sendable>: @unchecked Sendable {
    let result: Result<Success, any Error>
    init(_ result: Result<Success, any Error>) { self.result = result }
}
