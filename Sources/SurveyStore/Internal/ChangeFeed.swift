import Foundation
import Packages
import Versions

/// The machinery behind ``SurveyStore/changes(debounce:mechanism:)``: a ``FolderWatcher`` on
/// `Documents/`, on each document folder and on each package still being copied in, and
/// what each document's folder held when it was last read.
///
/// Built (and the whole store read once) on the caller's thread, then used by its own
/// thread only, which ``run(debounce:executor:isCancelled:emit:)`` occupies until it is woken through
/// ``waker``: hence `@unchecked Sendable`, for that one hand-over.
final class ChangeFeed: @unchecked Sendable {
    /// What one read of a document folder tells the feed.
    struct Snapshot {
        /// The read: the complete revisions, the tombstones, the packages not complete yet.
        var read = DocumentRead()
        /// The heads, the winner first.
        var heads: [RevisionMetadata] = []
        /// Every revision the graph's revisions name as a parent; made when a package is
        /// first counted in alone, and kept up to date from then on.
        var namedParents: Set<RevisionID>?

        init() {}

        init(_ read: DocumentRead) {
            self.read = read
            heads = read.graph.heads
        }

        /// The complete revisions, their content pruned or not: a revision added and pruned
        /// before the feed read its folder (a prune right after a save, a watch slow to
        /// wake, polling) is reported all the same, as is one a sync brings pruned.
        var revisions: Set<RevisionID> { Set(read.graph.revisions.keys) }
        var isInConflict: Bool { RevisionGraph.isInConflict(heads: heads) }
        var isDeleted: Bool { RevisionGraph.isDeleted(heads: heads) }
    }

    let root: String
    /// The one document watched, or `nil` for every document.
    let only: UUID?
    private let revisions: RevisionStore
    private let watcher: FolderWatcher
    private var documentsWatch: FolderWatcher.Watch?
    /// The store's folder, watched for its own end: removed, moved away or replaced, it
    /// ends the feed (``StoreError/storeGone(_:)``). While `Documents/` is missing or
    /// something else stands in its place (moved aside, not copied yet), its entries are
    /// watched too: the documents' folder coming back is a re-read.
    private var rootWatch: FolderWatcher.Watch?
    /// Whether the store has been read once (before that, a missing store's folder is
    /// ``StoreError/noSuchStore(_:)``).
    private var started = false
    /// The store's folder's device and inode when the feed began.
    private var rootIdentity: [UInt64] = []
    private var folderWatches: [UUID: FolderWatcher.Watch] = [:]
    private var documentOfFolder: [FolderWatcher.Watch: UUID] = [:]
    /// Packages not complete yet, or damaged, watched until they are revisions.
    private var packageWatches: [UUID: [RevisionID: FolderWatcher.Watch]] = [:]
    private var packageOfWatch: [FolderWatcher.Watch: (document: UUID, revision: RevisionID)] = [:]
    /// Packages seen renamed into their document's folder since it was last read: whole
    /// when they came, so their content need not be checked (see ``isSuspect(_:of:)``).
    private var renamedIn: [UUID: Set<RevisionID>] = [:]
    private var known: [UUID: Snapshot] = [:]
    /// Every revision of each document this feed has counted (reported, or found by the
    /// read the feed started from): a revision is reported once, even when a read in
    /// between could not count it (its content file removed and put back, as `tar`
    /// extracting over a copy does).
    private var counted: [UUID: Set<RevisionID>] = [:]
    /// Documents whose last read failed because their folder, or a package or file in it,
    /// may not be read (permission denied, an I/O error), and why. Such a document keeps
    /// its last snapshot in ``known`` (none, when it was never read), so that the read
    /// that succeeds again reports what changed since.
    private var unreadable: [UUID: StoreIssue] = [:]
    /// The ``StoreChange/Kind/unreadable`` changes of the first read, which
    /// ``run(debounce:executor:isCancelled:emit:)`` reports before anything else.
    private var firstChanges: [StoreChange] = []

