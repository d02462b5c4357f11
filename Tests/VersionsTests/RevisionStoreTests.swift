import Foundation
import Packages
import Synchronization
import Testing
import Versions

/// `RevisionStore` on a real folder, by example: prune, tombstones in and not yet in
/// effect, the clean-up of copies of pruned revisions, and what a read skips.
@Suite("Revision store: prune, tombstones, clean-up")
struct RevisionStoreTests {
    static let document = UUID(uuidString: "6F1C2B8E-3D4A-4C1B-9E2F-1A2B3C4D5E02")!
    static let laptop = Device(id: "laptop-1", name: "Laptop")

    /// A store folder with a chain of `count` revisions of one document; returns the store
    /// and the revisions, oldest first.
    static func chain(_ count: Int) throws -> (RevisionStore, [RevisionMetadata]) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "revisions-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let wall = ManualClock(1_795_168_800_000)
        let store = RevisionStore(root: root, device: laptop, wallClock: { wall.milliseconds })
        try RevisionStore.writer(root: store.root, calls: store.calls).prepare()
        var revisions: [RevisionMetadata] = []
        for index in 0..<count {
            wall.set(wall.milliseconds + 1_000)
            revisions.append(
                try store.write(
                    document: document, parents: revisions.suffix(1), content: Data("content \(index)".utf8),
                    formatVersion: 2))
        }
        return (store, revisions)
    }

    func path(_ store: RevisionStore, _ relative: String) -> String { store.root + "/" + relative }

    func exists(_ store: RevisionStore, _ relative: String) -> Bool {
        FileManager.default.fileExists(atPath: path(store, relative))
    }

    @Test(
        "prune replaces the content of non-heads by tombstones, keeps the head and the history asked for, and ends however large that is"
    )
    func prune() throws {
        let (store, revisions) = try Self.chain(4)
        defer { try? FileManager.default.removeItem(atPath: store.root) }
        #expect(try store.prune(Self.document, keepHistory: 1, dryRun: true) == revisions.prefix(2).map(\.id))
        #expect(
            exists(store, StoreLayout.package(revisions[0].id, of: Self.document)),
            "a dry run changes nothing")
        #expect(try store.prune(Self.document, keepHistory: Int.max) == [])
        #expect(try store.prune(Self.document, keepHistory: 1) == revisions.prefix(2).map(\.id))
        for revision in revisions.prefix(2) {
            #expect(!exists(store, StoreLayout.package(revision.id, of: Self.document)))
            #expect(exists(store, StoreLayout.tombstone(revision.id, of: Self.document)))
        }
        let (graph, pruned) = try store.graph(of: Self.document)
        #expect(graph.revisions.count == 4 && pruned == Set(revisions.prefix(2).map(\.id)))
        #expect(graph.winner?.id == revisions[3].id)
        #expect(try store.content(of: Self.document, revision: revisions[2]) == Data("content 2".utf8))
    }

    @Test(
        "A store held open reads a package whose content or metadata changed since as a fresh one does, never from memory"
    )
    func heldStoreSeesContentGo() throws {
        for replacement in ["removed", "link", "folder", "metadata torn", "metadata gone"] {
            let (store, revisions) = try Self.chain(2)
            defer { try? FileManager.default.removeItem(atPath: store.root) }
            #expect(try store.read(Self.document).live.count == 2, "the first read knows both")
            let package = path(store, StoreLayout.package(revisions[1].id, of: Self.document))
            let content = package + "/" + StoreLayout.contentFile
            let metadata = package + "/" + StoreLayout.metadataFile
            switch replacement {
            case "link":
                try FileManager.default.removeItem(atPath: content)
                try FileManager.default.createSymbolicLink(
                    atPath: content, withDestinationPath: "/etc/hostname")
            case "folder":
                try FileManager.default.removeItem(atPath: content)
                try FileManager.default.createDirectory(atPath: content, withIntermediateDirectories: false)
            case "metadata torn":
                // Cut short in place: the same file, as a power loss after an engine's
                // unsynced write leaves it.
                let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: metadata))
                try handle.truncate(atOffset: 100)
                try handle.close()
            case "metadata gone": try FileManager.default.removeItem(atPath: metadata)
            default: try FileManager.default.removeItem(atPath: content)
            }
            let fresh = try RevisionStore(root: store.root, device: Self.laptop).read(Self.document)
            let held = try store.read(Self.document)
            #expect(fresh.live[revisions[1].id] == nil, "\(replacement): a fresh store does not count it")
            #expect(Set(held.live.keys) == Set(fresh.live.keys), "\(replacement)")
            #expect(held.incomplete == fresh.incomplete, "\(replacement)")
            #expect(held.skipped == fresh.skipped, "\(replacement)")
            #expect(held.graph.winner?.id == revisions[0].id, "\(replacement)")
        }
    }

    @Test(
        "A revision whose metadata would pass the 1 MiB its readers take is refused and nothing is written (it was written, acknowledged and then unreadable)"
    )
    func oversizedMetadataRefused() throws {
        let (store, revisions) = try Self.chain(1)
        let long = RevisionStore(
            root: store.root, device: Device(id: "laptop-2", name: String(repeating: "&", count: 300_000)))
        let before = try FileManager.default.contentsOfDirectory(
            atPath: path(store, StoreLayout.folder(of: Self.document)))
        let error = #expect(throws: StoreError.self) {
            try long.write(
                document: Self.document, parents: revisions, content: Data("next".utf8), formatVersion: 2)
        }
        #expect(
            error?.description.hasPrefix("the revision's DocumentMetadata.plist would be ") == true
                && error?.description.hasSuffix(
                    " bytes, more than the 1048576 its readers take; nothing was written")
                    == true,
            "\(String(describing: error))")
        #expect(
            try FileManager.default.contentsOfDirectory(
                atPath: path(store, StoreLayout.folder(of: Self.document)))
                == before)
        #expect(try store.read(Self.document).graph.heads.map(\.id) == [revisions[0].id])
        // Under the limit, a long name is written and reads back.
        let fits = RevisionStore(
            root: store.root, device: Device(id: "laptop-2", name: String(repeating: "&", count: 200_000)))
        let written = try fits.write(
            document: Self.document, parents: revisions, content: Data("next".utf8), formatVersion: 2)
        #expect(try store.read(Self.document).graph.heads.map(\.id) == [written.id])
    }

    @Test(
        "A revision or a resolution whose content would pass the 256 MiB its readers take is refused and nothing is written; one at the limit is written and reads back"
    )
    func oversizedContentRefused() throws {
        let (store, revisions) = try Self.chain(1)
        let folder = path(store, StoreLayout.folder(of: Self.document))
        let before = try FileManager.default.contentsOfDirectory(atPath: folder)
        let error = #expect(throws: StoreError.self) {
            try store.write(
                document: Self.document, parents: revisions,
                content: Data(count: FileReader.contentLimit + 1),
                formatVersion: 2)
        }
        #expect(
            error
                == .revisionTooLarge(
                    "Survey.plist", FileReader.contentLimit + 1, limit: FileReader.contentLimit))
        // A resolution (resolve --from, a merge) is refused the same way.
        #expect(
            throws: StoreError.revisionTooLarge(
                "Survey.plist", FileReader.contentLimit + 1, limit: FileReader.contentLimit)
        ) {
            try store.writeResolution(
                document: Self.document, parents: revisions,
                content: Data(count: FileReader.contentLimit + 1),
                formatVersion: 2)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == before)
        let atLimit = try store.write(
            document: Self.document, parents: revisions, content: Data(count: FileReader.contentLimit),
            formatVersion: 2)
        #expect(try store.content(of: Self.document, revision: atLimit).count == FileReader.contentLimit)
    }

    @Test(
        "A resolution of heads stamped at the last stamp metadata holds (the end of 9999, the counter at its limit) is written, stamped like them; one a tick below takes the next tick"
    )
    func resolutionAtTheLastStamp() throws {
        let (store, revisions) = try Self.chain(1)
        defer { try? FileManager.default.removeItem(atPath: store.root) }
        let last = HybridTimestamp(milliseconds: 253_402_300_799_999, counter: Int(Int32.max))
        for (stamp, expected) in [
            (HybridTimestamp(milliseconds: last.milliseconds, counter: last.counter - 1), last), (last, last),
            (
                HybridTimestamp(milliseconds: last.milliseconds - 1, counter: last.counter),
                HybridTimestamp(milliseconds: last.milliseconds, counter: 0)
            ),
        ] {
            var head = revisions[0]
            head.timestamp = stamp
            let resolution = try store.writeResolution(
                document: Self.document, parents: [head], content: Data("resolved \(stamp)".utf8),
                formatVersion: 2)
            #expect(resolution.timestamp == expected)
            #expect(try store.read(Self.document).live[resolution.id] != nil)
        }
    }

    @Test("A store held open reads an unchanged package's metadata once, however often it reads the folder")
    func heldStoreRemembersUnchangedMetadata() throws {
        let (writer, revisions) = try Self.chain(2)
        defer { try? FileManager.default.removeItem(atPath: writer.root) }
        let opened = MetadataOpens()
        let store = RevisionStore(root: writer.root, device: Self.laptop, calls: opened.calls)
        func metadataOpens() -> Int { opened.paths.count }
        #expect(try store.read(Self.document).live.count == 2)
        #expect(metadataOpens() == 2, "the first read reads both metadata files")
        #expect(try store.read(Self.document).graph.winner?.id == revisions[1].id)
        #expect(metadataOpens() == 2, "the second read takes both from memory")
    }

    /// The live system calls, recording the path of every `openat` and `stat`.
    final class OpensAndStats: Sendable {
        let paths = Locked<(opens: [String], stats: [String])>(([], []))

        var calls: SystemCalls {
            var calls = SystemCalls.live
            calls.openat = { [self] directory, path, flags, mode in
                paths.withLock { $0.opens.append(path) }
                return SystemCalls.live.openat(directory, path, flags, mode)
            }
            calls.stat = { [self] directory, path in
                paths.withLock { $0.stats.append(path) }
                return SystemCalls.live.stat(directory, path)
            }
            return calls
        }
    }

    @Test("A read opens each package's folder once and looks at both of its files through that descriptor")
    func onePackageOpenPerRead() throws {
        let (writer, _) = try Self.chain(3)
        defer { try? FileManager.default.removeItem(atPath: writer.root) }
        let recorded = OpensAndStats()
        let store = RevisionStore(root: writer.root, device: Self.laptop, calls: recorded.calls)
        for pass in ["first read", "held read"] {
            recorded.paths.withLock { $0 = ([], []) }
            #expect(try store.read(Self.document).live.count == 3)
            let (opens, stats) = recorded.paths.withLock { $0 }
            #expect(opens.filter { $0.hasSuffix(StoreLayout.packageSuffix) }.count == 3, "\(pass): \(opens)")
            // Each file by its own name, through the package's descriptor: no path is
            // resolved again from the root.
            let metadataOpens = opens.filter { $0.contains(StoreLayout.metadataFile) }
            #expect(metadataOpens.allSatisfy { $0 == StoreLayout.metadataFile }, "\(pass): \(opens)")
            #expect(metadataOpens.count == (pass == "first read" ? 3 : 0), "\(pass): \(opens)")
            #expect(
                stats.sorted()
                    == (pass == "first read" ? [] : Array(repeating: StoreLayout.metadataFile, count: 3))
                        + Array(repeating: StoreLayout.contentFile, count: 3),
                "\(pass): \(stats)")
        }
    }

    @Test(
        "A read holds the document's folder open: each tombstone is read, and once remembered looked at, by its name through that descriptor"
    )
    func tombstonesThroughTheFolder() throws {
        let (writer, revisions) = try Self.chain(6)
        defer { try? FileManager.default.removeItem(atPath: writer.root) }
        #expect(try writer.prune(Self.document).count == 5)
        let recorded = OpensAndStats()
        let store = RevisionStore(root: writer.root, device: Self.laptop, calls: recorded.calls)
        let tombstones = revisions.dropLast().map { StoreLayout.tombstoneName($0.id) }.sorted()
        for pass in ["first read", "held read"] {
            recorded.paths.withLock { $0 = ([], []) }
            let read = try store.read(Self.document)
            #expect(read.pruned == Set(revisions.dropLast().map(\.id)) && read.live.count == 1)
            let (opens, stats) = recorded.paths.withLock { $0 }
            // The document's folder once, whatever the number of tombstones.
            #expect(
                opens.filter { $0.hasSuffix(Self.document.uuidString.lowercased()) }.count == 1,
                "\(pass): \(opens)")
            // Tombstones by their own names: read on the first pass, looked at on the next.
            let tombstoneOpens = opens.filter { $0.hasSuffix(StoreLayout.tombstoneSuffix) }
            #expect(tombstoneOpens.sorted() == (pass == "first read" ? tombstones : []), "\(pass): \(opens)")
            let tombstoneStats = stats.filter { $0.hasSuffix(StoreLayout.tombstoneSuffix) }
            #expect(tombstoneStats.sorted() == (pass == "first read" ? [] : tombstones), "\(pass): \(stats)")
        }
    }

    @Test(
        "A document's folder removed between its opening and its listing is no document, as one removed before"
    )
    func folderRemovedWhileOpen() throws {
        let (writer, _) = try Self.chain(2)
        defer { try? FileManager.default.removeItem(atPath: writer.root) }
        let folder = StoreLayout.folder(of: Self.document)
        let opened = Locked<Int32?>(nil)
        var calls = SystemCalls.live
        calls.openat = { directory, path, flags, mode in
            let result = SystemCalls.live.openat(directory, path, flags, mode)
            if path == folder, case .success(let descriptor) = result { opened.withLock { $0 = descriptor } }
            return result
        }
        calls.listDirectory = { descriptor in
            // Removed while open: Linux then lists it as not found (ENOENT).
            if opened.withLock({ $0 == descriptor }) {
                try? FileManager.default.removeItem(atPath: writer.root + "/" + folder)
            }
            return SystemCalls.live.listDirectory(descriptor)
        }
        let store = RevisionStore(root: writer.root, device: Self.laptop, calls: calls)
        #expect(throws: StoreError.noSuchDocument(Self.document)) { try store.read(Self.document) }
        #expect(opened.withLock { $0 } != nil, "the folder was opened, then removed")
    }

    @Test("A tombstone for the head is pending: the head keeps its content, clean-up leaves it")
    func strayTombstoneForHead() throws {
        let (store, revisions) = try Self.chain(2)
        defer { try? FileManager.default.removeItem(atPath: store.root) }
        let head = revisions[1]
        try head.plistData().write(
            to: URL(fileURLWithPath: path(store, StoreLayout.tombstone(head.id, of: Self.document))))
        let read = try store.read(Self.document)
        #expect(read.pending == [head.id] && read.pruned.isEmpty)
        #expect(read.graph.winner?.id == head.id)
        try store.cleanUp(Self.document)
        #expect(try store.content(of: Self.document, revision: head) == Data("content 1".utf8))
    }

    @Test(
        "Tombstones that arrive before their successor take effect when it arrives whole, and only then is the copy removed"
    )
    func tombstoneBeforeSuccessor() throws {
        let (store, revisions) = try Self.chain(3)
        defer { try? FileManager.default.removeItem(atPath: store.root) }
        // Another replica has the third revision and pruned the first two; here, the
        // second's tombstone arrives first, then a half copy of the third, then the rest.
        let third = revisions[2]
        let thirdPackage = path(store, StoreLayout.package(third.id, of: Self.document))
        let content = try Data(contentsOf: URL(fileURLWithPath: thirdPackage + "/" + StoreLayout.contentFile))
        try FileManager.default.removeItem(atPath: thirdPackage + "/" + StoreLayout.contentFile)
        try revisions[1].plistData().write(
            to: URL(fileURLWithPath: path(store, StoreLayout.tombstone(revisions[1].id, of: Self.document))))
        var read = try store.read(Self.document)
        #expect(read.pending == [revisions[1].id] && read.incomplete == [third.id])
        #expect(read.graph.winner?.id == revisions[1].id, "the second revision stays the readable head")
        try store.cleanUp(Self.document)
        #expect(exists(store, StoreLayout.package(revisions[1].id, of: Self.document)))

        try content.write(to: URL(fileURLWithPath: thirdPackage + "/" + StoreLayout.contentFile))
        read = try store.read(Self.document)
        #expect(read.pruned == [revisions[1].id] && read.resurrected == [revisions[1].id])
        #expect(read.graph.winner?.id == third.id)
        try store.cleanUp(Self.document)
        #expect(!exists(store, StoreLayout.package(revisions[1].id, of: Self.document)))
    }

    @Test("A copy of a pruned revision is kept while the revision superseding it is damaged")
    func damagedSuccessorKeepsCopy() throws {
        let (store, revisions) = try Self.chain(2)
        defer { try? FileManager.default.removeItem(atPath: store.root) }
        try revisions[0].plistData().write(
            to: URL(fileURLWithPath: path(store, StoreLayout.tombstone(revisions[0].id, of: Self.document))))
        let content =
            path(store, StoreLayout.package(revisions[1].id, of: Self.document)) + "/"
            + StoreLayout.contentFile
        try Data("damaged".utf8).write(to: URL(fileURLWithPath: content))
        #expect(try store.read(Self.document).resurrected == [revisions[0].id])
        try store.cleanUp(Self.document)
        #expect(
            exists(store, StoreLayout.package(revisions[0].id, of: Self.document)),
            "nothing intact supersedes it")
    }

    @Test(
        "A read skips and reports what is no revision: garbage, another document's tombstone, a link, a stray file"
    )
    func skippedItems() throws {
        let (store, revisions) = try Self.chain(2)
        defer { try? FileManager.default.removeItem(atPath: store.root) }
        let folder = path(store, StoreLayout.folder(of: Self.document))
        try Data("garbage".utf8).write(
            to: URL(fileURLWithPath: folder + "/garbage" + StoreLayout.tombstoneSuffix))
        var foreign = revisions[0]
        foreign.documentID = UUID()
        try foreign.plistData().write(
            to: URL(fileURLWithPath: folder + "/" + StoreLayout.tombstoneName(revisions[0].id)))
        try FileManager.default.createSymbolicLink(
            atPath: folder + "/"
                + StoreLayout.packageName(
                    RevisionID(generation: 9, digest: String(repeating: "a", count: 64))),
            withDestinationPath: "/tmp")
        try Data("notes".utf8).write(to: URL(fileURLWithPath: folder + "/notes.txt"))
        let read = try store.read(Self.document)
        #expect(read.skipped.count == 4, "\(read.skipped)")
        #expect(read.graph.revisions.count == 2 && read.tombstones.isEmpty)
        #expect(read.graph.winner?.id == revisions[1].id)
    }

    @Test("A package skipped for its metadata is named once, and the file in it by its name in the package")
    func skippedPackageNamedOnce() throws {
        let (store, revisions) = try Self.chain(2)
        defer { try? FileManager.default.removeItem(atPath: store.root) }
        let package = path(store, StoreLayout.package(revisions[1].id, of: Self.document))
        var forged = revisions[1]
        forged.device.name = "elsewhere"
        try forged.plistData().write(to: URL(fileURLWithPath: package + "/DocumentMetadata.plist"))
        let read = try store.read(Self.document)
        let issue = try #require(read.skipped.first { $0.path == package }, "\(read.skipped)")
        #expect(issue.message.hasPrefix("DocumentMetadata.plist: "), "\(issue.message)")
        #expect(issue.description.components(separatedBy: package).count == 2, "\(issue)")
    }

    @Test(
        "Where the file system reports no kinds in listings, a link standing for a package, its metadata or its content is skipped and reported, never counted or taken as half-copied"
    )
    func linksWithoutKinds() throws {
        let (writer, revisions) = try Self.chain(2)
        defer { try? FileManager.default.removeItem(atPath: writer.root) }
        let folder = path(writer, StoreLayout.folder(of: Self.document))
        let outside = writer.root + "-outside"
        defer { try? FileManager.default.removeItem(atPath: outside) }
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        // A link for a package: to a copy of the first package, outside the store.
        let first = folder + "/" + StoreLayout.packageName(revisions[0].id)
        try FileManager.default.copyItem(atPath: first, toPath: outside + "/package")
        try FileManager.default.removeItem(atPath: first)
        try FileManager.default.createSymbolicLink(atPath: first, withDestinationPath: outside + "/package")
        // Links for the second package's metadata and content, to copies outside.
        let second = folder + "/" + StoreLayout.packageName(revisions[1].id)
        for name in [StoreLayout.metadataFile, StoreLayout.contentFile] {
            try FileManager.default.copyItem(atPath: second + "/" + name, toPath: outside + "/" + name)
        }
        var calls = SystemCalls.live
        calls.listDirectory = { descriptor in
            SystemCalls.live.listDirectory(descriptor).map { entries in
                entries.map { SystemCalls.DirectoryEntry(name: $0.name, kind: .unknown) }
            }
        }
        for name in [StoreLayout.metadataFile, StoreLayout.contentFile] {
            try FileManager.default.removeItem(atPath: second + "/" + name)
            try FileManager.default.createSymbolicLink(
                atPath: second + "/" + name, withDestinationPath: outside + "/" + name)
            let read = try RevisionStore(root: writer.root, device: Self.laptop, calls: calls).read(
                Self.document)
            #expect(read.live.isEmpty && read.graph.revisions.isEmpty, "\(name)")
            #expect(read.incomplete.isEmpty, "a link is never a copy in progress: \(read.incomplete)")
            #expect(read.skipped.count == 2, "\(name): \(read.skipped)")
            #expect(read.skipped.contains { $0.path == first }, "the package that is a link: \(read.skipped)")
            #expect(
                read.skipped.contains { $0.path == second + "/" + name },
                "the file that is a link: \(read.skipped)")
            if name == StoreLayout.metadataFile {
                try FileManager.default.removeItem(atPath: second + "/" + name)
                try FileManager.default.copyItem(atPath: outside + "/" + name, toPath: second + "/" + name)
            }
        }
    }

    @Test(
        "verify reports damaged content, stray files and leftovers as problems, harmless states as notes, and changes nothing"
    )
    func verifyFindings() throws {
        let (store, revisions) = try Self.chain(3)
        defer { try? FileManager.default.removeItem(atPath: store.root) }
        #expect(store.verify { try _ = store.content(of: $0, revision: $1) }.isEmpty, "a clean store")
        let folder = path(store, StoreLayout.folder(of: Self.document))
        let damaged = folder + "/" + StoreLayout.packageName(revisions[1].id) + "/" + StoreLayout.contentFile
        try Data("damaged".utf8).write(to: URL(fileURLWithPath: damaged))
        let stray = folder + "/" + StoreLayout.packageName(revisions[2].id) + "/notes.txt"
        try Data("notes".utf8).write(to: URL(fileURLWithPath: stray))
        // A FIFO is named as one (it was "an unexpected file").
        let fifo = folder + "/" + StoreLayout.packageName(revisions[2].id) + "/pipe"
        #expect(mkfifo(fifo, 0o644) == 0)
        let conflictCopy =
            folder + "/" + StoreLayout.packageName(revisions[0].id)
            + "/Survey.sync-conflict-20261125-100000-ABCDEFG.plist"
        try Data("copy".utf8).write(to: URL(fileURLWithPath: conflictCopy))
        let leftover = path(store, StoreLayout.temporaryFolder) + "/interrupted"
        try Data().write(to: URL(fileURLWithPath: leftover))
        // A tombstone for the head: nothing here supersedes it yet.
        let pendingPath = folder + "/" + StoreLayout.tombstoneName(revisions[2].id)
        try revisions[2].plistData().write(to: URL(fileURLWithPath: pendingPath))
        let before = try FileManager.default.subpathsOfDirectory(atPath: store.root).sorted()
        var checked: [RevisionID] = []
        let issues = store.verify { document, revision in
            checked.append(revision.id)
            _ = try store.content(of: document, revision: revision)
        }
        #expect(Set(checked) == Set(revisions.map(\.id)), "every live revision's content is checked")
        let problems = Dictionary(
            uniqueKeysWithValues: issues.filter { !$0.isNote }.map { ($0.path, $0.message) })
        #expect(problems[damaged] == "the content does not match the digest in its metadata", "\(issues)")
        #expect(problems[stray] == "an unexpected file inside a revision package", "\(issues)")
        #expect(
            problems[fifo] == "a FIFO, socket or device (never opened) inside a revision package", "\(issues)"
        )
        #expect(
            problems[conflictCopy]?.hasPrefix(
                "Syncthing's copy of a conflicting change inside a revision package")
                == true, "\(issues)")
        #expect(
            problems[leftover]?.hasPrefix("a temporary file left by an interrupted write") == true,
            "\(issues)")
        #expect(problems.count == 5, "\(issues)")
        let notes = issues.filter(\.isNote)
        #expect(notes.map(\.path) == [pendingPath], "\(issues)")
        #expect(
            notes.first?.description.hasPrefix(pendingPath + ": note: a tombstone that is not in effect yet")
                == true)
        #expect(try FileManager.default.subpathsOfDirectory(atPath: store.root).sorted() == before)
    }
}

