import Foundation
import Testing

/// The store commands, run as a user runs them: the built binary, real processes.
@Suite("survey store commands", .serialized)
struct StoreCommandTests {
    static let sample = #"""
        {"title": "Visitor feedback", "items": [
          {"title": "Would you come again?", "kind": "binary", "options": ["No", "Yes"], "answer": 1},
          {"title": "Your name", "kind": "textField", "answer": "Ada"},
          {"title": "Rate us", "kind": "slider", "minimum": 0, "maximum": 10, "roundToInteger": true, "answer": 8}
        ]}
        """#

    struct Store {
        let path: String
        let directory: URL

        init() throws {
            directory = try CommandRunner.temporaryDirectory()
            path = directory.appendingPathComponent("store").path
        }

        @discardableResult
        func run(_ arguments: [String], environment: [String: String] = [:]) throws -> CommandRunner.Result {
            try CommandRunner.run(arguments + ["--store", path], environment: environment)
        }

        func json(_ arguments: [String]) throws -> Any {
            let result = try run(arguments + ["--json"])
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        }

        func write(_ text: String, _ name: String) throws -> String {
            let url = directory.appendingPathComponent(name)
            try Data(text.utf8).write(to: url)
            return url.path
        }

        /// Creates the store and the sample document; returns its id and first revision.
        func makeDocument() throws -> (id: String, revision: String) {
            #expect(try run(["init", "--device", "test"]).status == 0)
            let created =
                try json(["new", "--from", write(StoreCommandTests.sample, "sample.json")]) as! [String: Any]
            return (created["id"] as! String, created["revision"] as! String)
        }

        func versions(_ id: String) throws -> [[String: Any]] {
            try json(["versions", id]) as! [[String: Any]]
        }
    }

    static func edited(rating: Int, name: String = "Ada") -> String {
        sample.replacingOccurrences(of: "\"answer\": 8", with: "\"answer\": \(rating)")
            .replacingOccurrences(of: "\"Ada\"", with: "\"\(name)\"")
    }

    @Test("init is idempotent; new, list and show speak JSON with the documented fields")
    func basics() throws {
        let store = try Store()
        let (id, revision) = try store.makeDocument()
        #expect(try store.run(["init"]).status == 0, "init twice")
        let rows = try store.json(["list"]) as! [[String: Any]]
        #expect(rows.count == 1)
        #expect(
            Set(rows[0].keys) == [
                "id", "title", "revision", "modified", "device", "formatVersion", "conflicts", "deleted",
            ])
        #expect(rows[0]["revision"] as? String == revision)
        let shown = try store.json(["show", id]) as! [String: Any]
        #expect(shown["title"] as? String == "Visitor feedback")
        #expect(shown["revision"] as? String == revision)
        #expect(shown["formatVersion"] as? Int == 2)
        #expect((shown["items"] as? [Any])?.count == 3)
        #expect((shown["conflicts"] as? [Any])?.isEmpty == true)
    }

    @Test(
        "versions prints each row as its help says (revision, time, device, state, '(pruned)'), and --json has the keys its help names (the help named neither)"
    )
    func versionsRowsAsHelpSays() throws {
        let store = try Store()
        let (id, first) = try store.makeDocument()
        let edited = try store.write(Self.edited(rating: 3), "edited.json")
        #expect(try store.run(["save", id, "--from", edited]).status == 0)
        #expect(try store.run(["prune", id]).status == 0)
        let rows = try store.versions(id)
        let current = try #require(rows.first?["revision"] as? String)
        let text = try store.run(["versions", id])
        #expect(text.status == 0)
        let modified = rows.map { $0["modified"] as? String ?? "" }
        #expect(
            text.stdout
                == "\(current)  \(modified[0])  test  current\n\(first)  \(modified[1])  test  superseded (pruned)\n",
            "\(text.stdout)")
        let help = try CommandRunner.run(["versions", "--help"])
        let words = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(words.contains(#"and "(pruned)" when only its metadata is left"#), "\(help.stdout)")
        #expect(words.contains(#"(marked "(ahead of this clock!)""#), "\(help.stdout)")
        let named = try #require(
            words.range(of: #"--json: \[\{[^}]*\}\]"#, options: .regularExpression).map { words[$0] },
            "\(help.stdout)")
        let keys = named.split(separator: "\"").enumerated().filter { $0.offset % 2 == 1 }.map {
            String($0.element)
        }
        #expect(
            keys == [
                "revision", "parents", "modified", "device", "formatVersion", "state", "pruned",
                "futureTimestamp",
            ])
        #expect(rows.allSatisfy { Set($0.keys) == Set(keys) }, "\(rows)")
    }

    @Test(
        "A command a message advises names the store --store named, quoted for a shell, and running it acts on that store; with $SURVEY_STORE it names none"
    )
    func adviceNamesTheStore() throws {
        let directory = try CommandRunner.temporaryDirectory()
        // A second store in the working directory's default place, which the advice must not touch.
        let path = directory.appendingPathComponent("phone's store").path
        func run(_ arguments: [String]) throws -> CommandRunner.Result {
            try CommandRunner.run(arguments + ["--store", path], in: directory)
        }
        #expect(try CommandRunner.run(["init"], in: directory).status == 0)
        #expect(try run(["init"]).status == 0)
        let id = try run(["new", "--title", "Kept"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try run(["edit", id, "--title", "Edited"]).status == 0)
        #expect(try run(["delete", id]).status == 0)
        let shown = try run(["show", id])
        #expect(shown.status == 66)
        let quoted = #"'"# + path.replacingOccurrences(of: "'", with: #"'\''"#) + #"'"#
        let advised = try #require(
            shown.stderr.split(separator: "`").first { $0.hasPrefix("survey resolve ") }, "\(shown.stderr)")
        #expect(advised.hasPrefix("survey resolve --store \(quoted) \(id) --keep "), "\(advised)")
        // The advice, run by a shell as a user would paste it, restores the document there.
        let restored = try CommandRunner.run(
            ["-c", "\"$0\" " + advised.dropFirst("survey ".count), CommandRunner.binary.path], in: directory,
            executable: URL(fileURLWithPath: "/bin/sh"))
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(try run(["show", id]).stdout.hasPrefix("Edited\n"))
        #expect(try CommandRunner.run(["list", "--json"], in: directory).stdout == "[]\n")
        // The same advice in --json's message.
        #expect(try run(["delete", id]).status == 0)
        let json = try run(["show", id, "--json"])
        let error = try #require(
            (try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])?["error"]
                as? [String: Any], "\(json.stdout)")
        #expect(
            (error["message"] as? String)?.contains("`survey resolve --store \(quoted) \(id) --keep ") == true
        )
        // A store named by $SURVEY_STORE is named the same way when the advice runs.
        let environment = try CommandRunner.run(
            ["show", id], in: directory, environment: ["SURVEY_STORE": path])
        #expect(environment.stderr.contains("`survey resolve \(id) --keep "), "\(environment.stderr)")
    }

    @Test(
        "A newer or damaged Store.plist is named with its path written out: a line feed in the store's name no longer splits the line (it was printed as it is)"
    )
    func layoutFileNamedWrittenOut() throws {
        let directory = try CommandRunner.temporaryDirectory()
        let path = directory.appendingPathComponent("two\nlines").path
        #expect(try CommandRunner.run(["init", "--store", path]).status == 0)
        for (version, code) in [("2", "newerLayout"), ("0", "damagedStore")] {
            try Data(
                """
                <?xml version="1.0" encoding="UTF-8"?>
                <plist version="1.0"><dict><key>StoreLayoutVersion</key><integer>\(version)</integer></dict></plist>
                """.utf8
            ).write(to: URL(fileURLWithPath: path + "/Store.plist"))
            let result = try CommandRunner.run(["new", "--store", path, "--title", "T", "--json"])
            #expect(result.status == 65, "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            let shown = path.replacingOccurrences(of: "\n", with: #"\u{A}"#)
            #expect(result.stderr.hasPrefix("error: \(shown)/Store.plist: "), "\(result.stderr)")
            #expect(result.stdout.contains("\"code\" : \"\(code)\""), "\(result.stdout)")
        }
    }

    @Test(
        "A Store.plist cut short beside Documents/ (empty, its start, zero bytes in place of some of it): every command exits 65 saying init writes it again; init does, warns, and the documents are all there; other damage (text, a layout file with more after it) init leaves alone"
    )
    func tornLayoutFileWrittenAgainByInit() throws {
        let directory = try CommandRunner.temporaryDirectory()
        let path = directory.appendingPathComponent("store").path
        #expect(try CommandRunner.run(["init", "--store", path]).status == 0)
        let id = try CommandRunner.run(["new", "--store", path, "--title", "Kept"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let layoutFile = path + "/Store.plist"
        let whole = try Data(contentsOf: URL(fileURLWithPath: layoutFile))
        // Empty, its start, and zero bytes where blocks were allocated but not written.
        var zeroed = whole
        zeroed.replaceSubrange(
            (whole.count / 3)..<whole.count, with: Data(count: whole.count - whole.count / 3))
        for torn in [Data(), whole.prefix(whole.count / 2), zeroed, Data(count: whole.count)] {
            try torn.write(to: URL(fileURLWithPath: layoutFile))
            let list = try CommandRunner.run(["list", "--store", path])
            #expect(list.status == 65, "\(list.stderr)")
            #expect(
                list.stderr.contains("(cut short; `survey init --store \(path)` writes it again)"),
                "\(list.stderr)")
            let initialized = try CommandRunner.run(["init", "--store", path, "--json"])
            #expect(initialized.status == 0, "\(initialized.stderr)")
            #expect(initialized.stderr.contains("Store.plist was cut short"), "\(initialized.stderr)")
            #expect(initialized.stdout.contains("\"layoutRewritten\" : true"), "\(initialized.stdout)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: layoutFile)) == whole)
            let shown = try CommandRunner.run(["show", "--store", path, id])
            #expect(shown.status == 0 && shown.stdout.hasPrefix("Kept"), "\(shown.stderr)")
        }
        // A whole layout file is left as it is, and said to be.
        let again = try CommandRunner.run(["init", "--store", path, "--json"])
        #expect(
            again.stdout.contains("\"layoutRewritten\" : false") && again.stderr.isEmpty, "\(again.stderr)")
        // A property list without the version, and a file in a folder without Documents/:
        // not a torn write; init refuses, changing nothing.
        let other = directory.appendingPathComponent("other").path
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
        let missingVersion = Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>Name</key><string>x</string></dict></plist>
            """.utf8)
        // Nor is text, or a layout file with something after it: a person's, not a torn write
        // (init took any file that was no well-formed property list for one, and replaced it).
        for (folder, bytes) in [
            (path, missingVersion), (other, Data()), (other, whole.prefix(10)),
            (path, Data("my notes\n".utf8)),
            (path, whole + Data("<junk".utf8)),
        ] {
            try bytes.write(to: URL(fileURLWithPath: folder + "/Store.plist"))
            let refused = try CommandRunner.run(["init", "--store", folder])
            #expect(refused.status == 65, "\(refused.stderr)")
            #expect(!refused.stderr.contains("writes it again"), "\(refused.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/Store.plist")) == bytes)
        }
        #expect(!FileManager.default.fileExists(atPath: other + "/Documents"))
    }

    @Test(
        "verify --repair-from a path with no store: exit 66, named as the source of a repair, without advice to create a store (an empty one repairs nothing)"
    )
    func repairFromNoStore() throws {
        let directory = try CommandRunner.temporaryDirectory()
        let path = directory.appendingPathComponent("store").path
        let missing = directory.appendingPathComponent("missing").path
        #expect(try CommandRunner.run(["init", "--store", path]).status == 0)
        let result = try CommandRunner.run(["verify", "--store", path, "--repair-from", missing])
        #expect(result.status == 66, "\(result.stderr)")
        #expect(
            result.stderr
                == "error: there is no store at \(missing) to repair from (--repair-from names a replica of this store)\n"
        )
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    @Test(
        "Deletions and conflicts as a user meets them: save without --base does not restore a deleted document (exit 66, as edit); show of an earlier revision names the document's conflicts as such; resolve --keep DELETION says the document is deleted; diff names a head that is a deletion; a title may start with '-'"
    )
    func deletionsAndConflictsSaidPlainly() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store").path
        func run(_ arguments: [String]) throws -> CommandRunner.Result {
            try CommandRunner.run([arguments[0], "--store", path] + arguments.dropFirst())
        }
        func revision(_ arguments: [String]) throws -> String {
            let result = try run(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(try run(["init"]).status == 0)
        let id = try revision(["new", "--title", "-10 degrees"])
        let first = try revision(["versions", id, "--json"])
        let origin = try #require(
            (try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [[String: Any]])?.first?["revision"]
                as? String)
        let file = directory.appendingPathComponent("content.json").path
        #expect(try run(["export", id, "-o", file]).status == 0)
        #expect(try run(["show", id]).stdout.hasPrefix("-10 degrees\n"))

        // Two edits from the first revision and a deletion of it: three heads.
        var content = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file)))
                as? [String: Any])
        for title in ["Left", "Right"] {
            content["title"] = title
            let edited = directory.appendingPathComponent(title + ".json")
            try JSONSerialization.data(withJSONObject: content).write(to: edited)
            _ = try revision(["save", id, "--from", edited.path, "--base", origin])
        }
        let deletion = try revision(["delete", id, "--base", origin])
        let shownEarlier = try run(["show", id, "--revision", origin])
        #expect(
            shownEarlier.stdout.contains("the document's conflicts (not won): "), "\(shownEarlier.stdout)")
        #expect(!shownEarlier.stdout.contains("in conflict with"), "\(shownEarlier.stdout)")
        let diff = try run(["diff", id])
        #expect(diff.status == 0, "\(diff.stderr)")
        #expect(
            diff.stderr.contains("warning: \(deletion): not compared with the winner: it records a deletion"))

        // Keeping the deletion deletes the document, and says so.
        let kept = try run(["resolve", id, "--keep", deletion])
        #expect(kept.status == 0 && kept.stderr.contains("the revision kept is a deletion"), "\(kept.stderr)")
        // A save on an earlier revision is refused, naming the current deletion as one.
        let stale = try run(["save", id, "--from", file, "--base", origin, "--if-current"])
        #expect(stale.status == 75 && stale.stderr.contains(" (a deletion))"), "\(stale.stderr)")
        // A plain save (or --if-current) does not restore it; --base DELETION does.
        for extra in [[], ["--if-current"]] {
            let refused = try run(["save", id, "--from", file] + extra)
            #expect(
                refused.status == 66 && refused.stderr.contains("was deleted at"),
                "\(extra): \(refused.stderr)")
        }
        let winner = try revision(["versions", id, "--json"])
        let current = try #require(
            (try JSONSerialization.jsonObject(with: Data(winner.utf8)) as? [[String: Any]])?.first?[
                "revision"]
                as? String)
        #expect(try run(["save", id, "--from", file, "--base", current]).status == 0)
        #expect(try run(["show", id]).status == 0)
    }

    @Test("The store defaults to $SURVEY_STORE, else ./Surveys")
    func storeDefault() throws {
        let directory = try CommandRunner.temporaryDirectory()
        #expect(try CommandRunner.run(["init"], in: directory).status == 0)
        #expect(
            FileManager.default.fileExists(
                atPath: directory.appendingPathComponent("Surveys/Store.plist").path))
        let other = directory.appendingPathComponent("elsewhere").path
        #expect(
            try CommandRunner.run(["init"], in: directory, environment: ["SURVEY_STORE": other]).status == 0)
        #expect(FileManager.default.fileExists(atPath: other + "/Store.plist"))
        // An empty variable counts as unset, as `${SURVEY_STORE:-./Surveys}` reads it: the
        // store in ./Surveys, not a failure about a store at "".
        let empty = try CommandRunner.run(
            ["list", "--json"], in: directory, environment: ["SURVEY_STORE": ""])
        #expect(empty.status == 0, "\(empty.stderr)")
        #expect(empty.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]")
    }

    @Test(
        "$SURVEY_STORE whose bytes are not UTF-8 is refused with exit 64 naming it, as such an argument is (it was read with U+FFFD: no store there, exit 66)"
    )
    func storeVariableNotUTF8() throws {
        let directory = try CommandRunner.temporaryDirectory()
        let shell = URL(fileURLWithPath: "/bin/sh")
        // A name that is not UTF-8 is removed by its bytes.
        defer { _ = try? CommandRunner.run(["-c", #"rm -rf "$0""#, directory.path], executable: shell) }
        let made = directory.appendingPathComponent("made").path
        #expect(try CommandRunner.run(["init", "--store", made]).status == 0)
        // The store moved to a name in Latin-1 ("st\xFF"), which the variable names.
        let moved = try CommandRunner.run(
            ["-c", #"cd "$0" && mv made "$(printf 'st\377')""#, directory.path], executable: shell)
        #expect(moved.status == 0, "\(moved.stderr)")
        let script = #"cd "$0" && SURVEY_STORE="$(printf 'st\377')" exec "$@""#
        for arguments in [["list"], ["list", "--json"], ["watch", "--json"]] {
            let result = try CommandRunner.run(
                ["-c", script, directory.path, CommandRunner.binary.path] + arguments, executable: shell,
                timeLimit: 30)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(
                result.stderr.contains("error: SURVEY_STORE (st\u{FFFD} as read) is not UTF-8 text"),
                "\(arguments): \(result.stderr)")
            if arguments.contains("--json") {
                let error =
                    (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])?[
                        "error"] as? [String: Any]
                #expect(
                    error?["code"] as? String == "usage" && error?["exit"] as? Int == 64, "\(result.stdout)")
            }
        }
        // With --store the variable names nothing and is not read.
        #expect(try CommandRunner.run(["init", "--store", made]).status == 0)
        let given = try CommandRunner.run(
            ["-c", script, directory.path, CommandRunner.binary.path, "list", "--store", made],
            executable: shell)
        #expect(given.status == 0, "\(given.stderr)")
    }

    @Test("Two real processes saving from the same base at once: two heads, the newest wins, nothing lost")
    func concurrentSaves() throws {
        let store = try Store()
        let (id, base) = try store.makeDocument()
        let a = try store.write(Self.edited(rating: 9), "a.json")
        let b = try store.write(Self.edited(rating: 3, name: "Grace"), "b.json")
        let processes = try [a, b].map { file -> (Process, Pipe) in
            let process = Process()
            process.executableURL = CommandRunner.binary
            process.arguments = ["save", id, "--from", file, "--base", base, "--store", store.path, "--json"]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            return (process, pipe)
        }
        var saved: [String] = []
        for (process, pipe) in processes {
            let output = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
            saved.append(
                (try JSONSerialization.jsonObject(with: output) as! [String: Any])["revision"] as! String)
        }
        let versions = try store.versions(id)
        #expect(versions.count == 3)
        #expect(Set(versions.map { $0["revision"] as! String }) == Set(saved + [base]))
        let heads = versions.filter { ["current", "conflict"].contains($0["state"] as! String) }
        #expect(heads.count == 2)
        let current = heads.first { $0["state"] as? String == "current" }!
        let conflict = heads.first { $0["state"] as? String == "conflict" }!
        let newer =
            (current["modified"] as! String, current["revision"] as! String) > (
                conflict["modified"] as! String, conflict["revision"] as! String
            )
        #expect(newer, "the winner is the newest head")
        let conflicts = try store.json(["conflicts"]) as! [[String: Any]]
        #expect(
            conflicts.count == 1
                && (conflicts[0]["conflicts"] as? [String]) == [conflict["revision"] as! String])
        // --if-current refuses now that the base is not the only head.
        let refused = try store.run(["save", id, "--from", a, "--base", base, "--if-current"])
        #expect(refused.status == 75)
    }

    @Test(
        "Resolve leaves one head; prune then removes the losers' content and keeps their ids; in conflict it keeps heads and merge base"
    )
    func resolveAndPrune() throws {
        let store = try Store()
        let (id, base) = try store.makeDocument()
        #expect(
            try store.run([
                "save", id, "--from", store.write(Self.edited(rating: 9), "a.json"), "--base", base,
            ]).status == 0)
        #expect(
            try store.run([
                "save", id, "--from", store.write(Self.edited(rating: 2), "b.json"), "--base", base,
            ]).status == 0)
        let inConflict = try store.run(["prune", id])
        #expect(inConflict.status == 0, "\(inConflict.stderr)")
        #expect(
            try store.versions(id).allSatisfy { $0["pruned"] as? Bool == false },
            "the base is the heads' merge base")

        let resolved = try store.json(["resolve", id, "--keep", base]) as! [String: Any]
        let versions = try store.versions(id)
        let current = versions.filter { $0["state"] as? String == "current" }
        #expect(current.count == 1 && current[0]["revision"] as? String == resolved["revision"] as? String)
        #expect((current[0]["parents"] as? [String])?.count == 2)
        let kept = try store.json(["show", id]) as! [String: Any]
        #expect(
            ((kept["items"] as! [[String: Any]])[2]["answer"] as? Double) == 8,
            "--keep took the base's content")

        let pruned = try store.json(["prune", id]) as! [String: Any]
        #expect(((pruned["documents"] as! [[String: Any]])[0]["pruned"] as! [String]).count == 3)
        let after = try store.versions(id)
        #expect(after.count == 4, "ids and parents stay")
        #expect(after.filter { $0["pruned"] as? Bool == true }.count == 3)
        // Pruned content cannot be shown: it is not there (exit 66, as a deleted document's).
        let shown = try store.run(["show", id, "--revision", base])
        #expect(shown.status == 66 && shown.stderr.contains("has been pruned"), "\(shown.stderr)")
        #expect(try store.run(["verify"]).status == 0)
    }

    @Test("verify finds a flipped byte, a missing file and a stray temporary package")
    func verifyFindsDamage() throws {
        let store = try Store()
        let (id, revision) = try store.makeDocument()
        #expect(try store.run(["verify"]).status == 0)
        let package = "\(store.path)/Documents/\(id)/\(revision).survey"

        var content = try Data(contentsOf: URL(fileURLWithPath: package + "/Survey.plist"))
        content[content.count / 2] ^= 0x01
        try content.write(to: URL(fileURLWithPath: package + "/Survey.plist"))
        let flipped = try store.run(["verify"])
        #expect(flipped.status != 0)
        #expect(flipped.stderr.contains("Survey.plist: the content does not match"))

        try FileManager.default.removeItem(atPath: package + "/DocumentMetadata.plist")
        let missing = try store.run(["verify", "--json"])
        #expect(missing.status != 0)
        #expect(missing.stdout.contains("DocumentMetadata.plist"))

        let fresh = try Store()
        _ = try fresh.makeDocument()
        try FileManager.default.createDirectory(
            atPath: fresh.path + "/Local.nosync/tmp/999-stray.tmp", withIntermediateDirectories: true)
        let stray = try fresh.run(["verify"])
        #expect(stray.status != 0)
        #expect(stray.stderr.contains("999-stray.tmp"))
        // Reading the store leaves it as it is; the next command that writes removes the leftover.
        #expect(try fresh.run(["list"]).status == 0)
        #expect(try fresh.run(["verify"]).status != 0)
        #expect(try fresh.run(["init"]).status == 0)
        #expect(try fresh.run(["verify"]).status == 0)
    }

    @Test("Exit codes: 66 for a missing store or document, 65 for an invalid survey naming the item")
    func exitCodes() throws {
        let store = try Store()
        #expect(try store.run(["list"]).status == 66)
        let (id, _) = try store.makeDocument()
        #expect(try store.run(["show", "ffffffff"]).status == 66)
        let bad = try store.write(
            #"{"title": "T", "items": [{"title": "Pick", "kind": "binary", "options": ["a", "b", "c"]}]}"#,
            "bad.json")
        let refused = try store.run(["save", id, "--from", bad])
        #expect(refused.status == 65)
        #expect(refused.stderr.contains("item 1 (\"Pick\")"))
        let outOfRange = try store.run(["edit", id, "--answer", "3=11"])
        #expect(outOfRange.status == 65)
        #expect(outOfRange.stderr.contains("item 3 (\"Rate us\")"))
    }

    @Test(
        "edit reads a slider's answer written in decimal, and refuses hexadecimal, nan and inf as no number")
    func decimalAnswers() throws {
        let store = try Store()
        let (id, _) = try store.makeDocument()
        for (text, expected) in [
            ("7", 7.0), ("+5", 5), ("-0", 0), ("8.0", 8), (".0", 0), ("3.", 3), ("4e0", 4), ("1E+1", 10),
            (" 6 ", 6),
        ] {
            let edited = try store.run(["edit", id, "--answer", "3=\(text)"])
            #expect(edited.status == 0, "\(text): \(edited.stderr)")
            let items = (try store.json(["show", id]) as! [String: Any])["items"] as! [[String: Any]]
            #expect(items[2]["answer"] as? Double == expected, "\(text)")
        }
        let before = try store.versions(id).count
        for text in [
            "0x10", "0x1p3", "nan", "-inf", "infinity", "5e", "e5", ".", "+", "1_0", "٣", "5,0",
        ] {
            let refused = try store.run(["edit", id, "--answer", "3=\(text)"])
            #expect(refused.status == 65, "\(text): \(refused.stderr)")
            #expect(
                refused.stderr.contains("item 3 (\"Rate us\"): expected a decimal number"),
                "\(text): \(refused.stderr)")
        }
        #expect(try store.versions(id).count == before)
    }

    @Test(
        "delete --base of a superseded revision: again writes nothing while that deletion is current; opening the deletion says it has no content, not that the document is deleted"
    )
    func deletionOfAnOlderRevision() throws {
        let store = try Store()
        let (id, first) = try store.makeDocument()
        let edit = try store.json(["edit", id, "--title", "Edited"]) as! [String: Any]
        let deletion = try store.json(["delete", id, "--base", first]) as! [String: Any]
        #expect(deletion["changed"] as? Bool == true && deletion["deleted"] as? Bool == false)
        let count = try store.versions(id).count
        for _ in 1...2 {
            let again = try store.json(["delete", id, "--base", first]) as! [String: Any]
            #expect(again["changed"] as? Bool == false && again["deleted"] as? Bool == false, "\(again)")
            #expect(again["revision"] as? String == deletion["revision"] as? String)
            let said = try store.run(["delete", id, "--base", first]).stderr
            #expect(said.contains("is deleted already, by revision \(deletion["revision"]!)"), "\(said)")
            #expect(said.contains("is not deleted: revision \(edit["revision"]!)"), "\(said)")
        }
        #expect(try store.versions(id).count == count)
        let revision = deletion["revision"] as! String
        for command in [["show", id, "--revision", revision], ["export", id, "--revision", revision]] {
            let opened = try store.run(command)
            #expect(opened.status == 66, "\(command): \(opened.stderr)")
            #expect(
                opened.stderr.contains("revision \(revision) records a deletion: it has no content"),
                "\(opened.stderr)")
            #expect(!opened.stderr.contains("was deleted at"), "\(opened.stderr)")
        }
        // The raced deletion stays a head without winning: a save that must find its base
        // current goes ahead (it was refused for good), and one on a stale base does not.
        let content = try store.write(#"{"title": "Current", "items": []}"#, "current.json")
        let current = try store.run(["save", id, "--from", content, "--if-current"])
        #expect(current.status == 0, "\(current.stderr)")
        let stale = try store.run([
            "save", id, "--from", content, "--base", edit["revision"] as! String, "--if-current",
        ])
        #expect(stale.status == 75, "\(stale.stderr)")
        // Once the document is deleted, the same deletion says when and how to restore it.
        let last = try store.json(["delete", id]) as! [String: Any]
        let deleted = try store.run(["show", id, "--revision", revision])
        #expect(deleted.status == 66 && deleted.stderr.contains("was deleted at"), "\(deleted.stderr)")
        #expect(deleted.stderr.contains("(revision \(last["revision"]!))"), "\(deleted.stderr)")
    }

    @Test(
        "resolve --keep of a deletion on a deleted document writes nothing (it wrote one more deletion each time); keeping an earlier revision restores it"
    )
    func keepDeletionOfDeletedDocument() throws {
        let store = try Store()
        let (id, first) = try store.makeDocument()
        let deletion = try store.json(["delete", id]) as! [String: Any]
        let revision = deletion["revision"] as! String
        let count = try store.versions(id).count
        for _ in 1...2 {
            let kept = try store.json(["resolve", id, "--keep", revision]) as! [String: Any]
            #expect(kept["resolved"] as? Bool == false, "\(kept)")
            #expect(try store.versions(id).count == count)
        }
        let shown = try store.run(["show", id])
        #expect(shown.status == 66 && shown.stderr.contains("(revision \(revision))"), "\(shown.stderr)")
        let restored = try store.json(["resolve", id, "--keep", first]) as! [String: Any]
        #expect(restored["resolved"] as? Bool == true, "\(restored)")
        #expect(try store.run(["show", id]).status == 0)
    }

    @Test(
        "resolve of a deleted document says it is deleted and how resolve --keep restores it (it said only 'not in conflict'); --json says \"deleted\""
    )
    func resolveDeletedDocumentSaysSo() throws {
        let store = try Store()
        let (id, _) = try store.makeDocument()
        let edit = try store.json(["edit", id, "--title", "Edited"]) as! [String: Any]
        let deletion = try store.json(["delete", id]) as! [String: Any]
        let revision = deletion["revision"] as! String
        let before = HostileStoreTests.fingerprint(store.path)
        for resolution in [["--keep", revision], ["--accept"], ["--merge"], ["--merge", "--dry-run"]] {
            let said = try store.run(["resolve", id] + resolution)
            #expect(said.status == 0 && said.stdout.isEmpty, "\(resolution): \(said.stderr)")
            #expect(
                said.stderr.contains("\(id) is deleted (revision \(revision)), not in conflict"),
                "\(resolution): \(said.stderr)")
            // The newest revision with content, the one it was deleted from, is named.
            #expect(
                said.stderr.contains(
                    "`survey resolve --store \(store.path) \(id) --keep REV` restores it from an earlier revision (the newest: \(edit["revision"]!))"
                ), "\(resolution): \(said.stderr)")
            #expect(
                said.stderr.contains("keeping a deletion restores nothing") == (resolution[0] == "--keep"),
                "\(resolution): \(said.stderr)")
            let json = try store.json(["resolve", id] + resolution) as! [String: Any]
            #expect(
                json["resolved"] as? Bool == false && json["deleted"] as? Bool == true
                    && json["revision"] as? String == revision, "\(resolution): \(json)")
        }
        #expect(HostileStoreTests.fingerprint(store.path) == before, "nothing was written")
        // The command it names restores the document.
        let restored =
            try store.json(["resolve", id, "--keep", edit["revision"] as! String]) as! [String: Any]
        #expect(restored["resolved"] as? Bool == true && restored["deleted"] as? Bool == false, "\(restored)")
        #expect((try store.json(["show", id]) as? [String: Any])?["title"] as? String == "Edited")
        // Once every earlier revision is pruned, only new content restores it.
        _ = try store.json(["delete", id])
        #expect(try store.run(["prune"]).status == 0)
        let pruned = try store.run(["resolve", id, "--accept"])
        #expect(
            pruned.stderr.contains(
                "the content of every earlier revision is pruned: `survey resolve --store \(store.path) \(id) --from FILE` restores it"
            ),
            "\(pruned.stderr)")
    }

    @Test(
        "Deleting a document in conflict: the restore hint names the winner it was deleted from (it named the parent with the smallest id)"
    )
    func restoreHintNamesTheWinner() throws {
        let store = try Store()
        let (id, first) = try store.makeDocument()
        // Heads saved from one base until the winner (the newest) is not the one whose id
        // sorts first among them, as a deletion's parents are sorted.
        var heads: [String] = []
        repeat {
            let file = try store.write(Self.edited(rating: 5, name: "Head \(heads.count)"), "head.json")
            let saved = try store.json(["save", id, "--from", file, "--base", first]) as! [String: Any]
            heads.append(saved["revision"] as! String)
        } while heads.count < 2 || heads.last == heads.min()
        let winner = heads.last!
        #expect(try store.versions(id).first?["revision"] as? String == winner)
        #expect(try store.run(["delete", id]).status == 0)
        let shown = try store.run(["show", id])
        #expect(shown.status == 66, "\(shown.stderr)")
        #expect(
            shown.stderr.contains("`survey resolve --store \(store.path) \(id) --keep \(winner)`"),
            "\(shown.stderr)")
        let said = try store.run(["resolve", id, "--accept"])
        #expect(said.stderr.contains("(the newest: \(winner))"), "\(said.stderr)")
    }

    @Test(
        "delete --base of one head of a document in conflict names every head still current and does not offer --base of the winner, which left the other head current"
    )
    func deleteBaseInConflict() throws {
        let store = try Store()
        let (id, first) = try store.makeDocument()
        var heads: [String] = []
        for rating in [3, 4, 5] {
            let file = try store.write(Self.edited(rating: rating), "head.json")
            let saved = try store.json(["save", id, "--from", file, "--base", first]) as! [String: Any]
            heads.insert(saved["revision"] as! String, at: 0)  // the newest first: the winner
        }
        let deleted = try store.run(["delete", id, "--base", heads[2]])
        #expect(deleted.status == 0, "\(deleted.stderr)")
        #expect(
            deleted.stderr.contains(
                "is not deleted: revisions \(heads[0]), \(heads[1]) are still current (in conflict, the first the winner)"
            ), "\(deleted.stderr)")
        #expect(!deleted.stderr.contains("--base \(heads[0])"), "\(deleted.stderr)")
        // What it says is true: a deletion without --base deletes it.
        let again = try store.json(["delete", id]) as! [String: Any]
        #expect(again["deleted"] as? Bool == true, "\(again)")
    }

    /// A document of `store` in conflict: its first revision, and two heads saved on it
    /// (the winner first).
    static func twoHeads(_ store: Store) throws -> (id: String, first: String, heads: [String]) {
        let (id, first) = try store.makeDocument()
        var heads: [String] = []
        for rating in [3, 4] {
            let file = try store.write(Self.edited(rating: rating), "head.json")
            let saved = try store.json(["save", id, "--from", file, "--base", first]) as! [String: Any]
            heads.insert(saved["revision"] as! String, at: 0)
        }
        return (id, first, heads)
    }

    @Test(
        "conflicts says in a warning why heads cannot be merged, with what mends it: a head's damaged content, which a repair from a replica mends (it said only \"cannot be merged\")"
    )
    func conflictsSaysWhyNotMerged() throws {
        let store = try Store()
        let (id, _, heads) = try Self.twoHeads(store)
        let content = "\(store.path)/Documents/\(id)/\(heads[1]).survey/Survey.plist"
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: content))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("junk".utf8))
        try handle.close()
        let conflicts = try store.run(["conflicts"])
        #expect(conflicts.status == 0 && conflicts.stdout.contains("cannot be merged"), "\(conflicts.stdout)")
        #expect(
            conflicts.stderr.contains("warning: \(id): its heads cannot be merged: ")
                && conflicts.stderr.contains(content)
                && conflicts.stderr.contains("does not match the digest")
                && conflicts.stderr.contains(
                    "`survey verify --store \(store.path) --repair-from OTHER_STORE` repairs it"),
            "\(conflicts.stderr)")
        let json = try store.run(["conflicts", "--json"])
        let rows = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
        #expect(rows?.count == 1 && rows?.first?["contested"] is NSNull, "\(json.stdout)")
        #expect(json.stderr.contains("its heads cannot be merged"), "\(json.stderr)")
        // A prune passes over a document whose winner is damaged, saying which file and why
        // (it said only that its current revision cannot be read).
        let winner = try #require(
            store.versions(id).first { $0["state"] as? String == "current" }?["revision"] as? String)
        let winnerContent = "\(store.path)/Documents/\(id)/\(winner).survey/Survey.plist"
        try Data("damaged".utf8).write(to: URL(fileURLWithPath: winnerContent))
        let prune = try store.run(["prune"])
        #expect(
            prune.stdout.contains("\(id): skipped (its current revision cannot be read: ")
                && prune.stdout.contains(winnerContent), "\(prune.stdout)\(prune.stderr)")
    }

    @Test(
        "resolve --merge --prefer of a revision that is there but no head says it is superseded and names the heads (it said there was no such revision)"
    )
    func preferNonHead() throws {
        let store = try Store()
        let (id, first, heads) = try Self.twoHeads(store)
        let result = try store.run(["resolve", id, "--merge", "--prefer", String(first.prefix(8))])
        #expect(result.status == 66, "\(result.stderr)")
        #expect(
            result.stderr.contains(
                "among the heads (\(first) is superseded, not a head; the heads: \(heads[0]), \(heads[1]))"),
            "\(result.stderr)")
        let unknown = try store.run(["resolve", id, "--merge", "--prefer", "9-0"])
        #expect(
            unknown.status == 66
                && unknown.stderr.contains(
                    "there is no revision 9-0 among the heads (the heads: \(heads[0]), \(heads[1]))"),
            "\(unknown.stderr)")
        // A prefix that names the superseded revision and a package not complete yet is
        // ambiguous, and said to be (it said there was no such revision among the heads).
        let halfCopied = "1-" + String(repeating: "f", count: 64)
        try FileManager.default.createDirectory(
            atPath: "\(store.path)/Documents/\(id)/\(halfCopied).survey", withIntermediateDirectories: false)
        let ambiguous = try store.run(["resolve", id, "--merge", "--prefer", "1-"])
        #expect(
            ambiguous.status == 64 && ambiguous.stderr.contains(first)
                && ambiguous.stderr.contains(halfCopied),
            "\(ambiguous.stderr)")
    }

    @Test(
        "resolve --merge --prefer of a head that records a deletion is refused (exit 66, nothing written), naming the heads that may be preferred (it merged as without --prefer)"
    )
    func preferDeletionHead() throws {
        let store = try Store()
        let (id, first, heads) = try Self.twoHeads(store)
        let deletion = try store.run(["delete", id, "--base", first]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let before = try ImportTests.tree(store.path)
        for command in [["resolve", id, "--merge"], ["resolve", id, "--merge", "--dry-run"]] {
            let result = try store.run(command + ["--prefer", String(deletion.prefix(10))])
            #expect(result.status == 66, "\(command): \(result.stderr)")
            #expect(
                result.stderr.contains(
                    "there is no revision \(deletion.prefix(10)) among the heads that are not deletions (\(deletion) records a deletion, which changes no field; the heads that do not: \(heads[0]), \(heads[1]))"
                ), "\(command): \(result.stderr)")
        }
        #expect(try ImportTests.tree(store.path) == before, "nothing written")
        // A head that is no deletion may be preferred.
        #expect(try store.run(["resolve", id, "--merge", "--prefer", heads[1]]).status == 0)
    }

    @Test(
        "resolve --merge --prefer on a document not in conflict has nothing to resolve (exit 0, nothing written), as --merge alone; it said there was no such head (exit 66)"
    )
    func preferNotInConflict() throws {
        let store = try Store()
        let (id, first) = try store.makeDocument()
        let saved = try store.json(["save", id, "--from", store.write(Self.edited(rating: 3), "e.json")])
        let current = (saved as! [String: Any])["revision"] as! String
        let before = try ImportTests.tree(store.path)
        for prefer in [first, String(first.prefix(8)), current] {
            let result = try store.run(["resolve", id, "--merge", "--prefer", prefer])
            #expect(result.status == 0, "\(prefer): \(result.stderr)")
            #expect(result.stdout.isEmpty, "\(result.stdout)")
            #expect(
                result.stderr == "\(id) is not in conflict; nothing to resolve (it stays at \(current))\n",
                "\(prefer): \(result.stderr)")
            let json = try store.json(["resolve", id, "--merge", "--prefer", prefer]) as! [String: Any]
            #expect(json["resolved"] as? Bool == false && json["revision"] as? String == current, "\(json)")
            let dryRun = try store.run(["resolve", id, "--merge", "--dry-run", "--prefer", prefer])
            #expect(dryRun.status == 0 && dryRun.stderr.contains("nothing to resolve"), "\(dryRun.stderr)")
        }
        #expect(try ImportTests.tree(store.path) == before, "nothing is written")
        // The revision must exist all the same, as with --keep, which says so as --keep
        // does (not "among the heads", since any revision of the document would do).
        let unknown = try store.run(["resolve", id, "--merge", "--prefer", "9-0"])
        #expect(
            unknown.status == 66 && unknown.stderr.contains("there is no revision 9-0")
                && !unknown.stderr.contains("among the heads"),
            "\(unknown.stderr)")
    }

    @Test(
        "A document, revision, item or device name typed with a line feed or a tab is written out in the message, never splitting its line"
    )
    func typedNamesWrittenOut() throws {
        let store = try Store()
        let (id, _) = try store.makeDocument()
        for (arguments, shown) in [
            (["show", "a\nb"], "there is no document a\\u{A}b"),
            (["show", id, "--revision", "x\ny\tz"], "there is no revision x\\u{A}y\\u{9}z"),
            (["edit", id, "--answer", "q\nw=1"], "there is no item 'q\\u{A}w'"),
            (["init", "--device", "ev\til\u{1B}"], "the device name \"ev\\u{9}il\\u{1B}\""),
        ] {
            let result = try store.run(arguments)
            #expect(result.status != 0)
            #expect(result.stderr.contains(shown), "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("\t"), "\(arguments): \(result.stderr)")
            // The message is its first line (a usage error's usage lines follow it).
            #expect(
                result.stderr.split(separator: "\n").first?.contains(shown) == true,
                "\(arguments): \(result.stderr)")
        }
    }

    @Test(
        "A device name refused by init is quoted with its quotes and backslashes escaped (a quote in it seemed to end the name)"
    )
    func refusedDeviceNameQuoted() throws {
        let store = try Store()
        for (name, shown) in [
            ("bad\"name\u{1}", #"the device name "bad\"name\u{1}" cannot be used: "#),
            ("back\\slash\u{1}", #"the device name "back\\slash\u{1}" cannot be used: "#),
            (
                String(repeating: "\"", count: 300),
                "the device name \"" + String(repeating: #"\""#, count: 40)
                    + "…\" cannot be used: it is 300 bytes"
            ),
        ] {
            let result = try store.run(["init", "--device", name])
            #expect(result.status == 64, "\(name): \(result.stderr)")
            #expect(result.stderr.contains(shown), "\(name): \(result.stderr)")
        }
    }

    @Test(
        "verify says a revision's parent whose package is here but unreadable cannot be read, not that it was never copied"
    )
    func parentHereButUnreadable() throws {
        let store = try Store()
        let (id, first) = try store.makeDocument()
        _ = try store.json(["edit", id, "--title", "Second"])
        let content = store.path + "/Documents/" + id + "/" + first + ".survey/Survey.plist"
        try FileManager.default.removeItem(atPath: content)
        try FileManager.default.createSymbolicLink(atPath: content, withDestinationPath: "/dev/null")
        let result = try store.run(["verify", "--json"])
        #expect(result.status == 1, "\(result.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let messages = ((report?["notes"] as? [[String: Any]]) ?? []).compactMap { $0["message"] as? String }
        #expect(
            messages.contains("its parent \(first) cannot be read here (see what is said of its package)"),
            "\(result.stdout)")
        #expect(!messages.contains { $0.contains("is not in this store") }, "\(result.stdout)")
    }

    @Test(
        "conflicts with no document in conflict prints nothing and says so on standard error (it said nothing)"
    )
    func noConflicts() throws {
        let store = try Store()
        _ = try store.makeDocument()
        let result = try store.run(["conflicts"])
        #expect(result.status == 0 && result.stdout.isEmpty, "\(result.stdout)")
        #expect(result.stderr == "no document is in conflict\n", "\(result.stderr)")
        let json = try store.run(["conflicts", "--json"])
        #expect(json.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]" && json.stderr.isEmpty)
    }

    @Test("edit changes an answer by position; saving identical content writes nothing")
    func editAndIdentical() throws {
        let store = try Store()
        let (id, base) = try store.makeDocument()
        let edited = try store.json(["edit", id, "--answer", "3=7", "--answer", "2=Grace"]) as! [String: Any]
        #expect(edited["revision"] as? String != base)
        let shown = try store.json(["show", id]) as! [String: Any]
        let items = shown["items"] as! [[String: Any]]
        #expect(items[2]["answer"] as? Double == 7 && items[1]["answer"] as? String == "Grace")
        let again = try store.json(["edit", id, "--answer", "3=7"]) as! [String: Any]
        #expect(again["revision"] as? String == edited["revision"] as? String)
        #expect(try store.versions(id).count == 2)
    }

    @Test("Nothing under Documents/ is modified after it is created, across a sequence of commands")
    func writeOnce() throws {
        let store = try Store()
        let (id, base) = try store.makeDocument()
        func snapshot() throws -> [String: [String]] {
            var result: [String: [String]] = [:]
            let root = store.path + "/Documents"
            for case let relative as String in FileManager.default.enumerator(atPath: root)! {
                let attributes = try FileManager.default.attributesOfItem(atPath: root + "/" + relative)
                guard attributes[.type] as? FileAttributeType == .typeRegular else { continue }
                result[relative] = [
                    "\(attributes[.systemFileNumber]!)", "\(attributes[.size]!)",
                    "\(attributes[.modificationDate]!)",
                ]
            }
            return result
        }
        var seen = try snapshot()
        let steps: [[String]] = [
            ["edit", id, "--answer", "3=5"],
            ["save", id, "--from", try store.write(Self.edited(rating: 1), "x.json"), "--base", base],
            ["resolve", id, "--accept"],
            ["edit", id, "--title", "Renamed"],
            ["prune", id],
            ["delete", id],
        ]
        for step in steps {
            #expect(try store.run(step).status == 0, "\(step)")
            let now = try snapshot()
            for (path, before) in seen {
                if let after = now[path] {
                    #expect(after == before, "\(path) changed during \(step)")
                } else {
                    #expect(step[0] == "prune", "\(path) disappeared during \(step)")
                }
            }
            seen.merge(now) { old, _ in old }
            seen = seen.filter { now[$0.key] != nil }
        }
        #expect((try store.json(["list"]) as! [[String: Any]])[0]["deleted"] as? Bool == true)
    }
}

extension StoreCommandTests {
    @Test(
        "export --package and import: the same revision, once, on another store; a tampered package becomes a new revision"
    )
    func exportImport() throws {
        let store = try Store()
        let (id, revision) = try store.makeDocument()
        let package = store.directory.appendingPathComponent("exported.survey").path
        #expect(try store.run(["export", id, "--package", package]).status == 0)
        #expect(FileManager.default.fileExists(atPath: package + "/DocumentMetadata.plist"))

        let other = try Store()
        #expect(try other.run(["init"]).status == 0)
        let imported = try other.json(["import", package]) as! [String: Any]
        #expect(imported["id"] as? String == id && imported["revision"] as? String == revision)
        #expect(imported["outcome"] as? String == "added")
        let again = try other.json(["import", package]) as! [String: Any]
        #expect(again["outcome"] as? String == "already present")
        #expect(try other.versions(id).count == 1)
        #expect(try other.run(["verify"]).status == 0)

        // Change the content: the metadata no longer matches, so it is new content.
        let survey = package + "/Survey.plist"
        let text = try String(contentsOfFile: survey, encoding: .utf8).replacingOccurrences(
            of: "Ada", with: "Alan")
        try Data(text.utf8).write(to: URL(fileURLWithPath: survey))
        let changed = try other.run(["import", package, "--json"])
        let outcome = try JSONSerialization.jsonObject(with: Data(changed.stdout.utf8)) as! [String: Any]
        #expect(outcome["outcome"] as? String == "new revision")
        #expect(try other.versions(id).count == 2)
        #expect((try other.json(["list"]) as! [[String: Any]])[0]["conflicts"] as? Int == 1)
        // Edited or damaged, nothing tells: the import says which revision the bytes no
        // longer match, and where to look at what they became.
        let added = try #require(outcome["revision"] as? String)
        #expect(
            changed.stderr.contains(
                "warning: \(package): its content does not match the digest of revision \(revision), which its DocumentMetadata.plist records (edited, or damaged, since it was exported): imported as revision \(added) without parents; see it with `survey show --store \(other.path) \(id) --revision \(added)`"
            ), "\(changed.stderr)")
        #expect(
            !(try other.run(["import", package]).stderr.contains("warning")), "already present: no warning")
    }

    @Test(
        "import of a package whose content was only re-encoded (CRLF, a byte-order mark, UTF-16) keeps its revision, so replicas agree"
    )
    func importReencoded() throws {
        let store = try Store()
        let (id, revision) = try store.makeDocument()
        let original = store.directory.appendingPathComponent("original.survey").path
        #expect(try store.run(["export", id, "--package", original]).status == 0)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: original + "/Survey.plist"))
        let text = try #require(String(data: bytes, encoding: .utf8))
        let utf16 = text.replacingOccurrences(of: "encoding=\"UTF-8\"", with: "encoding=\"UTF-16\"")
        let variants: [(String, Data)] = [
            ("crlf", Data(text.replacingOccurrences(of: "\n", with: "\r\n").utf8)),
            ("bom", Data([0xEF, 0xBB, 0xBF]) + bytes),
            ("utf16", try #require(utf16.data(using: .utf16))),
        ]
        for (name, content) in variants {
            let copy = store.directory.appendingPathComponent("\(name).survey").path
            try FileManager.default.copyItem(atPath: original, toPath: copy)
            try content.write(to: URL(fileURLWithPath: copy + "/Survey.plist"))

            // Into a store without the original: the same revision, with the original bytes.
            let other = try Store()
            #expect(try other.run(["init"]).status == 0)
            let imported = try other.json(["import", copy]) as! [String: Any]
            #expect(imported["outcome"] as? String == "added", "\(name): \(imported)")
            #expect(imported["revision"] as? String == revision, "\(name)")
            let stored = URL(fileURLWithPath: other.path + "/Documents/\(id)/\(revision).survey/Survey.plist")
            #expect(try Data(contentsOf: stored) == bytes, "\(name)")
            #expect(try other.run(["verify"]).status == 0, "\(name)")
            // Into the store that has it: nothing added.
            let again = try store.json(["import", copy]) as! [String: Any]
            #expect(again["outcome"] as? String == "already present", "\(name): \(again)")
            // And a sync of the two stores finds nothing to copy and no conflict.
            let synced = try store.run(["sync", other.path, "--json"])
            #expect(synced.status == 0, "\(name): \(synced.stderr)")
            #expect(try other.versions(id).count == 1, "\(name)")
            #expect(try store.versions(id).count == 1, "\(name)")
        }
    }
}

