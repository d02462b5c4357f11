import Packages
import Synchronization

/// Hands changes from a feed's thread to the one task that consumes them: a buffer, and
/// the consumer's continuation while it waits.
///
/// The feed's thread holds the channel; the consumer's sequence holds an ``Owner``,
/// whose release (the sequence and its iterators dropped) cancels the channel, as the
/// consumer's task being cancelled does: the feed is woken and its thread ends.
final class ChangeChannel: Sendable {
    private struct State {
        var buffer: [StoreChange] = []
        var head = 0
        var waiter: UnsafeContinuation<StoreChange?, any Error>?
        /// No change comes any more: the feed finished, or the consumer went away.
        var ended = false
        var cancelled = false
        var failure: (any Error)?

        mutating func pop() -> StoreChange? {
            guard head < buffer.count else { return nil }
            let change = buffer[head]
            head += 1
            if head == buffer.count {
                buffer.removeAll(keepingCapacity: true)
                head = 0
            }
            return change
        }
    }

    /// Cancels the channel when released.
    final class Owner: Sendable {
        let channel: ChangeChannel
        init(_ channel: ChangeChannel) { self.channel = channel }
        deinit { channel.cancel() }
    }

    private let state = Locked(State())
    private let waker: FolderWatcher.Waker

    init(waker: FolderWatcher.Waker) { self.waker = waker }

    /// Hands `change` to the consumer (resuming it if it waits); `false` once the
    /// consumer has gone away.
    func send(_ change: StoreChange) -> Bool {
        let (waiter, open) = state.withLock { state -> (UnsafeContinuation<StoreChange?, any Error>?, Bool) in
            if state.cancelled { return (nil, false) }
            if let waiter = state.waiter {
                state.waiter = nil
                return (waiter, true)
            }
            state.buffer.append(change)
            return (nil, true)
        }
        waiter?.resume(returning: change)
        return open
    }

    /// Whether the consumer went away.
    var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// No more changes come: the consumer gets those buffered, then `error` or the end.
    func finish(throwing error: (any Error)?) {
        let waiter = state.withLock { state -> UnsafeContinuation<StoreChange?, any Error>? in
            state.ended = true
            guard let waiter = state.waiter else {
                state.failure = error
                return nil
            }
            state.waiter = nil
            return waiter
        }
        guard let waiter else { return }
        if let error { waiter.resume(throwing: error) } else { waiter.resume(returning: nil) }
    }

    /// The consumer went away: the buffer is dropped, a waiting `next()` returns `nil`,
    /// and the feed is woken to end.
    func cancel() {
        let waiter = state.withLock { state -> UnsafeContinuation<StoreChange?, any Error>? in
            state.cancelled = true
            state.ended = true
            state.failure = nil
            state.buffer = []
            state.head = 0
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
        waker.wake()
    }

    /// The next change, waiting for it; `nil` at the end; throws the feed's failure once.
    func next() async throws -> StoreChange? {
        if let change = state.withLock({ $0.pop() }) { return change }
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { continuation in
                let result = state.withLock { state -> Result<StoreChange?, any Error>? in
                    if let change = state.pop() { return .success(change) }
                    if state.ended {
                        defer { state.failure = nil }
                        return state.failure.map { .failure($0) } ?? .success(nil)
                    }
                    // One consumer: a second one waiting would take the first's place.
                    if state.waiter != nil { return .failure(ConcurrentIterationError()) }
                    state.waiter = continuation
                    return nil
                }
                if let result { continuation.resume(with: result) }
            }
        } onCancel: {
            cancel()
        }
    }
}
