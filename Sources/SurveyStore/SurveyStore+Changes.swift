import Foundation
import Packages
import Versions

extension SurveyStore {
    /// The changes of every document, as they happen, made by this process, another
    /// process, `survey sync` or a file-sync engine copying files in.
    ///
    /// ```swift
    /// let changes = try store.changes()
    /// for try await change in changes {
    ///     switch change.kind {
    ///     case .reread: reloadEverything()
    ///     default: reload(change.document!)
    ///     }
    /// }
    /// ```
    ///
    /// The store is read once before this returns, so every change after the call is
    /// reported. Then a thread of its own waits for the folders' changes: with inotify
    /// (Linux), a watch on `Documents/`, on each document folder as it appears, and on
    /// each package that is still being copied in; with polling (elsewhere, or when
    /// chosen: `mechanism`, or `SURVEYSTORE_WATCH=polling` in the environment), a listing
    /// of those folders every `FolderWatcher.pollingInterval` (a second).
    ///
    /// A revision package renamed into a document folder is read alone (its metadata
    /// verified, its content checked to be there, as `RevisionStore.read(_:)` does) and
    /// reported at once; anything else that changed (a removal, a tombstone, a package
    /// still being copied) makes the feed read that document's folder again and compare
    /// it with the last read. A package that appeared other than by a rename into its
    /// document's folder (made in place by `cp -r`, `scp` or `rsync --inplace`, which write
    /// each file under its final name) counts only once its content matches the digest in
    /// its metadata; until then it is watched as one still being copied. (The packages
    /// present when the feed starts are taken as the first read finds them.) Either way
    /// only complete revisions count, each new revision
    /// is reported once (see ``StoreChange``), and a change of state (conflict,
    /// resolution, deletion) once. When changes may have been missed (the kernel's queue
    /// overflowed, a watched folder was removed or replaced), the sequence yields one
    /// ``StoreChange/Kind/reread`` and reads the store again. The inside of a package is
    /// not watched once it is complete: packages never change once in place, so a file
    /// removed from one (by hand or by damage) is not reported; `verify` finds it.
    ///
    /// A document whose folder, or a package or file in it, may not be read (permission
    /// denied: another user's files, `chmod 000`) or gives an input/output error keeps none
    /// of the others from being watched: the sequence yields one
    /// ``StoreChange/Kind/unreadable`` for it (its ``StoreChange/issue`` naming the folder
    /// and the system's reason) — first of all for those the first read could not read,
    /// again after each ``StoreChange/Kind/reread`` — and nothing else of it until a read
    /// succeeds. It is read again when its folder's entries change, or (inotify) when the
    /// permissions of its folder change; then what changed since it was last read is
    /// reported (for a document never read, a ``StoreChange/Kind/created`` and each
    /// revision). An app that shows documents shows this one as one it cannot open.
    ///
    /// The watch ends, its thread stopping and its descriptors closed, when the task
    /// iterating the sequence is cancelled, or when the sequence and every iterator of it
    /// are dropped, whether or not they were ever iterated. The sequence is for one
    /// consumer; changes not yet taken are buffered for it. A consumer task that prefers
    /// the sequence's ``StoreChanges/executor`` runs on the watch's thread and gets each
    /// change without another thread being woken (see ``StoreChanges``).
    ///
    /// - Parameters:
    ///   - debounce: After a first change, how long the folders must stay quiet before
    ///     they are read (at most a hundred times that in all). With `.zero`, the
    ///     default, what is already queued is taken together and read at once: a burst of
    ///     files still yields one change per revision.
    ///   - mechanism: How to learn of changes: `.automatic` (inotify on Linux unless
    ///     `SURVEYSTORE_WATCH=polling`, polling elsewhere), `.inotify` or `.polling`.
    /// - Returns: The changes; the sequence throws when `Documents/` cannot be read (an I/O
    ///   error) or a folder cannot be watched (a document's folder, or a package not complete yet, once the
    ///   limit of inotify watches is reached), and `StoreError.storeGone` when the store's
    ///   folder is removed, moved away or replaced, its `Store.plist` removed, or a folder
    ///   above it is renamed or removed (seen within `FolderWatcher.pollingInterval`, when the store's path is
    ///   looked at again: the folder is held open, so inotify reports its removal only once
    ///   it is closed, and a folder above it renamed gives no event at all); it ends only
    ///   then or when its consumer stops.
    /// - Throws: `StoreError.noSuchStore` when no folder is at the store's path;
    ///   `StoreError.documentsFolderBlocked` when a link or a file stands where its
    ///   `Documents/` belongs (as it does for every other call); `FileSystemError` when the watch cannot be set up (the limit of inotify watches
    ///   reached); the errors of reading a document, but for one that may not be read or
    ///   gives an I/O error, which is reported as ``StoreChange/Kind/unreadable``. A store without a `Documents/` folder
    ///   (moved aside, or not copied yet) is no error: no document is reported until the
    ///   folder is there, and its coming is a ``StoreChange/Kind/reread``.
    public func changes(
        debounce: Duration = .zero, mechanism: FolderWatcher.Mechanism = .automatic
    ) throws -> StoreChanges {
        try Self.changes(root: root, calls: calls, only: nil, debounce: debounce, mechanism: mechanism)
    }

    /// The changes of one document, as ``changes(debounce:mechanism:)`` reports them: its
    /// creation (when its folder appears), each revision, its state, and every
    /// ``StoreChange/Kind/reread``. Only `Documents/` and that document's folder are
    /// watched.
    ///
    /// - Parameters:
    ///   - id: The document; it need not exist yet.
    ///   - debounce: See ``changes(debounce:mechanism:)``.
    ///   - mechanism: See ``changes(debounce:mechanism:)``.
    /// - Returns: The changes of `id`.
    /// - Throws: As ``changes(debounce:mechanism:)``.
    public func changes(
        of id: UUID, debounce: Duration = .zero, mechanism: FolderWatcher.Mechanism = .automatic
    ) throws -> StoreChanges {
        try Self.changes(root: root, calls: calls, only: id, debounce: debounce, mechanism: mechanism)
    }

    private static func changes(
        root: String, calls: SystemCalls, only: UUID?, debounce: Duration, mechanism: FolderWatcher.Mechanism
    ) throws -> StoreChanges {
        let feed = try ChangeFeed(root: root, calls: calls, only: only, mechanism: mechanism)
        let channel = ChangeChannel(waker: feed.waker)
        let executor = FeedExecutor(waker: feed.waker)
        // The thread holds the channel, never the sequence: dropping the sequence (and its
        // iterators) releases `owner`, which ends the thread.
        let thread = Thread {
            #if os(Linux)
                // The name `ps -L`, `top -H` and /proc/self/task/*/comm show (15 bytes at most).
                try? Data("store-changes".utf8).write(to: URL(fileURLWithPath: "/proc/thread-self/comm"))
            #endif
            defer { feed.close() }
            do {
                try feed.run(debounce: debounce, executor: executor, isCancelled: { channel.isCancelled }) {
                    channel.send($0)
                }
                channel.finish(throwing: nil)
            } catch {
                channel.finish(throwing: error)
            }
            // The consumer's jobs from now on (resumed by the finish) run elsewhere.
            executor.close()
        }
        thread.name = "store-changes"
        thread.start()
        return StoreChanges(owner: ChangeChannel.Owner(channel), executor: executor)
    }
}
