import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

#if SURVEYSTORE_TSAN
    /// The lock every in-memory state shared between threads is held under, as a
    /// ThreadSanitizer build sees it (`Scripts/thread-sanitizer` builds with
    /// `-DSURVEYSTORE_TSAN`): a pthread mutex, which the sanitizer intercepts.
    ///
    /// Every other build uses `Mutex` itself. `Mutex` locks through code of the
    /// Synchronization library, which is not built with the sanitizer, so the sanitizer
    /// cannot see that lock and reports two accesses that both hold it as a race.
    public struct Locked<Value>: ~Copyable, @unchecked Sendable {
        private let mutex: UnsafeMutablePointer<pthread_mutex_t>
        private let value: UnsafeMutablePointer<Value>

        public init(_ initialValue: Value) {
            mutex = .allocate(capacity: 1)
            pthread_mutex_init(mutex, nil)
            value = .allocate(capacity: 1)
            value.initialize(to: initialValue)
        }

        deinit {
            value.deinitialize(count: 1)
            value.deallocate()
            pthread_mutex_destroy(mutex)
            mutex.deallocate()
        }

        /// Runs `body` with the value, the lock held.
        public borrowing func withLock<Result, Failure: Error>(
            _ body: (inout Value) throws(Failure) -> Result
        ) throws(Failure) -> Result {
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&value.pointee)
        }
    }
#else
    /// The lock every in-memory state shared between threads is held under: `Mutex`,
    /// but for a ThreadSanitizer build (see `Scripts/thread-sanitizer`), which uses a lock
    /// the sanitizer can see.
    public typealias Locked<Value: ~Copyable> = Mutex<Value>
#endif
