import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Tells which of a set of folders had entries created, renamed, removed or written.
///
/// On Linux each folder is an inotify watch (`inotify_init1`, `inotify_add_watch`) on one
/// descriptor, read with `poll` and `read`. Events report only *that* something in a
/// folder changed: the caller reads the folder again to learn what. When the kernel's
/// queue overflows (`IN_Q_OVERFLOW`) the watcher reports ``Event/overflow`` (events were
/// lost: everything must be read again); when a watch ends (its folder was removed,
/// renamed or unmounted: `IN_IGNORED`, `IN_MOVE_SELF`, `IN_UNMOUNT`) it reports
/// ``Event/lost(_:)``.
///
/// Elsewhere (macOS) there is no inotify: the watcher polls. Every
/// ``pollingInterval`` it reports each watched folder as changed, and the caller reads
/// them again; nothing is missed, only later.
///
/// A folder is watched without following a symbolic link in its last component
/// (`IN_DONT_FOLLOW | IN_ONLYDIR`).
///
/// A watcher owns file descriptors, so it is deliberately not `Sendable`: one thread
/// uses it. Another thread ends a wait with the ``Waker`` from ``waker``.
public final class FolderWatcher {
    /// One watched folder.
    public struct Watch: Hashable, Sendable {
        /// The inotify watch descriptor (a counter when polling).
        public let rawValue: Int32
    }

    /// Which changes in a folder to report.
    public struct Interest: OptionSet, Sendable {
        public let rawValue: UInt32
        /// Creates an interest from inotify's mask bits.
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        /// An entry was created (`IN_CREATE`).
        public static let created = Interest(rawValue: 0x0000_0100)
        /// An entry was renamed into the folder (`IN_MOVED_TO`).
        public static let movedIn = Interest(rawValue: 0x0000_0080)
        /// An entry was renamed out of the folder (`IN_MOVED_FROM`).
        public static let movedOut = Interest(rawValue: 0x0000_0040)
        /// An entry was removed (`IN_DELETE`).
        public static let deleted = Interest(rawValue: 0x0000_0200)
        /// A file opened for writing was closed (`IN_CLOSE_WRITE`).
        public static let closedAfterWriting = Interest(rawValue: 0x0000_0008)

        /// What a folder of folders needs: new entries only.
        public static let newEntries: Interest = [.created, .movedIn]
        /// Every change of the folder's entries and of the files written in it.
        public static let allEntries: Interest = [
            .created, .movedIn, .movedOut, .deleted, .closedAfterWriting,
        ]
    }

    /// What a wait reports.
    public enum Event: Sendable, Equatable {
        /// Something in the watched folder changed; `name` is the entry, when known.
        case changed(Watch, name: String?)
        /// The watch ended: its folder was removed, renamed or unmounted.
        case lost(Watch)
        /// The kernel dropped events: every folder must be read again.
        case overflow
    }

    /// Wakes a thread waiting in ``FolderWatcher/wait(timeout:)`` from any thread (a
    /// byte written to a pipe, `write`); does nothing once the watcher is closed.
    public final class Waker: Sendable {
        private let state: WakeDescriptor

        fileprivate init(descriptor: Int32) { state = WakeDescriptor(descriptor) }

        /// Ends the current (or next) wait of the watcher early.
        public func wake() {
            state.withDescriptor { descriptor in
                var byte: UInt8 = 1
                _ = Glue.write(descriptor, &byte, 1)
            }
        }

        fileprivate func close() {
            state.take().map { _ = Glue.close($0) }
        }
    }

    /// How often the polling fallback reports every folder (where there is no inotify).
    public static let pollingInterval: Duration = .seconds(1)

    /// Whether this platform reports changes as they happen (inotify) rather than by
    /// polling.
    public static var isEventDriven: Bool {
        #if os(Linux)
            true
        #else
            false
        #endif
    }

    /// Ends waits early, from any thread.
    public let waker: Waker
    private var notify: Int32
    private var wakeRead: Int32
    private var polled: Set<Watch> = []
    private var nextPolled: Int32 = 1
    private var buffer = [UInt8](repeating: 0, count: 64 * 1024)

