import Foundation
import SurveyStore
import TestSupport
import Testing
import Versions

/// What a new user meets first: messages, deletion, JSON on failure, output that matches
/// README, help and progress. Each test runs the built binary.
@Suite("survey as a new user meets it", .serialized)
struct FirstUseTests {
    typealias Store = StoreCommandTests.Store

    /// `text` with every run of white space (line breaks of wrapped help included) as one space.
    static func words(_ text: String) -> String {
        text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    static func object(_ text: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
    }

    /// Two heads from the first revision: returns the winner and the losing head.
    static func conflict(_ store: Store, _ id: String, _ base: String) throws -> (
        winner: String, loser: String
    ) {
        let a =
            try store.json([
                "save", id, "--from", store.write(StoreCommandTests.edited(rating: 3), "a.json"), "--base",
                base,
            ]) as! [String: Any]
        Thread.sleep(forTimeInterval: 0.01)
        let b =
            try store.json([
                "save", id, "--from", store.write(StoreCommandTests.edited(rating: 7), "b.json"), "--base",
                base,
            ]) as! [String: Any]
        let shown = try store.json(["show", id]) as! [String: Any]
        let winner = shown["revision"] as! String
        let loser = [a["revision"] as! String, b["revision"] as! String].first { $0 != winner }!
        return (winner, loser)
    }

    // MARK: Deletion

    @Test(
        "A deleted document: show says when, on which device and how to restore; deleting again writes nothing; the deletion is superseded once restored"
    )
    func deletion() throws {
        let store = try Store()
        let (id, first) = try store.makeDocument()
        let deleted = try store.json(["delete", id]) as! [String: Any]
        let deletion = deleted["revision"] as! String
        #expect(deleted["changed"] as? Bool == true)

        let show = try store.run(["show", id])
        #expect(show.status == 66)
        #expect(show.stderr.contains("was deleted at") && show.stderr.contains("\"test\""), "\(show.stderr)")
        #expect(!show.stderr.contains("pruned"))
        #expect(show.stderr.contains("`survey resolve --store \(store.path) \(id) --keep \(first)`"))
        #expect(
            show.stderr.contains("`survey save --store \(store.path) \(id) --from FILE --base \(deletion)`"))

        let again = try store.run(["delete", id, "--json"])
        #expect(again.status == 0)
        #expect(Self.object(again.stdout)?["changed"] as? Bool == false)
        #expect(Self.object(again.stdout)?["revision"] as? String == deletion)
        #expect(try store.versions(id).count == 2, "a second delete wrote nothing")

        // Restoring as the message says: the deletion is then superseded, not "deleted".
        let restored = try store.run(["resolve", id, "--keep", first, "--json"])
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(Self.object(restored.stdout)?["resolved"] as? Bool == true)
        #expect(try store.run(["show", id]).status == 0)
        let states = Dictionary(
            uniqueKeysWithValues: try store.versions(id).map {
                ($0["revision"] as! String, $0["state"] as! String)
            })
        #expect(states[deletion] == "superseded")
    }

    @Test("save --base DELETION restores a deleted document")
    func restoreBySave() throws {
        let store = try Store()
        let (id, _) = try store.makeDocument()
        let deletion = (try store.json(["delete", id]) as! [String: Any])["revision"] as! String
        let saved = try store.run([
            "save", id, "--from", store.write(StoreCommandTests.sample, "s.json"), "--base", deletion,
        ])
        #expect(saved.status == 0, "\(saved.stderr)")
        #expect((try store.json(["list"]) as! [[String: Any]])[0]["deleted"] as? Bool == false)
    }

    // MARK: show --revision

    @Test("show --revision of a losing head lists the other heads as its conflicts, never itself")
    func losingHeadConflicts() throws {
        let store = try Store()
        let (id, first) = try store.makeDocument()
        let (winner, loser) = try Self.conflict(store, id, first)
        let shown = try store.json(["show", id, "--revision", loser]) as! [String: Any]
        #expect(shown["conflicts"] as? [String] == [winner])
        let shownWinner = try store.json(["show", id]) as! [String: Any]
        #expect(shownWinner["conflicts"] as? [String] == [loser])
    }

    // MARK: JSON on failure

    static let failures: [(arguments: [String], exit: Int32, code: String)] = [
        (["show", "nope"], 66, "noSuchDocument"),
        (["show"], 64, "usage"),
        (["edit", "{DOC}", "--answer", "9=1"], 66, "noSuchItem"),
        (["edit", "{DOC}", "--answer", "nine"], 64, "usage"),
        (["new", "--from", "{BAD}"], 65, "invalidPropertyList"),
        (["new", "--from", "{MISSING}"], 66, "noSuchFile"),
        (["export", "{DOC}", "-o", "{MISSING}/x.json"], 66, "noSuchFolder"),
        (["resolve", "{DOC}", "--keep", "9-nope"], 66, "noSuchRevision"),
        (["bogus"], 64, "usage"),
        (["plist", "convert", "{BAD}", "--to", "json"], 65, "invalidPropertyList"),
    ]

    @Test(
        "--json on failure prints {\"error\": {code, message, exit}} (with file, line and column for a file)",
        arguments: failures)
    func jsonErrors(_ failure: (arguments: [String], exit: Int32, code: String)) throws {
        let store = try Store()
        let (id, _) = try store.makeDocument()
        let bad = try store.write(
            "<?xml version=\"1.0\"?>\n<plist version=\"1.0\">\n<dict><key>title</key></dict>\n</plist>\n",
            "bad.plist")
        let missing = store.directory.appendingPathComponent("missing").path
        let arguments = failure.arguments.map {
            $0.replacingOccurrences(of: "{DOC}", with: id).replacingOccurrences(of: "{BAD}", with: bad)
                .replacingOccurrences(of: "{MISSING}", with: missing)
        }
        let result =
            arguments[0] == "plist"
            ? try CommandRunner.run(arguments + ["--json"]) : try store.run(arguments + ["--json"])
        #expect(result.status == failure.exit, "\(arguments): \(result.stderr)")
        let error = Self.object(result.stdout)?["error"] as? [String: Any]
        #expect(error?["code"] as? String == failure.code, "\(arguments): \(result.stdout)")
        #expect(error?["exit"] as? Int == Int(failure.exit))
        #expect((error?["message"] as? String)?.isEmpty == false)
        if failure.code == "invalidPropertyList" {
            #expect(error?["file"] as? String == bad)
            #expect(error?["line"] as? Int == 3 && error?["column"] is Int, "\(result.stdout)")
        }
        if !failure.arguments.contains("--json") {
            #expect(!result.stderr.contains("Error:"), "one spelling: error:")
        }
    }

