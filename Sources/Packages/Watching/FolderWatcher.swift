import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Tells which of a set of folders had entries created, renamed, removed or written.
///
/// Two mechanisms report the same events (see ``Mechanism``):
/// - ``Mechanism/inotify`` (Linux): each folder is an inotify watch (`inotify_init1`,
///   `inotify_add_watch`) on one descriptor, read with `poll` and `read`. When the
///   kernel's queue overflows (`IN_Q_OVERFLOW`) the watcher reports ``Event/overflow``
///   (events were lost: everything must be read again); when a watch ends (its folder
///   was removed, renamed or unmounted: `IN_IGNORED`, `IN_MOVE_SELF`, `IN_UNMOUNT`) it
///   reports ``Event/lost(_:)``.
/// - ``Mechanism/polling`` (where there is no inotify, or when chosen): every
///   ``pollingInterval`` each watched folder is listed (`fdopendir`, `readdir`; opened
///   without updating its access time, as the store's readers open folders) and each
///   entry's status read (`fstatat`), and the listing compared with the previous one: a
///   new name is reported as ``Event/appeared(_:name:byRename:)``, a name gone or a file whose
///   size, inode or modification time changed as ``Event/changed(_:name:)``, and a folder
///   removed or replaced as ``Event/lost(_:)``. A poll costs a listing of every watched
///   folder and one `fstatat` per entry; changes are seen up to one interval late.
///
/// Events report only *that* something in a folder changed, and which entry: the caller
/// reads the folder again (or that entry) to learn what.
///
/// A folder beneath the watcher's root (a store's) is reached without following a
/// symbolic link in any component, as the store's readers reach files: it is opened
/// beneath the root (`openat2` with `RESOLVE_NO_SYMLINKS` on Linux), and inotify
/// watches the folder that descriptor names (`/proc/self/fd/N`), or, where `/proc` is
/// not mounted, the path with `IN_DONT_FOLLOW | IN_ONLYDIR`. Without a root, only the
/// last component is never followed.
///
/// A watcher owns file descriptors, so it is deliberately not `Sendable`: one thread
/// uses it. Another thread ends a wait with the ``Waker`` from ``waker``.
public final class FolderWatcher {
    /// How a watcher learns of changes.
    public enum Mechanism: String, Sendable, CaseIterable {
        /// inotify (Linux only): events as they happen.
        case inotify
        /// Listing every watched folder every ``FolderWatcher/pollingInterval``.
        case polling

        /// The mechanism a watcher uses when none is named: `polling` when the
        /// environment variable `SURVEYSTORE_WATCH` is `polling` or where there is no
        /// inotify, `inotify` otherwise.
        public static var automatic: Mechanism {
            #if os(Linux)
                if let chosen = ProcessInfo.processInfo.environment["SURVEYSTORE_WATCH"],
                    chosen == Mechanism.polling.rawValue
                {
                    return .polling
                }
                return .inotify
            #else
                return .polling
            #endif
        }
    }

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
        /// An entry's permissions, owner or times were changed (`IN_ATTRIB`: `chmod`,
        /// `chown`, `touch`; when polling, a change of its status-change time).
        public static let attributesChanged = Interest(rawValue: 0x0000_0004)

