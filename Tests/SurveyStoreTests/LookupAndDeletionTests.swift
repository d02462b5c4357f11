import Foundation
import Packages
import Surveys
import Synchronization
import Testing
import Versions

@_spi(Testing) @testable import SurveyStore

/// The library's answers behind the command's messages: look-ups by prefix, deletion and
/// restore, device names, export destinations.
@Suite("Look-ups, deletion and restore")
struct LookupAndDeletionTests {
    static func store() throws -> (SurveyStore, String) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lookup-\(UUID().uuidString)"
        ).path
        return (try SurveyStore.create(at: path, deviceName: "laptop"), path)
    }

    static let survey = try! Survey(title: "T", items: [])

    /// A store holding one document of ``survey``, and its first revision exported as a
    /// package beside the store.
    static func exported() throws -> (
        store: SurveyStore, path: String, id: UUID, first: RevisionMetadata, package: String
    ) {
        let (store, path) = try store()
        let (id, first) = try store.create(survey)
        let package = path + "-package"
        _ = try store.exportPackage(id, revision: first.id, to: package)
        return (store, path, id, first, package)
    }

    /// Replaces `text` by `replacement` in `file`.
    static func replace(_ text: String, with replacement: String, in file: String) throws {
        let contents = try String(contentsOfFile: file, encoding: .utf8)
        #expect(contents.contains(text), "\(file) holds no \(text)")
        try contents.replacingOccurrences(of: text, with: replacement)
            .write(toFile: file, atomically: true, encoding: .utf8)
    }

    @Test("documentID(matching:) takes a unique prefix in any letter case")
    func documentLookup() throws {
        let (store, _) = try Self.store()
        let a = UUID(uuidString: "AAAA0000-0000-4000-8000-000000000001")!
        let c = UUID(uuidString: "CCCC0000-0000-4000-8000-000000000001")!
        try store.create(Self.survey, id: a)
        try store.create(Self.survey, id: c)
        #expect(try store.documentID(matching: "aa") == a)
        #expect(try store.documentID(matching: "CcC") == c)
    }

    @Test("An ambiguous prefix throws with every match; none throws noSuchDocument")
    func documentLookupErrors() throws {
        let (store, _) = try Self.store()
        let a = UUID(uuidString: "BBBB0000-0000-4000-8000-000000000001")!
        let b = UUID(uuidString: "BBBB0000-0000-4000-8000-000000000002")!
        try store.create(Self.survey, id: a)
        try store.create(Self.survey, id: b)
        #expect(
            throws: LookupError.ambiguousDocument("bbbb", [a, b].sorted { $0.uuidString < $1.uuidString })
        ) {
            _ = try store.documentID(matching: "bbbb")
        }
        #expect(throws: LookupError.noSuchDocument("nope")) { _ = try store.documentID(matching: "nope") }
        #expect(throws: LookupError.noSuchDocument("")) { _ = try store.documentID(matching: "") }
        #expect(try store.documentID(matching: "BBBB0000-0000-4000-8000-000000000002") == b)
    }

    @Test(
        "create with an id the store holds a document for (live or deleted) is refused and writes nothing; an id whose folder holds nothing, or a new one, is taken"
    )
    func createRefusesAnIdInUse() throws {
        let (store, path) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let live = UUID(uuidString: "DDDD0000-0000-4000-8000-000000000001")!
        let deleted = UUID(uuidString: "DDDD0000-0000-4000-8000-000000000002")!
        let empty = UUID(uuidString: "DDDD0000-0000-4000-8000-000000000003")!
        let first = try store.create(Self.survey, id: live).revision
        try store.create(Self.survey, id: deleted)
        let deletion = try store.delete(deleted)
        for id in [live, deleted] {
            let folder = path + "/" + StoreLayout.folder(of: id)
            let before = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
            #expect(throws: StoreError.documentExists(id)) {
                try store.create(try Survey(title: "Another", items: []), id: id)
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == before)
        }
        #expect(try store.graph(of: live).heads == [first])
        #expect(try store.graph(of: deleted).winner == deletion)
        let error = StoreError.documentExists(live)
        #expect(
            error.description
                == "there is a document \(live.uuidString.lowercased()) already: a new one needs an id of its own"
        )
        // A folder left empty (a write that failed before its package was made) holds no document.
        try FileManager.default.createDirectory(
            atPath: path + "/" + StoreLayout.folder(of: empty), withIntermediateDirectories: false)
        #expect(try store.create(Self.survey, id: empty).id == empty)
        #expect(try store.open(empty).survey.title == "T")
        #expect(try store.create(Self.survey).id != empty)
    }

    @Test(
        "A deletion that raced an edit leaves the document normal, not in conflict: resolve and merge return nil and write nothing"
    )
    func editAndDeletionIsNoConflict() throws {
        let (store, _) = try Self.store()
        let (id, first) = try store.create(Self.survey)
        let edit = try store.save(try Survey(title: "Edited", items: []), to: id, base: first.id)
        _ = try store.delete(id, base: first.id)
        let graph = try store.graph(of: id)
        #expect(graph.heads.count == 2 && !graph.isInConflict && graph.winner == edit)
        #expect(try store.open(id).state == .normal)
        #expect(try store.mergePlan(id) == nil)
        for resolution: SurveyStore.Resolution in [
            .acceptWinner, .merge(prefer: nil), .keep(first.id),
            .content(try Survey(title: "Other", items: [])),
        ] {
            #expect(try store.resolve(id, resolution) == nil, "\(resolution)")
        }
        #expect(try store.resolveMerge(id) == nil)
        #expect(try store.graph(of: id).revisions.count == 3)
    }

    @Test(
        "Deleting twice writes one deletion; opening says who deleted it and what can be kept; keep restores it"
    )
    func deleteAndRestore() throws {
        let (store, _) = try Self.store()
        let (id, first) = try store.create(Self.survey)
        let deletion = try store.delete(id)
        #expect(try store.deletion(of: id) == deletion)
        #expect(try store.delete(id) == deletion)
        #expect(try store.graph(of: id).revisions.count == 2)
        do {
            _ = try store.open(id)
            Issue.record("a deleted document opened")
        } catch let error as DocumentDeletedError {
            #expect(error.deletion == deletion && error.restorable == [first.id])
            #expect(error.description.contains("\"laptop\""))
        }
        let restored = try #require(try store.resolve(id, .keep(first.id)))
        #expect(restored.parents == [deletion.id])
        #expect(try store.deletion(of: id) == nil)
        #expect(try store.open(id).survey == Self.survey)
    }

    @Test(
        "A deleted document's message quotes the device name with its quotes and backslashes escaped (a quote in it seemed to end the name), and its line feeds and tabs written out (they split it)"
    )
    func deletedOnQuotedDevice() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lookup-\(UUID().uuidString)"
        ).path
        defer { try? SurveyStore.removeFolder(path) }
        let store = try SurveyStore.create(at: path, deviceName: #"Ada's "work" \ phone"#)
        let (id, first) = try store.create(Self.survey)
        try store.delete(id)
        let deleted = try #require(#expect(throws: DocumentDeletedError.self) { try store.open(id) })
        #expect(deleted.restorable == [first.id])
        #expect(deleted.description.contains(#"on device "Ada's \"work\" \\ phone" (revision"#), "\(deleted)")

        // A line feed or tab in the name is written out, so the quoted name stays on its
        // line (a message keeps its own line breaks; it split the name over two lines).
        let other = path + "-lines"
        defer { try? SurveyStore.removeFolder(other) }
        let lines = try SurveyStore.create(at: other, deviceName: "two\nlines\tand a tab")
        let (second, _) = try lines.create(Self.survey)
        try lines.delete(second)
        let split = try #require(#expect(throws: DocumentDeletedError.self) { try lines.open(second) })
        #expect(split.description.contains(#"on device "two\u{A}lines\u{9}and a tab" (revision"#), "\(split)")
    }

    @Test("resolve refuses a revision to keep that does not exist, in conflict or not")
    func resolveUnknownKeep() throws {
        let (store, _) = try Self.store()
        let (id, _) = try store.create(Self.survey)
        let junk = RevisionID(generation: 9, digest: String(repeating: "0", count: 64))
        #expect(throws: StoreError.noSuchRevision(junk.description)) { try store.resolve(id, .keep(junk)) }
    }

    @Test("Device names that XML cannot carry, or empty, are refused before a store is created")
    func deviceNames() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "device-\(UUID().uuidString)"
        ).path
        for name in ["a\rb", "", "bell\u{7}"] {
            #expect(throws: DeviceNameError.self) { try SurveyStore.create(at: path, deviceName: name) }
        }
        #expect(!FileManager.default.fileExists(atPath: path))
        try SurveyStore.checkDeviceName("Ada's phone\twith a tab")
    }

    @Test(
        "A device name over 255 bytes of UTF-8 is refused before a store is created (a name of many '&' made every revision the device saved unreadable: its metadata passed the 1 MiB read limit)"
    )
    func longDeviceNames() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "device-\(UUID().uuidString)"
        ).path
        defer { try? SurveyStore.removeFolder(path) }
        for name in [String(repeating: "a", count: 256), String(repeating: "é", count: 128)] {
            let error = #expect(throws: DeviceNameError.self) {
                try SurveyStore.create(at: path, deviceName: name)
            }
            #expect(
                error?.reason == "it is 256 bytes of UTF-8; a device name has at most 255",
                "\(String(describing: error))")
            #expect(error?.name.count == 41, "the name is shown cut short")
        }
        #expect(throws: DeviceNameError.self) {
            try SurveyStore.create(at: path, deviceName: String(repeating: "&", count: 300_000))
        }
        #expect(!FileManager.default.fileExists(atPath: path))
        // The longest name, escaped five times over, still saves revisions that read back.
        let longest = String(repeating: "&", count: 255)
        let store = try SurveyStore.create(at: path, deviceName: longest)
        let (id, first) = try store.create(Self.survey)
        #expect(first.device.name == longest)
        #expect(try SurveyStore.open(at: path).open(id).survey == Self.survey)
        #expect(store.verify().isEmpty)
    }

    @Test(
        "Store.plist: any positive layout version above this build's is newer (read, never changed), up to 2^64-1; anything else is damage"
    )
    func layoutVersions() throws {
        let (store, path) = try Self.store()
        let (id, _) = try store.create(Self.survey)
        let file = path + "/" + StoreLayout.layoutFile
        func layout(_ value: String) throws {
            try FileManager.default.removeItem(atPath: file)
            try Data(
                """
                <?xml version="1.0" encoding="UTF-8"?>
                <plist version="1.0"><dict><key>StoreLayoutVersion</key>\(value)</dict></plist>
                """.utf8
            ).write(to: URL(fileURLWithPath: file))
        }
        for (text, version) in [
            ("2", UInt64(2)), ("9223372036854775808", 1 << 63), ("18446744073709551615", .max),
        ] {
            try layout("<integer>\(text)</integer>")
            #expect(
                throws: StoreError.newerLayout(file, version, supported: SurveyStore.layoutVersion), "\(text)"
            ) {
                try SurveyStore.open(at: path)
            }
            #expect(try SurveyStore.openForReading(at: path).open(id).survey == Self.survey, "\(text)")
        }
        let damage = "'StoreLayoutVersion' is missing or not a positive integer"
        for value in [
            "<integer>0</integer>", "<integer>-1</integer>", "<string>1</string>", "<real>1</real>",
        ] {
            try layout(value)
            #expect(throws: StoreError.damagedStore(file, damage), "\(value)") {
                try SurveyStore.open(at: path)
            }
            #expect(throws: StoreError.damagedStore(file, damage), "\(value)") {
                try SurveyStore.openForReading(at: path)
            }
        }
        try layout("<integer>1</integer>")
        #expect(try SurveyStore.open(at: path).open(id).survey == Self.survey)
    }

    @Test("Export destinations, checked once, by the writer: the folder must exist; nothing is replaced")
    func exportDestinations() throws {
        let (store, path) = try Self.store()
        let (id, _) = try store.create(Self.survey)
        let data = Data("exported".utf8)
        let (missing, plist, documents) = (path + "/missing", path + "/Store.plist", path + "/Documents")
        #expect(throws: ExportError.noSuchFolder(missing)) { try store.writeExport(data, to: missing + "/x") }
        #expect(throws: ExportError.noSuchFolder(plist)) { try store.writeExport(data, to: plist + "/x") }
        #expect(throws: ExportError.isFolder(documents)) { try store.writeExport(data, to: documents) }
        #expect(throws: ExportError.exists(documents)) { try store.exportPackage(id, to: documents) }
        #expect(throws: ExportError.noSuchFolder(missing)) { try store.exportPackage(id, to: missing + "/x") }
        // A regular file is replaced; a new package is written whole.
        try Data("old".utf8).write(to: URL(fileURLWithPath: path + "/out.txt"))
        try SurveyStore.writeOutput(data, to: path + "/out.txt")
        #expect(FileManager.default.contents(atPath: path + "/out.txt") == data)
        let exported = try store.exportPackage(id, to: path + "/copy.survey")
        #expect(FileManager.default.fileExists(atPath: path + "/copy.survey/" + StoreLayout.metadataFile))
        #expect(exported == (try store.revision(id)))
        // `DIR/` names the folder `DIR`, as a shell's completion writes it.
        _ = try store.exportPackage(id, to: path + "/slash.survey//")
        #expect(FileManager.default.fileExists(atPath: path + "/slash.survey/" + StoreLayout.metadataFile))
        #expect(throws: ExportError.exists(path + "/slash.survey")) {
            try store.exportPackage(id, to: path + "/slash.survey/")
        }
        // A link to nothing is refused, and nothing is created through it.
        let link = path + "/dangling.json"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path + "/nothing.json")
        #expect(throws: ExportError.danglingLink(link)) { try store.writeExport(data, to: link) }
        #expect(!FileManager.default.fileExists(atPath: path + "/nothing.json"))
    }

    @Test("deleteDocument tells a new deletion from one already there, from the same read under the lock")
    func deleteOutcome() throws {
        let (store, _) = try Self.store()
        let (id, first) = try store.create(Self.survey)
        let written = try store.deleteDocument(id)
        #expect(written.isNew && written.revision.isDeleted && written.revision.parents == [first.id])
        let again = try store.deleteDocument(id)
        #expect(!again.isNew && again.revision == written.revision)
        #expect(try store.deleteDocument(id, base: written.revision.id) == again)
        #expect(try store.graph(of: id).revisions.count == 2)
    }

    @Test(
        "contestedFieldCount: 0 for one head or a clean merge, the count when fields are contested, the same from a graph read already"
    )
    func contestedCount() throws {
        let (store, _) = try Self.store()
        let base = try Survey(
            title: "T", items: [Item(id: UUID(), title: "Q", kind: .textField(subtitle: nil))])
        let (id, first) = try store.create(base)
        #expect(try store.contestedFieldCount(of: id) == 0)
        var left = base, right = base
        left.title = "Left"
        right.title = "Right"
        _ = try store.save(left, to: id, base: first.id)
        _ = try store.save(right, to: id, base: first.id)
        #expect(try store.contestedFieldCount(of: id) == 1)
        #expect(try store.contestedFieldCount(of: id, in: store.graph(of: id)) == 1)
        #expect(try store.mergePlan(id)?.contestedCount == 1)
        _ = try store.resolve(id, .acceptWinner)
        #expect(try store.contestedFieldCount(of: id) == 0)
        #expect(try store.contestedFieldCount(of: UUID()) == nil, "no such document: nothing can be merged")
    }

    @Test(
        "pruneEveryDocument prunes each, skips one whose winner cannot be read, and prunes nothing from a folder without a revision"
    )
    func pruneEvery() throws {
        let (store, path) = try Self.store()
        let (a, firstA) = try store.create(Self.survey)
        let editedA = try store.save(try Survey(title: "T2", items: []), to: a, base: firstA.id)
        let (b, firstB) = try store.create(Self.survey)
        let editedB = try store.save(try Survey(title: "T3", items: []), to: b, base: firstB.id)
        let content =
            path + "/" + StoreLayout.package(editedB.id, of: b) + "/" + StoreLayout.contentFile
        try Data("<plist>not a survey".utf8).write(to: URL(fileURLWithPath: content))
        let empty = UUID()
        try FileManager.default.createDirectory(
            atPath: path + "/" + StoreLayout.folder(of: empty), withIntermediateDirectories: false)
        var seen: [UUID: SurveyStore.PruneOutcome] = [:]
        var positions: [Int] = []
        try store.pruneEveryDocument { position, count, id, outcome in
            #expect(count == 3)
            positions.append(position)
            seen[id] = outcome
        }
        #expect(seen.count == 3 && positions.sorted() == [1, 2, 3], "\(seen)")
        #expect(seen[empty] == .pruned([]))
        #expect(seen[a] == .pruned([firstA.id]))
        guard case .skippedUnreadableWinner = seen[b] else {
            Issue.record("b was not skipped: \(String(describing: seen[b]))")
            return
        }
        #expect(try store.prunedRevisions(of: b).isEmpty, "nothing of b was pruned")
        #expect(try store.graph(of: a).winner?.id == editedA.id)
    }

    @Test(
        "pruneEveryDocument skips a document whose lock file keeps being replaced, with the reason, and prunes the others"
    )
    func pruneEveryPastALockThatKeepsChanging() throws {
        let (creator, path) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: path) }
        // The first document in the run's order, and one after it.
        let victim = UUID(uuidString: "00000000-0000-4000-8000-000000000001")!
        let other = UUID(uuidString: "00000000-0000-4000-8000-000000000002")!
        var firsts: [UUID: RevisionID] = [:]
        for id in [victim, other] {
            let (_, first) = try creator.create(Self.survey, id: id)
            _ = try creator.save(try Survey(title: "T2", items: []), to: id, base: first.id)
            firsts[id] = first.id
        }
        // Every look at the victim's lock file finds another file than the one just locked.
        let lockName = StoreLayout.lock(of: victim)
        var calls = SystemCalls.live
        calls.stat = { folder, name in
            SystemCalls.live.stat(folder, name).map {
                var status = $0
                if name.hasSuffix(lockName) { status.inode &+= 1 }
                return status
            }
        }
        let store = try SurveyStore.open(at: path, calls: calls)
        var seen: [UUID: SurveyStore.PruneOutcome] = [:]
        try store.pruneEveryDocument { _, _, id, outcome in seen[id] = outcome }
        guard case .skippedUnusableLock(let reason) = seen[victim] else {
            Issue.record("the document was not skipped: \(String(describing: seen[victim]))")
            return
        }
        #expect(reason.contains("try again once that stops"), "\(reason)")
        #expect(try store.prunedRevisions(of: victim).isEmpty)
        #expect(seen[other] == .pruned([firsts[other]!]))
    }

    @Test(
        "create on an existing store whose device identity cannot be read (an I/O error) fails and renews nothing"
    )
    func createKeepsTheIdentityOnAnIOError() throws {
        let (store, path) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let deviceFile = path + "/" + StoreLayout.deviceFile
        let before = try Data(contentsOf: URL(fileURLWithPath: deviceFile))
        var calls = SystemCalls.live
        calls.openat = { directory, name, flags, mode in
            if name.hasSuffix("Device.plist") && flags & O_ACCMODE == O_RDONLY { return .failure(.io) }
            return SystemCalls.live.openat(directory, name, flags, mode)
        }
        let error = #expect(throws: FileSystemError.self) {
            _ = try SurveyStore.create(at: path, deviceName: "renamed", calls: calls)
        }
        #expect(error?.errno == .io, "\(String(describing: error))")
        #expect(try Data(contentsOf: URL(fileURLWithPath: deviceFile)) == before)
        #expect(try SurveyStore.open(at: path).device == store.device)
    }

    @Test(
        "import of a package whose content no longer matches the revision its metadata verifies as says which revision (changedContent); one whose metadata no longer verifies is plain new content"
    )
    func importChangedContent() throws {
        let (store, path, id, first, package) = try Self.exported()
        defer {
            try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(atPath: package)
        }
        let contentFile = package + "/" + StoreLayout.contentFile
        try Self.replace("<string>T</string>", with: "<string>U</string>", in: contentFile)
        let outcome = try store.importPackage(at: package)
        guard case .changedContent(let document, let added, exported: let exported) = outcome else {
            Issue.record("\(outcome)")
            return
        }
        #expect(document == id && exported == first.id && added.parents.isEmpty)
        #expect(try store.open(id, revision: added.id).survey.title == "U")

        try Self.replace("<string>U</string>", with: "<string>V</string>", in: contentFile)
        try Self.replace(
            "<string>laptop</string>", with: "<string>elsewhere</string>",
            in: package + "/" + StoreLayout.metadataFile)
        guard case .newRevision(id, _) = try store.importPackage(at: package) else {
            Issue.record("metadata that does not verify names no revision")
            return
        }
    }

    @Test(
        "import fails on an I/O error reading the document's folder; it does not take content already here for new (a needless head)"
    )
    func importOnAnIOError() throws {
        let (store, path, id, first, package) = try Self.exported()
        defer {
            try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(atPath: package)
        }
        // Metadata that no longer verifies: the package's content is imported as content.
        try Self.replace(
            "<string>laptop</string>", with: "<string>elsewhere</string>",
            in: package + "/" + StoreLayout.metadataFile)
        #expect(try store.importPackage(at: package) == .alreadyPresent(id, first))
        // The next listing of the document's folder fails with EIO.
        let armed = Atomic<Bool>(true)
        let folderName = StoreLayout.folderName(of: id)
        var calls = SystemCalls.live
        calls.openat = { directory, name, flags, mode in
            if name.hasSuffix(folderName), flags & O_DIRECTORY != 0,
                armed.compareExchange(expected: true, desired: false, ordering: .sequentiallyConsistent)
                    .exchanged
            {
                return .failure(.io)
            }
            return SystemCalls.live.openat(directory, name, flags, mode)
        }
        let failing = try SurveyStore.open(at: path, calls: calls)
        let error = #expect(throws: FileSystemError.self) { try failing.importPackage(at: package) }
        #expect(error?.errno == .io, "\(String(describing: error))")
        let fired = !armed.load(ordering: .sequentiallyConsistent)
        #expect(fired, "the hook did not run")
        #expect(try store.graph(of: id).revisions.keys.map(\.self) == [first.id])
    }

    /// Opens of one document's folder, counted, and failing with EIO once armed: for the
    /// re-read a look-up makes only on its way to failing.
    final class FolderOpenFault: Sendable {
        private let folderName: String
        private let opened = Atomic<Int>(0)
        private let failAt = Atomic<Int>(Int.max)

        init(document: UUID) { folderName = StoreLayout.folderName(of: document) }

        /// The live calls, but for opens of the document's folder from the armed one on.
        var calls: SystemCalls {
            var calls = SystemCalls.live
            calls.openat = { [self] directory, name, flags, mode in
                if name.hasSuffix(folderName), flags & O_DIRECTORY != 0,
                    opened.add(1, ordering: .sequentiallyConsistent).newValue
                        >= failAt.load(ordering: .sequentiallyConsistent)
                {
                    return .failure(.io)
                }
                return SystemCalls.live.openat(directory, name, flags, mode)
            }
            return calls
        }

        /// Runs `body` unarmed, then arms the fault so that the same calls again fail at
        /// their last open of the folder (the re-read, made after the first read); returns
        /// how many opens `body` made.
        @discardableResult
        func armLastOpen(of body: () throws -> Void) rethrows -> Int {
            failAt.store(Int.max, ordering: .sequentiallyConsistent)
            let before = opened.load(ordering: .sequentiallyConsistent)
            try body()
            let after = opened.load(ordering: .sequentiallyConsistent)
            failAt.store(after + (after - before), ordering: .sequentiallyConsistent)
            return after - before
        }
    }

    @Test(
        "A look-up that misses reads the document's folder again to say why, and an I/O error doing so is thrown, not taken for 'no such revision' or 'no such document' (it was)"
    )
    func lookupMissRereadThrowsIOError() throws {
        let (store, path) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (id, first) = try store.create(Self.survey)
        let missing = RevisionID(generation: 2, digest: first.id.digest)
        let fault = FolderOpenFault(document: id)
        let hooked = try SurveyStore.open(at: path, calls: fault.calls)
        // Unarmed, the miss is a miss, and it opens the folder more than once (the re-read);
        // armed, the re-read fails.
        let opens = fault.armLastOpen {
            #expect(throws: StoreError.noSuchRevision(missing.description)) {
                try hooked.revision(id, missing)
            }
        }
        #expect(opens >= 2, "\(opens)")
        let error = #expect(throws: FileSystemError.self) { try hooked.revision(id, missing) }
        #expect(error?.errno == .io, "\(String(describing: error))")
        // A document with no winner: its folder emptied of revisions, then the re-read fails.
        try FileManager.default.removeItem(atPath: path + "/" + StoreLayout.package(first.id, of: id))
        fault.armLastOpen {
            #expect(throws: StoreError.noSuchDocument(id)) { try hooked.revision(id) }
        }
        let noWinner = #expect(throws: FileSystemError.self) { try hooked.revision(id) }
        #expect(noWinner?.errno == .io, "\(String(describing: noWinner))")
    }

    @Test(
        "The error that says a document is deleted reads its folder again, and an I/O error doing so is thrown (deletedDocument took it for a document not deleted, so a save without a base went on)"
    )
    func deletedErrorRereadThrowsIOError() throws {
        let (store, path) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (id, _) = try store.create(Self.survey)
        _ = try store.delete(id)
        let fault = FolderOpenFault(document: id)
        let hooked = try SurveyStore.open(at: path, calls: fault.calls)
        let opens = try fault.armLastOpen {
            let deleted = try hooked.deletedDocument(id)
            #expect(deleted != nil)
        }
        #expect(opens >= 2, "\(opens)")
        let error = #expect(throws: FileSystemError.self) { try hooked.deletedDocument(id) }
        #expect(error?.errno == .io, "\(String(describing: error))")
    }

    @Test("verify names a store folder it cannot list (an I/O error) instead of taking it for an empty one")
    func verifyNamesAnUnlistableFolder() throws {
        let (store, path) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try store.create(Self.survey)
        #expect(store.verify().isEmpty)
        var calls = SystemCalls.live
        calls.openat = { directory, name, flags, mode in
            name.hasSuffix(StoreLayout.temporaryFolder) && flags & O_DIRECTORY != 0
                ? .failure(.io) : SystemCalls.live.openat(directory, name, flags, mode)
        }
        let problems = try SurveyStore.openForReading(at: path, calls: calls).verify()
        let temporary = path + "/" + StoreLayout.temporaryFolder
        #expect(
            problems.contains {
                $0.path == temporary && $0.message.contains("Input/output error") && !$0.isNote
            },
            "\(problems)")
    }

    @Test(
        "A revision whose package cannot be read is named as such by every look-up (unreadableRevision, why and where), never 'no such revision'; a prefix it shares with a readable one is ambiguous; a file in its place is to be moved away first"
    )
    func unreadablePackagesInLookups() throws {
        let (store, path) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (id, first) = try store.create(Self.survey)
        // Two heads of generation 2 (a conflict), and a third revision on top of one.
        let two = try store.save(try Survey(title: "Two", items: []), to: id, base: first.id)
        let otherTwo = try store.save(try Survey(title: "Other two", items: []), to: id, base: first.id)
        let three = try store.save(try Survey(title: "Three", items: []), to: id, base: otherTwo.id)
        let revisions = [first, two, three]
        func package(_ revision: RevisionMetadata) -> String {
            path + "/" + StoreLayout.package(revision.id, of: id)
        }
        // The second half-copied, a file in the third's place.
        try FileManager.default.removeItem(atPath: package(revisions[1]) + "/" + StoreLayout.contentFile)
        try FileManager.default.removeItem(atPath: package(revisions[2]))
        try Data("x".utf8).write(to: URL(fileURLWithPath: package(revisions[2])))
        func expectUnreadable(
            _ revision: RevisionMetadata, _ why: String, sourceLocation: SourceLocation = #_sourceLocation,
            _ body: () throws -> Any
        ) {
            do {
                _ = try body()
                Issue.record("no error", sourceLocation: sourceLocation)
            } catch StoreError.unreadableRevision(let named, let reason) {
                #expect(named == revision.id, sourceLocation: sourceLocation)
                #expect(reason.contains(package(revision)), "\(reason)", sourceLocation: sourceLocation)
                #expect(reason.contains(why), "\(reason)", sourceLocation: sourceLocation)
            } catch {
                Issue.record("\(error)", sourceLocation: sourceLocation)
            }
        }
        for (revision, why) in [
            (revisions[1], "is not complete yet"),
            (
                revisions[2],
                "a file stands where its package, \(package(revisions[2])), belongs (a sync copies nothing over a file: move it away first)"
            ),
        ] {
            expectUnreadable(revision, why) { try store.revision(id, revision.id) }
            expectUnreadable(revision, why) { try store.open(id, revision: revision.id) }
            expectUnreadable(revision, why) {
                try store.revisionID(matching: revision.id.description, in: id)
            }
            expectUnreadable(revision, why) {
                try store.revisionID(matching: String(revision.id.description.prefix(40)), in: id)
            }
        }
        // A prefix naming a readable revision and a package that cannot be read yet is
        // ambiguous: it would be once the copy completes.
        #expect(
            throws: LookupError.ambiguousRevision(
                "2-", [two.id, otherTwo.id].sorted { $0.description < $1.description })
        ) {
            try store.revisionID(matching: "2-", in: id)
        }
        #expect(throws: StoreError.noSuchRevision("9-0")) { try store.revisionID(matching: "9-0", in: id) }
    }
}
