import Dispatch

/// Where the `async` forms of the store's calls do their blocking work: a concurrent
/// Dispatch queue of the store's own, so that waiting for `fsync` or for a document's
/// lock never occupies a thread of Swift's cooperative pool (nor the caller's actor).
///
/// Dispatch gives the queue threads of its own as work blocks, and the continuation
/// resumes the caller on its executor when the work is done.
enum BlockingQueue {
    private static let queue = DispatchQueue(
        label: "SurveyStore.blocking", qos: .userInitiated, attributes: .concurrent)

    /// Runs `work` on the queue and returns what it returns (or throws what it throws).
    /// A task cancelled before the work starts throws `CancellationError`; once
    /// started, the work runs to its end, since a write is never left half done.
    static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try Task.checkCancellation()
        return try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try work() })
            }
        }
    }
}
