import Foundation
import Synchronization
import Testing

@testable import Packages

/// How a whole file is read: what it leaves behind, and how it copes with a refused flag.
@Suite("Reading whole files")
struct FileReadingTests {
    #if os(Linux)
        /// A fresh folder with one file of `bytes` whose access time is set a day before its
        /// modification time, so that the next read that may update it does (`relatime`).
        static func folderWithStaleAccessTime(_ bytes: Int) throws -> (root: String, file: String) {
            let root = FileManager.default.temporaryDirectory.appendingPathComponent(
                "file-reading-\(UUID().uuidString)"
            ).path
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            let file = root + "/Metadata.plist"
            try Data(repeating: 0x61, count: bytes).write(to: URL(fileURLWithPath: file))
            try setAccessTime(of: file, toSecondsBefore: 86_400)
            return (root, file)
        }

        static func setAccessTime(of file: String, toSecondsBefore offset: Int) throws {
            var status = stat()
            #expect(stat(file, &status) == 0)
            var times = [
                timespec(tv_sec: status.st_mtim.tv_sec - offset, tv_nsec: 0),
                status.st_mtim,
            ]
            #expect(utimensat(AT_FDCWD, file, &times, 0) == 0)
        }

        static func accessTime(of file: String) -> Int {
            var status = stat()
            _ = stat(file, &status)
            return status.st_atim.tv_sec
        }

        /// Whether a plain read updates a stale access time in the temporary folder: where
        /// the file system keeps none (mounted `noatime`), no read changes it, and a test of a
        /// read that must not could not fail.
        static func plainReadUpdatesAccessTime() -> Bool {
            guard let (root, file) = try? folderWithStaleAccessTime(10) else { return false }
            defer { try? FileManager.default.removeItem(atPath: root) }
            let before = accessTime(of: file)
            _ = try? Data(contentsOf: URL(fileURLWithPath: file))
            return accessTime(of: file) != before
        }

        /// Runs a test only where a read that may update an access time does.
        static let keepsAccessTimes = ConditionTrait.enabled(
            if: plainReadUpdatesAccessTime(), "the file system keeps no access times")

        @Test(
            "Reading a store's file leaves its access time as it was",
            keepsAccessTimes)
        func accessTimeKept() throws {
            let (root, file) = try Self.folderWithStaleAccessTime(1_000)
            defer { try? FileManager.default.removeItem(atPath: root) }
            let stale = Self.accessTime(of: file)
            let read = try #require(try FileReader(root: root).contentsAndStatus(atPath: file))
            #expect(read.data.count == 1_000)
            #expect(Self.accessTime(of: file) == stale, "the read updated the access time")
        }

        @Test(
            "Listing a store's folder, or holding it or a folder in it open to look inside, leaves its access time as it was",
            keepsAccessTimes)
        func folderAccessTimeKept() throws {
            let (root, _) = try Self.folderWithStaleAccessTime(10)
            defer { try? FileManager.default.removeItem(atPath: root) }
            let folder = root + "/Documents"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
            try Data("x".utf8).write(to: URL(fileURLWithPath: folder + "/a"))
            let reader = FileReader(root: root)
            try Self.setAccessTime(of: folder, toSecondsBefore: 86_400)
            let stale = Self.accessTime(of: folder)
            #expect(try reader.names(atPath: folder) == ["a"])
            #expect(Self.accessTime(of: folder) == stale, "the listing updated the access time")
            let names = try reader.withFolder(atPath: folder) { try $0.entries().map(\.name) }
            #expect(names == ["a"])
            #expect(Self.accessTime(of: folder) == stale, "the listing of the open folder updated it")
            try FileManager.default.createDirectory(
                atPath: folder + "/sub", withIntermediateDirectories: false)
            try Self.setAccessTime(of: folder + "/sub", toSecondsBefore: 86_400)
            let staleSub = Self.accessTime(of: folder + "/sub")
            let inner = try reader.withFolder(atPath: folder) {
                try $0.withSubfolder("sub") { try $0.entries() }
            }
            #expect(inner??.isEmpty == true)
            #expect(Self.accessTime(of: folder + "/sub") == staleSub, "the listing of a subfolder updated it")
        }

