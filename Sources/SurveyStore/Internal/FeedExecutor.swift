import Packages
import Synchronization

/// The thread of a change feed, offered as an executor: a task that prefers it
/// (`Task(executorPreference:)`) runs its nonisolated code on that thread, between the
/// feed's reads, so a change reaches it without waking a second thread.
///
/// Jobs enqueued while the feed's thread is busy (reading, or resuming the consumer as it
/// hands over a change) run when it is done, before it waits again; a job enqueued while
/// it waits wakes it (``FolderWatcher/Waker``). Once the feed has ended, its jobs and every
/// later one go to the global concurrent executor, so a task that prefers this executor
/// never stalls.
final class FeedExecutor: TaskExecutor, Sendable {
    private struct State {
        var jobs: [UnownedJob] = []
        /// The feed's thread is not waiting: it runs the jobs before it waits again.
        var busy = true
        var closed = false
    }

    private let state = Locked(State())
    private let waker: FolderWatcher.Waker

    init(waker: FolderWatcher.Waker) { self.waker = waker }

    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let (forward, wake) = state.withLock { state -> (Bool, Bool) in
            if state.closed { return (true, false) }
            state.jobs.append(unowned)
            return (false, !state.busy)
        }
        if forward { globalConcurrentExecutor.enqueue(ExecutorJob(unowned)) }
        if wake { waker.wake() }
    }

    /// On the feed's thread, before it waits: runs the queued jobs (and those they
    /// enqueue) until none is left, then marks the thread waiting.
    func runPending() {
        while true {
            let jobs = state.withLock { state -> [UnownedJob] in
                if state.jobs.isEmpty { state.busy = false }
                defer { state.jobs = [] }
                return state.jobs
            }
            if jobs.isEmpty { return }
            for job in jobs { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }

    /// On the feed's thread, after a wait: jobs enqueued from now on wait for
    /// ``runPending()`` without waking it.
    func markBusy() { state.withLock { $0.busy = true } }

    /// The feed has ended: the jobs not run yet, and every later one, go to the global
    /// concurrent executor.
    func close() {
        let jobs = state.withLock { state -> [UnownedJob] in
            state.closed = true
            defer { state.jobs = [] }
            return state.jobs
        }
        for job in jobs { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
    }
}
