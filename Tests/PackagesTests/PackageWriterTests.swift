import Foundation
import Synchronization
import Testing

@testable import Packages

/// A `SystemCalls` table that counts calls and can fail a chosen one.
final class FaultInjector: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    private var failures: [Int: Errno] = [:]
    private var renameNoReplaceFailure: Errno?

    var calls: Int { lock.withLock { count } }

    /// Fails call number `index` (1-based) with `errno`.
    func fail(call index: Int, with errno: Errno) { lock.withLock { failures[index] = errno } }

    /// Makes every `renameat2(RENAME_NOREPLACE)` fail with `errno`.
    func refuseNoReplace(with errno: Errno) { lock.withLock { renameNoReplaceFailure = errno } }

    private func next() -> Errno? {
        lock.withLock {
            count += 1
            return failures.removeValue(forKey: count)
        }
    }

    var table: SystemCalls {
        let live = SystemCalls.live
        var table = live
        table.openat = {
            if let e = self.next() { return .failure(e) }; return live.openat($0, $1, $2, $3)
        }
        table.close = {
            if let e = self.next() { _ = live.close($0); return .failure(e) }; return live.close($0)
        }
        table.write = {
            if let e = self.next() { return .failure(e) }; return live.write($0, $1)
        }
        table.fsync = {
            if let e = self.next() { return .failure(e) }; return live.fsync($0)
        }
        table.mkdirat = {
            if let e = self.next() { return .failure(e) }; return live.mkdirat($0, $1, $2)
        }
        table.renameat = { a, from, b, to, noReplace in
            if let e = self.next() { return .failure(e) }
            if noReplace, let refusal = self.lock.withLock({ self.renameNoReplaceFailure }) {
                return .failure(refusal)
            }
            return live.renameat(a, from, b, to, noReplace)
        }
        table.linkat = {
            if let e = self.next() { return .failure(e) }; return live.linkat($0, $1, $2, $3)
        }
        table.unlinkat = {
            if let e = self.next() { return .failure(e) }; return live.unlinkat($0, $1, $2)
        }
        table.lock = {
            if let e = self.next() { return .failure(e) }; return live.lock($0, $1, $2)
        }
        table.listDirectory = {
            if let e = self.next() { return .failure(e) }; return live.listDirectory($0)
        }
        table.syncfs = {
            if let e = self.next() { return .failure(e) }; return live.syncfs($0)
        }
        return table
    }
}

/// A `SystemCalls` table that records, in order, each fsync (with the path of what it
/// flushed), each syncfs and each rename.
final class DurabilityRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var log: [String] = []

    /// `fsync PATH`, `syncfs` and `rename NAME`, in the order they were made.
    var calls: [String] { lock.withLock { log } }

    private func record(_ call: String) { lock.withLock { log.append(call) } }

    var table: SystemCalls {
        let live = SystemCalls.live
        var table = live
        table.fsync = { descriptor in
            let path =
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)"))
            self.record("fsync " + (path ?? "?"))
            return live.fsync(descriptor)
        }
        table.syncfs = {
            self.record("syncfs")
            return live.syncfs($0)
        }
        table.renameat = { a, from, b, to, noReplace in
            self.record("rename " + to)
            return live.renameat(a, from, b, to, noReplace)
        }
        return table
    }
}

@Suite("Atomic, durable packages")
struct PackageWriterTests {
    /// The folders a store gives its writer (any folders would do).
    static let temporary = "Local.nosync/tmp", locks = "Local.nosync/locks"

    static let files = [
        PackageFile(name: "DocumentMetadata.plist", contents: Data("metadata".utf8)),
        PackageFile(name: "Survey.plist", contents: Data(repeating: 0x41, count: 100_000)),
    ]

    /// Whether `writer` removes leftovers within a second. A child process that another
    /// test starts at that moment holds a copy of every open descriptor (the writers'
    /// lock's too) from its fork until its exec closes them, which makes the lock look
    /// taken for that instant; a lock really left taken stays taken.
    static func cleans(_ writer: PackageWriter) throws -> Bool {
        for _ in 0..<100 {
            if try writer.removeLeftovers() { return true }
            usleep(10_000)
        }
        return false
    }