extension StoreCommandTests {
    @Test("Every command takes --json and prints exactly one JSON document on standard output")
    func everyCommandSpeaksJSON() throws {
        let store = try Store()
        let (id, revision) = try store.makeDocument()
        let file = try store.write(Self.edited(rating: 4), "e.json")
        let package = store.directory.appendingPathComponent("p.survey").path
        let commands: [[String]] = [
            ["init"], ["list"], ["show", id], ["versions", id], ["conflicts"],
            ["edit", id, "--answer", "3=5"], ["save", id, "--from", file, "--base", revision],
            ["resolve", id, "--accept"], ["export", id], ["export", id, "--format", "plist"],
            ["export", id, "--package", package], ["import", package],
            ["prune", "--dry-run"], ["prune"], ["verify"], ["delete", id],
            ["plist", "lint", package + "/Survey.plist"],
            ["plist", "convert", package + "/Survey.plist", "--to", "json"],
            ["new", "--title", "Empty"],
            ["demo", "--store", store.directory.appendingPathComponent("demo").path],
        ]
        for command in commands {
            let isPlist = command.first == "plist" || command.first == "demo"
            let result =
                isPlist
                ? try CommandRunner.run(command + ["--json"])
                : try store.run(command + ["--json"])
            #expect(result.status == 0, "\(command): \(result.stderr)")
            let parsed = try? JSONSerialization.jsonObject(
                with: Data(result.stdout.utf8), options: [.fragmentsAllowed])
            #expect(parsed != nil, "\(command) printed: \(result.stdout.prefix(200))")
        }
    }
}