extension RevisionStoreTests {
    /// What `verify` finds in `store` when the access asked of each entry is answered
    /// `denied(NAME)`, NAME the entry's last name (a folder is asked of as `.` through a
    /// descriptor of its own, whose name `/proc/self/fd` gives), where that is not `nil`,
    /// and as the system answers it otherwise.
    static func verify(_ store: RevisionStore, denying denied: @escaping @Sendable (String) -> Errno?)
        -> [StoreIssue]
    {
        var calls = SystemCalls.live
        calls.access = { directory, name, mode in
            let folder =
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(directory)"))
            let entry = name == "." ? folder.map { String($0.split(separator: "/").last ?? "") } : name
            return entry.flatMap(denied).map { .failure($0) }
                ?? SystemCalls.live.access(directory, name, mode)
        }
        return RevisionStore(root: store.root, device: laptop, calls: calls).verify {
            try _ = store.content(of: $0, revision: $1)
        }
    }

    @Test(
        "verify notes each folder it may not write in, one note for a read-only file system, and an error answering the question as a problem (it called such a store clean, and every write failed)"
    )
    func verifyNotesWhatMayNotBeWritten() throws {
        let (store, _) = try Self.chain(2)
        defer { try? FileManager.default.removeItem(atPath: store.root) }
        let documentFolder = StoreLayout.folderName(of: Self.document)
        func verify(denying denied: @escaping @Sendable (String) -> Errno?) -> [StoreIssue] {
            Self.verify(store, denying: denied)
        }
        #expect(verify { _ in nil }.isEmpty, "a store this process may write")
        let folder = path(store, StoreLayout.folder(of: Self.document))
        let unwritable = verify { $0 == documentFolder ? .accessDenied : nil }
        #expect(unwritable.map(\.path) == [folder] && unwritable.allSatisfy(\.isNote), "\(unwritable)")
        #expect(
            unwritable.first?.message.hasPrefix(
                "this user may not write here (Permission denied): no revision of this document can be added")
                == true, "\(unwritable)")
        let readOnly = verify { _ in .readOnlyFileSystem }
        #expect(readOnly.map(\.path) == [store.root] && readOnly.allSatisfy(\.isNote), "\(readOnly)")
        #expect(
            readOnly.first?.message
                == "on a read-only file system: every command that writes fails (reading works)",
            "\(readOnly)")
        let failing = verify { $0 == "tmp" ? .io : nil }
        #expect(
            failing.map { "\($0.path) \($0.isNote) \($0.message)" } == [
                path(store, StoreLayout.temporaryFolder) + " false cannot look up: Input/output error"
            ], "\(failing)")
    }
}

