import Foundation
import Packages

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An in-memory disk behind a ``SystemCalls`` table that loses power on demand.
///
/// It keeps two states of everything: what the running system sees, and what would
/// survive a power loss. A file's bytes survive only once the file has been fsynced; a
/// directory's entries (names added, renamed or removed) survive only once that
/// directory has been fsynced, or once `syncfs` has flushed the whole disk (one file
/// system). Nothing else is ever made durable on its own, which is
/// the weakest promise POSIX and Linux file systems make, so a store that stays
/// consistent here stays consistent on any of them.
///
/// Set ``powerLossAtCall`` to a call number (1-based, counting every call of the table):
/// that call and every later one fail with `EIO` and change nothing, as if the machine
/// had stopped there. ``afterPowerLoss()`` then gives the disk as it would be found on
/// the next boot.
///
/// The disk is for tests, and is `@unchecked Sendable` because a lock guards its state.
public final class SimulatedDisk: @unchecked Sendable {
    private struct Node {
        var isDirectory: Bool
        var bytes: [UInt8] = []
        var durableBytes: [UInt8] = []
        var entries: [String: Int] = [:]
        var durableEntries: [String: Int] = [:]
    }

    private struct OpenFile {
        var node: Int
        var offset = 0
        var writable: Bool
    }

    private let lock = NSLock()
    private var nodes: [Int: Node]
    private var nextNode = 2
    private var open: [Int32: OpenFile] = [:]
    private var nextDescriptor: Int32 = 100
    private var count = 0
    private var stopped = false
    private var stopAt: Int?

    private static let root = 1

    /// This disk's device number (`st_dev`): its own, kept by the disks made from it
    /// (after a power loss, or synced), so that two disks never pass for one.
    private let deviceNumber: UInt64
    private static let devices = DeviceCounter()

    /// An empty disk: only `/`, durable.
    public init() {
        nodes = [Self.root: Node(isDirectory: true)]
        deviceNumber = Self.devices.next()
    }

    private init(nodes: [Int: Node], nextNode: Int, device: UInt64) {
        self.nodes = nodes
        self.nextNode = nextNode
        deviceNumber = device
    }

    /// The number of calls made so far.
    public var calls: Int { lock.withLock { count } }

    /// Whether the power has gone.
    public var isPoweredOff: Bool { lock.withLock { stopped } }

    /// The call (1-based, counted from now on the running total) at which the power
    /// goes; `nil` for never.
    public var powerLossAtCall: Int? {
        get { lock.withLock { stopAt } }
        set { lock.withLock { stopAt = newValue } }
    }

    /// Loses power now: every later call fails.
    public func powerOff() { lock.withLock { stopped = true } }

    /// A disk holding exactly what would survive a power loss now: every directory with
    /// its durable entries, every file with its durable bytes. Descriptors are gone and
    /// the call count starts again at zero.
    public func afterPowerLoss() -> SimulatedDisk {
        lock.withLock {
            var survived: [Int: Node] = [:]
            var next = nextNode
            var used: Set<Int> = [Self.root]
            // Each path is rebuilt on its own, so a directory that a half-durable rename
            // left in two places comes back as two directories, never as one shared node.
            // Nodes keep their numbers (a store notices when its folder's inode changes).
            func rebuild(_ id: Int) -> Node {
                let old = nodes[id]!
                var node = Node(isDirectory: old.isDirectory)
                if old.isDirectory {
                    for (name, child) in old.durableEntries.sorted(by: { $0.key < $1.key })
                    where nodes[child] != nil {
                        let copy = rebuild(child)
                        var newID = child
                        if used.contains(newID) {
                            newID = next
                            next += 1
                        }
                        used.insert(newID)
                        survived[newID] = copy
                        node.entries[name] = newID
                    }
                    node.durableEntries = node.entries
                } else {
                    node.bytes = old.durableBytes
                    node.durableBytes = old.durableBytes
                }
                return node
            }
            survived[Self.root] = rebuild(Self.root)
            return SimulatedDisk(nodes: survived, nextNode: next, device: deviceNumber)
        }
    }