    /// Wakes ``run(debounce:executor:isCancelled:emit:)`` from any thread.
    var waker: FolderWatcher.Waker { watcher.waker }

    /// Watches the store at `root` (every document, or only `only`) and reads it once.
    init(root: String, calls: SystemCalls, only: UUID?, mechanism: FolderWatcher.Mechanism) throws {
        self.root = root
        self.only = only
        revisions = RevisionStore(root: root, device: Device(id: "watch", name: "watch"), calls: calls)
        watcher = try FolderWatcher(mechanism: mechanism, root: root)
        guard let identity = Self.identity(of: root) else { throw StoreError.noSuchStore(root) }
        rootIdentity = identity
        try synchronize()
        firstChanges = unreadableChanges()
        started = true
    }

    /// Closes the watcher's descriptors.
    func close() { watcher.close() }

    /// Waits for changes and hands each to `emit`, until woken with `isCancelled` true or
    /// until `emit` returns `false` (its consumer is gone); runs `executor`'s jobs
    /// before each wait.
    ///
    /// - Parameters:
    ///   - debounce: After a first event, how long the folders must stay quiet before
    ///     they are read (`.zero`: only what is already queued is taken together).
    ///   - executor: The jobs of tasks that prefer this thread.
    ///   - isCancelled: Whether a wake-up means the end.
    func run(
        debounce: Duration, executor: FeedExecutor, isCancelled: () -> Bool, emit: (StoreChange) -> Bool
    ) throws {
        var open = true
        let send = { (change: StoreChange) in
            if open && !emit(change) { open = false }
        }
        for change in firstChanges where open && !emit(change) { open = false }
        firstChanges = []
        // The store's path is looked at again at least once a second: a folder above the
        // store renamed or removed moves the store away from its path without an event on
        // anything watched, and the store's own removal is not reported while the store is
        // held open (removing it removes `Documents/` first, after which the path is looked
        // at on every wake-up).
        let clock = ContinuousClock()
        var nextLook = clock.now.advanced(by: FolderWatcher.pollingInterval)
        while open {
            executor.runPending()
            let (first, woken) = try watcher.wait(timeout: FolderWatcher.pollingInterval)
            executor.markBusy()
            if woken && isCancelled() { return }
            if documentsWatch == nil || clock.now >= nextLook {
                nextLook = clock.now.advanced(by: FolderWatcher.pollingInterval)
                if Self.identity(of: root) != rootIdentity || !Self.hasLayoutFile(root) {
                    throw StoreError.storeGone(root)
                }
            }
            var events = first
            if debounce > .zero {
                // Quiet for `debounce`, or at most a hundred times that in all.
                let deadline = ContinuousClock.now.advanced(by: debounce * 100)
                while ContinuousClock.now < deadline {
                    let (more, wokenNow) = try watcher.wait(timeout: debounce)
                    if wokenNow && isCancelled() { return }
                    if more.isEmpty && !wokenNow { break }
                    events += more
                }
            }
            try handle(events, emit: send)
        }
    }

    /// What the events of one batch say about one document.
    private struct Dirty {
        /// Packages that appeared (by name) and may be read alone.
        var appeared: [RevisionID] = []
        /// Whether the whole folder must be read again.
        var full = false
    }