        @Test(
            "The polling watcher lists a folder without updating its access time",
            keepsAccessTimes)
        func pollingKeepsAccessTime() throws {
            let (root, _) = try Self.folderWithStaleAccessTime(10)
            defer { try? FileManager.default.removeItem(atPath: root) }
            try Self.setAccessTime(of: root, toSecondsBefore: 86_400)
            let stale = Self.accessTime(of: root)
            let watcher = try FolderWatcher(mechanism: .polling)
            defer { watcher.close() }
            _ = try watcher.add(root, interest: .allEntries)
            #expect(Self.accessTime(of: root) == stale, "the watcher's listing updated the access time")
            // A plain listing would have: the test can fail.
            _ = try FileManager.default.contentsOfDirectory(atPath: root)
            #expect(Self.accessTime(of: root) != stale)
        }

        @Test(
            "A file whose owner refuses O_NOATIME is read without it, and the flag is not asked for again beneath that root in this process"
        )
        func accessTimeFlagRefused() throws {
            let (root, file) = try Self.folderWithStaleAccessTime(5_000)
            defer { try? FileManager.default.removeItem(atPath: root) }
            let flagsTried = Locked<[Int32]>([])
            var calls = SystemCalls.live
            calls.openat = { directory, path, flags, mode in
                guard path.hasSuffix("Metadata.plist") else {
                    return SystemCalls.live.openat(directory, path, flags, mode)
                }
                flagsTried.withLock { $0.append(flags) }
                // As for another user's file: the flag is not permitted.
                if flags & System.noAccessTime != 0 { return .failure(.notPermitted) }
                return SystemCalls.live.openat(directory, path, flags, mode)
            }
            let reader = FileReader(root: root, calls: calls)
            let read = try #require(try reader.contents(atPath: file))
            #expect(read == Data(repeating: 0x61, count: 5_000))
            var tried = flagsTried.withLock { $0 }
            #expect(tried.count == 2)
            #expect(tried.first.map { $0 & System.noAccessTime != 0 } == true)
            #expect(tried.last.map { $0 & System.noAccessTime == 0 } == true)
            // Refused once beneath this root, the flag is not asked for there again.
            #expect(try reader.contents(atPath: file) == read)
            tried = flagsTried.withLock { $0 }
            #expect(tried.count == 3)
            #expect(tried.last.map { $0 & System.noAccessTime == 0 } == true)
            // Nor does another reader of the same root.
            #expect(try FileReader(root: root, calls: calls).contents(atPath: file) == read)
            tried = flagsTried.withLock { $0 }
            #expect(tried.count == 4)
            #expect(tried.last.map { $0 & System.noAccessTime == 0 } == true)
            // A reader of another root asks again.
            let (otherRoot, otherFile) = try Self.folderWithStaleAccessTime(10)
            defer { try? FileManager.default.removeItem(atPath: otherRoot) }
            _ = try FileReader(root: otherRoot, calls: calls).contents(atPath: otherFile)
            tried = flagsTried.withLock { $0 }
            #expect(tried.count == 6)
            #expect(tried[4] & System.noAccessTime != 0)
        }
    #endif

    @Test("A file is read whole at every size, empty and past the first guess included")
    func sizes() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "file-reading-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let reader = FileReader(root: root)
        for size in [0, 1, 15, 16, 1_023, 4_096, 4_097, 100_000] {
            let bytes = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            let file = root + "/f\(size)"
            try bytes.write(to: URL(fileURLWithPath: file))
            let read = try #require(try reader.contentsAndStatus(atPath: file))
            #expect(read.data == bytes, "a file of \(size) bytes")
            #expect(read.status.size == size)
        }
        #expect(throws: FileSystemError.self) {
            try reader.contents(atPath: root + "/f100000", limit: 99_999)
        }
    }
}