    /// An exact copy of the running state, with every change so far made durable (as if
    /// the whole disk had been synced): a starting point for many crash runs.
    public func synced() -> SimulatedDisk {
        lock.withLock {
            var copy = nodes
            for id in copy.keys {
                copy[id]!.durableBytes = copy[id]!.bytes
                copy[id]!.durableEntries = copy[id]!.entries
            }
            return SimulatedDisk(nodes: copy, nextNode: nextNode, device: deviceNumber)
        }
    }

    /// Every path under `path` with the bytes a file holds now (`nil` for a folder), for
    /// comparing two states in tests.
    public func snapshot(of path: String = "/") -> [String: [UInt8]?] {
        lock.withLock {
            var result: [String: [UInt8]?] = [:]
            guard case .success(let start) = resolve(path) else { return result }
            func walk(_ id: Int, _ prefix: String) {
                for (name, child) in nodes[id]!.entries {
                    let childPath = prefix + "/" + name
                    if nodes[child]!.isDirectory {
                        result[childPath] = .some(nil)
                        walk(child, childPath)
                    } else {
                        result[childPath] = nodes[child]!.bytes
                    }
                }
            }
            walk(start, path == "/" ? "" : path)
            return result
        }
    }

    // MARK: The system calls

    /// The table that runs every call against this disk.
    public var table: SystemCalls {
        SystemCalls(
            openat: { directory, path, flags, mode in
                self.call { $0.openat(directory, path, flags) }
            },
            close: { descriptor in
                self.call { disk in
                    disk.open.removeValue(forKey: descriptor) == nil ? .failure(.badDescriptor) : .success(())
                }
            },
            write: { descriptor, bytes in
                self.call { $0.write(descriptor, Array(bytes)) }
            },
            read: { descriptor, buffer in
                self.call { $0.read(descriptor, buffer) }
            },
            fsync: { descriptor in
                self.call { $0.fsync(descriptor) }
            },
            mkdirat: { directory, path, mode in
                self.call { $0.mkdir(directory, path) }
            },
            renameat: { fromDirectory, from, toDirectory, to, noReplace in
                self.call { $0.rename(fromDirectory, from, toDirectory, to, noReplace: noReplace) }
            },
            linkat: { fromDirectory, from, toDirectory, to in
                self.call { $0.link(fromDirectory, from, toDirectory, to) }
            },
            unlinkat: { directory, path, isDirectory in
                self.call { $0.unlink(directory, path, isDirectory: isDirectory) }
            },
            lock: { descriptor, _, _ in
                self.call { $0.open[descriptor] == nil ? .failure(.badDescriptor) : .success(()) }
            },
            listDirectory: { descriptor in
                self.call { $0.list(descriptor) }
            },
            stat: { directory, path in
                self.call { $0.stat(directory, path) }
            },
            fstat: { descriptor in
                self.call { disk in
                    guard let file = disk.open[descriptor] else { return .failure(.badDescriptor) }
                    return .success(disk.status(of: file.node))
                }
            },
            // The disk has no permissions: whatever is there may be used.
            access: { directory, path, _ in
                self.call { $0.stat(directory, path).map { _ in } }
            },
            // Every lock is granted at once here (see `lock`): none is ever held.
            lockHeld: { descriptor in
                self.call { $0.open[descriptor] == nil ? .failure(.badDescriptor) : .success(false) }
            },
            syncfs: { descriptor in
                self.call { $0.syncfs(descriptor) }
            }
        )
    }

    /// Counts the call, and runs it unless the power is gone (now or before).
    private func call<T>(_ body: (SimulatedDisk) -> Result<T, Errno>) -> Result<T, Errno> {
        lock.withLock {
            count += 1
            if let stopAt, count >= stopAt { stopped = true }
            if stopped { return .failure(.io) }
            return body(self)
        }
    }

    // MARK: Paths

    private func components(_ path: String) -> [String] {
        path.split(separator: "/", omittingEmptySubsequences: true).map(String.init).filter { $0 != "." }
    }

