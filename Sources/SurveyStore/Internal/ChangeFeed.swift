import Foundation
import Packages
import Versions

/// The machinery behind ``SurveyStore/changes(debounce:)``: a ``FolderWatcher`` on
/// `Documents/`, on each document folder and on each package still being copied in, and
/// what each document's folder held when it was last read.
///
/// Built (and the whole store read once) on the caller's thread, then used by its own
/// thread only, which ``run(debounce:emit:)`` occupies until it is woken through
/// ``waker``: hence `@unchecked Sendable`, for that one hand-over.
final class ChangeFeed: @unchecked Sendable {
    /// What one read of a document folder tells the feed.
    struct Snapshot: Equatable {
        /// The complete revisions whose content is not pruned.
        var revisions: Set<RevisionID> = []
        /// The heads, the winner first.
        var heads: [RevisionID] = []
        var isInConflict = false
        var isDeleted = false
    }

    let root: String
    /// The one document watched, or `nil` for every document.
    let only: UUID?
    private let revisions: RevisionStore
    private let watcher: FolderWatcher
    private var documentsWatch: FolderWatcher.Watch?
    private var folderWatches: [UUID: FolderWatcher.Watch] = [:]
    private var documentOfFolder: [FolderWatcher.Watch: UUID] = [:]
    /// Packages not complete yet, watched until they are.
    private var packageWatches: [UUID: [RevisionID: FolderWatcher.Watch]] = [:]
    private var documentOfPackage: [FolderWatcher.Watch: UUID] = [:]
    private var known: [UUID: Snapshot] = [:]

    /// Ends ``run(debounce:emit:)`` from any thread.
    var waker: FolderWatcher.Waker { watcher.waker }

    /// Watches the store at `root` (every document, or only `only`) and reads it once.
    init(root: String, calls: SystemCalls, only: UUID?) throws {
        self.root = root
        self.only = only
        revisions = RevisionStore(root: root, device: Device(id: "watch", name: "watch"), calls: calls)
        watcher = try FolderWatcher()
        try synchronize()
    }

    /// Closes the watcher's descriptors.
    func close() { watcher.close() }

    /// Waits for changes and hands each to `emit`, until woken.
    ///
    /// - Parameter debounce: After a first event, how long the folders must stay quiet
    ///   before they are read (`.zero`: only what is already queued is taken together).
    func run(debounce: Duration, emit: (StoreChange) -> Void) throws {
        while true {
            let (first, woken) = try watcher.wait(timeout: nil)
            if woken { return }
            var events = first
            if debounce > .zero {
                // Quiet for `debounce`, or at most a hundred times that in all.
                let deadline = ContinuousClock.now.advanced(by: debounce * 100)
                while ContinuousClock.now < deadline {
                    let (more, wokenNow) = try watcher.wait(timeout: debounce)
                    if wokenNow { return }
                    if more.isEmpty { break }
                    events += more
                }
            }
            try handle(events, emit: emit)
        }
    }

    /// Reads what `events` say changed and reports the differences.
    func handle(_ events: [FolderWatcher.Event], emit: (StoreChange) -> Void) throws {
        var dirty = Set<UUID>()
        var reread = false
        for event in events {
            switch event {
            case .overflow:
                reread = true
            case .lost(let watch):
                if watch == documentsWatch {
                    documentsWatch = nil
                    reread = true
                } else if let id = documentOfFolder.removeValue(forKey: watch) {
                    folderWatches[id] = nil
                    reread = true
                } else if let id = documentOfPackage.removeValue(forKey: watch) {
                    packageWatches[id] = packageWatches[id]?.filter { $0.value != watch }
                    dirty.insert(id)
                }
            case .changed(let watch, let name):
                if watch == documentsWatch {
                    if let name {
                        if let id = UUID(uuidString: name), name == StoreLayout.folderName(of: id),
                            only == nil || only == id
                        {
                            dirty.insert(id)
                        }
                    } else {
                        dirty.formUnion(try documentIDs())
                    }
                } else if let id = documentOfFolder[watch] ?? documentOfPackage[watch] {
                    dirty.insert(id)
                }
            }
        }
        if reread {
            emit(.reread)
            try synchronize()
            return
        }
        for id in dirty.sorted(by: { $0.uuidString < $1.uuidString }) {
            let now = try refresh(id)
            for change in Self.changes(of: id, from: known[id] ?? Snapshot(), to: now ?? Snapshot()) {
                emit(change)
            }
            known[id] = now
        }
    }