    /// Reads what `events` say changed and reports the differences.
    ///
    /// A package that appeared in a document folder (or a watched package that changed)
    /// is read alone when nothing else of that document changed in the batch, and
    /// counted when ``RevisionStore/completePackage(_:of:)`` and
    /// `DocumentRead.insert(complete:)` settle it; anything else (a removal, a tombstone,
    /// another name, a package not complete yet) reads the document's folder again.
    func handle(_ events: [FolderWatcher.Event], emit: (StoreChange) -> Void) throws {
        var order: [UUID] = []
        var dirty: [UUID: Dirty] = [:]
        func mark(_ id: UUID, appeared revision: RevisionID? = nil) {
            if dirty[id] == nil {
                order.append(id)
                dirty[id] = Dirty()
            }
            if let revision { dirty[id]!.appeared.append(revision) } else { dirty[id]!.full = true }
        }
        var reread = false
        for event in events {
            switch event {
            case .overflow:
                reread = true
            case .lost(let watch):
                if watch == rootWatch {
                    throw StoreError.storeGone(root)
                } else if watch == documentsWatch {
                    documentsWatch = nil
                    reread = true
                } else if let id = documentOfFolder.removeValue(forKey: watch) {
                    folderWatches[id] = nil
                    reread = true
                } else if let (id, revision) = packageOfWatch.removeValue(forKey: watch) {
                    packageWatches[id]?[revision] = nil
                    mark(id)
                }
            case .appeared(let watch, let name, let byRename):
                if watch == rootWatch {
                    if name == StoreLayout.documentsFolder { reread = true }
                } else if watch == documentsWatch {
                    documentAppeared(name, mark: { mark($0) })
                } else if let id = documentOfFolder[watch] {
                    if known[id] != nil, let revision = StoreLayout.revision(packageName: name) {
                        if byRename { renamedIn[id, default: []].insert(revision) }
                        mark(id, appeared: revision)
                    } else {
                        mark(id)
                    }
                } else if let (id, revision) = packageOfWatch[watch] {
                    mark(id, appeared: revision)
                }
            case .changed(let watch, let name):
                if watch == rootWatch {
                    if name == nil || name == StoreLayout.documentsFolder { reread = true }
                } else if watch == documentsWatch {
                    if let name {
                        // A document folder's permissions changed (or, polling, anything
                        // of it): only one that could not be read needs reading again.
                        documentAppeared(name) { id in
                            if unreadable[id] != nil || known[id] == nil { mark(id) }
                        }
                    } else {
                        for id in try documentIDs() { mark(id) }
                    }
                } else if let id = documentOfFolder[watch] {
                    mark(id)
                } else if let (id, revision) = packageOfWatch[watch] {
                    mark(id, appeared: revision)
                }
            }
        }
        if reread {
            emit(.reread)
            try synchronize()
            // Read everything again, the consumer is told again what cannot be read.
            for change in unreadableChanges() { emit(change) }
            return
        }
        for id in order {
            let before = known[id].map(State.init) ?? State()
            // What was seen renamed in is settled by this document's read, whichever it is.
            defer { renamedIn[id] = nil }
            if unreadable[id] == nil, let work = dirty[id], !work.full,
                let found = incremental(id, work.appeared)
            {
                let added = found.filter { counted[id]?.contains($0) != true }
                counted[id, default: []].formUnion(found)
                Self.emitChanges(of: id, added: added, from: before, to: State(known[id]!), emit: emit)
                continue
            }
            let old = known[id] ?? Snapshot()
            let now: Snapshot?
            do {
                now = try refresh(id)
            } catch {
                guard let issue = unreadableIssue(error, of: id) else { throw error }
                // Said once, until a read succeeds; its last snapshot is kept.
                if unreadable.updateValue(issue, forKey: id) == nil { emit(Self.change(id, issue)) }
                continue
            }
            unreadable[id] = nil
            // A document's folder removed (by hand, or by an engine that deleted it
            // elsewhere; no command does): its revisions went without a change to report,
            // and the folder's own watch may be gone before its loss is seen.
            if now == nil, known[id] != nil {
                emit(.reread)
                try synchronize()
                for change in unreadableChanges() { emit(change) }
                return
            }
            let new = now ?? Snapshot()
            let added = new.revisions.subtracting(old.revisions).subtracting(counted[id] ?? []).sorted()
            counted[id, default: []].formUnion(new.revisions)
            Self.emitChanges(of: id, added: added, from: before, to: State(new), emit: emit)
            known[id] = now
        }
    }

    /// Marks the document whose folder `name` appeared in `Documents/`, if it is one this
    /// feed watches.
    private func documentAppeared(_ name: String, mark: (UUID) -> Void) {
        if let id = UUID.parsing(name), name == StoreLayout.folderName(of: id), only == nil || only == id {
            mark(id)
        }
    }