    /// The node at an absolute path, or at a path relative to an open directory (the
    /// simulated disk has no symbolic links, so nothing is ever followed).
    private func resolve(_ path: String, from directory: Int32 = AT_FDCWD) -> Result<Int, Errno> {
        let start: Int
        if path.hasPrefix("/") {
            start = Self.root
        } else if directory != AT_FDCWD, let file = open[directory] {
            start = file.node
        } else {
            return .failure(directory == AT_FDCWD ? .invalid : .badDescriptor)
        }
        var id = start
        for name in components(path) {
            guard name != ".." else { return .failure(.invalid) }
            guard nodes[id]!.isDirectory else { return .failure(.notDirectory) }
            guard let child = nodes[id]!.entries[name] else { return .failure(.noEntry) }
            id = child
        }
        return .success(id)
    }

    /// The folder that holds `path`, and the last component's name.
    private func parent(_ directory: Int32, _ path: String) -> Result<(Int, String), Errno> {
        var names = components(path)
        guard let last = names.popLast(), last != ".." else { return .failure(.invalid) }
        let folder = (path.hasPrefix("/") ? "/" : "") + names.joined(separator: "/")
        return resolve(folder, from: directory).flatMap { id in
            nodes[id]!.isDirectory ? .success((id, last)) : .failure(.notDirectory)
        }
    }

    private func status(of id: Int) -> SystemCalls.FileStatus {
        let node = nodes[id]!
        return SystemCalls.FileStatus(
            isDirectory: node.isDirectory, size: node.bytes.count, device: deviceNumber, inode: UInt64(id))
    }

    // MARK: Operations (called with the lock held)

    private func openat(_ directory: Int32, _ path: String, _ flags: Int32) -> Result<Int32, Errno> {
        let place: Result<(Int, String), Errno> =
            components(path).isEmpty
            ? resolve(path, from: directory).map { ($0, "") } : parent(directory, path)
        return place.flatMap { folder, name -> Result<Int32, Errno> in
            let access = flags & O_ACCMODE
            var id = name.isEmpty ? folder : nodes[folder]!.entries[name]
            if id == nil {
                guard flags & O_CREAT != 0 else { return .failure(.noEntry) }
                let newID = nextNode
                nextNode += 1
                nodes[newID] = Node(isDirectory: false)
                nodes[folder]!.entries[name] = newID
                id = newID
            } else if flags & O_CREAT != 0 && flags & O_EXCL != 0 {
                return .failure(.exists)
            }
            let node = nodes[id!]!
            if flags & O_DIRECTORY != 0 && !node.isDirectory { return .failure(.notDirectory) }
            if node.isDirectory && access != O_RDONLY { return .failure(.isDirectory) }
            if flags & O_TRUNC != 0 && access != O_RDONLY { nodes[id!]!.bytes = [] }
            let descriptor = nextDescriptor
            nextDescriptor += 1
            open[descriptor] = OpenFile(node: id!, writable: access != O_RDONLY)
            return .success(descriptor)
        }
    }

    private func write(_ descriptor: Int32, _ bytes: [UInt8]) -> Result<Int, Errno> {
        guard let file = open[descriptor], file.writable else { return .failure(.badDescriptor) }
        var contents = nodes[file.node]!.bytes
        if contents.count < file.offset {
            contents += [UInt8](repeating: 0, count: file.offset - contents.count)
        }
        let end = file.offset + bytes.count
        if end > contents.count { contents += [UInt8](repeating: 0, count: end - contents.count) }
        contents.replaceSubrange(file.offset..<end, with: bytes)
        nodes[file.node]!.bytes = contents
        open[descriptor]!.offset = end
        return .success(bytes.count)
    }

    private func read(_ descriptor: Int32, _ buffer: UnsafeMutableRawBufferPointer) -> Result<Int, Errno> {
        guard let file = open[descriptor] else { return .failure(.badDescriptor) }
        let node = nodes[file.node]!
        guard !node.isDirectory else { return .failure(.isDirectory) }
        let count = max(0, min(buffer.count, node.bytes.count - file.offset))
        if count > 0 {
            node.bytes.withUnsafeBytes { source in
                buffer.copyMemory(
                    from: UnsafeRawBufferPointer(rebasing: source[file.offset..<file.offset + count]))
            }
        }
        open[descriptor]!.offset += count
        return .success(count)
    }

    private func fsync(_ descriptor: Int32) -> Result<Void, Errno> {
        guard let file = open[descriptor] else { return .failure(.badDescriptor) }
        if nodes[file.node]!.isDirectory {
            nodes[file.node]!.durableEntries = nodes[file.node]!.entries
        } else {
            nodes[file.node]!.durableBytes = nodes[file.node]!.bytes
        }
        return .success(())
    }

