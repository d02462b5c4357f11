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
    /// reported. Then a thread of its own waits for the folders' changes (on Linux, an
    /// inotify watch on `Documents/`, on each document folder as it appears, and on each
    /// package that is still being copied in; elsewhere, polling every
    /// `FolderWatcher.pollingInterval` (a second)). After each burst, every document folder that
    /// changed is read again and compared with the last read: only complete revisions
    /// count, each new revision is reported once (see ``StoreChange``), and a change of
    /// state (conflict, resolution, deletion) once. When changes may have been missed
    /// (the kernel's queue overflowed, a watched folder was removed or replaced), the
    /// sequence yields one ``StoreChange/Kind/reread`` and reads the store again.
    ///
    /// Cancelling the task that iterates the sequence ends the watch: its thread stops and
    /// its descriptors are closed. The sequence is for one consumer, which should iterate
    /// it: the watch runs from this call until that consumer stops.
    ///
    /// - Parameter debounce: After a first change, how long the folders must stay quiet
    ///   before they are read (at most a hundred times that in all). With `.zero`, the
    ///   default, what is already queued is taken together and read at once: a burst of
    ///   files still yields one change per revision, since changes come from comparing
    ///   reads, never from single files.
    /// - Returns: The changes; the sequence throws when a folder cannot be read (an I/O
    ///   error), and ends only when its consumer stops.
    /// - Throws: `FileSystemError` when the watch cannot be set up (no `Documents/`
    ///   folder, the limit of inotify watches reached); the errors of reading a document.
    public func changes(debounce: Duration = .zero) throws -> AsyncThrowingStream<StoreChange, any Error> {
        try Self.changes(root: root, calls: calls, only: nil, debounce: debounce)
    }

    /// The changes of one document, as ``changes(debounce:)`` reports them: its
    /// creation (when its folder appears), each revision, its state, and every
    /// ``StoreChange/Kind/reread``. Only `Documents/` and that document's folder are
    /// watched.
    ///
    /// - Parameters:
    ///   - id: The document; it need not exist yet.
    ///   - debounce: See ``changes(debounce:)``.
    /// - Returns: The changes of `id`.
    /// - Throws: `FileSystemError` when the watch cannot be set up.
    public func changes(of id: UUID, debounce: Duration = .zero) throws -> AsyncThrowingStream<
        StoreChange, any Error
    > {
        try Self.changes(root: root, calls: calls, only: id, debounce: debounce)
    }

    private static func changes(
        root: String, calls: SystemCalls, only: UUID?, debounce: Duration
    ) throws -> AsyncThrowingStream<StoreChange, any Error> {
        let feed = try ChangeFeed(root: root, calls: calls, only: only)
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: StoreChange.self)
        let waker = feed.waker
        continuation.onTermination = { _ in waker.wake() }
        let thread = Thread {
            defer { feed.close() }
            do {
                try feed.run(debounce: debounce) { continuation.yield($0) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        thread.name = "SurveyStore changes"
        thread.start()
        return stream
    }
}
