import Foundation
import Packages
import Synchronization
import TestSupport
import Testing

/// `survey import` of many packages at once: the same outcomes as one by one, a bad
/// package reported without keeping the others out, and every package absent or
/// complete whenever the command is killed.
@Suite("Importing many revision packages", .serialized)
struct ImportManyTests {
    /// `count` copies of `package`, each naming a new document in its metadata (so that
    /// it no longer verifies and its content becomes a new revision of that document).
    static func copies(of package: String, count: Int, in directory: URL) throws -> [String] {
        let metadata = try String(contentsOfFile: package + "/DocumentMetadata.plist", encoding: .utf8)
        let original = try #require(
            metadata.range(of: "<key>DocumentUUID</key>").flatMap { key in
                metadata[key.upperBound...].range(of: "<string>").flatMap { open in
                    metadata[open.upperBound...].range(of: "</string>").map {
                        String(metadata[open.upperBound..<$0.lowerBound])
                    }
                }
            })
        return try (0..<count).map { index in
            let copy = directory.appendingPathComponent("copy-\(index).survey").path
            try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: false)
            try FileManager.default.copyItem(
                atPath: package + "/Survey.plist", toPath: copy + "/Survey.plist")
            try Data(
                metadata.replacingOccurrences(of: original, with: UUID().uuidString.lowercased()).utf8
            ).write(to: URL(fileURLWithPath: copy + "/DocumentMetadata.plist"))
            return copy
        }
    }

    /// A store with one exported package, and `count` copies of it as new documents.
    static func packages(_ count: Int, in directory: URL) throws -> (original: String, copies: [String]) {
        let a = directory.appendingPathComponent("a").path
        let documents = try ReplicaSafetyTests.makeStore(a, in: directory)
        let package = directory.appendingPathComponent("exported.survey").path
        #expect(
            try CommandRunner.run(["export", documents[0], "--package", package, "--store", a]).status == 0)
        return (package, try copies(of: package, count: count, in: directory))
    }

    static func json(_ text: String) throws -> Any { try JSONSerialization.jsonObject(with: Data(text.utf8)) }

    @Test(
        "Many packages in one command: each outcome in order, a package given twice added once, a bad one in the middle reported with its path and exit code while the others are imported"
    )
    func manyWithOneBad() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (original, copies) = try Self.packages(20, in: directory)
        let bad = directory.appendingPathComponent("bad.survey").path
        try FileManager.default.copyItem(atPath: copies[0], toPath: bad)
        try FileManager.default.removeItem(atPath: bad + "/Survey.plist")
        try Data("not a property list".utf8).write(to: URL(fileURLWithPath: bad + "/Survey.plist"))
        let paths = Array(copies[..<10]) + [bad] + Array(copies[10...]) + [copies[3], original]

        let c = directory.appendingPathComponent("c").path
        #expect(try CommandRunner.run(["init", "--store", c]).status == 0)
        // The exit code of the bad package alone.
        let alone = try CommandRunner.run(["import", bad, "--store", c])
        #expect(alone.status != 0 && alone.stdout.isEmpty)

        let result = try CommandRunner.run(["import"] + paths + ["--json", "--store", c])
        #expect(result.status == alone.status, "the first failure's exit code: \(result.stderr)")
        #expect(result.stderr.contains(bad + ": not imported"), "\(result.stderr)")
        // The failure where it is, as a command given that one package says it, with no
        // `error:` in the middle of the line.
        #expect(
            result.stderr.contains(bad + ": not imported: " + bad + "/Survey.plist:1:1: "), "\(result.stderr)"
        )
        #expect(!result.stderr.contains("not imported: error:"), "\(result.stderr)")
        let entries = try #require(try Self.json(result.stdout) as? [[String: Any]])
        #expect(entries.count == paths.count)
        for (index, (entry, path)) in zip(entries, paths).enumerated() {
            #expect(entry["path"] as? String == path)
            switch index {
            case 10:
                let error = try #require(entry["error"] as? [String: Any], "\(entry)")
                #expect(error["exit"] as? Int == Int(alone.status))
                #expect(entry["revision"] == nil)
            case 21: #expect(entry["outcome"] as? String == "already present", "the same package again")
            case 22: #expect(entry["outcome"] as? String == "added", "a package that verifies keeps its id")
            default: #expect(entry["outcome"] as? String == "new revision", "\(entry)")
            }
        }
        #expect(entries[21]["revision"] as? String == entries[3]["revision"] as? String)
        let list = try #require(
            try Self.json(try CommandRunner.run(["list", "--json", "--store", c]).stdout) as? [Any])
        #expect(list.count == 21, "20 new documents and the original's")
        #expect(try CommandRunner.run(["verify", "--store", c]).status == 0)

        // Again, in text: every package already present, one line each; the bad one on
        // standard error only.
        let again = try CommandRunner.run(["import"] + paths + ["--store", c])
        #expect(again.status == alone.status)
        let lines = again.stdout.split(separator: "\n")
        #expect(lines.count == paths.count - 1)
        #expect(lines.allSatisfy { $0.hasSuffix("(already present)") }, "\(again.stdout)")
        #expect(!again.stdout.contains(bad))
    }

    @Test(
        "Importers running at once, one package each or in a batch, add the same loose content once: one new revision, the others already present"
    )
    func concurrentImporters() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (original, _) = try Self.packages(0, in: directory)
        let c = directory.appendingPathComponent("c").path
        #expect(try CommandRunner.run(["init", "--store", c]).status == 0)
        let rounds = 4, extras = 20
        for round in 0..<rounds {
            let folder = directory.appendingPathComponent("round-\(round)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
            // One loose package everyone imports: one importer alone, three in a batch
            // with packages of their own (which widens the time between deciding and
            // writing, where two importers could both decide to add it).
            let made = try Self.copies(of: original, count: 1 + 3 * extras, in: folder)
            let shared = made[0]
            let commands =
                [[shared]] + (0..<3).map { [shared] + made[(1 + $0 * extras)..<(1 + ($0 + 1) * extras)] }
            let outputs = Locked([String](repeating: "", count: commands.count))
            DispatchQueue.concurrentPerform(iterations: commands.count) { index in
                let result = try? CommandRunner.run(["import"] + commands[index] + ["--json", "--store", c])
                outputs.withLock { $0[index] = result.map { "\($0.status) \($0.stdout)" } ?? "did not run" }
            }
            var added = 0
            for (command, output) in zip(commands, outputs.withLock { $0 }) {
                #expect(output.hasPrefix("0 "), "round \(round): \(output)")
                let json = try Self.json(String(output.dropFirst(2)))
                let entries = command.count == 1 ? [json] : (json as? [Any] ?? [])
                for (path, entry) in zip(command, entries) where path == shared {
                    let outcome = (entry as? [String: Any])?["outcome"] as? String
                    #expect(["new revision", "already present"].contains(outcome), "\(output)")
                    if outcome == "new revision" { added += 1 }
                }
            }
            #expect(added == 1, "round \(round): the shared package added \(added) times")
        }
        let list = try #require(
            try Self.json(try CommandRunner.run(["list", "--json", "--store", c]).stdout) as? [[String: Any]])
        #expect(list.count == rounds * (1 + 3 * extras), "one document per loose package")
        #expect(list.allSatisfy { $0["conflicts"] as? Int == 0 }, "no document in conflict: \(list)")
    }

    @Test(
        "import of many killed at random moments: every package absent or complete, verify clean, the rest imported after"
    )
    func killed() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (_, copies) = try Self.packages(600, in: directory)
        let c = directory.appendingPathComponent("c").path
        #expect(try CommandRunner.run(["init", "--store", c]).status == 0)
        // How long the whole import takes here, on another store: kills land within it.
        let timing = directory.appendingPathComponent("timing").path
        #expect(try CommandRunner.run(["init", "--store", timing]).status == 0)
        let start = ContinuousClock.now
        #expect(try CommandRunner.run(["import"] + copies + ["--store", timing]).status == 0)
        let elapsed = ContinuousClock.now - start
        let window = UInt32(
            elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000)
        let seed = SeededRandom.seed(fallback: 1616)
        let replay = "seed \(seed); replay with SURVEYSTORE_SEED=\(seed)"
        print("random \(replay)")
        var generator = SeededRandom(seed: seed)
        var kills = 0
        for round in 0..<6 {
            if try CommandRunner.runKilled(
                ["import"] + copies + ["--store", c], after: UInt32.random(in: 0...window, using: &generator))
            {
                kills += 1
            }
            // The next command that writes removes the temporaries a kill left.
            #expect(try CommandRunner.run(["init", "--store", c]).status == 0, "round \(round), \(replay)")
            let verify = try CommandRunner.run(["verify", "--store", c])
            #expect(
                verify.status == 0,
                "round \(round), \(replay): every package absent or complete: \(verify.stdout) \(verify.stderr)"
            )
        }
        let finished = try CommandRunner.run(["import"] + copies + ["--json", "--store", c])
        #expect(finished.status == 0, "\(replay): \(finished.stderr)")
        let entries = try #require(try Self.json(finished.stdout) as? [[String: Any]])
        #expect(
            entries.allSatisfy { ["new revision", "already present"].contains($0["outcome"] as? String) })
        let list = try #require(
            try Self.json(try CommandRunner.run(["list", "--json", "--store", c]).stdout) as? [Any])
        #expect(list.count == copies.count, "each package imported once (\(replay))")
        print("import kill test: \(kills) kills in a window of \(window / 1000) ms")
        #expect(kills > 0, "no import was killed before it finished: the test tested nothing")
    }

    @Test(
        "A package whose content breaks a rule, in the current format or found while migrating an older one, is reported located in its Survey.plist, as a malformed one is"
    )
    func brokenRulesLocated() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("store").path
        #expect(try CommandRunner.run(["init", "--store", store]).status == 0)
        let broken = ["binary-three-options", "unknown-type"].map {
            FormatCommandTests.fixtures + "/broken/\($0).survey"
        }
        let messages = [
            #"item 1 ("Choose"): a binary item has exactly 2 options, not 3 [binaryOptions]"#,
            #"item 1 ("Stars"): unknown format-1 type 'Rating' [unknownKind]"#,
        ]
        let text = try CommandRunner.run(["import"] + broken + ["--store", store])
        #expect(text.status == 65, "\(text.stderr)")
        for (path, message) in zip(broken, messages) {
            #expect(
                text.stderr.contains("\(path): not imported: \(path)/Survey.plist: \(message)\n"),
                "\(text.stderr)")
            // One package alone: the same, as every located failure is printed.
            let alone = try CommandRunner.run(["import", path, "--store", store])
            #expect(alone.stderr == "\(path)/Survey.plist: \(message)\n", "\(alone.stderr)")
        }
        #expect(!text.stderr.contains("error:"), "\(text.stderr)")
        let json = try CommandRunner.run(["import"] + broken + ["--json", "--store", store])
        let entries = try #require(try Self.json(json.stdout) as? [[String: Any]])
        #expect(entries.count == 2)
        for (entry, (path, message)) in zip(entries, zip(broken, messages)) {
            let error = entry["error"] as? [String: Any]
            #expect(error?["file"] as? String == path + "/Survey.plist", "\(entry)")
            #expect(error?["message"] as? String == message, "\(entry)")
        }
        #expect(try ImportTests.tree(store).filter { $0.hasPrefix("Documents/") }.isEmpty)
    }

    @Test(
        "A path that is no package, with a line feed in its name, is written out in every message (it split the line) and said once per line (it was said twice)"
    )
    func pathsWrittenOutOnce() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("store").path
        #expect(try CommandRunner.run(["init", "--store", store]).status == 0)
        let file = directory.appendingPathComponent("not\na package").path
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        let missing = directory.appendingPathComponent("no\nsuch").path
        let shownFile = directory.path + "/not\\u{A}a package",
            shownMissing = directory.path + "/no\\u{A}such"
        let why = "it is not a folder; a revision package is a folder holding DocumentMetadata.plist"

        let one = try CommandRunner.run(["import", file, "--store", store])
        #expect(
            one.status == 65 && one.stderr == "error: \(shownFile): cannot be imported: \(why)\n",
            "\(one.stderr)")
        let none = try CommandRunner.run(["import", missing, "--store", store])
        #expect(
            none.status == 66 && none.stderr == "error: there is no revision package at \(shownMissing)\n",
            "\(none.stderr)")
        let many = try CommandRunner.run(["import", file, missing, "--store", store])
        #expect(many.status == 65, "\(many.stderr)")
        #expect(
            many.stderr
                == "\(shownFile): not imported: \(why)\n\(shownMissing): not imported: there is no revision package at \(shownMissing)\n",
            "\(many.stderr)")
    }

    @Test(
        "A package refused in a batch is said not imported once, naming the file of it that is refused (it said 'not imported: cannot be imported: …')"
    )
    func refusedOnceInABatch() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("store").path
        #expect(try CommandRunner.run(["init", "--store", store]).status == 0)
        let empty = directory.appendingPathComponent("empty").path
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: false)
        let linked = directory.appendingPathComponent("linked").path
        try FileManager.default.createDirectory(atPath: linked, withIntermediateDirectories: false)
        let good = FormatCommandTests.fixtures + "/format2/blank-form.survey"
        try FileManager.default.createSymbolicLink(
            atPath: linked + "/DocumentMetadata.plist", withDestinationPath: good + "/DocumentMetadata.plist")
        try FileManager.default.copyItem(atPath: good + "/Survey.plist", toPath: linked + "/Survey.plist")
        let result = try CommandRunner.run(["import", empty, linked, good, "--store", store])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(
            result.stderr
                == "\(empty): not imported: it holds no DocumentMetadata.plist, so it is not a revision package\n"
                + "\(linked): not imported: \(linked)/DocumentMetadata.plist: it is a symbolic link, and a link is never followed\n",
            "\(result.stderr)")
        // The message in --json keeps its own words, as one package alone says it.
        let json = try CommandRunner.run(["import", empty, linked, "--json", "--store", store])
        let entries = try #require(try Self.json(json.stdout) as? [[String: Any]])
        #expect(
            (entries.first?["error"] as? [String: Any])?["message"] as? String
                == "\(empty): cannot be imported: it holds no DocumentMetadata.plist, so it is not a revision package",
            "\(json.stdout)")
    }

    @Test(
        "A package of several refused for a file in it (missing, or a link) names that file once, as the package's own path was given (with a slash at its end too); alone or in --json the message keeps its own words"
    )
    func refusedForAFileInIt() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("store").path
        #expect(try CommandRunner.run(["init", "--store", store]).status == 0)
        let good = FormatCommandTests.fixtures + "/format2/blank-form.survey"
        // Metadata that records content, and no content beside it.
        let noContent = directory.appendingPathComponent("no content").path
        try FileManager.default.createDirectory(atPath: noContent, withIntermediateDirectories: false)
        try FileManager.default.copyItem(
            atPath: good + "/DocumentMetadata.plist", toPath: noContent + "/DocumentMetadata.plist")
        // Content that is a link, in a package named with a slash at its end.
        let linked = directory.appendingPathComponent("linked").path + "/"
        try FileManager.default.createDirectory(atPath: linked, withIntermediateDirectories: false)
        try FileManager.default.copyItem(
            atPath: good + "/DocumentMetadata.plist", toPath: linked + "DocumentMetadata.plist")
        try FileManager.default.createSymbolicLink(
            atPath: linked + "Survey.plist", withDestinationPath: good + "/Survey.plist")
        let missing = "it is missing, and the package's DocumentMetadata.plist records content"
        let link = "it is a symbolic link, and a link is never followed"
        let result = try CommandRunner.run(["import", noContent, linked, "--store", store])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(
            result.stderr
                == "\(noContent): not imported: \(noContent)/Survey.plist: \(missing)\n"
                + "\(linked): not imported: \(linked)/Survey.plist: \(link)\n",
            "\(result.stderr)")
        let alone = try CommandRunner.run(["import", noContent, "--store", store])
        #expect(
            alone.status == 65
                && alone.stderr == "error: \(noContent)/Survey.plist: cannot be imported: \(missing)\n",
            "\(alone.stderr)")
        let json = try CommandRunner.run(["import", noContent, linked, "--json", "--store", store])
        let entries = try #require(try Self.json(json.stdout) as? [[String: Any]])
        #expect(
            entries.map { ($0["error"] as? [String: Any])?["message"] as? String } == [
                "\(noContent)/Survey.plist: cannot be imported: \(missing)",
                "\(linked)/Survey.plist: cannot be imported: \(link)",
            ], "\(json.stdout)")
        #expect(try ImportTests.tree(store).filter { $0.hasPrefix("Documents/") }.isEmpty)
    }
}