extension RevisionStoreTests {
    @Test(
        "verify calls a temporary file and a prune note made by a write or prune under way notes, while that write's lock is held, and problems once none holds it (a verify beside a save named the save's temporary file an interrupted write's, exit 1)"
    )
    func verifyTellsWritesUnderWay() throws {
        let (store, _) = try Self.chain(1)
        defer { try? FileManager.default.removeItem(atPath: store.root) }
        let temporary = path(store, StoreLayout.temporaryFolder) + "/1234-5678-1.tmp"
        let note = path(store, StoreLayout.pruneNote(of: Self.document))
        try FileManager.default.createDirectory(
            atPath: path(store, StoreLayout.pruningFolder), withIntermediateDirectories: true)
        for file in [temporary, note] { try Data().write(to: URL(fileURLWithPath: file)) }
        func findings() -> [String: Bool] {
            let issues = store.verify { try _ = store.content(of: $0, revision: $1) }
            return Dictionary(issues.map { ($0.path, $0.isNote) }, uniquingKeysWith: { a, _ in a })
        }
        #expect(findings() == [temporary: false, note: false], "left by writes that ended")
        let writer = RevisionStore.writer(root: store.root, calls: store.calls)
        let writing = try writer.lock(
            at: StoreLayout.locksFolder + "/" + PackageWriter.writersLockName, mode: .shared)
        let pruning = try writer.lock(at: StoreLayout.lock(of: Self.document), mode: .exclusive)
        let underWay = store.verify { try _ = store.content(of: $0, revision: $1) }
        #expect(
            Dictionary(underWay.map { ($0.path, $0.isNote) }, uniquingKeysWith: { a, _ in a }) == [
                temporary: true, note: true,
            ], "\(underWay)")
        #expect(
            underWay.first { $0.path == temporary }?.message.hasPrefix(
                "a temporary file of a write under way")
                == true && underWay.first { $0.path == note }?.message.hasPrefix("a prune under way") == true,
            "\(underWay)")
        writing.unlock()
        pruning.unlock()
        #expect(findings() == [temporary: false, note: false])
    }
}

