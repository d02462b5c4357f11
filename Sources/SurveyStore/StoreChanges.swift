/// The changes of a store as they happen: what ``SurveyStore/changes(debounce:mechanism:)``
/// and ``SurveyStore/changes(of:debounce:mechanism:)`` return.
///
/// The sequence is for one consumer; changes not yet taken are buffered for it. A second
/// task that waits for a change while the first one waits gets
/// ``ConcurrentIterationError`` (and the first goes on). The watch ends when the task
/// iterating it is cancelled, or when the sequence and every iterator of it are dropped.
///
/// A consumer that runs on ``executor`` gets each change on the watch's own thread, as
/// soon as it is read, without a second thread being woken:
///
/// ```swift
/// let changes = try store.changes()
/// Task(executorPreference: changes.executor) {
///     for try await change in changes { show(change) }  // on the watch's thread
/// }
/// ```
///
/// Its nonisolated code then runs between the watch's reads, so the watch waits while it
/// works: keep it short (hand longer work to another task). Code isolated to an actor
/// (the main actor, for example) runs on that actor as usual.
public struct StoreChanges: AsyncSequence, Sendable {
    public typealias Element = StoreChange

    private let owner: ChangeChannel.Owner

    /// The watch's own thread, as an executor for the task that consumes the changes
    /// (`Task(executorPreference:)`, `withTaskExecutorPreference(_:operation:)`). Once the
    /// watch has ended, jobs given to it run on the global concurrent executor.
    public let executor: any TaskExecutor

    init(owner: ChangeChannel.Owner, executor: any TaskExecutor) {
        self.owner = owner
        self.executor = executor
    }

    /// Takes the changes one at a time.
    public struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate let owner: ChangeChannel.Owner

        /// The next change, waiting for it; `nil` once the watch ends (its task
        /// cancelled).
        ///
        /// - Throws: The error that ended the watch (an I/O error reading a folder), once;
        ///   ``ConcurrentIterationError`` when another task waits for a change already.
        public mutating func next() async throws -> StoreChange? {
            try await owner.channel.next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(owner: owner) }
}

/// A task waited for a change of a ``StoreChanges`` while another task was waiting for one:
/// the sequence has one consumer. The task already waiting goes on receiving the changes.
public struct ConcurrentIterationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The error, which carries nothing but its kind.
    public init() {}

    /// What the consumer did, and what to do instead.
    public var description: String {
        "the changes of a store are for one consumer: another task is already waiting for the next change"
    }
}