    /// Counts the packages `appeared` into the document's snapshot, in place, and returns
    /// the revisions they added, in the order a full read would report them; `nil`,
    /// changing nothing, when a package is not complete or anything else needs the whole
    /// folder read again.
    private func incremental(_ id: UUID, _ appeared: [RevisionID]) -> [RevisionID]? {
        guard known[id] != nil else { return nil }
        // Everything is read and checked before the snapshot changes. The snapshot is
        // looked at through `known` each time, never bound to a name: a copy alive while
        // it is changed below would make every change copy its dictionaries whole.
        var found: [RevisionMetadata] = []
        for revision in appeared {
            // Counted already: a second event of the same package (a file of it written
            // after it was complete changes no read, which remembers it).
            if known[id]!.read.live[revision] != nil && !known[id]!.read.pruned.contains(revision) {
                continue
            }
            if found.contains(where: { $0.id == revision }) { continue }
            guard let metadata = try? revisions.completePackage(revision, of: id),
                known[id]!.read.canInsert(complete: metadata),
                metadata.isDeleted || !isSuspect(revision, of: id)
                    || (try? revisions.contentMatches(metadata, of: id)) == true
            else { return nil }
            found.append(metadata)
        }
        for metadata in found {
            // In place: the snapshot's dictionaries are not copied.
            if known[id]!.namedParents == nil {
                known[id]!.namedParents = Set(known[id]!.read.graph.revisions.values.lazy.flatMap(\.parents))
            }
            let heads = RevisionGraph.heads(
                inserting: metadata, into: known[id]!.heads,
                isParent: known[id]!.namedParents!.contains(metadata.id))
            _ = known[id]!.read.insert(complete: metadata)
            known[id]!.namedParents!.formUnion(metadata.parents)
            known[id]!.heads = heads
            // A package watched while it was incomplete needs no watch now.
            if let watch = packageWatches[id]?.removeValue(forKey: metadata.id) {
                packageOfWatch[watch] = nil
                watcher.remove(watch)
                if packageWatches[id]?.isEmpty == true { packageWatches[id] = nil }
            }
        }
        var added = found.map(\.id)
        if added.count > 1 { added.sort() }
        return added
    }

    /// Watches `Documents/` and every document folder in it, and reads each, reporting
    /// nothing: the state that later changes are measured against.
    private func synchronize(again: Bool = true) throws {
        let documents = root + "/" + StoreLayout.documentsFolder
        // The store's folder first, so that its removal from now on is seen.
        try watchRoot(interest: [])
        let present: Set<UUID>
        do {
            // Attributes too: a document folder that could not be read is read again when its
            // permissions change.
            documentsWatch = try watcher.add(documents, interest: [.newEntries, .attributesChanged])
            present = Set(try documentIDs())
        } catch  where Self.isDocumentsFolderMissing(error) {
            // Before the first read, a link or a file where the documents' folder belongs
            // fails as it fails every other command; later it is a change like a removal.
            if !started { try revisions.checkDocumentsFolder() }
            try watchForDocumentsFolder(again: again)
            return
        }
        for id in Set(known.keys).union(unreadable.keys) where !present.contains(id) { forget(id) }
        known = [:]
        unreadable = [:]
        for id in present {
            do {
                known[id] = try refresh(id)
                if let snapshot = known[id] { counted[id, default: []].formUnion(snapshot.revisions) }
            } catch {
                // One document that cannot be read keeps none of the others from being watched.
                guard let issue = unreadableIssue(error, of: id) else { throw error }
                unreadable[id] = issue
            }
        }
        renamedIn = [:]
    }

    /// What to say of document `id` when `error`, thrown reading or watching its folder,
    /// says that it may not be read (permission denied, an I/O error); `nil` otherwise.
    private func unreadableIssue(_ error: any Error, of id: UUID) -> StoreIssue? {
        revisions.unreadable(error, of: id, so: "watched until it can be")
    }

