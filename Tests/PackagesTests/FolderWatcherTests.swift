import Foundation
import Testing

@testable import Packages

/// A watcher with a root reaches its folders as the store's readers reach files: never
/// through a link beneath the root, in any component.
@Suite("Folder watcher: confined to its root")
struct FolderWatcherTests {
    /// A root holding a folder `real` and a link `link` to a folder outside it that holds
    /// `sub`; and that outside folder.
    static func rootWithLinkOut() throws -> (root: String, outside: String) {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("watcher-\(UUID())").path
        let root = base + "/root"
        let outside = base + "/outside"
        try FileManager.default.createDirectory(atPath: root + "/real", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: outside + "/sub", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: root + "/link", withDestinationPath: outside)
        return (root, base)
    }

    static var mechanisms: [FolderWatcher.Mechanism] {
        #if os(Linux)
            [.inotify, .polling]
        #else
            [.polling]
        #endif
    }

    @Test(
        "A folder reached through a link beneath the root is refused, whatever component the link is",
        arguments: mechanisms)
    func linkInAnyComponentRefused(mechanism: FolderWatcher.Mechanism) throws {
        let (root, base) = try Self.rootWithLinkOut()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let watcher = try FolderWatcher(mechanism: mechanism, root: root)
        defer { watcher.close() }
        // A link as a folder on the way: ELOOP. A link as the last component, opened as a
        // folder without following it: ENOTDIR, as for a file.
        for (path, refusal) in [(root + "/link/sub", "ELOOP"), (root + "/link", "ENOTDIR")] {
            let error = #expect(throws: FileSystemError.self, "\(path) was watched through the link") {
                _ = try watcher.add(path, interest: .allEntries)
            }
            let expected = refusal == "ELOOP" ? error?.code == .symbolicLink : error?.errno == .notDirectory
            #expect(expected, "\(path): \(refusal) expected: \(String(describing: error))")
        }
        // Without a root, only the last component is never followed: the same path is
        // watched (so the test above can fail).
        let unconfined = try FolderWatcher(mechanism: mechanism)
        defer { unconfined.close() }
        _ = try unconfined.add(root + "/link/sub", interest: .allEntries)
    }

    #if os(Linux)
        @Test("An entry created in a folder and one renamed into it are told apart (inotify)")
        func renamedInToldFromCreated() throws {
            let (root, base) = try Self.rootWithLinkOut()
            defer { try? FileManager.default.removeItem(atPath: base) }
            let watcher = try FolderWatcher(mechanism: .inotify, root: root)
            defer { watcher.close() }
            let watch = try watcher.add(root + "/real", interest: .allEntries)
            try FileManager.default.createDirectory(
                atPath: root + "/made", withIntermediateDirectories: false)
            #expect(mkdir(root + "/real/created", 0o755) == 0)
            #expect(rename(root + "/made", root + "/real/renamed") == 0)
            let wanted: [FolderWatcher.Event] = [
                .appeared(watch, name: "created", byRename: false),
                .appeared(watch, name: "renamed", byRename: true),
            ]
            var events: [FolderWatcher.Event] = []
            let deadline = ContinuousClock.now + .seconds(10)
            while events.count < 2 && ContinuousClock.now < deadline {
                events += try watcher.wait(timeout: .seconds(2)).events
            }
            #expect(events == wanted)
        }
    #endif

    @Test("A folder beneath the root is watched, and a new entry in it reported", arguments: mechanisms)
    func folderBeneathRootWatched(mechanism: FolderWatcher.Mechanism) throws {
        let (root, base) = try Self.rootWithLinkOut()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let watcher = try FolderWatcher(mechanism: mechanism, root: root)
        defer { watcher.close() }
        let watch = try watcher.add(root + "/real", interest: .allEntries)
        try Data("x".utf8).write(to: URL(fileURLWithPath: root + "/real/new"))
        var events: [FolderWatcher.Event] = []
        let deadline = ContinuousClock.now + .seconds(10)
        while !events.contains(.appeared(watch, name: "new", byRename: false))
            && ContinuousClock.now < deadline
        {
            events += try watcher.wait(timeout: .seconds(2)).events
        }
        #expect(events.contains(.appeared(watch, name: "new", byRename: false)), "\(events)")
        // Removing the folder ends the watch.
        try FileManager.default.removeItem(atPath: root + "/real")
        var later: [FolderWatcher.Event] = []
        while !later.contains(.lost(watch)) && ContinuousClock.now < deadline {
            later += try watcher.wait(timeout: .seconds(2)).events
        }
        #expect(later.contains(.lost(watch)), "\(later)")
    }
}