    func makeStore() throws -> String {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "packages-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(
            atPath: root + "/Documents", withIntermediateDirectories: true)
        try PackageWriter(root: root, temporaryFolder: Self.temporary, locksFolder: Self.locks).prepare()
        return root
    }

    func contents(of path: String) -> [String: Data] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return Dictionary(
            uniqueKeysWithValues: names.map {
                ($0, FileManager.default.contents(atPath: path + "/" + $0) ?? Data())
            })
    }

    func isComplete(_ path: String) -> Bool {
        contents(of: path) == Dictionary(uniqueKeysWithValues: Self.files.map { ($0.name, $0.contents) })
    }

    func temporaries(_ root: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: root + "/Local.nosync/tmp")) ?? []
    }

    @Test("A package is written complete, and no temporary stays behind")
    func writesPackage() throws {
        let root = try makeStore()
        let writer = PackageWriter(root: root, temporaryFolder: Self.temporary, locksFolder: Self.locks)
        #expect(try writer.writePackage(Self.files, at: "Documents/1-abc.survey") == .created)
        #expect(isComplete(root + "/Documents/1-abc.survey"))
        #expect(temporaries(root).isEmpty)
    }

    @Test("An existing name is never replaced: the outcome says so and nothing changes")
    func neverReplaces() throws {
        let root = try makeStore()
        let writer = PackageWriter(root: root, temporaryFolder: Self.temporary, locksFolder: Self.locks)
        _ = try writer.writePackage(Self.files, at: "Documents/1-abc.survey")
        let other = [PackageFile(name: "Survey.plist", contents: Data("other".utf8))]
        #expect(try writer.writePackage(other, at: "Documents/1-abc.survey") == .alreadyExists)
        #expect(isComplete(root + "/Documents/1-abc.survey"))
        #expect(try writer.writeFile(Data("a".utf8), at: "Store.plist") == .created)
        #expect(try writer.writeFile(Data("b".utf8), at: "Store.plist") == .alreadyExists)
        #expect(FileManager.default.contents(atPath: root + "/Store.plist") == Data("a".utf8))
        #expect(temporaries(root).isEmpty)
    }

    @Test(
        "Where RENAME_NOREPLACE is refused, the fallback still never replaces",
        arguments: [Errno.invalid, Errno.notSupported])
    func fallback(_ refusal: Errno) throws {
        let root = try makeStore()
        let injector = FaultInjector()
        injector.refuseNoReplace(with: refusal)
        let writer = PackageWriter(
            root: root, temporaryFolder: Self.temporary, locksFolder: Self.locks, calls: injector.table)
        #expect(try writer.writePackage(Self.files, at: "Documents/p.survey") == .created)
        #expect(
            try writer.writePackage([PackageFile(name: "x", contents: Data())], at: "Documents/p.survey")
                == .alreadyExists)
        #expect(isComplete(root + "/Documents/p.survey"))
        #expect(try writer.writeFile(Data("a".utf8), at: "f") == .created)
        #expect(try writer.writeFile(Data("b".utf8), at: "f") == .alreadyExists)
        #expect(FileManager.default.contents(atPath: root + "/f") == Data("a".utf8))
        #expect(temporaries(root).isEmpty)
    }

    @Test(
        "EIO or ENOSPC at every system call of a write: a clear error, never a partial package",
        arguments: [Errno.io, Errno.noSpace])
    func faultAtEveryCall(_ errno: Errno) throws {
        // Count the calls of a successful write first.
        let counting = FaultInjector()
        let probeRoot = try makeStore()
        _ = try PackageWriter(
            root: probeRoot, temporaryFolder: Self.temporary, locksFolder: Self.locks, calls: counting.table
        ).writePackage(Self.files, at: "Documents/p.survey")
        let total = counting.calls
        #expect(total > 10)
        for index in 1...total {
            let root = try makeStore()
            let injector = FaultInjector()
            injector.fail(call: index, with: errno)
            let writer = PackageWriter(
                root: root, temporaryFolder: Self.temporary, locksFolder: Self.locks, calls: injector.table)
            let destination = root + "/Documents/p.survey"
            do {
                let outcome = try writer.writePackage(Self.files, at: "Documents/p.survey")
                // A failure in releasing a lock or closing after success may go unnoticed;
                // the package must then be complete.
                #expect(outcome == .created)
                #expect(isComplete(destination), "call \(index)")
            } catch let error as FileSystemError {
                #expect(error.errno == errno || error.code == .noSpace, "call \(index): \(error)")
                #expect(!error.description.isEmpty)
                // Either nothing is visible, or (the parent's fsync failed after the rename)
                // the package is complete.
                let exists = FileManager.default.fileExists(atPath: destination)
                #expect(!exists || isComplete(destination), "call \(index) left a partial package")
            }
            #expect(
                try Self.cleans(
                    PackageWriter(root: root, temporaryFolder: Self.temporary, locksFolder: Self.locks)),
                "call \(index) left the writers' lock taken")
            #expect(temporaries(root).isEmpty, "call \(index) left \(temporaries(root))")
        }
    }

    @Test(
        "A batch of one package is made durable as a single package is: its files and folder fsynced before the rename, the parent after it, no syncfs"
    )
    func batchOfOneIsFsyncedItemByItem() throws {
        let root = try makeStore()
        let recorder = DurabilityRecorder()
        let writer = PackageWriter(
            root: root, temporaryFolder: Self.temporary, locksFolder: Self.locks, calls: recorder.table)
        let outcomes = try writer.writeBatch(
            [.package(Self.files, at: "Documents/a/p.survey")], creatingFolders: ["Documents/a"])
        #expect(outcomes == [.created])
        #expect(isComplete(root + "/Documents/a/p.survey"))
        #expect(temporaries(root).isEmpty)
        let calls = recorder.calls
        #expect(!calls.contains("syncfs"), "\(calls)")
        let rename = try #require(calls.firstIndex(of: "rename p.survey"), "\(calls)")
        #expect(calls.filter { $0.hasPrefix("rename") }.count == 1)
        let before = calls[..<rename].filter { $0.hasPrefix("fsync ") }.map { String($0.dropFirst(6)) }
        let temporary = try #require(before.first { $0.hasSuffix(".tmp") }, "\(calls)")
        #expect(
            before == [
                temporary + "/DocumentMetadata.plist", temporary + "/Survey.plist", temporary,
                root + "/Documents",
            ],
            "each file, the package folder, then the parent of the folder created, before the rename")
        #expect(
            calls[(rename + 1)...] == ["fsync " + root + "/Documents/a"],
            "the destination's parent after the rename, and nothing else")
    }

    @Test(
        "A batch of more than one is flushed by syncfs before its renames and again after them, nothing fsynced on its own",
        arguments: [2, 3])
    func largerBatchIsFlushedAtOnce(count: Int) throws {
        #expect(count > PackageWriter.largestBatchSyncedItemByItem)
        let root = try makeStore()
        let recorder = DurabilityRecorder()
        let writer = PackageWriter(
            root: root, temporaryFolder: Self.temporary, locksFolder: Self.locks, calls: recorder.table)
        let items = (0..<count).map {
            PackageWriter.BatchItem.package(Self.files, at: "Documents/a/\($0).survey")
        }
        #expect(
            try writer.writeBatch(items, creatingFolders: ["Documents/a"])
                == Array(repeating: .created, count: count))
        for index in 0..<count { #expect(isComplete(root + "/Documents/a/\(index).survey")) }
        #expect(temporaries(root).isEmpty)
        let calls = recorder.calls
        #expect(calls == ["syncfs"] + (0..<count).map { "rename \($0).survey" } + ["syncfs"], "\(calls)")
    }

    @Test(
        "EIO at every system call of a batch of one and of two: a clear error, never a partial package",
        arguments: [1, 2])
    func batchFaultAtEveryCall(count: Int) throws {
        let items = (0..<count).map {
            PackageWriter.BatchItem.package(Self.files, at: "Documents/a/\($0).survey")
        }
        let counting = FaultInjector()
        _ = try PackageWriter(
            root: try makeStore(), temporaryFolder: Self.temporary, locksFolder: Self.locks,
            calls: counting.table
        ).writeBatch(items, creatingFolders: ["Documents/a"])
        let total = counting.calls
        #expect(total > 10)
        for index in 1...total {
            let root = try makeStore()
            let injector = FaultInjector()
            injector.fail(call: index, with: .io)
            let writer = PackageWriter(
                root: root, temporaryFolder: Self.temporary, locksFolder: Self.locks, calls: injector.table)
            do {
                // A failure in releasing a lock or closing after success may go unnoticed;
                // the packages must then be complete.
                #expect(
                    try writer.writeBatch(items, creatingFolders: ["Documents/a"]).allSatisfy {
                        $0 == .created
                    })
                for item in items { #expect(isComplete(root + "/" + item.path), "call \(index)") }
            } catch let error as FileSystemError {
                #expect(error.errno == .io, "call \(index): \(error)")
                for item in items where FileManager.default.fileExists(atPath: root + "/" + item.path) {
                    #expect(isComplete(root + "/" + item.path), "call \(index) left a partial package")
                }
            }
            #expect(
                try Self.cleans(
                    PackageWriter(root: root, temporaryFolder: Self.temporary, locksFolder: Self.locks)),
                "call \(index) left the writers' lock taken")
            #expect(temporaries(root).isEmpty, "call \(index) left \(temporaries(root))")
        }
    }

    @Test("EINTR is retried, once or many times")
    func interruptedCallsAreRetried() throws {
        let counting = FaultInjector()
        let probeRoot = try makeStore()
        _ = try PackageWriter(
            root: probeRoot, temporaryFolder: Self.temporary, locksFolder: Self.locks, calls: counting.table
        ).writePackage(Self.files, at: "Documents/p.survey")
        for index in 1...counting.calls where index % 2 == 1 {
            let root = try makeStore()
            let injector = FaultInjector()
            injector.fail(call: index, with: .interrupted)
            do {
                #expect(
                    try PackageWriter(
                        root: root, temporaryFolder: Self.temporary, locksFolder: Self.locks,
                        calls: injector.table
                    ).writePackage(Self.files, at: "Documents/p.survey") == .created)
                #expect(isComplete(root + "/Documents/p.survey"))
            } catch let error as FileSystemError {
                // close(2) is never retried: on Linux the descriptor is gone after EINTR.
                #expect(error.operation == .close, "call \(index): \(error)")
            }
        }
    }

    @Test("A half-copied package is completed with what it lacks, and nothing in it is replaced")
    func completesHalfCopiedPackage() throws {
        let root = try makeStore()
        let writer = PackageWriter(root: root, temporaryFolder: Self.temporary, locksFolder: Self.locks)
        let path = root + "/Documents/p.survey"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        #expect(
            FileManager.default.createFile(
                atPath: path + "/DocumentMetadata.plist", contents: Self.files[0].contents))
        #expect(try writer.writePackage(Self.files, at: "Documents/p.survey") == .alreadyExists)
        #expect(try writer.completePackage(Self.files, at: "Documents/p.survey") == ["Survey.plist"])
        #expect(isComplete(path))
        let other = [PackageFile(name: "DocumentMetadata.plist", contents: Data("other".utf8))]
        #expect(try writer.completePackage(other, at: "Documents/p.survey").isEmpty)
        #expect(isComplete(path))
        #expect(temporaries(root).isEmpty)
    }

    @Test("Leftovers are removed only while no writer is active")
    func leftovers() throws {
        let root = try makeStore()
        let writer = PackageWriter(root: root, temporaryFolder: Self.temporary, locksFolder: Self.locks)
        try FileManager.default.createDirectory(
            atPath: root + "/Local.nosync/tmp/123-dead.tmp", withIntermediateDirectories: true)
        #expect(
            FileManager.default.createFile(
                atPath: root + "/Local.nosync/tmp/123-dead.tmp/Survey.plist", contents: Data("half".utf8)))
        #expect(
            FileManager.default.createFile(atPath: root + "/Local.nosync/tmp/456-dead.tmp", contents: Data()))
        let active = try FileLock(path: root + "/Local.nosync/locks/writers.lock", mode: .shared)
        #expect(try writer.removeLeftovers() == false)
        #expect(temporaries(root).count == 2)
        active.unlock()
        #expect(try Self.cleans(writer))
        #expect(temporaries(root).isEmpty)
    }

    @Test(
        "A leftover tree 3,000 folders deep (deeper than a path can name), a file at each level, is removed (every write failed on it)"
    )
    func deepLeftoverTree() throws {
        let root = try makeStore()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let writer = PackageWriter(root: root, temporaryFolder: Self.temporary, locksFolder: Self.locks)
        // Made level by level through descriptors, as no path could name the deepest.
        var folder = open(root + "/Local.nosync/tmp", O_RDONLY | O_DIRECTORY)
        #expect(folder >= 0)
        for _ in 0..<3000 {
            #expect(mkdirat(folder, "d", 0o755) == 0)
            let file = openat(folder, "f", O_CREAT | O_WRONLY, 0o644)
            #expect(file >= 0)
            close(file)
            let next = openat(folder, "d", O_RDONLY | O_DIRECTORY)
            close(folder)
            folder = next
            #expect(folder >= 0)
        }
        close(folder)
        #expect(try Self.cleans(writer))
        #expect(temporaries(root).isEmpty)
    }
}