    /// A watcher with no folders yet.
    ///
    /// The corresponding C functions are `inotify_init1` (Linux) and `pipe`.
    /// - Throws: ``FileSystemError`` when the descriptors cannot be made (the per-user
    ///   limit of inotify instances, `fs.inotify.max_user_instances`, for example).
    public init() throws {
        var ends: [Int32] = [-1, -1]
        guard Glue.pipe(&ends) == 0 else {
            throw FileSystemError(.open, path: "pipe", errno: .current)
        }
        for end in ends {
            _ = Glue.setNonBlockingCloseOnExec(end)
        }
        #if os(Linux)
            let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
            guard descriptor >= 0 else {
                let error = Errno.current
                _ = Glue.close(ends[0])
                _ = Glue.close(ends[1])
                throw FileSystemError(.open, path: "inotify", errno: error)
            }
            notify = descriptor
        #else
            notify = -1
        #endif
        wakeRead = ends[0]
        waker = Waker(descriptor: ends[1])
    }

    deinit { close() }

    /// Closes the watcher's descriptors; every watch ends. Called by `deinit` too.
    public func close() {
        if notify >= 0 { _ = Glue.close(notify) }
        if wakeRead >= 0 { _ = Glue.close(wakeRead) }
        notify = -1
        wakeRead = -1
        waker.close()
        polled = []
    }

    /// Starts watching the folder at `path` for `interest`. Watching a folder twice
    /// returns the same watch, with the new interest.
    ///
    /// The corresponding C function is `inotify_add_watch`.
    /// - Returns: The watch, which events name.
    /// - Throws: ``FileSystemError``: the folder is missing (code `notFound`), is no
    ///   folder or a link, or the per-user limit of watches is reached (`ENOSPC`:
    ///   `fs.inotify.max_user_watches`).
    public func add(_ path: String, interest: Interest) throws -> Watch {
        #if os(Linux)
            let mask = interest.rawValue | UInt32(IN_ONLYDIR | IN_DONT_FOLLOW | IN_MOVE_SELF)
            let descriptor = inotify_add_watch(notify, path, mask)
            guard descriptor >= 0 else {
                let error = Errno.current
                let limit =
                    error == .noSpace
                    ? " (the limit of inotify watches, fs.inotify.max_user_watches, is reached)" : ""
                throw FileSystemError(.open, path: path + limit, errno: error)
            }
            return Watch(rawValue: descriptor)
        #else
            var status = stat()
            guard lstat(path, &status) == 0 else { throw FileSystemError(.open, path: path, errno: .current) }
            guard status.st_mode & S_IFMT == S_IFDIR else {
                throw FileSystemError(.open, path: path, errno: .notDirectory)
            }
            let watch = Watch(rawValue: nextPolled)
            nextPolled += 1
            polled.insert(watch)
            return watch
        #endif
    }

    /// Stops watching: no event names `watch` after this (inotify still reports it as
    /// ``Event/lost(_:)`` once, which a caller that removed it ignores).
    ///
    /// The corresponding C function is `inotify_rm_watch`.
    public func remove(_ watch: Watch) {
        #if os(Linux)
            _ = inotify_rm_watch(notify, watch.rawValue)
        #else
            polled.remove(watch)
        #endif
    }