        /// What a folder of folders needs: new entries only.
        public static let newEntries: Interest = [.created, .movedIn]
        /// Every change of the folder's entries and of the files written in it.
        public static let allEntries: Interest = [
            .created, .movedIn, .movedOut, .deleted, .closedAfterWriting,
        ]
    }

    /// What a wait reports.
    public enum Event: Sendable, Equatable {
        /// An entry named `name` appeared in the watched folder: created in it
        /// (`IN_CREATE`), or renamed into it (`IN_MOVED_TO`, `byRename` true); when
        /// polling, a name not listed before (`byRename` false: how it came is unknown).
        ///
        /// An entry renamed into place was whole before it came (a writer that renames
        /// finished first); one created in place may still be being written.
        case appeared(Watch, name: String, byRename: Bool)
        /// Something else in the watched folder changed (an entry removed or renamed
        /// away, a file written); `name` is the entry, when known.
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

    /// How often the polling mechanism lists the watched folders: a second.
    public static let pollingInterval: Duration = .seconds(1)

    /// Whether watchers made without naming a mechanism report changes as they happen
    /// (inotify) rather than by polling (see ``Mechanism/automatic``).
    public static var isEventDriven: Bool { Mechanism.automatic == .inotify }

    /// How this watcher learns of changes.
    public let mechanism: Mechanism
    /// Ends waits early, from any thread.
    public let waker: Waker
    private var notify: Int32 = -1
    private var wakeRead: Int32
    /// Opens folders beneath the root, never through a link.
    private let system: System
    private var polled: [Watch: PolledFolder] = [:]
    private var pollingPaths: [String: Watch] = [:]
    private var nextPolled: Int32 = 1
    private var nextPoll = ContinuousClock.now
    private var buffer = [UInt8](repeating: 0, count: 64 * 1024)

    /// A watcher with no folders yet.
    ///
    /// The corresponding C functions are `inotify_init1` (Linux) and `pipe`.
    /// - Parameters:
    ///   - mechanism: How to learn of changes; ``Mechanism/inotify`` exists on Linux
    ///     only (elsewhere it is replaced by polling).
    ///   - root: The folder beneath which no link is followed to reach a watched folder
    ///     (a store's root; the root itself may be a link), or `nil`.
    /// - Throws: ``FileSystemError`` when the descriptors cannot be made (the per-user
    ///   limit of inotify instances, `fs.inotify.max_user_instances`, for example).
    public init(mechanism: Mechanism = .automatic, root: String? = nil) throws {
        system = System(calls: .live, root: root)
        var ends: [Int32] = [-1, -1]
        guard Glue.pipe(&ends) == 0 else {
            throw FileSystemError(.open, path: "pipe", errno: .current)
        }
        for end in ends {
            _ = Glue.setNonBlockingCloseOnExec(end)
        }
        #if os(Linux)
            self.mechanism = mechanism
            if mechanism == .inotify {
                let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
                guard descriptor >= 0 else {
                    let error = Errno.current
                    _ = Glue.close(ends[0])
                    _ = Glue.close(ends[1])
                    throw FileSystemError(.open, path: "inotify", errno: error)
                }
                notify = descriptor
            }
        #else
            self.mechanism = .polling
        #endif
        wakeRead = ends[0]
        waker = Waker(descriptor: ends[1])
    }

    deinit { close() }

    /// Closes the watcher's descriptors; every watch ends. Called by `deinit` too.
    public func close() {
        // The write end first, under the waker's lock: a wake-up from another thread
        // never writes to a pipe whose read end is closed (which would raise SIGPIPE).
        waker.close()
        if notify >= 0 { _ = Glue.close(notify) }
        if wakeRead >= 0 { _ = Glue.close(wakeRead) }
        notify = -1
        wakeRead = -1
        polled = [:]
        pollingPaths = [:]
    }

    /// Starts watching the folder at `path` for `interest`. Watching a folder twice
    /// returns the same watch, with the new interest.
    ///
    /// The corresponding C functions are `openat2` (beneath the root), `inotify_add_watch`
    /// and `close` (polling: the folder's first listing).
    /// - Returns: The watch, which events name.
    /// - Throws: ``FileSystemError``: the folder is missing (code `notFound`), is no
    ///   folder or is a link itself (errno `ENOTDIR`), is reached through a link on the way
    ///   beneath the root (code `symbolicLink`), or the per-user limit of watches is
    ///   reached (code `watchLimit`: `ENOSPC`, `fs.inotify.max_user_watches`).
    public func add(_ path: String, interest: Interest) throws -> Watch {
        if mechanism == .polling {
            let folder = try PolledFolder.list(path, interest: interest, system: system)
            if let watch = pollingPaths[path] {
                polled[watch] = folder
                return watch
            }
            let watch = Watch(rawValue: nextPolled)
            nextPolled += 1
            polled[watch] = folder
            pollingPaths[path] = watch
            return watch
        }
        #if os(Linux)
            let mask = interest.rawValue | UInt32(IN_ONLYDIR | IN_MOVE_SELF)
            let folder = try system.openFolder(atPath: path)
            defer { _ = Glue.close(folder) }
            var descriptor = inotify_add_watch(notify, "/proc/self/fd/\(folder)", mask)
            if descriptor < 0 && errno == ENOENT {
                // No /proc: the path, its last component not followed.
                descriptor = inotify_add_watch(notify, path, mask | UInt32(IN_DONT_FOLLOW))
            }
            guard descriptor >= 0 else {
                let error = Errno.current
                // ENOSPC here is the limit of watches, not a full disk.
                if error == .noSpace { throw FileSystemError(.watchLimit, operation: .open, path: path) }
                throw FileSystemError(.open, path: path, errno: error)
            }
            return Watch(rawValue: descriptor)
        #else
            preconditionFailure("inotify exists on Linux only")
        #endif
    }

    /// Stops watching: no event names `watch` after this (inotify still reports it as
    /// ``Event/lost(_:)`` once, which a caller that removed it ignores).
    ///
    /// The corresponding C function is `inotify_rm_watch`.
    public func remove(_ watch: Watch) {
        if mechanism == .polling {
            if let folder = polled.removeValue(forKey: watch) { pollingPaths[folder.path] = nil }
            return
        }
        #if os(Linux)
            _ = inotify_rm_watch(notify, watch.rawValue)
        #endif
    }

    /// Waits until something changes, ``Waker/wake()`` is called, or `timeout` passes,
    /// and returns every event already queued (none when woken or timed out).
    ///
    /// The corresponding C functions are `poll` and `read` (polling: `poll` on the
    /// waker's pipe alone, then the listings).
    /// - Parameter timeout: The longest wait; `nil` waits until an event or a wake-up,
    ///   `.zero` only collects what is queued.
    /// - Returns: The events, in the order the kernel queued them (polling: by watch,
    ///   then by name).
    /// - Throws: ``FileSystemError`` when `poll` or `read` fails.
    public func wait(timeout: Duration?) throws -> (events: [Event], woken: Bool) {
        if mechanism == .polling { return try waitPolling(timeout: timeout) }
        let milliseconds = Self.milliseconds(timeout)
        var descriptors = [
            pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
            pollfd(fd: notify, events: Int16(POLLIN), revents: 0),
        ]
        try poll(&descriptors, milliseconds: milliseconds)
        let woken = descriptors[0].revents != 0
        if woken { drainWaker() }
        #if os(Linux)
            return (try readEvents(), woken)
        #else
            return ([], woken)
        #endif
    }

    private static func milliseconds(_ duration: Duration?) -> Int32 {
        guard let duration else { return -1 }
        if duration <= .zero { return 0 }
        // Rounded up, so that a short wait never becomes a busy loop.
        let (seconds, attoseconds) = duration.components
        return Int32(clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }

    private func poll(_ descriptors: inout [pollfd], milliseconds: Int32) throws {
        while true {
            let ready = Glue.poll(&descriptors, nfds_t(descriptors.count), milliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                throw FileSystemError(.read, path: "inotify", errno: .current)
            }
            return
        }
    }

    private func drainWaker() {
        var drain = [UInt8](repeating: 0, count: 64)
        while Glue.read(wakeRead, &drain, drain.count) > 0 {}
    }

    /// Polling: waits for the next poll (or the timeout, or a wake-up), lists every
    /// watched folder, and returns what changed; waits for further polls while nothing
    /// did and time remains.
    private func waitPolling(timeout: Duration?) throws -> (events: [Event], woken: Bool) {
        let clock = ContinuousClock()
        let deadline = timeout.map { clock.now.advanced(by: max($0, .zero)) }
        while true {
            let now = clock.now
            var until = nextPoll
            if let deadline, deadline < until { until = deadline }
            var descriptors = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            try poll(
                &descriptors, milliseconds: Self.milliseconds(until > now ? now.duration(to: until) : .zero))
            if descriptors[0].revents != 0 {
                drainWaker()
                return ([], true)
            }
            if clock.now >= nextPoll {
                nextPoll = clock.now.advanced(by: Self.pollingInterval)
                let events = pollOnce()
                if !events.isEmpty { return (events, false) }
            }
            if let deadline, clock.now >= deadline { return ([], false) }
        }
    }

    /// Lists every watched folder and compares it with its last listing.
    private func pollOnce() -> [Event] {
        var events: [Event] = []
        for watch in polled.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
            guard let old = polled[watch] else { continue }
            guard let new = try? PolledFolder.list(old.path, interest: old.interest, system: system),
                new.folder == old.folder
            else {
                // Gone or replaced: the watch ends, as inotify's does.
                polled[watch] = nil
                pollingPaths[old.path] = nil
                events.append(.lost(watch))
                continue
            }
            polled[watch] = new
            for (name, entry) in new.entries.sorted(by: { $0.key < $1.key }) {
                if let before = old.entries[name] {
                    if before != entry
                        && !old.interest.isDisjoint(with: [.closedAfterWriting, .attributesChanged])
                    {
                        events.append(.changed(watch, name: name))
                    }
                } else if !old.interest.isDisjoint(with: [.created, .movedIn]) {
                    events.append(.appeared(watch, name: name, byRename: false))
                }
            }
            if !old.interest.isDisjoint(with: [.deleted, .movedOut]) {
                for name in old.entries.keys.sorted() where new.entries[name] == nil {
                    events.append(.changed(watch, name: name))
                }
            }
        }
        return events
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
                        } else if nameBytes.isEmpty {
                            events.append(.changed(watch, name: nil))
                        } else {
                            let name = String(decoding: nameBytes, as: UTF8.self)
                            if mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 {
                                let byRename = mask & UInt32(IN_MOVED_TO) != 0
                                events.append(.appeared(watch, name: name, byRename: byRename))
                            } else {
                                events.append(.changed(watch, name: name))
                            }
                        }
                    }
                }
                // A read shorter than the buffer took every queued event: no second read.
                if count < buffer.count - (MemoryLayout<inotify_event>.size + Int(NAME_MAX) + 1) {
                    return events
                }
            }
        }
    #endif
}