extension RevisionStoreTests {
    @Test(
        "verify of a store without Local.nosync/ (a copy that excluded it) is clean for a user who may make it, and one note when none may be made (it named each missing folder a problem: cannot open, no such file)"
    )
    func verifyWithoutLocalFolder() throws {
        let (store, _) = try Self.chain(1)
        defer { try? FileManager.default.removeItem(atPath: store.root) }
        try FileManager.default.removeItem(atPath: path(store, StoreLayout.localFolder))
        /// Verify, with `denied` the answer for the store's folder (`.`, through its
        /// descriptor) or, with `everywhere`, for every folder.
        let rootName = String(store.root.split(separator: "/").last ?? "")
        func verify(denying denied: Errno?, everywhere: Bool = false) -> [StoreIssue] {
            Self.verify(store) { name in name == rootName || everywhere ? denied : nil }
        }
        #expect(verify(denying: nil).isEmpty, "\(verify(denying: nil))")
        let denied = verify(denying: .accessDenied)
        #expect(
            denied.map { "\($0.path) \($0.isNote) \($0.message)" } == [
                path(store, StoreLayout.localFolder)
                    + " true missing, and this user may not make it (Permission denied): every command that writes fails"
            ], "\(denied)")
        let readOnly = verify(denying: .readOnlyFileSystem, everywhere: true)
        #expect(readOnly.map(\.path) == [store.root] && readOnly.allSatisfy(\.isNote), "\(readOnly)")
    }

    @Test(
        "verify passes over a revision pruned while it looked (its tombstone there, its package gone); it named the pruned content a problem, exit 1, beside a running prune"
    )
    func verifyBesideAPrune() throws {
        let (store, revisions) = try Self.chain(2)
        defer { try? FileManager.default.removeItem(atPath: store.root) }
        let folder = path(store, StoreLayout.folder(of: Self.document))
        let first = revisions[0]
        let issues = store.verify { document, revision in
            if revision.id == first.id {
                // A prune at work: the tombstone is published, then the package goes.
                try first.plistData().write(
                    to: URL(fileURLWithPath: folder + "/" + StoreLayout.tombstoneName(first.id)))
                try FileManager.default.removeItem(atPath: folder + "/" + StoreLayout.packageName(first.id))
            }
            _ = try store.content(of: document, revision: revision)
        }
        #expect(issues.isEmpty, "\(issues)")
    }
}