    /// Waits until something changes, ``Waker/wake()`` is called, or `timeout` passes,
    /// and returns every event already queued (none when woken or timed out).
    ///
    /// The corresponding C functions are `poll` and `read`.
    /// - Parameter timeout: The longest wait; `nil` waits until an event or a wake-up,
    ///   `.zero` only collects what is queued.
    /// - Returns: The events, in the order the kernel queued them.
    /// - Throws: ``FileSystemError`` when `poll` or `read` fails.
    public func wait(timeout: Duration?) throws -> (events: [Event], woken: Bool) {
        let requested =
            timeout.map {
                Int32(
                    clamping: $0.components.seconds * 1000 + $0.components.attoseconds / 1_000_000_000_000_000
                )
            } ?? -1
        #if os(Linux)
            let milliseconds = requested
        #else
            let interval = Int32(Self.pollingInterval.components.seconds * 1000)
            let milliseconds = requested < 0 ? interval : min(requested, interval)
        #endif
        var descriptors = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
        if notify >= 0 { descriptors.append(pollfd(fd: notify, events: Int16(POLLIN), revents: 0)) }
        while true {
            let ready = poll(&descriptors, nfds_t(descriptors.count), milliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                throw FileSystemError(.read, path: "inotify", errno: .current)
            }
            break
        }
        var woken = false
        if descriptors[0].revents != 0 {
            woken = true
            var drain = [UInt8](repeating: 0, count: 64)
            while Glue.read(wakeRead, &drain, drain.count) > 0 {}
        }
        #if os(Linux)
            return (try readEvents(), woken)
        #else
            if woken { return ([], true) }
            return (polled.sorted { $0.rawValue < $1.rawValue }.map { .changed($0, name: nil) }, false)
        #endif
    }

    #if os(Linux)
        /// Reads every queued inotify event without blocking.
        private func readEvents() throws -> [Event] {
            var events: [Event] = []
            while true {
                let count = buffer.withUnsafeMutableBytes { Glue.read(notify, $0.baseAddress!, $0.count) }
                if count < 0 {
                    if errno == EINTR { continue }
                    if errno == EAGAIN || errno == EWOULDBLOCK { return events }
                    throw FileSystemError(.read, path: "inotify", errno: .current)
                }
                if count == 0 { return events }
                buffer.withUnsafeBytes { bytes in
                    var offset = 0
                    let header = MemoryLayout<inotify_event>.size
                    while offset + header <= count {
                        let descriptor = bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)
                        let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                        let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                        let nameBytes = bytes[(offset + header)..<(offset + header + length)].prefix {
                            $0 != 0
                        }
                        offset += header + length
                        let watch = Watch(rawValue: descriptor)
                        if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                            if events.last != .overflow { events.append(.overflow) }
                        } else if mask & UInt32(IN_IGNORED | IN_MOVE_SELF | IN_UNMOUNT) != 0 {
                            if events.last != .lost(watch) { events.append(.lost(watch)) }
                        } else {
                            events.append(
                                .changed(
                                    watch,
                                    name: nameBytes.isEmpty ? nil : String(decoding: nameBytes, as: UTF8.self)
                                ))
                        }
                    }
                }
            }
        }
    #endif
}

/// The waker's write end, behind a lock so that a wake-up never writes to a descriptor
/// closed (and perhaps reused) meanwhile.
private final class WakeDescriptor: @unchecked Sendable {
    private let lock = NSLock()
    private var descriptor: Int32?

    init(_ descriptor: Int32) { self.descriptor = descriptor }

    func withDescriptor(_ body: (Int32) -> Void) {
        lock.withLock { descriptor.map(body) }
    }

    func take() -> Int32? {
        lock.withLock {
            defer { descriptor = nil }
            return descriptor
        }
    }
}

/// The C library's functions under names that the watcher's own members cannot shadow.
private enum Glue {
    static func close(_ descriptor: Int32) -> Int32 {
        #if canImport(Glibc)
            Glibc.close(descriptor)
        #else
            Darwin.close(descriptor)
        #endif
    }

    static func read(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
        #if canImport(Glibc)
            Glibc.read(descriptor, buffer, count)
        #else
            Darwin.read(descriptor, buffer, count)
        #endif
    }

    static func write(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Glibc)
            Glibc.write(descriptor, buffer, count)
        #else
            Darwin.write(descriptor, buffer, count)
        #endif
    }

    static func pipe(_ ends: inout [Int32]) -> Int32 {
        ends.withUnsafeMutableBufferPointer { buffer in
            #if canImport(Glibc)
                Glibc.pipe(buffer.baseAddress!)
            #else
                Darwin.pipe(buffer.baseAddress!)
            #endif
        }
    }

    static func setNonBlockingCloseOnExec(_ descriptor: Int32) -> Int32 {
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        return fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
    }
}