    /// A ``StoreChange/Kind/unreadable`` of document `id`.
    private static func change(_ id: UUID, _ issue: StoreIssue) -> StoreChange {
        StoreChange(.unreadable, document: id, revision: nil, heads: [], issue: issue)
    }

    /// A ``StoreChange/Kind/unreadable`` for each document the last read could not read, by id.
    private func unreadableChanges() -> [StoreChange] {
        unreadable.sorted { $0.key.uuidString < $1.key.uuidString }.map { Self.change($0.key, $0.value) }
    }

    /// No documents' folder to watch (moved aside, or something else in its place): no
    /// document is known until one is back, which the store's folder's watch reports.
    private func watchForDocumentsFolder(again: Bool) throws {
        if let watch = documentsWatch {
            watcher.remove(watch)
            documentsWatch = nil
        }
        for id in known.keys { forget(id) }
        known = [:]
        // Entries replaced in place too: polling sees a link swapped for a folder under the
        // same name only as a change of that entry.
        try watchRoot(interest: [.created, .movedIn, .closedAfterWriting])
        // It may have come back before the store's folder was watched: tried once more.
        if again { try synchronize(again: false) }
    }

    /// Whether anything stands at the store's `Store.plist` (a link is not followed): with
    /// none, every other command says there is no store at the path.
    private static func hasLayoutFile(_ root: String) -> Bool {
        var status = stat()
        return lstat(root + "/" + StoreLayout.layoutFile, &status) == 0 || errno != ENOENT
    }

    /// The device and inode of the folder at `path` (a link followed), or `nil` when it
    /// is missing or no folder.
    private static func identity(of path: String) -> [UInt64]? {
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else { return nil }
        return [UInt64(status.st_dev), UInt64(status.st_ino)]
    }

    /// Watches the store's folder for `interest` (and, whatever it is, for its own end).
    ///
    /// - Throws: ``StoreError/storeGone(_:)`` (``StoreError/noSuchStore(_:)`` before the
    ///   first read) when the store's folder is missing or something else stands at its
    ///   path; the watcher's other errors.
    private func watchRoot(interest: FolderWatcher.Interest) throws {
        do {
            rootWatch = try watcher.add(root, interest: interest)
        } catch let error as FileSystemError where error.isNoFolder {
            throw started ? StoreError.storeGone(root) : StoreError.noSuchStore(root)
        }
    }

    /// Whether `error` says that `Documents/` is not there as a folder (missing, or a link
    /// or a file in its place), rather than that it could not be watched or read.
    private static func isDocumentsFolderMissing(_ error: any Error) -> Bool {
        if case StoreError.documentsFolderBlocked = error { return true }
        guard let error = error as? FileSystemError else { return false }
        return error.isNoFolder
    }

    /// The documents this feed watches that have a folder.
    private func documentIDs() throws -> [UUID] {
        let all = try revisions.documentIDs()
        guard let only else { return all }
        return all.filter { $0 == only }
    }

    private func forget(_ id: UUID) {
        renamedIn[id] = nil
        counted[id] = nil
        if let watch = folderWatches.removeValue(forKey: id) {
            documentOfFolder[watch] = nil
            watcher.remove(watch)
        }
        for watch in (packageWatches.removeValue(forKey: id) ?? [:]).values {
            packageOfWatch[watch] = nil
            watcher.remove(watch)
        }
    }

    /// Whether the content of `revision`'s package in document `id`, found complete by its
    /// metadata, must be checked against its digest before it counts: after the first read,
    /// unless this feed counted it before or saw it renamed into place.
    ///
    /// A copy that does not rename (`cp -r`, `scp`, `rsync --inplace`) makes the package's
    /// files under their final names and writes them there: its content file is present,
    /// and looks whole to a read, from its first byte. A package renamed into place (a save,
    /// `survey sync`, or an engine that renames folders) was whole before it came.
    private func isSuspect(
        _ revision: RevisionID, of id: UUID
    ) -> Bool {
        started && counted[id]?.contains(revision) != true && renamedIn[id]?.contains(revision) != true
    }

