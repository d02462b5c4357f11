import Foundation
import Packages
import Surveys
import TestSupport
import Testing
import Versions

@_spi(Testing) @testable import SurveyStore

/// Entries a user may not read (another user's files, a folder made unreadable with
/// `chmod 000`, or kept so by a sync engine that copies modes): one such document is left
/// out of listings, named, and the others are listed.
@Suite("Unreadable entries", .serialized)
struct UnreadableEntryTests {
    /// What is made unreadable in the second document.
    enum Entry: String, CaseIterable, CustomTestStringConvertible {
        case documentFolder, package, metadata
        var testDescription: String { rawValue }
    }

    @Test(
        "list and conflicts list every other document when one document's folder, package or metadata cannot be read, name it, and then exit 1, the listing incomplete (they failed whole, exit 1; then listed the rest, exit 0)",
        CommandRunner.needs("setpriv"), arguments: Entry.allCases)
    func listingPassesOverUnreadableDocument(_ entry: Entry) throws {
        let directory = try CommandRunner.temporaryDirectory()
        let root = directory.appendingPathComponent("store").path
        let store = try SurveyStore.create(at: root, deviceName: "laptop")
        let (readable, _) = try store.create(try Survey(title: "Readable", items: []))
        let (unreadable, revision) = try store.create(try Survey(title: "Hidden away", items: []))
        let folder = root + "/" + StoreLayout.folder(of: unreadable)
        let package = root + "/" + StoreLayout.package(revision.id, of: unreadable)
        let target =
            switch entry {
            case .documentFolder: folder
            case .package: package
            case .metadata: package + "/" + StoreLayout.metadataFile
            }
        try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: target)
        defer {
            try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: target)
            try? FileManager.default.removeItem(at: directory)
        }
        var prefix: [String] = []
        if getuid() == 0 {
            // root reads anything: the commands run as nobody instead.
            guard let setpriv = CommandRunner.requireTool("setpriv") else { return }
            prefix = [setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
        }
        let list = try CommandRunner.run(["list", "--json", "--store", root], prefix: prefix)
        #expect(list.status == 1, "\(list.stderr)")
        #expect(
            list.stderr.hasSuffix("error: 1 document could not be read, so this listing is incomplete\n"),
            "\(list.stderr)")
        let rows = try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]]
        #expect(rows?.map { $0["id"] as? String } == [readable.uuidString.lowercased()], "\(list.stdout)")
        #expect(
            list.stderr.contains("warning: \(folder): cannot be read")
                && list.stderr.contains("Permission denied"),
            "\(list.stderr)")
        let table = try CommandRunner.run(["list", "--store", root], prefix: prefix)
        #expect(table.status == 1 && table.stdout.contains("Readable"), "\(table.stdout)\(table.stderr)")
        let conflicts = try CommandRunner.run(["conflicts", "--store", root], prefix: prefix)
        #expect(conflicts.status == 1, "\(conflicts.stderr)")
        #expect(
            conflicts.stderr.contains(folder)
                && conflicts.stderr.contains(
                    "error: 1 document could not be read, so this listing is incomplete")
                && !conflicts.stderr.contains("no document is in conflict"), "\(conflicts.stderr)")
        // verify names the folder once, then what failed beneath it (it named it twice:
        // "FOLDER: cannot open FOLDER/…: Permission denied").
        let verify = try CommandRunner.run(["verify", "--store", root], prefix: prefix)
        #expect(verify.status == 1, "\(verify.stdout)\(verify.stderr)")
        let line = (verify.stdout + verify.stderr).split(separator: "\n").first { $0.contains(folder) }
        #expect(
            line.map { $0.components(separatedBy: folder).count == 2 && $0.contains("Permission denied") }
                == true, "\(verify.stdout)\(verify.stderr)")
    }

    /// A store of three documents, each with a superseded revision to prune, whose middle
    /// one (by id: the order commands go through them) has `entry` made unreadable; with
    /// `prefix`, what runs `survey` as `nobody`, who then owns the store (so that it may
    /// write it) and cannot read that entry.
    struct ThreeDocuments {
        let directory: URL
        let root: String
        let ids: [UUID]
        let folder: String
        let target: String
        var prefix: [String] = []

        var hidden: UUID { ids[1] }
        var readable: [UUID] { [ids[0], ids[2]] }

        init(_ entry: Entry, otherStore: Bool = false) throws {
            directory = try CommandRunner.temporaryDirectory()
            root = directory.appendingPathComponent("store").path
            let store = try SurveyStore.create(at: root, deviceName: "laptop")
            var made: [UUID] = []
            for title in ["One", "Two", "Three"] {
                let (id, _) = try store.create(try Survey(title: title, items: []))
                try store.save(try Survey(title: title + " again", items: []), to: id)
                made.append(id)
            }
            ids = made.sorted { $0.uuidString.lowercased() < $1.uuidString.lowercased() }
            let hidden = ids[1]
            folder = root + "/" + StoreLayout.folder(of: hidden)
            let package = root + "/" + StoreLayout.package(try store.open(hidden).base.id, of: hidden)
            target =
                switch entry {
                case .documentFolder: folder
                case .package: package
                case .metadata: package + "/" + StoreLayout.metadataFile
                }
            if otherStore { _ = try SurveyStore.create(at: self.other, deviceName: "desktop") }
            if getuid() == 0 {
                guard let setpriv = CommandRunner.requireTool("setpriv") else { return }
                prefix = [setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
                _ = try ChildProcess.run("/bin/chown", ["-R", "nobody:nogroup", directory.path])
            }
            try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: target)
        }

        /// A second, empty store beside the first.
        var other: String { directory.appendingPathComponent("other").path }

        /// Runs `survey` with `arguments` on the store (or on `store`), through ``prefix``.
        func survey(_ arguments: [String], store: String? = nil) throws -> CommandRunner.Result {
            try CommandRunner.run(arguments + ["--store", store ?? root], prefix: prefix)
        }

        /// Makes the entry readable again.
        func restore() {
            try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: target)
        }

        func remove() {
            restore()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// The `unreadable` key of a command's `--json` report: `[{"id", "path", "message"}]`.
    static func unreadable(_ stdout: String) -> [[String: String]]? {
        let report = try? JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any]
        return report?["unreadable"] as? [[String: String]]
    }

    @Test(
        "prune over every document prunes every other one when one cannot be read, names it (stderr, --json unreadable) and exits 1 (it stopped at that document, exit 1, leaving the rest unpruned)",
        CommandRunner.needs("setpriv"), arguments: Entry.allCases)
    func prunePassesOverUnreadableDocument(_ entry: Entry) throws {
        let setup = try ThreeDocuments(entry)
        defer { setup.remove() }
        let dryRun = try CommandRunner.run(
            ["prune", "--dry-run", "--json", "--store", setup.root], prefix: setup.prefix)
        #expect(dryRun.status == 1, "\(dryRun.stderr)")
        #expect(Self.unreadable(dryRun.stdout)?.map { $0["path"] } == [setup.folder], "\(dryRun.stdout)")
        let prune = try CommandRunner.run(["prune", "--json", "--store", setup.root], prefix: setup.prefix)
        #expect(prune.status == 1, "\(prune.stderr)")
        let named = Self.unreadable(prune.stdout)
        #expect(named?.map { $0["id"] } == [setup.hidden.uuidString.lowercased()], "\(prune.stdout)")
        #expect(named?.first?["path"] == setup.folder)
        #expect(named?.first?["message"]?.contains("Permission denied") == true, "\(prune.stdout)")
        #expect(prune.stderr.contains("error: \(setup.folder): cannot be read"), "\(prune.stderr)")
        #expect(
            prune.stderr.hasSuffix("error: 1 document could not be read, so not pruned\n"), "\(prune.stderr)")
        setup.restore()
        let store = try SurveyStore.open(at: setup.root)
        for id in setup.readable {
            #expect(try store.prunedRevisions(of: id).count == 1, "\(id) pruned")
        }
        #expect(
            try store.prunedRevisions(of: setup.hidden).isEmpty, "the unreadable document is left as it was")
        // An empty list when every document is read.
        let again = try CommandRunner.run(["prune", "--json", "--store", setup.root], prefix: setup.prefix)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(Self.unreadable(again.stdout)?.isEmpty == true, "\(again.stdout)")
    }

    @Test(
        "sync (both directions, and --merge) syncs every other document when one cannot be read on either side, names it (stderr, --json unreadable) and exits 1 (it failed whole, \"cannot sync\", saying nothing of what was synced)",
        CommandRunner.needs("setpriv"), arguments: Entry.allCases)
    func syncPassesOverUnreadableDocument(_ entry: Entry) throws {
        let setup = try ThreeDocuments(entry, otherStore: true)
        defer { setup.remove() }
        for (index, (from, to)) in [(setup.root, setup.other), (setup.other, setup.root)].enumerated() {
            let merge = index == 1 ? ["--merge"] : []
            let sync = try CommandRunner.run(
                ["sync", to, "--json", "--store", from] + merge, prefix: setup.prefix)
            #expect(sync.status == 1, "\(sync.stderr)")
            let named = Self.unreadable(sync.stdout)
            #expect(named?.map { $0["path"] } == [setup.folder], "\(sync.stdout)")
            #expect(named?.first?["message"]?.contains("Permission denied") == true, "\(sync.stdout)")
            #expect(sync.stderr.contains("error: \(setup.folder): cannot be read"), "\(sync.stderr)")
            #expect(
                sync.stderr.hasSuffix(
                    "error: 1 document could not be read, so not synced\(merge.isEmpty ? "" : " or not merged")\n"
                ),
                "\(sync.stderr)")
        }
        let copied = try FileManager.default.contentsOfDirectory(atPath: setup.other + "/Documents").sorted()
        #expect(copied == setup.readable.map { $0.uuidString.lowercased() })
        setup.restore()
        let sync = try CommandRunner.run(
            ["sync", setup.other, "--json", "--store", setup.root], prefix: setup.prefix)
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(Self.unreadable(sync.stdout)?.isEmpty == true, "\(sync.stdout)")
    }

    /// Sets the permissions of `path` (as the test's user, root or not).
    static func chmod(_ path: String, _ mode: Int) throws {
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    }

    @Test(
        "sync names a document whose content file it must copy cannot be read, copies nothing of it and syncs every other document, exit 1 (it failed whole, \"cannot sync\")",
        CommandRunner.needs("setpriv"))
    func syncPassesOverUnreadableContent() throws {
        let setup = try ThreeDocuments(.metadata, otherStore: true)
        defer { setup.remove() }
        setup.restore()
        let content = (setup.target as NSString).deletingLastPathComponent + "/" + StoreLayout.contentFile
        try Self.chmod(content, 0)
        defer { try? Self.chmod(content, 0o644) }
        let sync = try CommandRunner.run(
            ["sync", setup.other, "--json", "--store", setup.root], prefix: setup.prefix)
        #expect(sync.status == 1, "\(sync.stdout)\(sync.stderr)")
        let named = Self.unreadable(sync.stdout)
        #expect(named?.map { $0["path"] } == [setup.folder], "\(sync.stdout)")
        #expect(named?.first?["message"]?.contains("Permission denied") == true, "\(sync.stdout)")
        #expect(
            sync.stderr.hasSuffix("error: 1 document could not be read, so not synced\n"), "\(sync.stderr)")
        let copied = try FileManager.default.contentsOfDirectory(atPath: setup.other + "/Documents").sorted()
        #expect(copied == setup.readable.map { $0.uuidString.lowercased() })
    }

    @Test(
        "sync names a document whose folder may not be written on the other side (and a new document where the documents' folder may not be written), copies everything else, leaves no temporary and exits 1 (it failed whole, part of a batch copied)",
        CommandRunner.needs("setpriv"))
    func syncPassesOverUnwritableFolder() throws {
        let setup = try ThreeDocuments(.metadata, otherStore: true)
        defer { setup.remove() }
        setup.restore()
        #expect(try setup.survey(["sync", setup.other]).status == 0)
        for id in setup.ids {
            #expect(try setup.survey(["edit", id.uuidString.lowercased(), "--title", "Later"]).status == 0)
        }
        let theirs = setup.other + "/" + StoreLayout.folder(of: setup.hidden)
        try Self.chmod(theirs, 0o555)
        defer { try? Self.chmod(theirs, 0o755) }
        let sync = try setup.survey(["sync", setup.other, "--json"])
        #expect(sync.status == 1, "\(sync.stdout)\(sync.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(sync.stdout.utf8)) as? [String: Any]
        let named = report?["unwritable"] as? [[String: String]]
        #expect(named?.map { $0["path"] } == [theirs], "\(sync.stdout)")
        #expect(named?.first?["message"]?.hasPrefix("cannot be written, so it is not synced: ") == true)
        #expect(named?.first?["message"]?.hasSuffix("Permission denied") == true, "\(sync.stdout)")
        #expect(report?["sent"] as? Int == 2, "\(sync.stdout)")
        #expect(
            sync.stderr.hasSuffix("error: 1 document could not be written, so not synced whole\n"),
            "\(sync.stderr)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: setup.other + "/Local.nosync/tmp").isEmpty)
        // A document new to the other side, whose documents' folder may not be written.
        let created = try setup.survey(["new", "--title", "New"]).stdout.trimmingCharacters(
            in: .whitespacesAndNewlines)
        try Self.chmod(setup.other + "/Documents", 0o555)
        defer { try? Self.chmod(setup.other + "/Documents", 0o755) }
        let blocked = try setup.survey(["sync", setup.other, "--json"])
        #expect(blocked.status == 1, "\(blocked.stderr)")
        let paths = Set(
            ((try JSONSerialization.jsonObject(with: Data(blocked.stdout.utf8)) as? [String: Any])?[
                "unwritable"]
                as? [[String: String]] ?? []).compactMap { $0["path"] })
        #expect(paths == [theirs, setup.other + "/Documents/" + created], "\(blocked.stdout)")
        // Writable again: the rest is copied.
        try Self.chmod(setup.other + "/Documents", 0o755)
        try Self.chmod(theirs, 0o755)
        let again = try setup.survey(["sync", setup.other, "--json"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try setup.survey(["verify"], store: setup.other).status == 0)
    }

    @Test(
        "verify --repair-from names a document whose copy in the other store cannot be read, and repairs every other damaged document (it stopped at that copy, exit 1, with no report)",
        CommandRunner.needs("setpriv"))
    func repairPassesOverUnreadableCopy() throws {
        let setup = try ThreeDocuments(.metadata, otherStore: true)
        defer { setup.remove() }
        setup.restore()
        let synced = try CommandRunner.run(
            ["sync", setup.other, "--store", setup.root], prefix: setup.prefix)
        #expect(synced.status == 0, "\(synced.stderr)")
        let store = try SurveyStore.openForReading(at: setup.root)
        var damaged: [String] = []
        for id in setup.ids {
            let file =
                setup.root + "/" + StoreLayout.package(try store.open(id).base.id, of: id) + "/"
                + StoreLayout.contentFile
            var bytes = try Data(contentsOf: URL(fileURLWithPath: file))
            bytes[bytes.count - 12] ^= 0x01
            try bytes.write(to: URL(fileURLWithPath: file))
            damaged.append(file)
        }
        let theirs = setup.other + "/" + StoreLayout.folder(of: setup.hidden)
        try Self.chmod(theirs, 0)
        defer { try? Self.chmod(theirs, 0o755) }
        let repair = try CommandRunner.run(
            ["verify", "--repair-from", setup.other, "--store", setup.root], prefix: setup.prefix)
        #expect(repair.status == 1, "\(repair.stdout)\(repair.stderr)")
        let output = repair.stdout + repair.stderr
        for (index, file) in damaged.enumerated() where index != 1 {
            #expect(output.contains("repaired: \(file): "), "\(output)")
        }
        #expect(
            output.contains("not repaired: \(theirs): cannot be read, so it is not used for the repair")
                && output.contains("Permission denied"), "\(output)")
        #expect(output.contains("repaired 2 revision(s)"), "\(output)")
    }

    @Test(
        "A prune that may not remove a package, or write a tombstone into a document's folder, names each document as skipped, prunes the others and exits 1; every later write and sync goes ahead, and once it may the prune finishes (each write, each sync failed on what was left)",
        CommandRunner.needs("setpriv"))
    func unwritableDocumentsKeepNoWriteWaiting() throws {
        let setup = try ThreeDocuments(.metadata, otherStore: true)
        defer { setup.remove() }
        setup.restore()
        let store = try SurveyStore.openForReading(at: setup.root)
        let first = try #require(
            try store.graph(of: setup.hidden).revisions.values.first { $0.parents.isEmpty })
        let package = setup.root + "/" + StoreLayout.package(first.id, of: setup.hidden)
        let folder = setup.root + "/" + StoreLayout.folder(of: setup.readable[0])
        try Self.chmod(package, 0o555)
        try Self.chmod(folder, 0o555)
        defer {
            try? Self.chmod(package, 0o755)
            try? Self.chmod(folder, 0o755)
        }
        let prune = try setup.survey(["prune", "--json"])
        #expect(prune.status == 1, "\(prune.stderr)")
        #expect(prune.stderr.hasPrefix("error: 2 documents could not be pruned whole"), "\(prune.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(prune.stdout.utf8)) as? [String: Any]
        let rows = (report?["documents"] as? [[String: Any]]) ?? []
        func row(_ id: UUID) -> [String: Any]? {
            rows.first { $0["id"] as? String == id.uuidString.lowercased() }
        }
        let unremovable = row(setup.hidden)?["skipped"] as? String
        #expect(
            unremovable?.hasPrefix("cannot remove \(package)/") == true
                && unremovable?.hasSuffix(": Permission denied") == true, "\(rows)")
        let unwritable = row(setup.readable[0])?["skipped"] as? String
        #expect(
            unwritable?.hasPrefix("cannot move into place \(folder)/") == true
                && unwritable?.hasSuffix(".pruned: Permission denied") == true, "\(rows)")
        #expect((row(setup.readable[1])?["pruned"] as? [String])?.count == 1, "\(rows)")
        // What a prune left keeps no write and no sync from going ahead.
        let edit = try setup.survey(["edit", setup.readable[1].uuidString.lowercased(), "--title", "Edited"])
        #expect(edit.status == 0, "\(edit.stderr)")
        let sync = try setup.survey(["sync", setup.other])
        #expect(sync.status == 0, "\(sync.stdout)\(sync.stderr)")
        let verify = try setup.survey(["verify"])
        #expect((verify.stdout + verify.stderr).contains("a copy of a pruned revision"), "\(verify.stdout)")
        try Self.chmod(package, 0o755)
        try Self.chmod(folder, 0o755)
        let again = try setup.survey(["prune"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(!FileManager.default.fileExists(atPath: package))
        let clean = try setup.survey(["verify"])
        #expect(clean.status == 0, "\(clean.stdout)\(clean.stderr)")
    }

    @Test(
        "sync --merge and resolve --all --merge name a document whose conflicting head may not be read, leave it in conflict, merge every other one and exit 1 (each stopped at it; resolve --all had merged the documents before it, unreported)",
        CommandRunner.needs("setpriv"))
    func mergesPassOverUnreadableHead() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (a, b) = (directory.appendingPathComponent("a").path, directory.appendingPathComponent("b").path)
        let here = try SurveyStore.create(at: a, deviceName: "laptop")
        let there = try SurveyStore.create(at: b, deviceName: "phone")
        var ids: [UUID] = []
        for title in ["One", "Two", "Three"] {
            let name = Item(title: "Name", kind: .textField(subtitle: nil))
            let note = Item(title: "Note", kind: .textField(subtitle: nil))
            ids.append(try here.create(try Survey(title: title, items: [name, note])).id)
        }
        ids.sort { $0.uuidString.lowercased() < $1.uuidString.lowercased() }
        _ = try here.sync(with: there)
        // Each side answers another item: conflicts that merge cleanly.
        for (store, position) in [(here, 0), (there, 1)] {
            for id in ids {
                var document = try store.open(id)
                try document.survey.setAnswer(.text("x"), forItem: document.survey.items[position].id)
                _ = try store.save(document)
            }
        }
        _ = try here.sync(with: there)
        let hidden = ids[1]
        // The head that does not win: the listing reads only the winner.
        let graph = try here.graph(of: hidden)
        let theirs = try #require(graph.heads.first { $0.id != graph.winner?.id })
        let content = a + "/" + StoreLayout.package(theirs.id, of: hidden) + "/" + StoreLayout.contentFile
        var prefix: [String] = []
        if getuid() == 0 {
            guard let setpriv = CommandRunner.requireTool("setpriv") else { return }
            prefix = [setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
            _ = try ChildProcess.run("/bin/chown", ["-R", "nobody:nogroup", directory.path])
        }
        try Self.chmod(content, 0)
        defer { try? Self.chmod(content, 0o644) }
        let folder = a + "/" + StoreLayout.folder(of: hidden)

        let preview = try CommandRunner.run(
            ["resolve", "--all", "--merge", "--dry-run", "--json", "--store", a], prefix: prefix)
        #expect(preview.status == 1, "\(preview.stdout)\(preview.stderr)")
        #expect(
            preview.stderr.hasSuffix("error: 1 document could not be read, so not merged\n"),
            "\(preview.stderr)")
        let previewed = try JSONSerialization.jsonObject(with: Data(preview.stdout.utf8)) as? [String: Any]
        #expect((previewed?["resolved"] as? [[String: Any]])?.count == 2, "\(preview.stdout)")
        let left = (previewed?["unresolved"] as? [[String: Any]])?.first
        #expect(left?["id"] as? String == hidden.uuidString.lowercased(), "\(preview.stdout)")
        #expect(
            (left?["reason"] as? String)?.hasPrefix("\(folder): cannot be read, so it is not merged: ")
                == true,
            "\(preview.stdout)")

        let sync = try CommandRunner.run(["sync", b, "--merge", "--json", "--store", a], prefix: prefix)
        #expect(sync.status == 1, "\(sync.stdout)\(sync.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(sync.stdout.utf8)) as? [String: Any]
        #expect(
            Set(report?["merged"] as? [String] ?? [])
                == Set([ids[0], ids[2]].map { $0.uuidString.lowercased() }))
        #expect(report?["unmerged"] as? [String] == [hidden.uuidString.lowercased()], "\(sync.stdout)")
        #expect((Self.unreadable(sync.stdout) ?? []).map { $0["path"] } == [folder], "\(sync.stdout)")
        #expect(
            sync.stderr.hasSuffix("error: 1 document could not be read, so not synced or not merged\n"),
            "\(sync.stderr)")

        let all = try CommandRunner.run(
            ["resolve", "--all", "--merge", "--json", "--store", a], prefix: prefix)
        #expect(all.status == 1, "\(all.stdout)\(all.stderr)")
        #expect(Self.unreadable(all.stdout)?.map { $0["path"] } == [folder], "\(all.stdout)")
        let resolved = try JSONSerialization.jsonObject(with: Data(all.stdout.utf8)) as? [String: Any]
        #expect(
            (resolved?["unresolved"] as? [[String: Any]])?.map { $0["id"] as? String } == [
                hidden.uuidString.lowercased()
            ])
    }

    @Test(
        "A lock file that may not be opened is named as one that can be removed: prune and sync leave its document and go on with the others (each stopped at it)",
        CommandRunner.needs("setpriv"))
    func unopenableLockFile() throws {
        let setup = try ThreeDocuments(.metadata, otherStore: true)
        defer { setup.remove() }
        setup.restore()
        let lock = setup.root + "/" + StoreLayout.lock(of: setup.hidden)
        #expect(FileManager.default.fileExists(atPath: lock))
        try Self.chmod(lock, 0)
        defer { try? Self.chmod(lock, 0o644) }
        let prune = try CommandRunner.run(["prune", "--json", "--store", setup.root], prefix: setup.prefix)
        #expect(prune.status == 1, "\(prune.stdout)\(prune.stderr)")
        let rows =
            (try JSONSerialization.jsonObject(with: Data(prune.stdout.utf8)) as? [String: Any])?["documents"]
            as? [[String: Any]] ?? []
        let skipped =
            rows.first { $0["id"] as? String == setup.hidden.uuidString.lowercased() }?["skipped"] as? String
        #expect(
            skipped?.hasPrefix("cannot lock \(lock): it may not be opened (Permission denied") == true
                && skipped?.contains("lock files hold nothing") == true, "\(prune.stdout)\(prune.stderr)")
        for id in setup.readable {
            #expect(
                (rows.first { $0["id"] as? String == id.uuidString.lowercased() }?["pruned"] as? [String])?
                    .count == 1,
                "\(rows)")
        }
        let sync = try CommandRunner.run(
            ["sync", setup.other, "--json", "--store", setup.root], prefix: setup.prefix)
        #expect(sync.status == 1, "\(sync.stderr)")
        let copied = try FileManager.default.contentsOfDirectory(atPath: setup.other + "/Documents").sorted()
        #expect(copied == setup.readable.map { $0.uuidString.lowercased() }, "\(sync.stdout)\(sync.stderr)")
    }

    @Test(
        "verify notes each folder this user may not write in and each lock file it may not open, naming the commands that fail, and still calls the store clean, exit 0 (it said \"clean\" and every save failed)",
        CommandRunner.needs("setpriv"))
    func verifyNotesWhatMayNotBeWritten() throws {
        let setup = try ThreeDocuments(.metadata)
        defer { setup.remove() }
        setup.restore()
        let clean = try setup.survey(["verify"])
        #expect(clean.status == 0 && clean.stdout == "clean\n", "\(clean.stdout)\(clean.stderr)")
        let temporary = setup.root + "/" + StoreLayout.temporaryFolder
        let documentLock = setup.root + "/" + StoreLayout.lock(of: setup.hidden)
        let writersLock = setup.root + "/" + StoreLayout.locksFolder + "/" + PackageWriter.writersLockName
        let modes = [(temporary, 0o555), (setup.folder, 0o555), (documentLock, 0), (writersLock, 0)]
        for (path, mode) in modes { try Self.chmod(path, mode) }
        defer {
            for (path, _) in modes { try? Self.chmod(path, path.hasSuffix(".lock") ? 0o644 : 0o755) }
        }
        let verify = try setup.survey(["verify", "--json"])
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(verify.stdout.utf8)) as? [String: Any]
        #expect(report?["clean"] as? Bool == true && (report?["problems"] as? [Any])?.isEmpty == true)
        let notes = Dictionary(
            ((report?["notes"] as? [[String: String]]) ?? []).map { ($0["path"] ?? "", $0["message"] ?? "") },
            uniquingKeysWith: { a, _ in a })
        let denied = "(Permission denied): "
        #expect(
            notes == [
                temporary:
                    "this user may not write here \(denied)every command that writes fails, since each write is made here first",
                setup.folder:
                    "this user may not write here \(denied)no revision of this document can be added (edit, save, delete, resolve, and a sync that brings one fail), nor pruned",
                documentLock:
                    "this user may not open this lock file \(denied)a command that writes its document fails (prune and sync pass over the document); lock files hold nothing: remove it while nothing uses the store (lock files are made again as needed)",
                writersLock:
                    "this user may not open this lock file \(denied)every command that writes fails; lock files hold nothing: remove it while nothing uses the store (lock files are made again as needed)",
            ], "\(verify.stdout)")
        let text = try setup.survey(["verify"])
        #expect(text.status == 0 && text.stdout == "clean (4 note(s))\n", "\(text.stdout)\(text.stderr)")
        #expect(text.stderr.contains("\(temporary): note: this user may not write here"), "\(text.stderr)")
        // What the notes say is so: the edit fails, and changes nothing.
        let before = try FileManager.default.contentsOfDirectory(atPath: setup.folder).sorted()
        let edit = try setup.survey(["edit", setup.hidden.uuidString.lowercased(), "--title", "Changed"])
        #expect(edit.status == 1, "\(edit.stdout)\(edit.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: setup.folder).sorted() == before)
    }

    @Test(
        "Per-device state that may not be removed keeps no prune or sync from going ahead (prune said it failed after pruning, stopped, and every sync failed on it)",
        CommandRunner.needs("setpriv"))
    func unremovableStateKeepsNothingWaiting() throws {
        let setup = try ThreeDocuments(.metadata, otherStore: true)
        defer { setup.remove() }
        setup.restore()
        try SurveyStore.open(at: setup.root).setLocalState(["LastOpenedItem": 1], of: setup.hidden)
        if getuid() == 0 {
            _ = try ChildProcess.run("/bin/chown", ["-R", "nobody:nogroup", setup.directory.path])
        }
        let hidden = setup.hidden.uuidString.lowercased()
        #expect(
            try CommandRunner.run(["delete", hidden, "--store", setup.root], prefix: setup.prefix).status == 0
        )
        let state = setup.root + "/" + StoreLayout.stateFolder
        try Self.chmod(state, 0o555)
        defer { try? Self.chmod(state, 0o755) }
        let prune = try CommandRunner.run(["prune", "--json", "--store", setup.root], prefix: setup.prefix)
        #expect(prune.status == 0, "\(prune.stdout)\(prune.stderr)")
        #expect(
            FileManager.default.fileExists(atPath: setup.root + "/" + StoreLayout.stateFile(of: setup.hidden))
        )
        let sync = try CommandRunner.run(["sync", setup.other, "--store", setup.root], prefix: setup.prefix)
        #expect(sync.status == 0, "\(sync.stderr)")
    }

    @Test(
        "watch starts when one document cannot be read, names it (stderr, an unreadable line with --json), reports the others, and picks it up once it can be read (it would not start, exit 1)",
        CommandRunner.needs("setpriv"), arguments: [Entry.documentFolder, .package])
    func watchPassesOverUnreadableDocument(_ entry: Entry) throws {
        let setup = try ThreeDocuments(entry)
        defer { setup.remove() }
        let watch = try CommandWatch(store: setup.root, prefix: setup.prefix)
        let hidden = setup.hidden.uuidString.lowercased()
        let named = watch.collected.wait { $0.contains { $0.event == "unreadable" } }
        #expect(named.map(\.key) == ["unreadable \(hidden) -"], "\(watch.collected.rawLines)")
        let store = try SurveyStore.open(at: setup.root)
        let saved = try store.save(try Survey(title: "Seen", items: []), to: setup.readable[0])
        let seen = watch.collected.wait { $0.contains { $0.revision == saved.id.description } }
        #expect(
            seen.contains {
                $0.key == "revision-added \(setup.readable[0].uuidString.lowercased()) \(saved.id)"
            })
        // Readable again, and changed: the document is reported, as one not seen before.
        setup.restore()
        if getuid() == 0 {
            _ = try ChildProcess.run("/bin/chown", ["-R", "nobody:nogroup", setup.directory.path])
        }
        let later = try store.save(try Survey(title: "Back", items: []), to: setup.hidden)
        let back = watch.collected.wait { $0.contains { $0.revision == later.id.description } }
        #expect(back.contains { $0.event == "created" && $0.id == hidden }, "\(back)")
        #expect(back.contains { $0.revision == later.id.description && $0.id == hidden }, "\(back)")
        #expect(watch.stop() == 0)
        let errors = watch.laterErrors()
        #expect(errors.contains("warning: \(setup.folder): cannot be read"), "\(errors)")
        #expect(errors.contains("Permission denied"), "\(errors)")
        #expect(watch.collected.failure == nil, "\(watch.collected.failure ?? "")")
    }
}