/// One folder as the polling mechanism last listed it.
private struct PolledFolder {
    /// What identifies a file's version: a rewrite changes at least one of them.
    struct Stamp: Equatable {
        var inode: UInt64
        var size: Int64
        var modified: Int64
        var changed: Int64
    }

    var path: String
    var interest: FolderWatcher.Interest
    /// The folder's own device and inode: a different one means it was replaced.
    var folder: [UInt64]
    var entries: [String: Stamp]

    /// The folder at `path` listed (`openat2`, `fstat`, `fdopendir`, `readdir`, `fstatat`
    /// per entry, without following links).
    ///
    /// The folder is opened as the store's readers open it
    /// (``System/openForReading(_:flags:)``): beneath `system`'s root never through a link,
    /// and without updating its access time where its owner may, so that a poll every
    /// second writes no inode.
    /// - Throws: ``FileSystemError`` when it is missing, no folder, or reached through a link.
    static func list(_ path: String, interest: FolderWatcher.Interest, system: System) throws -> PolledFolder
    {
        let opened = try system.openForReading(path, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
        var status = stat()
        guard fstat(opened, &status) == 0, let directory = fdopendir(opened) else {
            let failure = Errno.current
            _ = Glue.close(opened)
            throw FileSystemError(.list, path: path, errno: failure)
        }
        defer { closedir(directory) }
        let descriptor = dirfd(directory)
        var entries: [String: Stamp] = [:]
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
            }
            if name == "." || name == ".." { continue }
            var entryStatus = stat()
            guard fstatat(descriptor, name, &entryStatus, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            entries[name] = Stamp(
                inode: UInt64(entryStatus.st_ino), size: Int64(entryStatus.st_size),
                modified: Self.modified(entryStatus), changed: Self.changed(entryStatus))
        }
        return PolledFolder(
            path: path, interest: interest, folder: [UInt64(status.st_dev), UInt64(status.st_ino)],
            entries: entries)
    }

    private static func modified(_ status: stat) -> Int64 {
        #if canImport(Darwin)
            nanoseconds(status.st_mtimespec)
        #else
            nanoseconds(status.st_mtim)
        #endif
    }

    private static func changed(_ status: stat) -> Int64 {
        #if canImport(Darwin)
            nanoseconds(status.st_ctimespec)
        #else
            nanoseconds(status.st_ctim)
        #endif
    }

    private static func nanoseconds(_ time: timespec) -> Int64 {
        Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
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

    static func poll(_ descriptors: inout [pollfd], _ count: nfds_t, _ milliseconds: Int32) -> Int32 {
        #if canImport(Glibc)
            Glibc.poll(&descriptors, count, milliseconds)
        #else
            Darwin.poll(&descriptors, count, milliseconds)
        #endif
    }

    static func setNonBlockingCloseOnExec(_ descriptor: Int32) -> Int32 {
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        return fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
    }
}