    /// Watches `Documents/` and every document folder in it, and reads each, reporting
    /// nothing: the state that later changes are measured against.
    private func synchronize() throws {
        let documents = root + "/" + StoreLayout.documentsFolder
        documentsWatch = try watcher.add(documents, interest: .newEntries)
        let present = Set(try documentIDs())
        for id in known.keys where !present.contains(id) { forget(id) }
        known = [:]
        for id in present {
            known[id] = try refresh(id)
        }
    }

    /// The documents this feed watches that have a folder.
    private func documentIDs() throws -> [UUID] {
        let all = try revisions.documentIDs()
        guard let only else { return all }
        return all.filter { $0 == only }
    }

    private func forget(_ id: UUID) {
        if let watch = folderWatches.removeValue(forKey: id) {
            documentOfFolder[watch] = nil
            watcher.remove(watch)
        }
        for watch in (packageWatches.removeValue(forKey: id) ?? [:]).values {
            documentOfPackage[watch] = nil
            watcher.remove(watch)
        }
    }

    /// Reads a document's folder, watching it first (and each package in it that is not
    /// complete yet, reading again after adding one, so that none completes unseen);
    /// `nil` when the folder is gone.
    private func refresh(_ id: UUID) throws -> Snapshot? {
        let folder = root + "/" + StoreLayout.folder(of: id)
        if folderWatches[id] == nil {
            do {
                let watch = try watcher.add(folder, interest: .allEntries)
                folderWatches[id] = watch
                documentOfFolder[watch] = id
            } catch let error as FileSystemError where error.code == .notFound || error.errno == .notDirectory
            {
                forget(id)
                return nil
            }
        }
        while true {
            let read: DocumentRead
            do {
                read = try revisions.read(id)
            } catch let error as StoreError where error == .noSuchDocument(id) {
                forget(id)
                return nil
            }
            var watched = packageWatches[id] ?? [:]
            var added = false
            let incomplete = Set(read.incomplete)
            for (revision, watch) in watched where !incomplete.contains(revision) {
                watched[revision] = nil
                documentOfPackage[watch] = nil
                watcher.remove(watch)
            }
            for revision in incomplete where watched[revision] == nil {
                guard
                    let watch = try? watcher.add(
                        folder + "/" + StoreLayout.packageName(revision), interest: .allEntries)
                else { continue }
                watched[revision] = watch
                documentOfPackage[watch] = id
                added = true
            }
            packageWatches[id] = watched.isEmpty ? nil : watched
            if !added {
                let graph = read.graph
                return Snapshot(
                    revisions: Set(graph.revisions.keys).subtracting(read.pruned),
                    heads: graph.heads.map(\.id),
                    isInConflict: graph.isInConflict, isDeleted: graph.isDeleted)
            }
        }
    }

    /// The changes from `old` to `new` of document `id`: one per new revision, parents
    /// first, then at most one for the document's state.
    static func changes(of id: UUID, from old: Snapshot, to new: Snapshot) -> [StoreChange] {
        var changes: [StoreChange] = []
        let added = new.revisions.subtracting(old.revisions).sorted()
        for (index, revision) in added.enumerated() {
            let kind: StoreChange.Kind = index == 0 && old.revisions.isEmpty ? .created : .revisionAdded
            changes.append(StoreChange(kind, document: id, revision: revision, heads: new.heads))
        }
        guard let winner = new.heads.first else { return changes }
        if new.isDeleted && !old.isDeleted {
            changes.append(StoreChange(.deleted, document: id, revision: winner, heads: new.heads))
        } else if new.isInConflict && !old.isInConflict {
            changes.append(StoreChange(.conflictAppeared, document: id, revision: winner, heads: new.heads))
        } else if !new.isInConflict && old.isInConflict && !new.isDeleted {
            changes.append(StoreChange(.conflictResolved, document: id, revision: winner, heads: new.heads))
        }
        return changes
    }
}