    @Test(
        "Malformed JSON, JSON null and malformed XML get one --json code, invalidPropertyList, in every command that reads the file (new, save and resolve --from said invalidSurvey for JSON)",
        arguments: [
            ("a.json", #"{"title": "t", "items": [}"#, 1, 26),
            ("n.json", #"{"title":null,"items":[]}"#, 1, 10),
            ("c.plist", "<plist><dict><key>title</key><string>t</string></dict>", 1, 55),
        ])
    func malformedInputCode(name: String, content: String, line: Int, column: Int) throws {
        let store = try Store()
        let (id, _) = try store.makeDocument()
        let file = try store.write(content, name)
        let package = store.directory.appendingPathComponent("package").path
        #expect(try store.run(["export", id, "--package", package]).status == 0)
        try Data(content.utf8).write(to: URL(fileURLWithPath: package + "/Survey.plist"))
        for arguments in [
            ["new", "--from", file], ["save", id, "--from", file], ["resolve", id, "--from", file],
            ["plist", "convert", file, "--to", "xml"], ["import", package],
        ] {
            let result =
                arguments[0] == "plist"
                ? try CommandRunner.run(arguments + ["--json"]) : try store.run(arguments + ["--json"])
            #expect(result.status == 65, "\(arguments): \(result.stderr)")
            let error = Self.object(result.stdout)?["error"] as? [String: Any]
            #expect(error?["code"] as? String == "invalidPropertyList", "\(arguments): \(result.stdout)")
            if arguments[0] == "import" {
                // A package's content is XML: JSON there is refused at its start.
                #expect(error?["file"] as? String == package + "/Survey.plist", "\(result.stdout)")
            } else {
                #expect(
                    error?["file"] as? String == file && error?["line"] as? Int == line
                        && error?["column"] as? Int == column, "\(arguments): \(result.stdout)")
            }
        }
    }

    // MARK: Messages

    @Test(
        "No store at the path: the message says how to create one there, for --store and for a sync partner")
    func noStoreHint() throws {
        let store = try Store()
        let missing = try store.run(["list"])
        #expect(
            missing.status == 66
                && missing.stderr.contains(
                    "there is no store at \(store.path) (create one with `survey init --store \(store.path)`)"
                ),
            "\(missing.stderr)")
        #expect(try store.run(["init"]).status == 0)
        let partner = store.directory.appendingPathComponent("partner").path
        let sync = try store.run(["sync", partner])
        #expect(
            sync.status == 66
                && sync.stderr.contains(
                    "there is no store at \(partner) (create one with `survey init --store \(partner)`)"),
            "\(sync.stderr)")
    }

    @Test(
        "A file where the store's folder belongs: every command says it is a file, not a folder, and none suggests init (init failed with 'cannot open f: Not a directory', exit 1)"
    )
    func storeIsAFile() throws {
        let store = try Store()
        #expect(try store.run(["init"]).status == 0)
        let file = try store.write("not a store", "f")
        let below = file + "/sub"
        for (arguments, path, reason) in [
            (["list", "--store", file], file, "it is a file, not a folder"),
            (["show", "0", "--store", file], file, "it is a file, not a folder"),
            (["list", "--store", below], below, "\(file) is a file, not a folder"),
            (["sync", file, "--store", store.path], file, "it is a file, not a folder"),
        ] {
            let result = try CommandRunner.run(arguments)
            #expect(
                result.status == 66
                    && result.stderr.hasPrefix("error: there is no store at \(path): \(reason)\n"),
                "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("survey init"), "\(arguments): \(result.stderr)")
        }
        for (path, reason) in [
            (file, "it is a file, not a folder"), (below, "\(file) is a file, not a folder"),
        ] {
            let message = "cannot create a store at \(path): \(reason)"
            let text = try CommandRunner.run(["init", "--store", path])
            #expect(text.status == 66 && text.stderr == "error: \(message)\n", "\(text.stderr)")
            let json = try CommandRunner.run(["init", "--store", path, "--json"])
            let error = Self.object(json.stdout)?["error"] as? [String: Any]
            #expect(
                json.status == 66 && error?["code"] as? String == "notAFolder"
                    && error?["message"] as? String == message, "\(json.stdout)")
        }
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "not a store")
    }

    @Test(
        "demo --store given a file, or a folder holding a file where a device's store goes, says it is a file, not a folder (exit 66, notAFolder; it said 'cannot open f: Not a directory', exit 1)"
    )
    func demoStoreIsAFile() throws {
        let store = try Store()
        let file = try store.write("not a folder", "f")
        let folder = store.directory.appendingPathComponent("demo").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        try Data("x".utf8).write(to: URL(fileURLWithPath: folder + "/laptop"))
        for (path, message) in [
            (file, "cannot keep the demo's stores in \(file): it is a file, not a folder"),
            (file + "/sub", "cannot keep the demo's stores in \(file)/sub: \(file) is a file, not a folder"),
            (folder, "cannot create a store at \(folder)/laptop: it is a file, not a folder"),
        ] {
            let text = try CommandRunner.run(["demo", "--store", path])
            #expect(text.status == 66 && text.stderr == "error: \(message)\n", "\(text.stderr)")
            #expect(text.stdout.isEmpty, "\(text.stdout)")
            let json = try CommandRunner.run(["demo", "--store", path, "--json"])
            let error = Self.object(json.stdout)?["error"] as? [String: Any]
            #expect(
                json.status == 66 && error?["code"] as? String == "notAFolder"
                    && error?["message"] as? String == message, "\(json.stdout)")
        }
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "not a folder")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["laptop"])
    }

    @Test(
        "Content that is not there exits 66 and says why: a deletion named in diff records a deletion (it said 'pruned'), a pruned revision has been pruned"
    )
    func absentContent() throws {
        let store = try Store()
        let (id, first) = try store.makeDocument()
        #expect(try store.run(["edit", id, "--title", "Second"]).status == 0)
        let deletion = try store.run(["delete", id]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let diff = try store.run(["diff", id, first, deletion])
        #expect(diff.status == 66, "\(diff.stderr)")
        #expect(
            diff.stderr.contains("revision \(deletion) records a deletion: it has no content"),
            "\(diff.stderr)")
        #expect(!diff.stderr.contains("pruned"))
        // The winner compared without being named: the document is deleted, as show says.
        for arguments in [["diff", id], ["diff", id, first]] {
            let deleted = try store.run(arguments)
            #expect(
                deleted.status == 66 && deleted.stdout.isEmpty
                    && deleted.stderr.contains("document \(id) was deleted at")
                    && deleted.stderr.contains("--keep"), "\(arguments): \(deleted.stderr)")
        }
        let json = Self.object(try store.run(["diff", id, first, deletion, "--json"]).stdout)
        #expect(
            (json?["error"] as? [String: Any])?["code"] as? String == "deletion",
            "\(String(describing: json))")

        let created = try #require(try store.json(["new", "--title", "Other"]) as? [String: Any])
        let other = try #require(created["id"] as? String)
        let older = try #require(created["revision"] as? String)
        #expect(try store.run(["edit", other, "--title", "Other, again"]).status == 0)
        #expect(try store.run(["prune"]).status == 0)
        let pruned = try store.run(["show", other, "--revision", older])
        #expect(pruned.status == 66 && pruned.stderr.contains("has been pruned"), "\(pruned.stderr)")
    }

    @Test("Two saves based on a deletion merge two-way, and the reason names the deletion (it said 'pruned')")
    func mergeBaseIsADeletion() throws {
        let store = try Store()
        let (id, _) = try store.makeDocument()
        let deletion = try store.run(["delete", id]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        for title in ["A", "B"] {
            let file = try store.write("{\"title\": \"\(title)\", \"items\": []}", "\(title).json")
            #expect(try store.run(["save", id, "--from", file, "--base", deletion]).status == 0)
        }
        let plan = try #require(
            try store.json(["resolve", id, "--merge", "--dry-run", "--json"]) as? [String: Any])
        #expect(plan["twoWay"] as? Bool == true)
        #expect(
            plan["twoWayReason"] as? String
                == "the merge base \(deletion) is a deletion, which has no content: the heads were each saved after it",
            "\(plan)")
    }

    @Test(
        "Titles, item texts and answers with control characters are written out in list, show, conflicts and diff rows (they reached the terminal as they are, and a line feed split a list row); JSON keeps them exact"
    )
    func controlCharactersInContent() throws {
        let store = try Store()
        #expect(try store.run(["init", "--device", "test"]).status == 0)
        let title = "Real\n00000000-0000-0000-0000-000000000000  FORGED\u{9B}2J"
        let question = "q\u{9B}2J\u{7F}"
        let file = try store.write(
            #"{"title": "Real\n00000000-0000-0000-0000-000000000000  FORGED\u009b2J", "items": ["#
                + #"{"title": "q\u009b2J\u007f", "kind": "textField", "answer": "one\ntwo\u0085"},"#
                + #"{"title": "b", "kind": "binary", "options": ["n\u009b", "y"], "answer": 0}]}"#, "s.json")
        let created = try #require(try store.json(["new", "--from", file]) as? [String: Any])
        let id = try #require(created["id"] as? String)
        let first = try #require(created["revision"] as? String)
        // Two edits of the first revision: a conflict, whose diff shows both answers.
        #expect(try store.run(["edit", id, "--base", first, "--answer", "1=three\u{9B}\nfour"]).status == 0)
        #expect(try store.run(["edit", id, "--base", first, "--answer", "2=1"]).status == 0)

        /// Control characters left in `text`, line feeds aside.
        func controls(_ text: String) -> [UInt32] {
            text.unicodeScalars.map(\.value).filter {
                ($0 < 0x20 && $0 != 0x0A) || (0x7F...0x9F).contains($0)
            }
        }
        let list = try store.run(["list"])
        #expect(list.status == 0 && controls(list.stdout).isEmpty, "\(list.stdout.debugDescription)")
        let rows = list.stdout.split(separator: "\n")
        #expect(rows.count == 2, "one row per document: \(list.stdout)")
        #expect(
            rows.last?.hasPrefix(id) == true
                && (rows.last?.contains("\\u{A}00000000-0000-0000-0000-000000000000  FORGED\\u{9B}2J") == true),
            "\(list.stdout)")

        let show = try store.run(["show", id, "--revision", first])
        #expect(show.status == 0 && controls(show.stdout).isEmpty, "\(show.stdout.debugDescription)")
        let shown = show.stdout.split(separator: "\n")
        let starts = [
            "Real", "  document  ", "  revision  ", "  in conflict with: ",
            "  the document's conflicts (not won): ",
            "  1. ", "  2. ",
        ]
        #expect(
            shown.allSatisfy { line in starts.contains { line.hasPrefix($0) } } && shown.count >= 5,
            "title, document, revision, two items: \(show.stdout)")
        #expect(shown.first == "Real\\u{A}00000000-0000-0000-0000-000000000000  FORGED\\u{9B}2J")
        #expect(shown.contains("  1. q\\u{9B}2J\\u{7F} (textField): one\\u{A}two\\u{85}"), "\(show.stdout)")
        #expect(shown.contains("  2. b (binary): n\\u{9B}"), "\(show.stdout)")

        let conflicts = try store.run(["conflicts"])
        #expect(conflicts.status == 0 && controls(conflicts.stdout).isEmpty, "\(conflicts.stdout)")
        #expect(conflicts.stdout.split(separator: "\n").count == 1, "\(conflicts.stdout)")
        let diff = try store.run(["diff", id])
        #expect(diff.status == 0 && controls(diff.stdout).isEmpty, "\(diff.stdout.debugDescription)")
        #expect(diff.stdout.contains("three\\u{9B}"), "\(diff.stdout)")
        #expect(!diff.stdout.contains("\nfour"), "a value keeps to its line: \(diff.stdout)")
        let versions = try store.run(["versions", id])
        #expect(versions.status == 0 && versions.stdout.split(separator: "\n").count == 3)

        // JSON carries the text exactly.
        let listed = try #require(try store.json(["list"]) as? [[String: Any]])
        #expect(listed.first?["title"] as? String == title)
        let opened = try #require(try store.json(["show", id, "--revision", first]) as? [String: Any])
        #expect(opened["title"] as? String == title)
        let items = try #require(opened["items"] as? [[String: Any]])
        #expect(
            items.first?["title"] as? String == question
                && items.first?["answer"] as? String == "one\ntwo\u{85}")
    }

    @Test(
        "diff writes a tab and a line feed of a text out as show does, \\u{9} and \\u{A} (it wrote Swift's escapes, \"a\\tb\\nc\"); --json keeps the text exact"
    )
    func diffEscapesAsShow() throws {
        let store = try Store()
        #expect(try store.run(["init", "--device", "test"]).status == 0)
        let file = try store.write(
            #"{"title": "T", "items": [{"title": "q\tr", "kind": "textField", "answer": "a\tb\nc"}]}"#,
            "s.json")
        let created = try #require(try store.json(["new", "--from", file]) as? [String: Any])
        let id = try #require(created["id"] as? String)
        let first = try #require(created["revision"] as? String)
        let second = try #require(try store.json(["edit", id, "--answer", "1=x"]) as? [String: Any])
        let revision = try #require(second["revision"] as? String)
        let show = try store.run(["show", id, "--revision", first])
        #expect(show.stdout.contains("  1. q\\u{9}r (textField): a\\u{9}b\\u{A}c\n"), "\(show.stdout)")
        let diff = try store.run(["diff", id, first, revision])
        #expect(diff.status == 0, "\(diff.stderr)")
        #expect(diff.stdout.contains("* 1 \"q\\u{9}r\":\n"), "\(diff.stdout)")
        #expect(diff.stdout.contains("    answer: \"a\\u{9}b\\u{A}c\" → \"x\"\n"), "\(diff.stdout)")
        #expect(!diff.stdout.contains("\\t") && !diff.stdout.contains("\\n"), "\(diff.stdout)")
        let json = try #require(try store.json(["diff", id, first, revision]) as? [String: Any])
        let item = try #require((json["items"] as? [[String: Any]])?.first)
        let field = try #require((item["fields"] as? [[String: Any]])?.first)
        #expect(item["title"] as? String == "q\tr" && field["from"] as? String == "a\tb\nc", "\(json)")
    }

    @Test(
        "Line and paragraph separators and bidirectional controls in a title or a file name are written out in rows and messages (a right-to-left override reordered a row as shown); JSON keeps them exact"
    )
    func separatorsAndBidiControls() throws {
        let store = try Store()
        #expect(try store.run(["init", "--device", "test"]).status == 0)
        let title = "a\u{2028}b\u{2029}c\u{202E}d\u{2066}e\u{200F}f"
        let file = try store.write(
            #"{"title": "a\u2028b\u2029c\u202Ed\u2066e\u200Ff", "items": []}"#, "s.json")
        let created = try #require(try store.json(["new", "--from", file]) as? [String: Any])
        let id = try #require(created["id"] as? String)
        let list = try store.run(["list"])
        #expect(list.status == 0)
        #expect(list.stdout.contains("a\\u{2028}b\\u{2029}c\\u{202E}d\\u{2066}e\\u{200F}f"), "\(list.stdout)")
        #expect(
            !list.stdout.unicodeScalars.contains { (0x2028...0x2069).contains($0.value) }, "\(list.stdout)")
        #expect((try store.json(["list"]) as? [[String: Any]])?.first?["title"] as? String == title)
        let show = try store.run(["show", id])
        #expect(show.stdout.hasPrefix("a\\u{2028}b"), "\(show.stdout)")
        // A file name: the message names it written out.
        let missing = store.directory.appendingPathComponent("x\u{202E}gnp.json").path
        let result = try store.run(["new", "--from", missing])
        #expect(result.status == 66)
        #expect(result.stderr.contains("x\\u{202E}gnp.json"), "\(result.stderr)")
    }

    @Test("A file name with control characters reaches the terminal written out, never as an escape sequence")
    func controlCharactersInNames() throws {
        let store = try Store()
        _ = try store.makeDocument()
        let name = "\u{1B}]0;pwned\u{7}\u{1B}[2J"
        try FileManager.default.createDirectory(
            atPath: store.path + "/Documents/" + name, withIntermediateDirectories: false)
        for arguments in [["list"], ["verify"]] {
            let result = try store.run(arguments)
            #expect(
                !result.stderr.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 },
                "\(arguments)")
            #expect(
                result.stderr.contains("\\u{1B}]0;pwned\\u{7}\\u{1B}[2J"), "\(arguments): \(result.stderr)")
        }
        // A line feed in a name does not split the line that names it.
        try FileManager.default.createDirectory(
            atPath: store.path + "/Documents/two\nlines", withIntermediateDirectories: false)
        let verify = try store.run(["verify"])
        let line = verify.stderr.split(separator: "\n").first { $0.contains("two\\u{A}lines") }
        #expect(line?.hasPrefix(store.path + "/Documents/two\\u{A}lines: ") == true, "\(verify.stderr)")
        // So does a path given on the command line, on either output.
        let missing = try CommandRunner.run(["list", "--store", store.path + "/no\nstore"])
        #expect(
            missing.status == 66 && missing.stderr.split(separator: "\n").count == 1
                && missing.stderr.contains("no\\u{A}store"), "\(missing.stderr)")
        let made = try CommandRunner.run(["init", "--store", store.path + "/S\u{1B}[31m"])
        #expect(
            made.status == 0 && !made.stdout.unicodeScalars.contains { $0.value == 0x1B }
                && made.stdout.contains("S\\u{1B}[31m"), "\(made.stdout)")
    }

    @Test(
        "delete --base of a revision an edit has superseded warns that the document is not deleted (it said nothing)"
    )
    func deletionThatLosesWarns() throws {
        let store = try Store()
        let (id, first) = try store.makeDocument()
        let edit = try store.run(["edit", id, "--title", "Edited", "--base", first, "--json"])
        let edited = try #require(Self.object(edit.stdout)?["revision"] as? String, "\(edit.stderr)")
        let delete = try store.run(["delete", id, "--base", first])
        #expect(delete.status == 0, "\(delete.stderr)")
        #expect(
            delete.stderr.contains("warning: \(id) is not deleted: revision \(edited) was saved after"),
            "\(delete.stderr)")
        #expect(try store.run(["show", id]).status == 0)
        let json = Self.object(try store.run(["delete", id, "--base", first, "--json"]).stdout)
        #expect(json?["deleted"] as? Bool == false, "\(String(describing: json))")
        // Without --base it deletes, and says nothing more.
        let again = try store.run(["delete", id])
        #expect(again.status == 0 && !again.stderr.contains("warning"), "\(again.stderr)")
        #expect(try store.run(["show", id]).status == 66)
        let deleted = Self.object(try store.run(["delete", id, "--json"]).stdout)
        #expect(deleted?["deleted"] as? Bool == true, "\(String(describing: deleted))")
    }

    @Test("A device name of white space alone is refused, as an empty one is (it was taken)")
    func blankDeviceName() throws {
        let store = try Store()
        let empty = try store.run(["init", "--device", ""])
        let blank = try store.run(["init", "--device", "   "])
        #expect(empty.status != 0 && blank.status == empty.status, "\(blank.status) \(blank.stderr)")
        #expect(blank.stderr.contains("only white space"), "\(blank.stderr)")
    }

    @Test("A rule broken by a file's content names the file, with the item and the rule")
    func surveyErrorsNameTheFile() throws {
        let store = try Store()
        #expect(try store.run(["init"]).status == 0)
        let file = try store.write(
            #"{"title": "T", "items": [{"title": "Q", "kind": "rating"}]}"#, "bad.json")
        let text = try store.run(["new", "--from", file])
        #expect(text.status == 65)
        #expect(text.stderr.hasPrefix("\(file): item 1 (\"Q\"): unknown kind 'rating'"), "\(text.stderr)")
        #expect(text.stderr.hasSuffix("[unknownKind]\n"), "\(text.stderr)")
        let json = Self.object(try store.run(["new", "--from", file, "--json"]).stdout)
        let error = json?["error"] as? [String: Any]
        #expect(
            error?["file"] as? String == file && error?["code"] as? String == "invalidSurvey",
            "\(String(describing: json))")
    }

    @Test("-o - is standard output, for export and plist convert (it wrote a file named '-')")
    func dashIsStandardOutput() throws {
        let store = try Store()
        let (id, _) = try store.makeDocument()
        let plain = try store.run(["export", id])
        let dash = try store.run(["export", id, "-o", "-"])
        #expect(dash.status == 0 && !dash.stdout.isEmpty && dash.stdout == plain.stdout, "\(dash.stderr)")
        let file = try store.write("<plist><array><integer>1</integer></array></plist>", "a.plist")
        let converted = try CommandRunner.run(["plist", "convert", file, "--to", "json", "--output", "-"])
        #expect(converted.status == 0 && converted.stdout == "[\n  1\n]\n", "\(converted.stdout)")
        #expect(!FileManager.default.fileExists(atPath: FileManager.default.currentDirectoryPath + "/-"))
    }

    @Test("An unknown document is called a document; an ambiguous prefix lists what it matches")
    func lookupMessages() throws {
        let store = try Store()
        let (id, first) = try store.makeDocument()
        let unknown = try store.run(["show", "nope"])
        #expect(
            unknown.status == 66 && unknown.stderr.contains("there is no document nope")
                && !unknown.stderr.contains("revision"))

        // Seventeen documents: two of them share a first hex digit.
        var ids = [id]
        for index in 0..<16 {
            ids.append(
                try store.run(["new", "--title", "T\(index)"]).stdout.trimmingCharacters(
                    in: .whitespacesAndNewlines))
        }
        let prefix = Dictionary(grouping: ids) { $0.prefix(1) }.first { $0.value.count > 1 }!
        let ambiguous = try store.run(["show", String(prefix.key)])
        #expect(ambiguous.status == 64)
        #expect(ambiguous.stderr.contains("matches \(prefix.value.count) documents"), "\(ambiguous.stderr)")
        // The message names the first five in order.
        for match in prefix.value.sorted().prefix(5) { #expect(ambiguous.stderr.contains(match)) }

        let (winner, loser) = try Self.conflict(store, id, first)
        let revisionPrefix = String(winner.prefix(2))  // both heads are generation 2: "2-"
        #expect(loser.hasPrefix(revisionPrefix))
        let ambiguousRevision = try store.run(["show", id, "--revision", revisionPrefix])
        #expect(ambiguousRevision.status == 64)
        #expect(
            ambiguousRevision.stderr.contains("matches 2 revisions")
                && ambiguousRevision.stderr.contains(loser), "\(ambiguousRevision.stderr)")
    }

    @Test(
        "edit with two --answer for one item, by position or by id, is a usage error and writes nothing (it kept the last one without a word)"
    )
    func oneAnswerPerItem() throws {
        let store = try Store()
        let (id, revision) = try store.makeDocument()
        let shown = try store.json(["show", id]) as! [String: Any]
        let itemID = try #require((shown["items"] as? [[String: Any]])?[1]["id"] as? String)
        for answers in [["2=Bo", "2=Cy"], ["2=Bo", "\(itemID.lowercased())=Cy"], ["\(itemID)=Bo", "2="]] {
            let edit = try store.run(["edit", id] + answers.flatMap { ["--answer", $0] })
            #expect(edit.status == 64, "\(answers): \(edit.stderr)")
            #expect(edit.stderr.hasPrefix("error: --answer gives item 2 two answers"), "\(edit.stderr)")
        }
        #expect(try store.versions(id).map { $0["revision"] as? String } == [revision], "nothing written")
        #expect(try store.run(["edit", id, "--answer", "2=Bo", "--answer", "3=4"]).status == 0)
    }

    @Test("A usage error found while running names the subcommand's usage, spelled error:")
    func subcommandUsage() throws {
        let store = try Store()
        let (id, _) = try store.makeDocument()
        let edit = try store.run(["edit", id, "--answer", "nine"])
        #expect(edit.status == 64)
        #expect(edit.stderr.hasPrefix("error: --answer takes ITEM=VALUE"))
        #expect(edit.stderr.contains("Usage: survey edit"), "\(edit.stderr)")
        // An empty ITEM is a usage error too, as an empty document is (it was "no item ''", 66).
        let empty = try store.run(["edit", id, "--answer", "=x"])
        #expect(empty.status == 64, "\(empty.stderr)")
        #expect(empty.stderr.hasPrefix("error: --answer '=x' names no item"), "\(empty.stderr)")
        #expect(!edit.stderr.contains("survey <subcommand>"))
        let unknown = try store.run(["show", id, "--bogus"])
        #expect(
            unknown.status == 64 && unknown.stderr.hasPrefix("error: ") && !unknown.stderr.contains("Error:"),
            "\(unknown.stderr)")
    }

    @Test(
        "An unknown subcommand is reported as one (exit 64), whatever options follow it (it said 'Unknown option --json', and printed the main help or the version, exit 0, for --help, -h and --version)",
        arguments: [
            ["bogus"], ["bogus", "--json"], ["bogus", "--store", "x"], ["bogus", "list"],
            ["bogus", "--help"], ["bogus", "-h"], ["bogus", "--version"], ["bogus", "--help", "--json"],
            ["plist", "bogus", "--json"], ["plist", "bogus", "--help"], ["help", "bogus"],
            ["help", "bogus", "--json"], ["help", "plist", "bogus"],
        ])
    func unknownSubcommand(_ arguments: [String]) throws {
        let usage = arguments.contains("plist") ? "survey plist" : "survey"
        let result = try CommandRunner.run(arguments)
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("error: unknown subcommand 'bogus'\n"), "\(result.stderr)")
        #expect(!result.stdout.contains("OVERVIEW:"), "no help: \(result.stdout)")
        guard arguments.contains("--json") else {
            #expect(
                result.stderr.contains("Usage: \(usage) <subcommand>")
                    && result.stderr.contains("See '\(usage) --help'"), "\(result.stderr)")
            return
        }
        let error = Self.object(result.stdout)?["error"] as? [String: Any]
        #expect(
            error?["code"] as? String == "usage" && error?["exit"] as? Int == 64
                && error?["message"] as? String == "unknown subcommand 'bogus'", "\(result.stdout)")
    }

    @Test(
        "help of a known subcommand shows it (exit 0); a word past one without subcommands is unknown (it showed help, exit 0)"
    )
    func helpOfSubcommands() throws {
        for arguments in [
            ["help"], ["help", "sync"], ["help", "plist"], ["help", "plist", "lint"], ["help", "help"],
        ] {
            let result = try CommandRunner.run(arguments)
            #expect(
                result.status == 0 && result.stdout.hasPrefix("OVERVIEW: "), "\(arguments): \(result.stderr)")
        }
        let past = try CommandRunner.run(["help", "list", "bogus"])
        #expect(
            past.status == 64 && past.stdout.isEmpty
                && past.stderr.hasPrefix("error: unknown subcommand 'bogus'\nUsage: survey list "),
            "\(past.stderr)")
    }

    @Test("An unknown option of a known subcommand is still reported as an unknown option")
    func unknownOptionOfKnownSubcommand() throws {
        let result = try CommandRunner.run(["list", "--bogus", "--json"])
        #expect(result.status == 64)
        let error = Self.object(result.stdout)?["error"] as? [String: Any]
        #expect(error?["message"] as? String == "Unknown option '--bogus'", "\(result.stdout)")
    }

    @Test(
        "A misspelt option of new and resolve is said to be unknown, with the one meant (they said a choice was missing); without one, the choice is still asked for"
    )
    func misspeltOptionOfAChoice() throws {
        let store = try Store()
        let (id, _) = try store.makeDocument()
        for (arguments, option, meant) in [
            (["new", "--titel", "x"], "--titel", "--title"),
            (["resolve", id, "--acept"], "--acept", "--accept"),
        ] {
            let result = try store.run(arguments + ["--json"])
            #expect(result.status == 64, "\(arguments): \(result.stdout)")
            let error = Self.object(result.stdout)?["error"] as? [String: Any]
            #expect(
                error?["message"] as? String == "Unknown option '\(option)'. Did you mean '\(meant)'?",
                "\(arguments): \(result.stdout)")
        }
        let missing = try store.run(["new"])
        #expect(
            missing.status == 64
                && missing.stderr.hasPrefix("error: give exactly one of --title and --from\n"),
            "\(missing.stderr)")
        let choice = try store.run(["resolve", id])
        #expect(
            choice.status == 64
                && choice.stderr.hasPrefix(
                    "error: give exactly one of --accept, --keep REV, --from FILE and --merge\nUsage: survey resolve"
                ),
            "\(choice.stderr)")
    }

    @Test(
        "sync --jobs takes a positive integer and says so for anything else, -1 included (it said 'Missing value')",
        arguments: [
            ["--jobs", "-1"], ["--jobs=-1"], ["--jobs", "0"], ["--jobs", "abc"], ["--jobs", "1.5"],
        ])
    func syncJobs(_ jobs: [String]) throws {
        let (directory, store, other, _) = try CommandRunner.twoStores()
        defer { try? FileManager.default.removeItem(at: directory) }
        let value = jobs.count == 2 ? jobs[1] : "-1"
        let text = try CommandRunner.run(["sync", other] + jobs + ["--store", store])
        #expect(text.status == 64)
        #expect(
            text.stderr.hasPrefix("error: --jobs must be a positive integer, not '\(value)'\n")
                && text.stderr.contains("Usage: survey sync"), "\(text.stderr)")
        let json = try CommandRunner.run(["sync", other] + jobs + ["--json", "--store", store])
        let error = Self.object(json.stdout)?["error"] as? [String: Any]
        #expect(
            json.status == 64 && error?["code"] as? String == "usage" && error?["exit"] as? Int == 64
                && error?["message"] as? String == "--jobs must be a positive integer, not '\(value)'",
            "\(json.stdout)")
        #expect(try CommandRunner.run(["sync", other, "--jobs", "1", "--store", store]).status == 0)
    }

    @Test(
        "An empty path is a usage error naming the option or argument (which of several paths, by its place), not a failure about a file nobody named",
        arguments: [
            (["list", "--store", ""], "--store"), (["watch", "--store", ""], "--store"),
            (["demo", "--store", ""], "--store"), (["sync", "", "--store", "STORE"], "<other-store>"),
            (["check", ""], "<paths>"), (["check", "STORE", ""], "the 2nd of <paths>"),
            (["check", "STORE", "STORE", ""], "the 3rd of <paths>"),
            (["check"] + Array(repeating: "STORE", count: 11) + ["", ""], "the 12th of <paths>"),
            (["import", "", "--store", "STORE"], "<paths>"),
            (["import", "FILE", "", "--store", "STORE"], "the 2nd of <paths>"),
            (["new", "--from", "", "--store", "STORE"], "--from"),
            (["save", "DOC", "--from", "", "--store", "STORE"], "--from"),
            (["resolve", "DOC", "--from", "", "--store", "STORE"], "--from"),
            (["verify", "--repair-from", "", "--store", "STORE"], "--repair-from"),
            (["export", "DOC", "-o", "", "--store", "STORE"], "--output"),
            (["export", "DOC", "--output", "", "--store", "STORE"], "--output"),
            (["export", "DOC", "--package", "", "--store", "STORE"], "--package"),
            (["plist", "lint", ""], "<files>"), (["plist", "lint", "FILE", "", ""], "the 2nd of <files>"),
            (["plist", "convert", "", "--to", "json"], "<file>"),
            (["plist", "convert", "FILE", "--to", "json", "-o", ""], "--output"),
        ])
    func emptyPath(_ arguments: [String], _ named: String) throws {
        let (directory, store, _, sample) = try CommandRunner.twoStores()
        defer { try? FileManager.default.removeItem(at: directory) }
        let created = try CommandRunner.run(["new", "--from", sample.path, "--store", store])
        let id = created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(created.status == 0 && !id.isEmpty, "\(created.stderr)")
        let before = try ImportTests.tree(store)
        let filled = arguments.map { ["STORE": store, "DOC": id, "FILE": sample.path][$0] ?? $0 }
        let message = "\(named) is an empty path; give the name of a file or folder"
        let text = try CommandRunner.run(filled, in: directory)
        #expect(text.status == 64, "\(text.stderr)")
        #expect(text.stderr.hasPrefix("error: \(message)\nUsage: survey "), "\(text.stderr)")
        let json = try CommandRunner.run(filled + ["--json"], in: directory)
        let error = Self.object(json.stdout)?["error"] as? [String: Any]
        #expect(
            json.status == 64 && error?["code"] as? String == "usage"
                && error?["message"] as? String == message,
            "\(json.stdout)")
        #expect(try ImportTests.tree(store) == before)
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("Surveys").path))
    }

    @Test(
        "An empty document or revision is a usage error naming the argument or option (it was looked up: 'there is no revision ', exit 66)",
        arguments: [
            (["show", ""], "the document"), (["show", "DOC", "--revision", ""], "--revision"),
            (["edit", "", "--title", "T"], "the document"), (["edit", "DOC", "--base", ""], "--base"),
            (["save", "", "--from", "FILE"], "the document"),
            (["save", "DOC", "--from", "FILE", "--base", ""], "--base"), (["delete", ""], "the document"),
            (["delete", "DOC", "--base", ""], "--base"), (["export", ""], "the document"),
            (["export", "DOC", "--revision", ""], "--revision"), (["versions", ""], "the document"),
            (["resolve", "", "--accept"], "the document"), (["resolve", "DOC", "--keep", ""], "--keep"),
            (["resolve", "DOC", "--merge", "--prefer", ""], "--prefer"), (["prune", ""], "the document"),
            (["diff", ""], "the document"), (["diff", "DOC", ""], "<revision-a>"),
            (["diff", "DOC", "REV", ""], "<revision-b>"),
        ])
    func emptyLookup(_ arguments: [String], _ named: String) throws {
        let store = try Store()
        let (id, revision) = try store.makeDocument()
        let file = try store.write(StoreCommandTests.edited(rating: 2), "edited.json")
        let before = try ImportTests.tree(store.path)
        let filled = arguments.map { ["DOC": id, "REV": revision, "FILE": file][$0] ?? $0 }
        let what = named == "the document" ? "a document id" : "a revision id"
        let message = "\(named) is empty; give \(what) or a prefix of one"
        let text = try store.run(filled)
        #expect(text.status == 64, "\(filled): \(text.stderr)")
        #expect(
            text.stderr.hasPrefix("error: \(message)\nUsage: survey \(arguments[0]) "), "\(text.stderr)")
        let json = try store.run(filled + ["--json"])
        let error = Self.object(json.stdout)?["error"] as? [String: Any]
        #expect(
            json.status == 64 && error?["code"] as? String == "usage"
                && error?["message"] as? String == message,
            "\(json.stdout)")
        #expect(try ImportTests.tree(store.path) == before)
    }

    @Test(
        "prune --keep-history -1 is refused as a count below 0 (it said 'Missing value'), and prunes nothing",
        arguments: [["--keep-history", "-1"], ["--keep-history=-1"]])
    func pruneKeepHistoryNegative(_ keep: [String]) throws {
        let (directory, store, _, _) = try CommandRunner.twoStores()
        defer { try? FileManager.default.removeItem(at: directory) }
        let text = try CommandRunner.run(["prune"] + keep + ["--store", store])
        #expect(text.status == 64)
        #expect(
            text.stderr.hasPrefix("error: --keep-history is a count of generations, 0 or more\n")
                && text.stderr.contains("Usage: survey prune"), "\(text.stderr)")
        let json = try CommandRunner.run(["prune"] + keep + ["--json", "--store", store])
        let error = Self.object(json.stdout)?["error"] as? [String: Any]
        #expect(
            json.status == 64 && error?["code"] as? String == "usage"
                && error?["message"] as? String == "--keep-history is a count of generations, 0 or more",
            "\(json.stdout)")
        #expect(try CommandRunner.run(["prune", "--keep-history", "1", "--store", store]).status == 0)
    }

    @Test(
        "An item that does not exist is not found (66, noSuchItem), as an unknown document is (it was a usage error; so was one that starts with -, 'Missing value for --answer')",
        arguments: ["9", "0", "00000000-0000-4000-8000-000000000009", "nine", "-1"])
    func unknownItem(_ item: String) throws {
        let store = try Store()
        let (id, _) = try store.makeDocument()
        let text = try store.run(["edit", id, "--answer", "\(item)=1"])
        #expect(text.status == 66)
        #expect(
            text.stderr == "error: there is no item '\(item)' (give a position from 1 to 3 or an item id)\n",
            "\(text.stderr)")
        let json = try store.run(["edit", id, "--answer", "\(item)=1", "--json"])
        let error = Self.object(json.stdout)?["error"] as? [String: Any]
        #expect(
            json.status == 66 && error?["code"] as? String == "noSuchItem" && error?["exit"] as? Int == 66,
            "\(json.stdout)")
        #expect(try store.versions(id).count == 1)
        let empty = try store.json(["new", "--title", "Empty"]) as! [String: Any]
        let none = try store.run(["edit", empty["id"] as! String, "--answer", "\(item)=1"])
        #expect(
            none.status == 66 && none.stderr.contains("there is no item '\(item)': the survey has no items"),
            "\(none.stderr)")
    }

    @Test("export refuses an existing package folder and missing parent folders plainly, creating nothing")
    func exportDestinations() throws {
        let store = try Store()
        let (id, _) = try store.makeDocument()
        let existing = store.directory.appendingPathComponent("existing").path
        try FileManager.default.createDirectory(atPath: existing, withIntermediateDirectories: false)
        let onto = try store.run(["export", id, "--package", existing])
        #expect(onto.status == 1)
        #expect(
            onto.stderr.contains("already exists") && !onto.stderr.contains("NSCocoaErrorDomain"),
            "\(onto.stderr)")
        let missing = store.directory.appendingPathComponent("missing").path
        for arguments in [["-o", missing + "/dir/x.json"], ["--package", missing + "/dir/p"]] {
            let result = try store.run(["export", id] + arguments)
            #expect(result.status == 66, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("no such folder"))
            #expect(!FileManager.default.fileExists(atPath: missing), "\(arguments) created \(missing)")
        }
    }

    @Test("migrate --dry-run with a newer-format winner names it instead of calling every winner current")
    func migrateNewer() throws {
        let directory = try CommandRunner.temporaryDirectory()
        let path = directory.appendingPathComponent("store").path
        let (document, _) = try FormatCommandTests.store(
            with: "format3/newer.survey", formatVersion: 3, at: path)
        let result = try CommandRunner.run(["migrate", "--dry-run", "--store", path])
        #expect(result.status == 0)
        #expect(!result.stdout.contains("every winner is in the current format"), "\(result.stdout)")
        #expect(
            result.stdout.contains(document.uuidString.lowercased())
                && result.stdout.contains("format 3 is newer"))
        let json = try CommandRunner.run(["migrate", "--dry-run", "--json", "--store", path])
        #expect(Self.object(json.stdout)?["newer"] as? [String] == [document.uuidString.lowercased()])
    }

    @Test("resolve --keep of a revision that does not exist fails (66) even when there is no conflict")
    func resolveKeepJunk() throws {
        let store = try Store()
        let (id, _) = try store.makeDocument()
        let result = try store.run(["resolve", id, "--keep", "JUNK"])
        #expect(
            result.status == 66 && result.stderr.contains("there is no revision JUNK"), "\(result.stderr)")
    }

    @Test("verify tells an unreadable Survey.plist from a missing one")
    func verifyUnreadable() throws {
        let store = try Store()
        let (id, revision) = try store.makeDocument()
        let content = "\(store.path)/Documents/\(id)/\(revision).survey/Survey.plist"
        try FileManager.default.removeItem(atPath: content)
        try FileManager.default.createDirectory(atPath: content, withIntermediateDirectories: false)
        let result = try store.run(["verify"])
        #expect(result.status == 1)
        #expect(
            result.stderr.contains("Survey.plist: cannot be read")
                && !result.stderr.contains("Survey.plist: missing"), "\(result.stderr)")
    }

    @Test("init refuses a device name XML cannot carry before creating anything")
    func initBadDevice() throws {
        let store = try Store()
        let result = try store.run(["init", "--device", "a\rb"])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("device name"))
        #expect(!FileManager.default.fileExists(atPath: store.path), "the store was created")
    }

    @Test("check: a missing path exits 66; a file that is not a package is called that")
    func checkPaths() throws {
        let store = try Store()
        let missing = try CommandRunner.run(["check", store.directory.appendingPathComponent("missing").path])
        #expect(
            missing.status == 66 && missing.stderr.contains("no such file or folder"), "\(missing.stderr)")
        let file = try store.write("{}", "plain.json")
        let plain = try CommandRunner.run(["check", file])
        #expect(plain.status == 65)
        #expect(plain.stderr.contains("not a folder") && !plain.stderr.contains("no such"), "\(plain.stderr)")
    }

    @Test(
        "check says why a path it cannot reach is not there: a link to nothing, a loop of links, a name too long (each was 'no such file or folder')"
    )
    func checkUnreachablePaths() throws {
        let store = try Store()
        let dangling = store.directory.appendingPathComponent("dangling").path
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: "nothing-here")
        let loop = store.directory.appendingPathComponent("loop").path
        try FileManager.default.createSymbolicLink(atPath: loop, withDestinationPath: "loop")
        for path in [dangling, loop] {
            let result = try CommandRunner.run(["check", path])
            #expect(
                result.status == 65
                    && result.stderr
                        == "\(path): it is a symbolic link that leads to nothing (its target is missing, or links lead back to it)\n",
                "\(result.stderr)")
        }
        let long = store.directory.appendingPathComponent(String(repeating: "n", count: 300)).path
        let tooLong = try CommandRunner.run(["check", long, "--json"])
        let rows =
            (try JSONSerialization.jsonObject(with: Data(tooLong.stdout.utf8)) as? [String: Any])?[
                "revisions"]
            as? [[String: Any]]
        #expect(tooLong.status == 66, "\(tooLong.stderr)")
        #expect(
            rows?.first?["message"] as? String == "cannot look up: File name too long", "\(tooLong.stdout)")
    }

    // MARK: Silently ignored options, silent no-ops

    @Test(
        "export --package with -o or --format is a usage error",
        arguments: [["-o", "x.json"], ["--format", "plist"], ["--format", "json"]])
    func exportPackageOptions(_ extra: [String]) throws {
        let store = try Store()
        let (id, _) = try store.makeDocument()
        let package = store.directory.appendingPathComponent("p").path
        let result = try store.run(["export", id, "--package", package] + extra)
        #expect(result.status == 64, "\(extra): \(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: package))
    }

    @Test("edit and save that change nothing say so: \"changed\": false, no revision")
    func unchangedEdit() throws {
        let store = try Store()
        let (id, revision) = try store.makeDocument()
        let edit = try store.run(["edit", id, "--title", "Visitor feedback", "--json"])
        #expect(edit.status == 0)
        #expect(Self.object(edit.stdout)?["changed"] as? Bool == false)
        #expect(Self.object(edit.stdout)?["revision"] as? String == revision)
        #expect(edit.stderr.contains("unchanged"))
        let text = try store.run(["edit", id, "--answer", "1=Yes"])
        #expect(text.status == 0 && text.stderr.contains("unchanged"), "\(text.stderr)")
        // The content as it is, item ids included.
        let same = store.directory.appendingPathComponent("same.json").path
        #expect(try store.run(["export", id, "-o", same]).status == 0)
        let save = try store.run(["save", id, "--from", same, "--json"])
        #expect(Self.object(save.stdout)?["changed"] as? Bool == false)
        #expect(try store.versions(id).count == 1)
        let changed = try store.json(["edit", id, "--answer", "1=No"]) as! [String: Any]
        #expect(changed["changed"] as? Bool == true)
    }

    @Test("resolve --accept on a document not in conflict reports \"resolved\": false")
    func resolveNotInConflict() throws {
        let store = try Store()
        let (id, revision) = try store.makeDocument()
        let result = try store.json(["resolve", id, "--accept"]) as! [String: Any]
        #expect(result["resolved"] as? Bool == false)
        #expect(result["revision"] as? String == revision)
        #expect(try store.versions(id).count == 1)
    }

    @Test(
        "A deletion that raced an edit is no conflict: conflicts does not list it and resolve writes nothing for it, nor for two deletions, whose document --keep restores"
    )
    func resolveEditAndDeletion() throws {
        let store = try Store()
        let (id, first) = try store.makeDocument()
        let edit = try store.json(["edit", id, "--title", "Edited"]) as! [String: Any]
        let deleted = try store.json(["delete", id, "--base", first]) as! [String: Any]
        #expect(deleted["deleted"] as? Bool == false)
        #expect((try store.json(["conflicts"]) as? [Any])?.isEmpty == true)
        let row = (try store.json(["list"]) as? [[String: Any]])?.first
        #expect(row?["conflicts"] as? Int == 0 && row?["revision"] as? String == edit["revision"] as? String)
        let file = store.directory.appendingPathComponent("content.json").path
        #expect(try store.run(["export", id, "-o", file]).status == 0)
        let before = HostileStoreTests.fingerprint(store.path)
        for resolution in [
            ["--accept"], ["--merge"], ["--merge", "--strict"], ["--keep", first], ["--from", file],
        ] {
            let text = try store.run(["resolve", id] + resolution)
            #expect(
                text.status == 0 && text.stdout.isEmpty
                    && text.stderr.contains("\(id) is not in conflict; nothing to resolve"),
                "\(resolution): \(text.status) \(text.stdout) \(text.stderr)")
            let json = try store.json(["resolve", id] + resolution) as! [String: Any]
            #expect(json["resolved"] as? Bool == false, "\(resolution): \(json)")
            #expect(json["revision"] as? String == edit["revision"] as? String, "\(resolution): \(json)")
            #expect(HostileStoreTests.fingerprint(store.path) == before, "\(resolution) wrote to the store")
        }
        // The edit deleted too: two deletions, a deleted document and no conflict.
        #expect(try store.run(["delete", id, "--base", edit["revision"] as! String]).status == 0)
        let twice = HostileStoreTests.fingerprint(store.path)
        for resolution in [["--accept"], ["--merge"]] {
            let json = try store.json(["resolve", id] + resolution) as! [String: Any]
            #expect(json["resolved"] as? Bool == false, "\(resolution): \(json)")
            #expect(HostileStoreTests.fingerprint(store.path) == twice, "\(resolution) wrote to the store")
        }
        let restored = try store.json(["resolve", id, "--keep", first]) as! [String: Any]
        #expect(restored["resolved"] as? Bool == true, "\(restored)")
        #expect(
            (try store.json(["show", id]) as? [String: Any])?["revision"] as? String == restored["revision"]
                as? String)
    }

    // MARK: Output as README describes it

    @Test("list text has a header and the revision and format columns")
    func listColumns() throws {
        let store = try Store()
        let (id, revision) = try store.makeDocument()
        let lines = try store.run(["list"]).stdout.split(separator: "\n")
        try #require(lines.count == 2, "\(lines)")
        let header = lines[0].split(separator: " ", omittingEmptySubsequences: true)
        #expect(
            header == ["ID", "TITLE", "REVISION", "MODIFIED", "DEVICE", "FORMAT", "CONFLICTS", "DELETED"])
        #expect(
            lines[1].hasPrefix(id) && lines[1].contains(revision) && lines[1].contains("  2  "), "\(lines[1])"
        )
    }

    @Test("list on a store with no documents prints the header and says how to create one")
    func listEmpty() throws {
        let store = try Store()
        #expect(try store.run(["init"]).status == 0)
        let empty = try store.run(["list"])
        #expect(empty.status == 0)
        #expect(empty.stdout.split(separator: "\n").count == 1, "\(empty.stdout)")
        #expect(
            empty.stderr.contains(
                "the store at \(store.path) has no documents yet (create one with `survey new --store \(store.path) --title TITLE`)"
            ), "\(empty.stderr)")
        let json = try store.run(["list", "--json"])
        #expect(json.stdout == "[]\n" && json.stderr.isEmpty, "\(json.stdout) \(json.stderr)")
        _ = try store.makeDocument()
        #expect(try store.run(["list"]).stderr.isEmpty)
    }

    @Test(
        "list on an empty store in a newer layout gives no advice to create a document (new fails there), and says it can be read but not changed"
    )
    func listEmptyNewerLayout() throws {
        let store = try Store()
        #expect(try store.run(["init"]).status == 0)
        let layout = store.path + "/Store.plist"
        let text = try String(contentsOfFile: layout, encoding: .utf8)
        try Data(text.replacingOccurrences(of: "<integer>1</integer>", with: "<integer>2</integer>").utf8)
            .write(to: URL(fileURLWithPath: layout))
        let empty = try store.run(["list"])
        #expect(empty.status == 0)
        #expect(
            empty.stderr
                == "the store at \(store.path) has no documents yet (\(layout): store layout 2 is newer than this build supports (1); it can be read but not changed)\n",
            "\(empty.stderr)")
        #expect(!empty.stderr.contains("survey new"), "\(empty.stderr)")
        #expect(try store.run(["new", "--title", "X"]).status == 65, "what the advice would have led to")
    }

    @Test(
        "On a store in a newer layout, the dry runs of prune, migrate and resolve refuse as the commands do (exit 65), and verify notes the layout (the dry runs said what they would do, and verify said clean)"
    )
    func dryRunsOnNewerLayout() throws {
        let store = try Store()
        let (id, _) = try store.makeDocument()
        let layout = store.path + "/Store.plist"
        let text = try String(contentsOfFile: layout, encoding: .utf8)
        try Data(text.replacingOccurrences(of: "<integer>1</integer>", with: "<integer>2</integer>").utf8)
            .write(to: URL(fileURLWithPath: layout))
        for arguments in [
            ["prune"], ["migrate"], ["resolve", id, "--merge"], ["resolve", "--all", "--merge"],
        ] {
            let real = try store.run(arguments)
            let dry = try store.run(arguments + ["--dry-run"])
            #expect(real.status == 65, "\(arguments): \(real.stderr)")
            #expect(
                dry.status == 65 && dry.stdout.isEmpty, "\(arguments) --dry-run: \(dry.stdout)\(dry.stderr)")
            #expect(dry.stderr == real.stderr, "\(arguments): \(dry.stderr) against \(real.stderr)")
        }
        let verify = try store.run(["verify"])
        #expect(
            verify.status == 0 && verify.stdout == "clean (1 note(s))\n", "\(verify.stdout)\(verify.stderr)")
        #expect(
            verify.stderr
                == "\(layout): note: store layout 2 is newer than this build supports (1): it can be read but not changed (every command that writes refuses it)\n",
            "\(verify.stderr)")
    }

    @Test(
        "init refuses a folder inside another store's Documents or Local.nosync (a revision package too), exit 64, making nothing (it made a store there, which the other store's verify then called damaged)"
    )
    func initInsideAStore() throws {
        let store = try Store()
        let (id, revision) = try store.makeDocument()
        let package = "\(store.path)/Documents/\(id)/\(revision).survey"
        let before = try FileManager.default.subpathsOfDirectory(atPath: store.path).sorted()
        for inside in [
            package, store.path + "/Documents", store.path + "/Documents/new", store.path + "/Local.nosync/x",
        ] {
            let made = try CommandRunner.run(["init", "--store", inside])
            #expect(made.status == 64, "\(inside): \(made.stdout)\(made.stderr)")
            #expect(
                made.stderr.contains("it is inside the store at \(store.path) (in its ")
                    && made.stderr.contains("choose a folder outside it"), "\(made.stderr)")
        }
        // Through a link to the store's folders, to a folder not made yet; demo too.
        let links = store.directory.appendingPathComponent("links").path
        try FileManager.default.createDirectory(atPath: links, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: links + "/local", withDestinationPath: store.path + "/Local.nosync")
        try FileManager.default.createSymbolicLink(
            atPath: links + "/documents", withDestinationPath: store.path + "/Documents")
        for inside in [
            links + "/local/tmp/mine", links + "/documents/x", links + "/documents/../Documents/y",
        ] {
            let made = try CommandRunner.run(["init", "--store", inside])
            #expect(made.status == 64, "\(inside): \(made.stderr)")
            #expect(
                made.stderr.contains("it is inside the store at \(store.path)"), "\(inside): \(made.stderr)")
            let demo = try CommandRunner.run(["demo", "--store", inside])
            #expect(demo.status == 64, "demo \(inside): \(demo.stdout)\(demo.stderr)")
        }
        // What a command says of a missing store there names no init that would be refused.
        let listed = try CommandRunner.run(["list", "--store", store.path + "/Documents/new"])
        #expect(
            listed.status == 66 && listed.stderr.contains("a store belongs outside it")
                && !listed.stderr.contains("survey init"), "\(listed.stderr)")
        #expect(try FileManager.default.subpathsOfDirectory(atPath: store.path).sorted() == before)
        #expect(try store.run(["verify"]).stdout == "clean\n")
        // Beside the store, not inside it: made.
        #expect(try CommandRunner.run(["init", "--store", store.path + "-beside"]).status == 0)
        try? FileManager.default.removeItem(atPath: store.path + "-beside")
    }

    @Test(
        "init and demo of a new folder named with a slash at its end make it (they failed: cannot create the directory NEW/, code invalidName, leaving it made)"
    )
    func trailingSlash() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("new").path
        let made = try CommandRunner.run(["init", "--store", store + "/"])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(try CommandRunner.run(["new", "--title", "T", "--store", store + "//"]).status == 0)
        #expect(try CommandRunner.run(["list", "--store", store]).stdout.contains("T"))
        let demo = try CommandRunner.run([
            "demo", "--store", directory.appendingPathComponent("demo").path + "/",
        ])
        #expect(
            demo.status == 0 && demo.stdout.contains("verify, both stores: clean"),
            "\(demo.stdout)\(demo.stderr)")
    }

    @Test(
        "A copied store whose identity's lock file is a link renews nothing: the write fails naming the lock file, as verify says, and the identity stays (it renewed the identity without the lock, under the host's name)"
    )
    func renewalNeedsItsLock() throws {
        let store = try Store()
        _ = try store.makeDocument()
        let copy = store.directory.appendingPathComponent("copy").path
        _ = try ChildProcess.run("/bin/cp", ["-a", store.path, copy])
        let lock = copy + "/Local.nosync/locks/device.lock"
        try? FileManager.default.removeItem(atPath: lock)
        try FileManager.default.createSymbolicLink(atPath: lock, withDestinationPath: "/tmp")
        let device = copy + "/Local.nosync/Device.plist"
        let before = try Data(contentsOf: URL(fileURLWithPath: device))
        let verify = try CommandRunner.run(["verify", "--store", copy])
        #expect(
            verify.stderr.contains(
                "\(lock): not a regular lock file (never opened): a command that must renew this device's identity (in a copied store) fails until it is removed"
            ),
            "\(verify.stderr)")
        let made = try CommandRunner.run(["new", "--title", "T", "--store", copy])
        #expect(made.status != 0 && made.stderr.contains(lock), "\(made.stdout)\(made.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: device)) == before, "the identity stays")
    }

    @Test(
        "A command naming a document whose folder is a link says so, exit 66, and follows nothing (it said there was no such document)"
    )
    func documentFolderIsALink() throws {
        let store = try Store()
        let (id, _) = try store.makeDocument()
        let folder = store.path + "/Documents/" + id
        let away = store.directory.appendingPathComponent("away").path
        try FileManager.default.moveItem(atPath: folder, toPath: away)
        try FileManager.default.createSymbolicLink(atPath: folder, withDestinationPath: away)
        let shown = try store.run(["show", id])
        #expect(shown.status == 66, "\(shown.stderr)")
        #expect(
            shown.stderr.contains(
                "there is no document \(id) here: a symbolic link (never followed) stands where its folder belongs in Documents/"
            ),
            "\(shown.stderr)")
        let json = try store.run(["edit", id, "--title", "X", "--json"])
        #expect(json.status == 66 && json.stdout.contains("\"code\" : \"noSuchDocument\""), "\(json.stdout)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: away).count == 1, "nothing written through it"
        )
    }

    @Test("show text has the format version, and a binary answer as its label")
    func showText() throws {
        let store = try Store()
        let (id, revision) = try store.makeDocument()
        let text = try store.run(["show", id]).stdout
        #expect(text.contains("\(revision) (format 2)"), "\(text)")
        #expect(text.contains("Would you come again? (binary): Yes"), "\(text)")
    }

    @Test(
        "Item ids are printed in one letter case (upper, as Survey.plist holds them) by show, export, diff and resolve --merge; edit takes either case"
    )
    func itemIDCase() throws {
        let store = try Store()
        let (id, first) = try store.makeDocument()
        for rating in [3, 7] {
            #expect(try store.run(["edit", id, "--base", first, "--answer", "3=\(rating)"]).status == 0)
        }
        let shown = try store.json(["show", id]) as! [String: Any]
        let ids = (shown["items"] as! [[String: Any]]).map { $0["id"] as! String }
        #expect(ids.allSatisfy { $0 == $0.uppercased() }, "\(ids)")
        let exported = try store.json(["export", id]) as! [String: Any]
        let exportedIDs = ((exported["content"] as? [String: Any])?["items"] as? [[String: Any]])?.map {
            $0["id"] as? String
        }
        #expect(exportedIDs == ids)
        let diffs = try store.json(["diff", id]) as! [[String: Any]]
        let changed = (diffs.first?["items"] as? [[String: Any]])?.map { $0["id"] as? String }
        #expect(changed == [ids[2]], "\(diffs)")
        let merge = try store.json(["resolve", id, "--merge", "--dry-run"]) as! [String: Any]
        let contested = (merge["contested"] as? [[String: Any]])?.map { $0["item"] as? String }
        #expect(contested == [ids[2]], "\(merge)")
        for (item, name) in [(ids[1].lowercased(), "Grace"), (ids[1], "Hopper")] {
            let edited = try store.json(["edit", id, "--answer", "\(item)=\(name)"]) as! [String: Any]
            #expect(edited["changed"] as? Bool == true, "\(item)")
        }
    }

    @Test("check --json names both the document and the revision, for every format")
    func checkIDs() throws {
        let format1 = FormatCommandTests.fixtures + "/format1/unanswered.survey"
        let store = try Store()
        let (id, revision) = try store.makeDocument()
        let result = try CommandRunner.run(["check", format1, store.path, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let rows = Self.object(result.stdout)?["revisions"] as? [[String: Any]] ?? []
        #expect(rows.count == 2)
        #expect(rows.allSatisfy { $0["id"] == nil && $0["document"] is String })
        #expect(rows.last?["document"] as? String == id && rows.last?["revision"] as? String == revision)
    }

    @Test(
        "export --json holds the survey as an object; a newer-format revision exports as stored with --format plist"
    )
    func exportContent() throws {
        let store = try Store()
        let (id, _) = try store.makeDocument()
        let exported = try store.json(["export", id]) as! [String: Any]
        #expect((exported["content"] as? [String: Any])?["title"] as? String == "Visitor feedback")

        let directory = try CommandRunner.temporaryDirectory()
        let path = directory.appendingPathComponent("store").path
        let (document, _) = try FormatCommandTests.store(
            with: "format3/newer.survey", formatVersion: 3, at: path)
        let stored = try Data(
            contentsOf: URL(
                fileURLWithPath: FormatCommandTests.fixtures + "/format3/newer.survey/Survey.plist"))
        let plist = try CommandRunner.run([
            "export", document.uuidString, "--format", "plist", "--store", path,
        ])
        #expect(plist.status == 0, "\(plist.stderr)")
        #expect(Data(plist.stdout.utf8) == stored)
        let json = try CommandRunner.run(["export", document.uuidString, "--store", path])
        #expect(json.status == 65 && json.stderr.contains("--format plist"), "\(json.stderr)")
    }

    // MARK: Progress and streaming

    @Test("prune prints a line only for documents it pruned, then a summary")
    func pruneSummary() throws {
        let store = try Store()
        let (id, _) = try store.makeDocument()
        let untouched = try store.run(["new", "--title", "Untouched"]).stdout.trimmingCharacters(
            in: .whitespacesAndNewlines)
        #expect(try store.run(["edit", id, "--answer", "1=0"]).status == 0)
        let result = try store.run(["prune"])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(
            lines == ["\(id): pruned 1 revision(s)", "pruned 1 revision(s) in 1 of 2 document(s)"], "\(lines)"
        )
        #expect(!result.stdout.contains(untouched))
    }

    @Test(
        "Every key a --json shape documents is there, null when there is nothing to say: prune's skipped, lint's line, column and message, check's message, a dry run's revision, a deleted document's title; an empty array is []"
    )
    func jsonNulls() throws {
        let store = try Store()
        let (id, _) = try store.makeDocument()
        #expect(try store.run(["edit", id, "--answer", "1=0"]).status == 0)
        // An empty array is printed on one line.
        #expect(try store.run(["conflicts", "--json"]).stdout == "[]\n")
        let deleted = try store.run(["new", "--title", "Gone"]).stdout.trimmingCharacters(
            in: .whitespacesAndNewlines)
        #expect(try store.run(["delete", deleted]).status == 0)
        let listed = try #require(try store.json(["list"]) as? [[String: Any]])
        let gone = try #require(listed.first { $0["id"] as? String == deleted }, "\(listed)")
        #expect(gone["title"] is NSNull && gone["deleted"] as? Bool == true, "\(gone)")
        let pruned = try #require(try store.json(["prune", "--dry-run"]) as? [String: Any])
        let row = try #require((pruned["documents"] as? [[String: Any]])?.first, "\(pruned)")
        #expect(row["skipped"] is NSNull, "\(row)")

        let valid = store.path + "/Store.plist"
        let lint = try CommandRunner.run(["plist", "lint", valid, "--json"])
        let file = try #require(
            (Self.object(lint.stdout)?["files"] as? [[String: Any]])?.first, "\(lint.stdout)")
        #expect(file["valid"] as? Bool == true)
        for key in ["line", "column", "message"] { #expect(file[key] is NSNull, "\(key): \(file)") }

        let check = try CommandRunner.run(["check", store.path, "--json"])
        let results = try #require(
            Self.object(check.stdout)?["revisions"] as? [[String: Any]], "\(check.stdout)")
        #expect(!results.isEmpty)
        for result in results {
            #expect(result["status"] as? String == "current" && result["message"] is NSNull, "\(result)")
        }

        // A format-1 winner: a dry run names it, and no revision written.
        let document = try #require(UUID(uuidString: id))
        let old = try RevisionStore(root: store.path, device: Device(id: "old-app", name: "old app")).write(
            document: document, parents: [try SurveyStore.open(at: store.path).revision(document, nil)],
            content: try Data(
                contentsOf: URL(
                    fileURLWithPath: FormatCommandTests.fixtures + "/format1/unanswered.survey/Survey.plist")),
            formatVersion: 1)
        let migrated = try #require(try store.json(["migrate", "--dry-run"]) as? [String: Any])
        let entry = try #require((migrated["migrated"] as? [[String: Any]])?.first, "\(migrated)")
        #expect(entry["from"] as? String == old.id.description && entry["revision"] is NSNull, "\(entry)")
    }

    @Test("The progress line fits a 40-column terminal", CommandRunner.needs("script"))
    func progressWidth() throws {
        let store = try Store()
        let (id, _) = try store.makeDocument()
        for rating in 0..<20 {
            #expect(try store.run(["edit", id, "--answer", "3=\(rating % 11)"]).status == 0)
        }
        // `script` gives the command a terminal; the terminal says it is 40 columns wide.
        let command = "stty cols 40 rows 20; \(CommandRunner.binary.path) check \(store.path) >/dev/null"
        let result = try CommandRunner.run(
            ["-qec", command, "/dev/null"], executable: URL(fileURLWithPath: "/usr/bin/script"))
        let shown = result.stdout.replacingOccurrences(of: "\u{1B}[K", with: "")
        #expect(shown.contains("21/21 revisions"), "\(shown.debugDescription)")
        // Lines end at \r, \n and \r\n (one Character in Swift).
        let widest = shown.split(whereSeparator: \.isNewline).map(\.count).max() ?? 0
        #expect(widest < 40, "\(shown.debugDescription)")
    }

    // MARK: Help

    @Test(
        "Help: edit explains VALUE, one EXIT CODES section every subcommand points at, --version, import's package"
    )
    func help() throws {
        let root = try CommandRunner.run(["--help"])
        #expect(
            root.stdout.contains("EXIT CODES") && root.stdout.contains("66") && root.stdout.contains("75"))
        let version = try CommandRunner.run(["--version"])
        #expect(
            version.status == 0
                && version.stdout.range(of: #"^\d+\.\d+\.\d+\n$"#, options: .regularExpression) != nil,
            "\(version.stdout)")
        let edit = Self.words(try CommandRunner.run(["edit", "--help"]).stdout)
        for phrase in ["TFFT", "ISO 8601", "empty VALUE", "0 or 1", "label"] {
            #expect(edit.contains(phrase), "edit --help lacks \(phrase)")
        }
        let subcommands = [
            "init", "new", "list", "show", "edit", "save", "delete", "export", "import", "versions",
            "conflicts", "resolve",
            "prune", "verify", "sync", "check", "migrate", "plist", "plist lint", "plist convert",
        ]
        for name in subcommands {
            let text = Self.words(
                try CommandRunner.run(["help"] + name.split(separator: " ").map(String.init)).stdout)
            #expect(
                text.contains("EXIT CODES in `survey --help`"),
                "\(name) --help does not point at the exit codes")
        }
        let importHelp = Self.words(try CommandRunner.run(["help", "import"]).stdout)
        #expect(importHelp.contains("unless it records a deletion"), "\(importHelp)")
    }
}
