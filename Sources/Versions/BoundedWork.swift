import Dispatch
import Packages
import Synchronization

/// Runs independent pieces of work on up to a given number of Dispatch workers at once
/// (a serial queue each), with the compiler checking that what they share is `Sendable`.
///
/// Work that blocks on the file system (reads, locks, fsyncs) gains from running several
/// pieces at once; each piece is one index of `0..<count`.
struct BoundedWork {
    /// `width`, or fewer when the process may not hold that many workers' files open at
    /// once: each worker is allowed ``descriptorsPerWorker`` descriptors (a sync's piece
    /// holds two document locks, two folders and a file, while the next pieces are read
    /// beside a batch being written) and ``descriptorsKept`` are left to the rest of the
    /// process. With the soft limit at 1,024 (Linux's usual) that is `width` up to 124; at
    /// macOS's 256, 28; at 64, 4; below 48, one worker.
    static func width(_ width: Int, openFileLimit: Int? = SystemCalls.openFileLimit) -> Int {
        guard let openFileLimit else { return width }
        return max(1, min(width, (openFileLimit - descriptorsKept) / descriptorsPerWorker))
    }

    /// Descriptors each worker may hold at once (see ``width(_:openFileLimit:)``).
    static let descriptorsPerWorker = 8
    /// Descriptors left to the rest of the process (see ``width(_:openFileLimit:)``).
    static let descriptorsKept = 32

    /// `body(index)` for every index of `0..<count`, on up to `width` workers (on the
    /// calling thread alone when `width` is 1), the results in index order.
    ///
    /// After the first error no new index is started; that error is thrown once the
    /// pieces already running have finished, after `cleaningUp` has been handed the
    /// results of the pieces that finished (what they made that the caller will never
    /// see, such as files written aside, can then be removed). `progress` is called on
    /// the calling thread, one call at a time, with the number of pieces done.
    static func map<Result: Sendable>(
        count: Int, width: Int, _ body: @escaping @Sendable (Int) throws -> Result,
        progress: (Int) -> Void = { _ in }, cleaningUp: ([Result]) -> Void = { _ in }
    ) throws -> [Result] {
        let width = Self.width(width)
        if width <= 1 || count <= 1 {
            var results: [Result] = []
            results.reserveCapacity(count)
            do {
                for index in 0..<count {
                    defer { progress(index + 1) }
                    results.append(try body(index))
                }
            } catch {
                cleaningUp(results)
                throw error
            }
            return results
        }
        let state = Shared<Result>(count: count)
        let signals = DispatchSemaphore(value: 0)
        let workers = min(width, count)
        for worker in 0..<workers {
            // A serial queue of its own for each worker: such queues get a thread each when
            // their work blocks, where the global concurrent queue keeps to about one thread
            // per core.
            DispatchQueue(label: "SurveyStore.BoundedWork.\(worker)").async {
                while let index = state.take() {
                    state.finish(index, Swift.Result { try body(index) })
                    signals.signal()
                }
                state.exit()
                signals.signal()
            }
        }
        // Each signal follows a piece finished or a worker leaving.
        var reported = 0
        while true {
            signals.wait()
            let (finished, exited) = state.counts()
            while reported < finished {
                reported += 1
                progress(reported)
            }
            if exited == workers { break }
        }
        return try state.results(cleaningUp: cleaningUp)
    }

    /// The state the workers share, behind a mutex.
    private final class Shared<Result: Sendable>: Sendable {
        private struct State {
            var next = 0
            var values: [Result?]
            var failure: (any Error)?
            var finished = 0
            var exited = 0
        }

        private let state: Locked<State>
        private let count: Int

        init(count: Int) {
            self.count = count
            state = Locked(State(values: Array(repeating: nil, count: count)))
        }

        /// The next index to work on, or `nil` when all are taken or one failed.
        func take() -> Int? {
            state.withLock { state in
                guard state.failure == nil, state.next < count else { return nil }
                state.next += 1
                return state.next - 1
            }
        }

        /// How many pieces have finished, and how many workers have left.
        func counts() -> (finished: Int, exited: Int) {
            state.withLock { ($0.finished, $0.exited) }
        }

        func exit() {
            state.withLock { $0.exited += 1 }
        }

        func finish(_ index: Int, _ result: Swift.Result<Result, any Error>) {
            state.withLock { state in
                switch result {
                case .success(let value): state.values[index] = value
                case .failure(let error): if state.failure == nil { state.failure = error }
                }
                state.finished += 1
            }
        }

        /// The results in index order, or the first error once `cleaningUp` has been
        /// handed the results there are.
        func results(cleaningUp: ([Result]) -> Void) throws -> [Result] {
            let (values, failure) = state.withLock { ($0.values, $0.failure) }
            if let failure {
                cleaningUp(values.compactMap { $0 })
                throw failure
            }
            return values.map { $0! }
        }
    }
}