    /// `syncfs`: the whole disk is one file system, so every file's bytes and every
    /// directory's entries become durable.
    private func syncfs(_ descriptor: Int32) -> Result<Void, Errno> {
        guard open[descriptor] != nil else { return .failure(.badDescriptor) }
        for id in nodes.keys {
            nodes[id]!.durableBytes = nodes[id]!.bytes
            nodes[id]!.durableEntries = nodes[id]!.entries
        }
        return .success(())
    }

    private func mkdir(_ directory: Int32, _ path: String) -> Result<Void, Errno> {
        parent(directory, path).flatMap { folder, name in
            guard nodes[folder]!.entries[name] == nil else { return .failure(.exists) }
            let newID = nextNode
            nextNode += 1
            nodes[newID] = Node(isDirectory: true)
            nodes[folder]!.entries[name] = newID
            return .success(())
        }
    }

    private func rename(
        _ fromDirectory: Int32, _ from: String, _ toDirectory: Int32, _ to: String, noReplace: Bool
    )
        -> Result<Void, Errno>
    {
        parent(fromDirectory, from).flatMap { source, sourceName in
            parent(toDirectory, to).flatMap { target, targetName in
                guard let moving = nodes[source]!.entries[sourceName] else { return .failure(.noEntry) }
                if let existing = nodes[target]!.entries[targetName] {
                    if existing == moving { return .success(()) }
                    if noReplace { return .failure(.exists) }
                    let old = nodes[existing]!
                    switch (nodes[moving]!.isDirectory, old.isDirectory) {
                    case (true, true) where !old.entries.isEmpty: return .failure(.notEmpty)
                    case (true, false): return .failure(.notDirectory)
                    case (false, true): return .failure(.isDirectory)
                    default: break
                    }
                }
                nodes[source]!.entries[sourceName] = nil
                nodes[target]!.entries[targetName] = moving
                return .success(())
            }
        }
    }

    private func link(_ fromDirectory: Int32, _ from: String, _ toDirectory: Int32, _ to: String) -> Result<
        Void, Errno
    > {
        parent(fromDirectory, from).flatMap { source, sourceName in
            parent(toDirectory, to).flatMap { target, targetName in
                guard let node = nodes[source]!.entries[sourceName] else { return .failure(.noEntry) }
                guard !nodes[node]!.isDirectory else { return .failure(.notPermitted) }
                guard nodes[target]!.entries[targetName] == nil else { return .failure(.exists) }
                nodes[target]!.entries[targetName] = node
                return .success(())
            }
        }
    }

    private func unlink(_ directory: Int32, _ path: String, isDirectory: Bool) -> Result<Void, Errno> {
        parent(directory, path).flatMap { folder, name in
            guard let id = nodes[folder]!.entries[name] else { return .failure(.noEntry) }
            let node = nodes[id]!
            if isDirectory {
                guard node.isDirectory else { return .failure(.notDirectory) }
                guard node.entries.isEmpty else { return .failure(.notEmpty) }
            } else if node.isDirectory {
                return .failure(.isDirectory)
            }
            nodes[folder]!.entries[name] = nil
            return .success(())
        }
    }

    private func list(_ descriptor: Int32) -> Result<[SystemCalls.DirectoryEntry], Errno> {
        guard let file = open[descriptor] else { return .failure(.badDescriptor) }
        guard nodes[file.node]!.isDirectory else { return .failure(.notDirectory) }
        return .success(
            nodes[file.node]!.entries.sorted { $0.key < $1.key }.map {
                SystemCalls.DirectoryEntry(name: $0.key, isDirectory: nodes[$0.value]!.isDirectory)
            })
    }

    private func stat(_ directory: Int32, _ path: String) -> Result<SystemCalls.FileStatus, Errno> {
        resolve(path, from: directory).map { status(of: $0) }
    }
}

/// Hands out device numbers, one per new simulated disk.
private final class DeviceCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var last: UInt64 = 0

    func next() -> UInt64 {
        lock.withLock {
            last += 1
            return last
        }
    }
}