    /// Reads a document's folder, watching it first (and each package in it that is not
    /// complete yet or damaged, reading again after adding one, so that none completes or
    /// is repaired unseen); `nil` when the folder is gone.
    ///
    /// A package first counted here, not renamed into place, counts once its content
    /// matches its digest (``isSuspect(_:of:)``); until then it is not complete
    /// yet, and watched.
    private func refresh(_ id: UUID) throws -> Snapshot? {
        let folder = root + "/" + StoreLayout.folder(of: id)
        if folderWatches[id] == nil {
            do {
                let watch = try watcher.add(folder, interest: .allEntries)
                folderWatches[id] = watch
                documentOfFolder[watch] = id
            } catch let error as FileSystemError where error.isNoFolder {
                forget(id)
                return nil
            }
        }
        while true {
            let read: DocumentRead
            do {
                read = try revisions.read(id) { isSuspect($0, of: id) }
            } catch let error as StoreError where error == .noSuchDocument(id) {
                forget(id)
                return nil
            }
            var watched = packageWatches[id] ?? [:]
            var added = false
            // Packages not complete yet, and damaged ones (a repair replaces the file in
            // place, inside the package's own folder).
            let incomplete = Set(read.incomplete).union(read.damagedPackages)
            for (revision, watch) in watched where !incomplete.contains(revision) {
                watched[revision] = nil
                packageOfWatch[watch] = nil
                watcher.remove(watch)
            }
            for revision in incomplete where watched[revision] == nil {
                let watch: FolderWatcher.Watch
                do {
                    watch = try watcher.add(
                        folder + "/" + StoreLayout.packageName(revision), interest: .allEntries)
                } catch let error as FileSystemError where error.isNoFolder {
                    // Gone, or not a folder: the document folder's own watch reports what
                    // takes its place. Any other failure (the limit of watches reached)
                    // ends the feed with its error: the package's completion would go
                    // unseen.
                    continue
                }
                watched[revision] = watch
                packageOfWatch[watch] = (id, revision)
                added = true
            }
            packageWatches[id] = watched.isEmpty ? nil : watched
            if !added { return Snapshot(read) }
        }
    }

    /// What the changes of a document are measured by, besides its new revisions.
    struct State {
        /// Whether no revision was known (the next one "creates" the document).
        var isEmpty = true
        var heads: [RevisionID] = []
        var isInConflict = false
        var isDeleted = false

        init() {}

        init(_ snapshot: Snapshot) {
            let read = snapshot.read
            isEmpty = read.graph.revisions.isEmpty
            heads = snapshot.heads.map(\.id)
            isInConflict = snapshot.isInConflict
            isDeleted = snapshot.isDeleted
        }
    }

    /// Emits the changes from `old` to `new` of document `id`: one per revision in `added`
    /// (in that order), then at most one for the document's state: deleted, in conflict,
    /// out of conflict, or no longer deleted (and not in conflict).
    static func emitChanges(
        of id: UUID, added: [RevisionID], from old: State, to new: State, emit: (StoreChange) -> Void
    ) {
        let heads = new.heads
        for (index, revision) in added.enumerated() {
            let kind: StoreChange.Kind = index == 0 && old.isEmpty ? .created : .revisionAdded
            emit(StoreChange(kind, document: id, revision: revision, heads: heads))
        }
        guard let winner = heads.first else { return }
        if new.isDeleted && !old.isDeleted {
            emit(StoreChange(.deleted, document: id, revision: winner, heads: heads))
        } else if new.isInConflict && !old.isInConflict {
            emit(StoreChange(.conflictAppeared, document: id, revision: winner, heads: heads))
        } else if !new.isInConflict && old.isInConflict && !new.isDeleted {
            emit(StoreChange(.conflictResolved, document: id, revision: winner, heads: heads))
        } else if old.isDeleted && !new.isDeleted {
            emit(StoreChange(.restored, document: id, revision: winner, heads: heads))
        }
    }
}
