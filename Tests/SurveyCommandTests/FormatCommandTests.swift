import Foundation
import PropertyList
import Testing
import Versions

@testable import SurveyStore

@Suite("Format versions in stores: check, migrate, newer formats", .serialized)
struct FormatCommandTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/formats").path

    /// A store whose one document's winner is the content of `package` in its own format,
    /// written as it would arrive by sync from an older (or newer) app.
    static func store(with package: String, formatVersion: Int, at path: String, device: String = "old app")
        throws -> (UUID, RevisionMetadata)
    {
        _ = try SurveyStore.create(at: path, deviceName: device)
        let content = try Data(contentsOf: URL(fileURLWithPath: fixtures + "/" + package + "/Survey.plist"))
        let document = UUID(uuidString: "5A1D1E7C-0B7E-4F0A-9C3B-2F6E8D9A0001")!
        let revisions = RevisionStore(
            root: path, device: Device(id: "old-app-1", name: device), wallClock: { 1_560_000_000_000 })
        let written = try revisions.write(
            document: document, parents: [], content: content, formatVersion: formatVersion)
        return (document, written)
    }

    @Test("check: 0 on the good fixtures, non-zero on each broken one, naming the file and the problem")
    func check() throws {
        let good = try CommandRunner.run([
            "check", Self.fixtures + "/format1/answered.survey", Self.fixtures + "/format1/unanswered.survey",
            Self.fixtures + "/format2", Self.fixtures + "/stores/format1-store",
            Self.fixtures + "/stores/format2-store", "--json",
        ])
        #expect(good.status == 0, "\(good.stderr)")
        let rows =
            (try JSONSerialization.jsonObject(with: Data(good.stdout.utf8)) as! [String: Any])["revisions"]
            as! [[String: Any]]
        #expect(
            rows.map { $0["status"] as! String } == [
                "migratable", "migratable", "current", "current", "migratable", "current",
            ])
        #expect(rows.map { $0["formatVersion"] as? Int } == [1, 1, 2, 2, 1, 2])
        let fixtureFolders = try FileManager.default.contentsOfDirectory(atPath: Self.fixtures + "/broken")
            .filter { $0.hasSuffix(".survey") }

        let expectations = [
            "missing-survey-plist": "Survey.plist: missing", "slider-bounds-not-numbers": "is not a number",
            "multitf-wrong-length": "2 flags for 3 options", "unknown-type": "unknown format-1 type 'Rating'",
            "malformed-xml": "Survey.plist:6:", "binary-three-options": "exactly 2 options",
            "no-document-uuid": "DocumentUUID",
        ]
        #expect(
            Set(fixtureFolders) == Set(expectations.keys.map { $0 + ".survey" }),
            "every broken fixture is checked")
        for (name, problem) in expectations {
            let path = Self.fixtures + "/broken/\(name).survey"
            let result = try CommandRunner.run(["check", path])
            #expect(result.status == 65, "\(name)")
            #expect(
                result.stderr.contains(path) && result.stderr.contains(problem), "\(name): \(result.stderr)")
        }
        let newer = try CommandRunner.run(["check", Self.fixtures + "/format3/newer.survey"])
        #expect(newer.status == 65)
        #expect(newer.stderr.contains("format 3 is newer than this build supports (2)"))

        // A new store has nothing to check and passes (a CI check of a fresh store); an
        // empty folder that is no store is not what was meant.
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("store").path
        #expect(try CommandRunner.run(["init", "--store", store]).status == 0)
        let empty = try CommandRunner.run(["check", store, "--json"])
        #expect(empty.status == 0 && empty.stdout == "{\n  \"revisions\" : []\n}\n", "\(empty.stdout)")
        #expect(empty.stderr.contains("no documents"))
        let folder = directory.appendingPathComponent("folder").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let none = try CommandRunner.run(["check", folder])
        #expect(
            none.status == 65 && none.stderr.contains("\(folder): no revision packages found"),
            "\(none.stderr)")
    }

    @Test(
        "check of a folder with no package says what to give instead, and of a store's Documents folder names the store (it said only 'no revision packages found', of a folder full of documents)"
    )
    func checkSaysWhatToGive() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("store").path
        #expect(try CommandRunner.run(["init", "--store", store]).status == 0)
        #expect(try CommandRunner.run(["new", "--title", "Checked", "--store", store]).status == 0)
        for documents in [store + "/Documents", store + "/Documents/"] {
            let result = try CommandRunner.run(["check", documents])
            #expect(
                result.status == 65
                    && result.stderr
                        == "\(documents): no revision packages found: it is the Documents folder of the store at \(store); give the store to check every document in it\n",
                "\(result.stderr)")
        }
        let folder = directory.appendingPathComponent("folder").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let none = try CommandRunner.run(["check", folder, "--json"])
        let rows = (try JSONSerialization.jsonObject(with: Data(none.stdout.utf8)) as? [String: Any])?[
            "revisions"]
        #expect(
            none.status == 65
                && (rows as? [[String: Any]])?.first?["message"] as? String
                    == "no revision packages found: give a store, a document folder or a revision package",
            "\(none.stdout)")
        // The store itself checks every document.
        #expect(try CommandRunner.run(["check", store]).status == 0)
    }

    @Test(
        "check fails a store whose Store.plist is not a layout file (garbage, a plist without the version, a folder, empty), naming it, as every other command refuses that store (it passed it, exit 0, every revision current)"
    )
    func checkFailsADamagedLayoutFile() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("s").path
        _ = try Self.store(with: "format1/answered.survey", formatVersion: 1, at: store)
        let layout = store + "/" + StoreLayout.layoutFile
        #expect(try CommandRunner.run(["check", store]).status == 0)
        for (damage, expected) in [
            ("hello\n", "no root element"), ("<plist><dict/></plist>", "StoreLayoutVersion"),
            ("folder", "it is a folder"), ("", "empty"),
        ] {
            try? FileManager.default.removeItem(atPath: layout)
            if damage == "folder" {
                try FileManager.default.createDirectory(atPath: layout, withIntermediateDirectories: false)
            } else {
                try Data(damage.utf8).write(to: URL(fileURLWithPath: layout))
            }
            let listed = try CommandRunner.run(["list", "--store", store])
            #expect(listed.status == 65, "\(damage): \(listed.stderr)")
            let checked = try CommandRunner.run(["check", store, "--json"])
            #expect(checked.status == 65, "\(damage): \(checked.stdout)\(checked.stderr)")
            let rows =
                (try JSONSerialization.jsonObject(with: Data(checked.stdout.utf8)) as? [String: Any])?[
                    "revisions"]
                as? [[String: Any]] ?? []
            #expect(rows.count == 1 && rows.first?["path"] as? String == layout, "\(damage): \(rows)")
            #expect(rows.first?["status"] as? String == "invalid", "\(damage): \(rows)")
            #expect(
                (rows.first?["message"] as? String)?.contains(expected) == true
                    && checked.stderr.contains("not a store's layout file"),
                "\(damage): \(rows) \(checked.stderr)")
        }
    }

    @Test("check takes content up to the store's limit for Survey.plist (it refused any over 1 MiB)")
    func checkLargeContent() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("store").path
        #expect(try CommandRunner.run(["init", "--store", store]).status == 0)
        let answer = String(repeating: "x", count: 2_000_000)
        let file = directory.appendingPathComponent("big.json")
        try Data(
            #"{"title": "Big", "items": [{"kind": "textField", "title": "t", "answer": "\#(answer)"}]}"#.utf8
        ).write(to: file)
        #expect(try CommandRunner.run(["new", "--from", file.path, "--store", store]).status == 0)
        let result = try CommandRunner.run(["check", store])
        #expect(result.status == 0 && result.stdout.hasPrefix("current"), "\(result.stdout)\(result.stderr)")
    }

    @Test(
        "check never follows a link beneath the path it is given (it read what a package's link pointed to), and takes a store reached through a link"
    )
    func checkFollowsNoLink() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("store").path
        #expect(try CommandRunner.run(["init", "--store", store]).status == 0)
        let id = try CommandRunner.run(["new", "--title", "Linked", "--store", store]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let folder = store + "/Documents/" + id
        let package = try #require(
            try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasSuffix(".survey") })
        let content = folder + "/" + package + "/Survey.plist"
        // A valid survey outside, and a link to it in the content's place.
        let outside = directory.appendingPathComponent("outside.plist").path
        try FileManager.default.moveItem(atPath: content, toPath: outside)
        try FileManager.default.createSymbolicLink(atPath: content, withDestinationPath: outside)
        let linkToStore = directory.appendingPathComponent("link-to-store").path
        try FileManager.default.createSymbolicLink(atPath: linkToStore, withDestinationPath: store)

        for path in [store, folder + "/" + package, linkToStore] {
            let result = try CommandRunner.run(["check", path, "--json"])
            #expect(result.status == 65, "\(path): \(result.stderr)")
            let rows = try #require(
                (try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])?[
                    "revisions"]
                    as? [[String: Any]])
            #expect(rows.map { $0["status"] as? String } == ["invalid"], "\(path): \(rows)")
            #expect(
                (rows.first?["message"] as? String)?.contains("it is a symbolic link") == true,
                "\(path): \(rows)")
        }
        try FileManager.default.removeItem(atPath: content)
        try FileManager.default.moveItem(atPath: outside, toPath: content)
        let healed = try CommandRunner.run(["check", linkToStore])
        #expect(healed.status == 0 && healed.stdout.hasPrefix("current"), "\(healed.stdout)\(healed.stderr)")
    }

    @Test(
        "check writes a line feed in a file name out as \\u{A} in every message, so a name never splits its line (it wrote it as it is)"
    )
    func checkMessagesKeepToTheirLines() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let manager = FileManager.default
        // A store with a file where a document's folder belongs.
        let store = directory.appendingPathComponent("st\nore").path
        #expect(try CommandRunner.run(["init", "--store", store]).status == 0)
        #expect(try CommandRunner.run(["new", "--title", "Kept", "--store", store]).status == 0)
        #expect(manager.createFile(atPath: store + "/Documents/bad\nname", contents: Data()))
        // And a FIFO, named as one.
        #expect(mkfifo(store + "/Documents/pipe", 0o600) == 0)
        // A store with no documents, a folder with no package, and a package whose
        // metadata is empty (its error names the file).
        let empty = directory.appendingPathComponent("em\npty").path
        #expect(try CommandRunner.run(["init", "--store", empty]).status == 0)
        let folder = directory.appendingPathComponent("fo\nlder").path
        try manager.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let package = directory.appendingPathComponent("pa\nckage/1-ab.survey").path
        try manager.createDirectory(atPath: package, withIntermediateDirectories: true)
        #expect(manager.createFile(atPath: package + "/DocumentMetadata.plist", contents: Data()))
        let result = try CommandRunner.run(["check", store, empty, folder, package])
        #expect(result.status == 65, "\(result.stderr)")
        let shown = { (path: String) in path.replacingOccurrences(of: "\n", with: "\\u{A}") }
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(
            Set(lines) == [
                "\(shown(store))/Documents/bad\\u{A}name: not a document folder but a file (skipped)",
                "\(shown(store))/Documents/pipe: not a document folder but a FIFO, socket or device (never opened; skipped)",
                "note: \(shown(empty)): the store has no documents, so no revision to check",
                "\(shown(folder)): no revision packages found: give a store, a document folder or a revision package",
                "\(shown(package))/DocumentMetadata.plist:1:1: the document is empty",
            ], "\(lines)")
    }

    @Test(
        "check fails a revision the store cannot read: content that does not match its digest, metadata that does not match its id, metadata without FormatVersion, a package under another name; each passed as current or migratable",
        arguments: ["content", "metadata", "formatVersion", "name"])
    func checkVerifiesRevisions(damage: String) throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("store").path
        #expect(try CommandRunner.run(["init", "--store", store, "--device", "dev1"]).status == 0)
        let id = try CommandRunner.run(["new", "--title", "Hello", "--store", store]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try CommandRunner.run(["check", store]).status == 0)
        let folder = store + "/Documents/" + id
        let package = folder + "/" + (try FileManager.default.contentsOfDirectory(atPath: folder))[0]
        func replace(_ file: String, _ old: String, _ new: String) throws {
            let text = try String(contentsOfFile: package + "/" + file, encoding: .utf8)
            #expect(text.contains(old))
            try text.replacingOccurrences(of: old, with: new).write(
                toFile: package + "/" + file, atomically: false, encoding: .utf8)
        }
        let expected: String
        switch damage {
        case "content":
            try replace("Survey.plist", "Hello", "Jello")
            expected = "the content does not match the digest"
        case "metadata":
            try replace("DocumentMetadata.plist", "<string>dev1</string>", "<string>dev2</string>")
            expected = "the metadata does not match its revision id"
        case "formatVersion":
            try replace("DocumentMetadata.plist", "\t<key>FormatVersion</key>\n\t<integer>2</integer>\n", "")
            expected = "FormatVersion"
        default:
            let renamed = folder + "/1-" + String(repeating: "0", count: 64) + ".survey"
            try FileManager.default.moveItem(atPath: package, toPath: renamed)
            expected = "the store skips it"
        }
        let result = try CommandRunner.run(["check", store, "--json"])
        #expect(result.status == 65, "\(damage): \(result.stdout)")
        let rows =
            (try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])?["revisions"]
            as? [[String: Any]]
        #expect(
            rows?.count == 1 && rows?.first?["status"] as? String == "invalid", "\(damage): \(result.stdout)")
        #expect(
            (rows?.first?["message"] as? String)?.contains(expected) == true, "\(damage): \(result.stdout)")
        // What the store says of the same revision.
        #expect(try CommandRunner.run(["verify", "--store", store]).status != 0)
    }

    @Test(
        "check fails a store in which verify finds a document it skips (a link or a file in a document folder's place), naming it; it passed with that document unchecked"
    )
    func checkNamesSkippedDocuments() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("store").path
        #expect(try CommandRunner.run(["init", "--store", store]).status == 0)
        var ids: [String] = []
        for title in ["Kept", "Linked"] {
            ids.append(
                try CommandRunner.run(["new", "--title", title, "--store", store]).stdout
                    .trimmingCharacters(in: .whitespacesAndNewlines))
        }
        // The second document's folder moved out, and a link to it left in its place.
        let linked = store + "/Documents/" + ids[1]
        let outside = directory.appendingPathComponent("outside").path
        try FileManager.default.moveItem(atPath: linked, toPath: outside)
        try FileManager.default.createSymbolicLink(atPath: linked, withDestinationPath: outside)
        let result = try CommandRunner.run(["check", store, "--json"])
        #expect(result.status == 65, "\(result.stderr)")
        let rows = try #require(
            (try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])?["revisions"]
                as? [[String: Any]])
        #expect(
            rows.map { $0["status"] as? String } == ["invalid", "current"]
                || rows.map { $0["status"] as? String } == ["current", "invalid"], "\(rows)")
        let invalid = try #require(rows.first { $0["status"] as? String == "invalid" })
        #expect(invalid["path"] as? String == linked)
        #expect((invalid["message"] as? String)?.contains("symbolic link") == true, "\(invalid)")
        #expect(result.stderr.contains(linked), "\(result.stderr)")
        // Put back, it passes.
        try FileManager.default.removeItem(atPath: linked)
        try FileManager.default.moveItem(atPath: outside, toPath: linked)
        #expect(try CommandRunner.run(["check", store]).status == 0)
    }

    @Test(
        "migrate leaves a document whose lock file is a folder, names it with the lock file's problem, migrates the others and exits 1 (it stopped at the lock, migrating none)"
    )
    func migrateSkipsUnusableLock() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("s").path
        let (locked, _) = try Self.store(with: "format1/answered.survey", formatVersion: 1, at: store)
        let other = UUID(uuidString: "5A1D1E7C-0B7E-4F0A-9C3B-2F6E8D9A0002")!
        _ = try RevisionStore(root: store, device: Device(id: "old-app-1", name: "old app")).write(
            document: other, parents: [],
            content: try Data(
                contentsOf: URL(fileURLWithPath: Self.fixtures + "/format1/unanswered.survey/Survey.plist")),
            formatVersion: 1)
        let lock = store + "/" + StoreLayout.lock(of: locked)
        try FileManager.default.createDirectory(atPath: lock, withIntermediateDirectories: true)
        let migrated = try CommandRunner.run(["migrate", "--store", store])
        #expect(migrated.status == 1, "\(migrated.stdout)\(migrated.stderr)")
        #expect(
            migrated.stdout.contains("\(other.uuidString.lowercased()): format 1 → 2 as "),
            "\(migrated.stdout)")
        #expect(
            migrated.stdout.contains(
                "\(locked.uuidString.lowercased()): format 1 (")
                && migrated.stdout.contains("not migrated: cannot lock \(lock): it is a folder"),
            "\(migrated.stdout)")
        let list = try CommandRunner.run(["list", "--json", "--store", store])
        let formats =
            (try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]])?.map {
                $0["formatVersion"] as? Int
            }
        #expect(formats == [1, 2], "\(list.stdout)")
    }

    @Test(
        "migrate names a document whose folder holds a revision it cannot read yet, and one no revision of which can be read, with what mends each, migrates the others and exits 1 (it migrated the first into a conflict and passed over the second, exit 0: \"every winner is in the current format\")"
    )
    func migrateHoldsBackBesideUnreadableRevisions() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("s").path
        let (held, first) = try Self.store(with: "format1/answered.survey", formatVersion: 1, at: store)
        let oldApp = RevisionStore(root: store, device: Device(id: "old-app-1", name: "old app"))
        let content = try Data(
            contentsOf: URL(fileURLWithPath: Self.fixtures + "/format1/unanswered.survey/Survey.plist"))
        let child = try oldApp.write(document: held, parents: [first], content: content, formatVersion: 1)
        let lone = UUID(uuidString: "5A1D1E7C-0B7E-4F0A-9C3B-2F6E8D9A0003")!
        let loneRevision = try oldApp.write(document: lone, parents: [], content: content, formatVersion: 1)
        for (id, revision) in [(held, child.id), (lone, loneRevision.id)] {
            try FileManager.default.removeItem(
                atPath: store + "/" + StoreLayout.package(revision, of: id) + "/" + StoreLayout.contentFile)
        }
        let migrated = try CommandRunner.run(["migrate", "--store", store])
        #expect(migrated.status == 1, "\(migrated.stdout)\(migrated.stderr)")
        #expect(
            migrated.stdout.contains(
                "\(held.uuidString.lowercased()): format 1 (\(first.id)) not migrated: its folder holds a revision it cannot read yet (\(child.id); half-copied, damaged, or something else in its place), which may supersede its winner: migrated now, the two would be in conflict; let the copy finish, or copy it again from a replica that holds it intact (`survey sync --store \(store) REPLICA`), then migrate"
            ), "\(migrated.stdout)")
        let folder = store + "/" + StoreLayout.folder(of: lone)
        #expect(
            migrated.stderr.contains(
                "error: \(folder): no revision of this document can be read yet, so it is not migrated (any may be in an older format) (`survey verify --store \(store)` names each"
            )
                && migrated.stderr.contains("error: 1 document could not be read, so not migrated\n"),
            "\(migrated.stderr)")
        #expect(migrated.stdout.hasSuffix("nothing migrated\n"), "\(migrated.stdout)")
        let json = try CommandRunner.run(["migrate", "--json", "--dry-run", "--store", store])
        #expect(json.status == 1, "\(json.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let notMigrated = report?["notMigrated"] as? [[String: Any]]
        #expect(
            notMigrated?.map { ($0["error"] as? [String: Any])?["code"] as? String } == [
                "unseenForMigration"
            ],
            "\(json.stdout)")
        #expect(
            (report?["unreadable"] as? [[String: String]])?.map { $0["id"] } == [
                lone.uuidString.lowercased()
            ],
            "\(json.stdout)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: store + "/" + StoreLayout.folder(of: held))
                .count
                == 2, "nothing written")
    }

    @Test(
        "A format-1 winner opens migrated in memory; migrate on two replicas at once, then sync: no conflict")
    func migrateTwoReplicas() throws {
        let directory = try CommandRunner.temporaryDirectory()
        let a = directory.appendingPathComponent("a").path, b = directory.appendingPathComponent("b").path
        let (document, old) = try Self.store(with: "format1/answered.survey", formatVersion: 1, at: a)
        #expect(try CommandRunner.run(["init", "--store", b]).status == 0)
        #expect(try CommandRunner.run(["sync", b, "--store", a]).status == 0)
        let id = document.uuidString.lowercased()

        let shown = try CommandRunner.run(["show", id, "--json", "--store", a])
        #expect(shown.status == 0, "\(shown.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as! [String: Any]
        #expect(json["formatVersion"] as? Int == 1)
        #expect((json["items"] as! [[String: Any]]).count == 7)
        #expect(try CommandRunner.run(["check", a]).status == 0)

        for store in [a, b] {
            let migrated = try CommandRunner.run(["migrate", "--json", "--store", store])
            #expect(migrated.status == 0, "\(migrated.stderr)")
        }
        let sync = try CommandRunner.run(["sync", b, "--json", "--store", a])
        let report = try JSONSerialization.jsonObject(with: Data(sync.stdout.utf8)) as! [String: Any]
        #expect(
            report["sent"] as? Int == 0 && report["received"] as? Int == 0,
            "both replicas wrote the same revision")
        for store in [a, b] {
            let list =
                try JSONSerialization.jsonObject(
                    with: Data(try CommandRunner.run(["list", "--json", "--store", store]).stdout.utf8))
                as! [[String: Any]]
            #expect(list[0]["conflicts"] as? Int == 0)
            #expect(list[0]["formatVersion"] as? Int == 2)
        }
        let versions =
            try JSONSerialization.jsonObject(
                with: Data(try CommandRunner.run(["versions", id, "--json", "--store", a]).stdout.utf8))
            as! [[String: Any]]
        #expect(versions.count == 2)
        #expect(
            versions.first { $0["state"] as? String == "current" }?["parents"] as? [String] == [
                old.id.description
            ])
        // The migrated content is what show gave before: same ids, same answers.
        let after =
            try JSONSerialization.jsonObject(
                with: Data(try CommandRunner.run(["show", id, "--json", "--store", a]).stdout.utf8))
            as! [String: Any]
        #expect(
            (after["items"] as! [[String: Any]]).map { $0["id"] as! String }
                == (json["items"] as! [[String: Any]]).map { $0["id"] as! String })
        let again =
            try JSONSerialization.jsonObject(
                with: Data(try CommandRunner.run(["migrate", "--json", "--store", a]).stdout.utf8))
            as! [String: Any]
        #expect((again["migrated"] as? [Any])?.isEmpty == true, "a second migrate has nothing to do")
    }

    @Test(
        "migrate failing at its second batch (EIO injected into its third syncfs) says what the first batch migrated, which stays migrated (it said only the error)",
        CommandRunner.needs("strace"))
    func migrateFailureSaysWhatWasMigrated() throws {
        guard let strace = CommandRunner.requireTool("strace") else { return }
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let prepared = directory.appendingPathComponent("prepared").path
        _ = try SurveyStore.create(at: prepared, deviceName: "old app")
        let revisions = RevisionStore(
            root: prepared, device: Device(id: "old-app-1", name: "old app"), wallClock: { 1_560_000_000_000 }
        )
        let content = try PropertyList.dictionary([
            "title": .string("Old"),
            "items": .array([.dictionary(["title": .string("Name"), "type": .string("TextField")])]),
        ]).xmlData()
        // The batch size depends on the limit of open files (SurveyStore.lockedBatchSize),
        // which the test process passes on to migrate: 128 under Linux's usual 1,024, 96
        // under macOS's 256. Migrate runs under a limit of its own, the same everywhere.
        let limit = 192
        let batch = SurveyStore.lockedBatchSize(SurveyStore.migrationBatch, openFileLimit: limit)
        #expect(batch > 1 && batch < SurveyStore.migrationBatch, "\(batch) documents a batch")
        // A batch (made durable by two syncfs calls), then one of 2.
        let count = batch + 2
        for index in 1...count {
            let id = String(format: "%08x-0000-4000-8000-000000000000", index)
            _ = try revisions.write(
                document: UUID(uuidString: id)!, parents: [], content: content, formatVersion: 1)
        }
        func migrated(_ store: String) throws -> Int {
            let list =
                try JSONSerialization.jsonObject(
                    with: Data(try CommandRunner.run(["list", "--json", "--store", store]).stdout.utf8))
                as! [[String: Any]]
            return list.filter { $0["formatVersion"] as? Int == 2 }.count
        }
        for json in [false, true] {
            let store = directory.appendingPathComponent(json ? "json" : "text").path
            try FileManager.default.copyItem(atPath: prepared, toPath: store)
            let result = try CommandRunner.run(
                ["migrate", "--store", store] + (json ? ["--json"] : []),
                prefix: OpenFileLimitTests.limiting(to: limit) + [
                    strace, "-f", "-qq", "-o", "/dev/null", "-e", "trace=syncfs", "-e",
                    "inject=syncfs:error=EIO:when=3",
                ])
            #expect(result.status == 1, "\(result.stderr)")
            #expect(
                result.stderr.contains(
                    "\(batch) documents migrated before the failure; the others are left as they were"),
                "\(result.stderr)")
            #expect(result.stderr.contains("Input/output error"), "\(result.stderr)")
            #expect(try migrated(store) == batch)
            let lines = result.stdout.split(separator: "\n")
            if json {
                let object =
                    try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
                #expect(object?["error"] != nil && object?.count == 1, "\(result.stdout)")
            } else {
                #expect(
                    lines.count == batch && lines.allSatisfy { $0.contains(": format 1 → 2 as 2-") },
                    "\(result.stdout)")
            }
            // The next migrate does the rest.
            #expect(try CommandRunner.run(["migrate", "--store", store]).status == 0)
            #expect(try migrated(store) == count)
        }
    }

    @Test(
        "migrate (and --dry-run) migrates every document it can and lists each whose winner cannot be migrated, with its revision and the item and rule, exiting 65 after the others (it stopped at the first, after writing earlier batches, and reported none)"
    )
    func migrateSkipsInvalidWinners() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("store").path
        _ = try SurveyStore.create(at: store, deviceName: "old app")
        let revisions = RevisionStore(
            root: store, device: Device(id: "old-app-1", name: "old app"), wallClock: { 1_560_000_000_000 })
        func formatOne(_ title: String, _ item: [String: PropertyList]) throws -> Data {
            try PropertyList.dictionary(["title": .string(title), "items": .array([.dictionary(item)])])
                .xmlData()
        }
        let good = try formatOne(
            "Old",
            [
                "title": .string("Name"), "type": .string("TextField"),
                "result": .dictionary(["text": .string("Ada")]),
            ])
        // check calls it invalid: a binary answer is 0 or 1.
        let bad = try formatOne(
            "Old bad",
            [
                "title": .string("b"), "type": .string("Binary"), "value1": .string("n"),
                "value2": .string("y"),
                "result": .dictionary(["text": .string("2")]),
            ])
        // One invalid winner in the first batch, one in the last, among 130 valid ones.
        let invalid = ["00000000-0000-4000-8000-000000000000", "ffffffff-0000-4000-8000-000000000000"]
        var invalidRevisions: [String: String] = [:]
        for id in invalid {
            let written = try revisions.write(
                document: UUID(uuidString: id)!, parents: [], content: bad, formatVersion: 1)
            invalidRevisions[id] = written.id.description
        }
        var valid: Set<String> = []
        for index in 1...130 {
            let id = String(format: "%08x-0000-4000-8000-000000000000", index)
            _ = try revisions.write(
                document: UUID(uuidString: id)!, parents: [], content: good, formatVersion: 1)
            valid.insert(id)
        }
        func formats() throws -> [String: Int] {
            let list =
                try JSONSerialization.jsonObject(
                    with: Data(try CommandRunner.run(["list", "--json", "--store", store]).stdout.utf8))
                as! [[String: Any]]
            return Dictionary(
                uniqueKeysWithValues: list.map { ($0["id"] as! String, $0["formatVersion"] as! Int) })
        }
        func expectReport(_ result: CommandRunner.Result, dryRun: Bool, migrated: Set<String>) throws {
            #expect(result.status == 65, "\(result.stderr)")
            let report = try #require(
                try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
                "\(result.stdout)")
            let rows = try #require(report["migrated"] as? [[String: Any]])
            #expect(Set(rows.map { $0["id"] as! String }) == migrated && rows.count == migrated.count)
            #expect(rows.allSatisfy { ($0["revision"] is NSNull) == dryRun })
            #expect(report["newer"] as? [String] == [])
            let failed = try #require(report["notMigrated"] as? [[String: Any]], "\(report)")
            #expect(failed.map { $0["id"] as! String } == invalid)
            for row in failed {
                let id = row["id"] as! String
                #expect(row["revision"] as? String == invalidRevisions[id])
                #expect(row["fromFormat"] as? Int == 1)
                let error = try #require(row["error"] as? [String: Any])
                #expect(error["code"] as? String == "invalidSurvey" && error["exit"] as? Int == 65)
                let message = error["message"] as? String ?? ""
                #expect(
                    message.contains("item 1 (\"b\")") && message.contains("[answerOutOfRange]"), "\(message)"
                )
            }
            #expect(result.stderr.contains("2 documents not migrated"), "\(result.stderr)")
        }

        let before = try formats()
        #expect(before.count == 132 && before.values.allSatisfy { $0 == 1 })
        try expectReport(
            try CommandRunner.run(["migrate", "--dry-run", "--json", "--store", store]), dryRun: true,
            migrated: valid)
        #expect(try formats() == before, "a dry run writes nothing")
        let text = try CommandRunner.run(["migrate", "--dry-run", "--store", store])
        #expect(text.status == 65)
        for id in invalid {
            #expect(
                text.stdout.contains(
                    "\(id): format 1 (\(invalidRevisions[id]!)) not migrated: item 1 (\"b\"): a binary answer is 0 or 1, not 2 [answerOutOfRange]"
                ), "\(text.stdout)")
        }
        #expect(text.stdout.split(separator: "\n").filter { $0.contains("(dry run)") }.count == 130)

        try expectReport(
            try CommandRunner.run(["migrate", "--json", "--store", store]), dryRun: false, migrated: valid)
        let after = try formats()
        #expect(after.filter { $0.value == 2 }.keys.sorted() == valid.sorted())
        #expect(invalid.allSatisfy { after[$0] == 1 }, "an invalid winner is left as it is")
        // Once the others are migrated, only the invalid ones are left to report.
        try expectReport(
            try CommandRunner.run(["migrate", "--json", "--store", store]), dryRun: false, migrated: [])
        // In words: the two listed, then that nothing was migrated (not "nothing to migrate").
        let rest = try CommandRunner.run(["migrate", "--store", store])
        #expect(rest.status == 65)
        let lines = rest.stdout.split(separator: "\n")
        #expect(
            lines.count == 3 && lines.prefix(2).allSatisfy { $0.contains(" not migrated: ") },
            "\(rest.stdout)")
        #expect(lines.last == "nothing migrated", "\(rest.stdout)")
    }

    @Test(
        "The format-1 store fixture, copied to two replicas: migrate on both, sync, and there is one revision and no conflict"
    )
    func fixtureStoreReplicas() throws {
        let directory = try CommandRunner.temporaryDirectory()
        let replicas = ["a", "b"].map { directory.appendingPathComponent($0).path }
        for replica in replicas {
            try FileManager.default.copyItem(atPath: Self.fixtures + "/stores/format1-store", toPath: replica)
            let migrated = try CommandRunner.run(["migrate", "--json", "--store", replica])
            #expect(migrated.status == 0, "\(migrated.stderr)")
        }
        #expect(try CommandRunner.run(["sync", replicas[1], "--store", replicas[0]]).status == 0)
        for replica in replicas {
            let list =
                try JSONSerialization.jsonObject(
                    with: Data(try CommandRunner.run(["list", "--json", "--store", replica]).stdout.utf8))
                as! [[String: Any]]
            #expect(
                list.count == 1 && list[0]["conflicts"] as? Int == 0 && list[0]["formatVersion"] as? Int == 2)
            let versions =
                try JSONSerialization.jsonObject(
                    with: Data(
                        try CommandRunner.run([
                            "versions", list[0]["id"] as! String, "--json", "--store", replica,
                        ]).stdout.utf8)) as! [Any]
            #expect(versions.count == 2)
        }
    }

    @Test(
        "conflicts says why heads cannot be merged in a plain warning with what mends it: a head in a newer format, a head whose content is no survey (it printed a Swift value, CommandFailure(code: ...), and no advice for the newer format)"
    )
    func conflictsWarnsOnUnmergeableHeads() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let a = directory.appendingPathComponent("a").path
        // One document in conflict with a head in a newer format, another with a head
        // whose content matches its digest but is no survey.
        let (newerDocument, _) = try Self.store(with: "format1/unanswered.survey", formatVersion: 1, at: a)
        #expect(try CommandRunner.run(["migrate", "--store", a]).status == 0)
        let store = try SurveyStore.open(at: a)
        let other = RevisionStore(root: a, device: Device(id: "other-app-1", name: "other app"))
        let (brokenDocument, _) = try store.create(try Survey(title: "Broken", items: []))
        for (document, content, format) in [
            (
                newerDocument,
                try Data(
                    contentsOf: URL(fileURLWithPath: Self.fixtures + "/format3/newer.survey/Survey.plist")), 3
            ),
            (brokenDocument, Data("<plist><dict>".utf8), 2),
        ] {
            let base = try store.revision(document, nil)
            _ = try other.write(document: document, parents: [base], content: content, formatVersion: format)
            #expect(
                try CommandRunner.run([
                    "edit", document.uuidString.lowercased(), "--title", "Edited", "--base",
                    base.id.description,
                    "--store", a,
                ]).status == 0)
        }
        let conflicts = try CommandRunner.run(["conflicts", "--store", a])
        #expect(conflicts.status == 0, "\(conflicts.stdout)\(conflicts.stderr)")
        func warning(_ document: UUID) -> String {
            conflicts.stderr.split(separator: "\n").map(String.init).first {
                $0.hasPrefix("warning: \(document.uuidString.lowercased()): its heads cannot be merged: ")
            } ?? ""
        }
        for document in [newerDocument, brokenDocument] {
            #expect(
                !warning(document).isEmpty && !warning(document).contains("CommandFailure("),
                "\(conflicts.stderr)")
        }
        #expect(
            warning(newerDocument).contains("format 3 is newer than this build supports (2)")
                && warning(newerDocument).contains(
                    "(a build that reads that format merges them; or resolve the conflict with `survey resolve --store \(a) \(newerDocument.uuidString.lowercased()) --keep REV` or `--from FILE`)"
                ), "\(conflicts.stderr)")
        #expect(
            warning(brokenDocument).contains(
                "`survey resolve --store \(a) \(brokenDocument.uuidString.lowercased()) --"),
            "\(conflicts.stderr)")
    }

    @Test(
        "A format-3 winner: list, versions, sync, prune and resolve --keep work; show fails clearly; the revision is never changed"
    )
    func newerFormat() throws {
        let directory = try CommandRunner.temporaryDirectory()
        let a = directory.appendingPathComponent("a").path, b = directory.appendingPathComponent("b").path
        // A format-2 base edited by this build, then a newer app's format-3 revision on top.
        let (document, _) = try Self.store(with: "format1/unanswered.survey", formatVersion: 1, at: a)
        let id = document.uuidString.lowercased()
        #expect(try CommandRunner.run(["migrate", "--store", a]).status == 0)
        let store = try SurveyStore.open(at: a)
        let base = try store.revision(document, nil)
        let newerApp = RevisionStore(root: a, device: Device(id: "new-app-1", name: "new app"))
        let content = try Data(
            contentsOf: URL(fileURLWithPath: Self.fixtures + "/format3/newer.survey/Survey.plist"))
        let newer = try newerApp.write(
            document: document, parents: [base], content: content, formatVersion: 3)
        let package = "\(a)/Documents/\(id)/\(newer.id).survey"
        func snapshot() throws -> [Data] {
            try ["DocumentMetadata.plist", "Survey.plist"].map {
                try Data(contentsOf: URL(fileURLWithPath: package + "/" + $0))
            }
        }
        let before = try snapshot()
        func unchanged() throws {
            #expect(try snapshot() == before, "no command changed the format-3 revision")
        }

        let show = try CommandRunner.run(["show", id, "--store", a])
        #expect(show.status == 65)
        #expect(show.stderr.contains("format 3 is newer than this build supports (2)"))
        let list = try CommandRunner.run(["list", "--json", "--store", a])
        #expect(list.status == 0 && list.stdout.contains("\"formatVersion\" : 3"))
        #expect(try CommandRunner.run(["versions", id, "--store", a]).status == 0)
        #expect(try CommandRunner.run(["migrate", "--store", a]).status == 0)
        #expect(
            try CommandRunner.run(["edit", id, "--title", "x", "--store", a]).status == 65,
            "editing means reading it")
        #expect(try CommandRunner.run(["init", "--store", b]).status == 0)
        #expect(try CommandRunner.run(["sync", b, "--store", a]).status == 0)
        #expect(
            try CommandRunner.run(["list", "--json", "--store", b]).stdout.contains("\"formatVersion\" : 3"))
        let export = directory.appendingPathComponent("exported.survey").path
        #expect(try CommandRunner.run(["export", id, "--package", export, "--store", a]).status == 0)
        // The exported package imports as it is: its id and bytes kept, its content unread.
        let c = directory.appendingPathComponent("c").path
        #expect(try CommandRunner.run(["init", "--store", c]).status == 0)
        let imported = try CommandRunner.run(["import", export, "--json", "--store", c])
        let outcome = try JSONSerialization.jsonObject(with: Data(imported.stdout.utf8)) as? [String: Any]
        #expect(
            imported.status == 0 && outcome?["outcome"] as? String == "added"
                && outcome?["revision"] as? String == newer.id.description,
            "\(imported.stdout) \(imported.stderr)")
        #expect(
            try ["DocumentMetadata.plist", "Survey.plist"].map {
                try Data(contentsOf: URL(fileURLWithPath: "\(c)/Documents/\(id)/\(newer.id).survey/\($0)"))
            } == before)
        // As JSON it cannot be exported: the message names the revision and the ways that can.
        let json = try CommandRunner.run(["export", id, "--store", a])
        #expect(json.status == 65)
        #expect(
            json.stderr.contains(
                "error: \(newer.id): format 3 is newer than this build supports (2); export it as it is with --format plist"
            ), "\(json.stderr)")
        try unchanged()

        // A concurrent format-2 edit, then keep the format-3 revision by id, then prune.
        #expect(
            try CommandRunner.run([
                "edit", id, "--base", base.id.description, "--title", "edited here", "--store", a,
            ]).status == 0)
        let kept = try CommandRunner.run([
            "resolve", id, "--keep", newer.id.description, "--json", "--store", a,
        ])
        #expect(kept.status == 0, "\(kept.stderr)")
        #expect(try CommandRunner.run(["prune", "--store", a]).status == 0)
        let list2 = try CommandRunner.run(["list", "--json", "--store", a])
        #expect(list2.stdout.contains("\"formatVersion\" : 3") && list2.stdout.contains("\"conflicts\" : 0"))
        // The kept revision's content lives on in the resolution, byte for byte; the
        // format-3 revision itself was pruned only after being superseded, never rewritten.
        let resolution =
            (try JSONSerialization.jsonObject(with: Data(kept.stdout.utf8)) as! [String: Any])["revision"]
            as! String
        let resolved = "\(a)/Documents/\(id)/\(resolution).survey/Survey.plist"
        #expect(try Data(contentsOf: URL(fileURLWithPath: resolved)) == before[1])
        #expect(try CommandRunner.run(["verify", "--store", a]).status == 0)
    }

    @Test("import of a format-1 package written by an older app: a new document, migrated")
    func importOlderPackage() throws {
        let directory = try CommandRunner.temporaryDirectory()
        let store = directory.appendingPathComponent("s").path
        #expect(try CommandRunner.run(["init", "--store", store]).status == 0)
        let result = try CommandRunner.run([
            "import", Self.fixtures + "/format1/unanswered.survey", "--json", "--store", store,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("5a1d1e7c-0b7e-4f0a-9c3b-2f6e8d9a0002"))
        let shown = try CommandRunner.run([
            "show", "5a1d1e7c-0b7e-4f0a-9c3b-2f6e8d9a0002", "--json", "--store", store,
        ])
        #expect(
            shown.status == 0 && shown.stdout.contains("\"formatVersion\" : 2")
                && shown.stdout.contains("Temperature"))
        let broken = try CommandRunner.run([
            "import", Self.fixtures + "/broken/unknown-type.survey", "--store", store,
        ])
        #expect(broken.status == 65 && broken.stderr.contains("Rating"))
    }

    @Test(
        "check and import judge a package's FormatVersion alike: no integer, or outside 1...10^6, fails both with 65 naming the metadata file (import took no integer for format 1, and said of 0 only 'format 0 is not a known format')",
        arguments: [
            "<string>banana</string>", "<string>2</string>", "<integer>0</integer>", "<integer>-1</integer>",
        ])
    func formatVersionAlike(value: String) throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("s").path
        #expect(try CommandRunner.run(["init", "--store", store]).status == 0)
        let package = directory.appendingPathComponent("answered.survey").path
        try FileManager.default.copyItem(atPath: Self.fixtures + "/format1/answered.survey", toPath: package)
        let metadataFile = package + "/DocumentMetadata.plist"
        let metadata = try String(contentsOfFile: metadataFile, encoding: .utf8)
        #expect(metadata.contains("<integer>1</integer>"))
        try metadata.replacingOccurrences(of: "<integer>1</integer>", with: value)
            .write(toFile: metadataFile, atomically: true, encoding: .utf8)
        let before = try FileManager.default.subpathsOfDirectory(atPath: store).sorted()
        let check = try CommandRunner.run(["check", package])
        let imported = try CommandRunner.run(["import", package, "--store", store])
        let reason = value.hasPrefix("<string>") ? "is not an integer" : "is outside 1...1000000"
        for (name, result) in [("check", check), ("import", imported)] {
            #expect(result.status == 65, "\(name): \(result.stdout)\(result.stderr)")
            #expect(
                result.stderr.contains(
                    "\(metadataFile): 'FormatVersion' \(value.hasPrefix("<string>") ? "" : "\(value.dropFirst(9).prefix { $0 != "<" }) ")\(reason)"
                ),
                "\(name): \(result.stderr)")
        }
        #expect(try FileManager.default.subpathsOfDirectory(atPath: store).sorted() == before)
    }

    @Test(
        "check passes a bare package whose content was only re-encoded (CRLF, a byte-order mark), with a note, as import keeps its revision; in a store the same bytes are invalid (they do not open)"
    )
    func checkReencoded() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("s").path
        #expect(try CommandRunner.run(["init", "--store", store]).status == 0)
        let id = try CommandRunner.run(["new", "--title", "Lines", "--store", store]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let package = directory.appendingPathComponent("exported.survey").path
        #expect(try CommandRunner.run(["export", id, "--package", package, "--store", store]).status == 0)
        let content = package + "/Survey.plist"
        let bytes = try Data(contentsOf: URL(fileURLWithPath: content))
        for variant in [
            Data(String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "\n", with: "\r\n").utf8),
            Data([0xEF, 0xBB, 0xBF]) + bytes,
        ] {
            try variant.write(to: URL(fileURLWithPath: content))
            let check = try CommandRunner.run(["check", package])
            #expect(check.status == 0 && check.stdout.hasPrefix("current"), "\(check.stdout)\(check.stderr)")
            #expect(
                check.stderr.hasPrefix("note: \(content): re-encoded since it was written"), "\(check.stderr)"
            )
        }
        let other = directory.appendingPathComponent("t").path
        #expect(try CommandRunner.run(["init", "--store", other]).status == 0)
        let imported = try CommandRunner.run(["import", package, "--json", "--store", other])
        #expect(imported.stdout.contains("\"outcome\" : \"added\""), "\(imported.stdout)")
        // The same bytes inside a store do not open: invalid there.
        let folder = store + "/Documents/" + id
        let inStore = try #require(
            try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasSuffix(".survey") })
        try FileManager.default.removeItem(atPath: folder + "/" + inStore + "/Survey.plist")
        try FileManager.default.copyItem(atPath: content, toPath: folder + "/" + inStore + "/Survey.plist")
        let checkStore = try CommandRunner.run(["check", store])
        #expect(
            checkStore.status == 65 && checkStore.stderr.contains("does not match the digest"),
            "\(checkStore.stderr)")
    }

    @Test(
        "check holds a bare package without its RevisionID to the ContentDigest its metadata names: content edited since fails (65), re-encoded content passes with a note, a digest that is no string fails (it passed any content)"
    )
    func checkContentDigestWithoutID() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("s").path
        #expect(try CommandRunner.run(["init", "--store", store]).status == 0)
        let id = try CommandRunner.run(["new", "--title", "Digest", "--store", store]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let package = directory.appendingPathComponent("bare.survey").path
        #expect(try CommandRunner.run(["export", id, "--package", package, "--store", store]).status == 0)
        let metadataFile = package + "/DocumentMetadata.plist"
        let metadata = try String(contentsOfFile: metadataFile, encoding: .utf8)
        let withoutID = metadata.replacingOccurrences(
            of: #"\s*<key>RevisionID</key>\s*<string>[^<]*</string>"#, with: "", options: .regularExpression)
        #expect(withoutID != metadata && withoutID.contains("<key>ContentDigest</key>"))
        try withoutID.write(toFile: metadataFile, atomically: true, encoding: .utf8)
        let content = package + "/Survey.plist"
        let original = try String(contentsOfFile: content, encoding: .utf8)

        let intact = try CommandRunner.run(["check", package])
        #expect(
            intact.status == 0 && intact.stdout.hasPrefix("current") && intact.stderr.isEmpty,
            "\(intact.stderr)")

        try original.replacingOccurrences(of: "<string>Digest</string>", with: "<string>Edited</string>")
            .write(toFile: content, atomically: true, encoding: .utf8)
        let edited = try CommandRunner.run(["check", package])
        #expect(edited.status == 65 && edited.stdout.hasPrefix("invalid"), "\(edited.stdout)")
        #expect(
            edited.stderr.contains(
                "\(content): its SHA-256 is not the ContentDigest its DocumentMetadata.plist names"),
            "\(edited.stderr)")

        try original.replacingOccurrences(of: "\n", with: "\r\n").write(
            toFile: content, atomically: true, encoding: .utf8)
        let reencoded = try CommandRunner.run(["check", package])
        #expect(reencoded.status == 0 && reencoded.stdout.hasPrefix("current"), "\(reencoded.stdout)")
        #expect(
            reencoded.stderr.hasPrefix("note: \(content): re-encoded since it was written"),
            "\(reencoded.stderr)")

        try original.write(toFile: content, atomically: true, encoding: .utf8)
        try withoutID.replacingOccurrences(
            of: #"<key>ContentDigest</key>\s*<string>[^<]*</string>"#,
            with: "<key>ContentDigest</key><integer>7</integer>", options: .regularExpression
        ).write(toFile: metadataFile, atomically: true, encoding: .utf8)
        let noString = try CommandRunner.run(["check", package])
        #expect(
            noString.status == 65
                && noString.stderr.contains("\(metadataFile): 'ContentDigest' is not a string"),
            "\(noString.stderr)")
    }

    @Test(
        "check names a link where a revision package belongs as the link it is, as verify does (it named a file beneath it that does not exist)"
    )
    func checkNamesPackageLink() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("s").path
        #expect(try CommandRunner.run(["init", "--store", store]).status == 0)
        let id = try CommandRunner.run(["new", "--title", "Linked", "--store", store]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let elsewhere = directory.appendingPathComponent("elsewhere").path
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: false)
        let link = store + "/Documents/\(id)/2-" + String(repeating: "0", count: 64) + ".survey"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: elsewhere)
        for path in [store, store + "/Documents/" + id] {
            let result = try CommandRunner.run(["check", path])
            #expect(result.status == 65)
            #expect(
                result.stderr
                    == "\(link): a symbolic link (never followed) where a revision package belongs; the store skips it\n",
                "\(result.stderr)")
        }
    }
}