extension StoreCommandTests {
    @Test(
        "export --package of a deleted document is refused as export is (exit 66, code deleted) and writes nothing (it copied the deletion's package); --revision DELETION copies it, and import takes it"
    )
    func exportPackageOfDeleted() throws {
        let store = try Store()
        let (id, _) = try store.makeDocument()
        let deletion = try store.run(["delete", id]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let plain = try store.run(["export", id])
        let package = store.directory.appendingPathComponent("deleted.survey").path
        let refused = try store.run(["export", id, "--package", package])
        #expect(plain.status == 66 && refused.status == 66, "\(refused.stderr)")
        #expect(refused.stderr == plain.stderr, "\(refused.stderr)")
        #expect(refused.stderr.contains("document \(id) was deleted at"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: package))
        let json = try store.run(["export", id, "--package", package, "--json"])
        let error =
            (try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])?["error"]
            as? [String: Any]
        #expect(
            json.status == 66 && error?["code"] as? String == "deleted" && error?["exit"] as? Int == 66,
            "\(json.stdout)")
        #expect(!FileManager.default.fileExists(atPath: package))

        // The deletion named: its package, metadata alone, which another store imports.
        let named =
            try store.json(["export", id, "--revision", deletion, "--package", package]) as! [String: Any]
        #expect(named["revision"] as? String == deletion)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: package) == ["DocumentMetadata.plist"])
        let other = try Store()
        #expect(try other.run(["init"]).status == 0)
        let imported = try other.json(["import", package]) as! [String: Any]
        #expect(imported["revision"] as? String == deletion && imported["outcome"] as? String == "added")
    }
}