@Suite("Cross-process locks")
struct FileLockTests {
    static var python: String? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let path = "\(directory)/python3"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    /// A new folder for a test's lock files (the caller removes it).
    static func lockFolder() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "locks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Asks a second, real process to take an OFD lock on `path` without waiting.
    func otherProcessCanLock(_ path: String, exclusive: Bool) throws -> Bool {
        let script = """
            import fcntl, os, struct, sys
            fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
            kind = fcntl.F_WRLCK if sys.argv[2] == "x" else fcntl.F_RDLCK
            try:
                fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack("hhqqi", kind, 0, 0, 0, 0))
                print("locked")
            except OSError:
                print("busy")
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.python!)
        process.arguments = ["-c", script, path, exclusive ? "x" : "s"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return output.contains("locked")
    }

    @Test("An exclusive lock keeps a second process out; a shared one lets readers share")
    func excludesAnotherProcess() throws {
        guard Self.python != nil else {
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                Issue.record("python3 is missing in CI")
            } else {
                print("note: skipping the second-process lock check: python3 is not installed")
            }
            return
        }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("lock-\(UUID().uuidString)")
            .path
        let exclusive = try FileLock(path: path, mode: .exclusive)
        #expect(try otherProcessCanLock(path, exclusive: false) == false)
        #expect(try otherProcessCanLock(path, exclusive: true) == false)
        exclusive.unlock()
        #expect(try otherProcessCanLock(path, exclusive: true) == true)

        let shared = try FileLock(path: path, mode: .shared)
        #expect(try otherProcessCanLock(path, exclusive: false) == true)
        #expect(try otherProcessCanLock(path, exclusive: true) == false)
        shared.unlock()
        #expect(FileManager.default.fileExists(atPath: path), "lock files are never deleted")
    }

    @Test(
        "A lock file beneath a folder that is a link is refused naming that folder, without advice to remove a lock file (the lock file was called a link)"
    )
    func lockBeneathALinkNamesTheLink() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lock-root-\(UUID().uuidString)"
        )
        .path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(
            atPath: root + "/elsewhere", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: root + "/locks", withDestinationPath: root + "/elsewhere")
        let error = #expect(throws: FileSystemError.self) {
            try FileLock(path: root + "/locks/a.lock", mode: .exclusive, root: root)
        }
        #expect(error?.linkOnTheWay == root + "/locks", "\(String(describing: error))")
        #expect(
            error?.description
                == "cannot lock \(root)/locks/a.lock: \(root)/locks, a folder on its way, is a symbolic link, and a link is never followed",
            "\(String(describing: error))")
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/elsewhere").isEmpty)
    }

    @Test("Locks exclude each other within one process too")
    func excludesWithinProcess() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("lock-\(UUID().uuidString)")
            .path
        let first = try FileLock(path: path, mode: .exclusive)
        let error = #expect(throws: FileSystemError.self) {
            try FileLock(path: path, mode: .exclusive, wait: false)
        }
        #expect(error?.code == .locked)
        first.unlock()
        _ = try FileLock(path: path, mode: .exclusive, wait: false)
    }

    /// The inode and link count of the file at `path`.
    private func identity(_ path: String) throws -> (inode: UInt64, links: Int) {
        var status = stat()
        guard lstat(path, &status) == 0 else { throw CocoaError(.fileNoSuchFile) }
        return (UInt64(status.st_ino), Int(status.st_nlink))
    }

    @Test(
        "A lock file with a second name (cp -al) is given a file of its own, once the process holding it under the other name lets go"
    )
    func secondNameReplaced() throws {
        guard let python = Self.python else {
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                Issue.record("python3 is missing in CI")
            } else {
                print("note: skipping the second-name lock check: python3 is not installed")
            }
            return
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "locks-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        for store in ["a", "b"] {
            try FileManager.default.createDirectory(
                at: directory.appendingPathComponent(store), withIntermediateDirectories: true)
        }
        let ours = directory.path + "/a/doc.lock", theirs = directory.path + "/b/doc.lock"
        #expect(FileManager.default.createFile(atPath: ours, contents: nil))
        #expect(link(ours, theirs) == 0)
        let shared = try identity(theirs)
        #expect(shared.links == 2)

        // Another process holds the file under its other name until its input closes.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: python)
        holder.arguments = [
            "-c",
            """
            import fcntl, os, struct, sys
            fd = os.open(sys.argv[1], os.O_RDWR)
            fcntl.fcntl(fd, fcntl.F_OFD_SETLKW, struct.pack("hhqqi", fcntl.F_WRLCK, 0, 0, 0, 0))
            print("locked", flush=True)
            sys.stdin.read()
            """,
            theirs,
        ]
        let input = Pipe(), output = Pipe()
        holder.standardInput = input
        holder.standardOutput = output
        try holder.run()
        defer { if holder.isRunning { holder.terminate() } }
        #expect(output.fileHandleForReading.availableData.starts(with: Array("locked".utf8)))

        // Held elsewhere under the other name: not taken, and the name is left alone.
        let busy = #expect(throws: FileSystemError.self) {
            try FileLock(path: ours, mode: .shared, wait: false)
        }
        #expect(busy?.code == .locked)
        #expect(try identity(ours).inode == shared.inode)

        // Waited for, then given a file of its own.
        let taken = Atomic<Bool>(false), release = Atomic<Bool>(false)
        let waiter = Thread {
            let lock = try? FileLock(path: ours, mode: .exclusive)
            taken.store(lock != nil, ordering: .sequentiallyConsistent)
            while !release.load(ordering: .sequentiallyConsistent) { usleep(1_000) }
            lock?.unlock()
        }
        defer { release.store(true, ordering: .sequentiallyConsistent) }
        waiter.start()
        usleep(300_000)
        let takenEarly = taken.load(ordering: .sequentiallyConsistent)
        #expect(!takenEarly, "taken while the other process held the file")
        try input.fileHandleForWriting.close()
        holder.waitUntilExit()
        let deadline = Date().addingTimeInterval(10)
        while !taken.load(ordering: .sequentiallyConsistent) && Date() < deadline { usleep(10_000) }
        let takenLate = taken.load(ordering: .sequentiallyConsistent)
        #expect(takenLate)
        let now = try identity(ours)
        #expect(now.inode != shared.inode && now.links == 1)
        #expect(try identity(theirs) == (shared.inode, 1), "the other name keeps its file")
        // The two names are two locks now: the other one is free while this one is held.
        #expect(try otherProcessCanLock(theirs, exclusive: true))
        #expect(try otherProcessCanLock(ours, exclusive: false) == false)
    }

    @Test(
        "A lock file found replaced every time it is taken is given up after a bounded number of tries, with an error that says so (it said 'Resource temporarily unavailable')"
    )
    func lockFileThatKeepsChanging() throws {
        let directory = try Self.lockFolder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.path + "/doc.lock"
        // Every look at the name finds another file there than the one just locked.
        let looks = Atomic<Int>(0)
        var calls = SystemCalls.live
        calls.stat = { folder, name in
            looks.add(1, ordering: .relaxed)
            return SystemCalls.live.stat(folder, name).map {
                var status = $0
                status.inode &+= 1
                return status
            }
        }
        let error = #expect(throws: FileSystemError.self) {
            _ = try FileLock(path: path, mode: .exclusive, calls: calls)
        }
        #expect(error?.code == .keepsChanging)
        #expect(error?.operation == .lock && error?.path == path)
        #expect(
            error?.description
                == "cannot lock \(path): it was replaced or given another name each time it was taken (something keeps copying or replacing it, such as repeated `cp -al`); try again once that stops"
        )
        #expect(looks.load(ordering: .relaxed) == FileLock.maximumPasses)
        // The lock was let go each time: another holder takes it at once.
        let other = try FileLock(path: path, mode: .exclusive, wait: false)
        other.unlock()
    }

    @Test(
        "While a lock file keeps being given second names and replaced, no two holders of its name ever hold it at once"
    )
    func replacementKeepsExclusion() throws {
        let directory = try Self.lockFolder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.path + "/doc.lock"
        struct Tally {
            var inside = 0
            var most = 0
            var entries = 0
            var failures: [String] = []
        }
        let tally = Locked(Tally())
        let stop = Atomic<Bool>(false)
        let linked = Atomic<Int>(0)
        // Gives the lock file a second name, again and again, as repeated `cp -al`s would.
        let linker = Thread {
            var copy = 0
            while !stop.load(ordering: .relaxed) {
                copy += 1
                if link(path, directory.path + "/copy-\(copy).lock") == 0 {
                    linked.add(1, ordering: .relaxed)
                }
                usleep(200)
            }
        }
        let workers = (0..<4).map { worker in
            Thread {
                for round in 0..<150 {
                    do {
                        let lock = try FileLock(path: path, mode: round % 3 == 0 ? .shared : .exclusive)
                        let exclusive = round % 3 != 0
                        tally.withLock {
                            $0.inside += exclusive ? 1000 : 1
                            $0.most = max($0.most, $0.inside)
                            $0.entries += 1
                        }
                        usleep(50)
                        tally.withLock { $0.inside -= exclusive ? 1000 : 1 }
                        lock.unlock()
                    } catch {
                        tally.withLock { $0.failures.append("worker \(worker): \(error)") }
                    }
                }
            }
        }
        linker.start()
        for worker in workers { worker.start() }
        let deadline = Date().addingTimeInterval(120)
        while workers.contains(where: { !$0.isFinished }) && Date() < deadline { usleep(10_000) }
        stop.store(true, ordering: .relaxed)
        while !linker.isFinished { usleep(1_000) }
        let result = tally.withLock { $0 }
        #expect(result.failures.isEmpty, "\(result.failures.prefix(3))")
        #expect(result.entries == 4 * 150)
        let secondNames = linked.load(ordering: .relaxed)
        #expect(secondNames > 10, "the lock file was given a second name only \(secondNames) times")
        // An exclusive holder alone counts 1000; with anyone else the count goes above it.
        #expect(result.most <= 1000, "two holders at once: \(result.most)")
    }
}
