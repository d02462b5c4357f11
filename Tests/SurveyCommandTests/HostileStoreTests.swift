import Foundation
import TestSupport
import Testing

/// Every command over every case of the hostile-store corpus (`Scripts/hostile-store.py`):
/// links into a canary folder at every level, FIFOs and sockets, extreme numbers, cycles,
/// forged ids, stray and garbage tombstones, foreign packages, case variants, files where
/// folders belong and back, damaged and newer `Store.plist`.
@Suite("Hostile store contents", .serialized)
struct HostileStoreTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent()
    static let documentedExits: Set<Int32> = [0, 1, 64, 65, 66, 75]

    struct Case: Decodable {
        var name: String
        var store: String
        var canary: String
        var junk: [String]
        var victims: [String]
        var refuse: Bool
        var note: Bool
        /// Several cases at once (`--combine`): no junk is listed.
        var combined: Bool
        /// For a combined case: the replica it is synced with, a copy of the base store
        /// holding cases of its own.
        var peer: Peer?

        struct Peer: Decodable {
            var name: String
            var store: String
            var canary: String
            var victims: [String]
        }
    }

    /// Every file, folder and link under `path`, with its kind, mode and bytes (or target).
    static func fingerprint(_ path: String) -> [String: String] {
        var result: [String: String] = [:]
        let manager = FileManager.default
        guard let enumerator = manager.enumerator(atPath: path) else { return result }
        while let relative = enumerator.nextObject() as? String {
            let full = path + "/" + relative
            let attributes = (try? manager.attributesOfItem(atPath: full)) ?? [:]
            let type = attributes[.type] as? FileAttributeType
            var description = "\(type?.rawValue ?? "?") \(attributes[.posixPermissions] ?? "")"
            if type == .typeSymbolicLink {
                description += " -> " + ((try? manager.destinationOfSymbolicLink(atPath: full)) ?? "?")
            } else if type == .typeRegular {
                description +=
                    " " + String(describing: manager.contents(atPath: full)?.hashValue ?? 0)
                    + " \(manager.contents(atPath: full)?.count ?? -1)"
            }
            result[relative] = description
        }
        return result
    }

    /// The base store: A with a pruned first revision, a superseded second and a head; B and C.
    static func makeBase(in directory: URL) throws -> (store: String, heads: [String: String]) {
        let store = directory.appendingPathComponent("base").path
        func run(_ arguments: [String]) throws -> String {
            let result = try CommandRunner.run(arguments + ["--store", store])
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        _ = try run(["init", "--device", "base"])
        var ids: [String: String] = [:]
        for title in ["A", "B", "C"] {
            let file = directory.appendingPathComponent("\(title).json")
            try Data(StoreCommandTests.sample.replacingOccurrences(of: "Visitor feedback", with: title).utf8)
                .write(to: file)
            ids[title] = try run(["new", "--from", file.path])
        }
        _ = try run(["edit", ids["A"]!, "--answer", "3=5"])
        _ = try run(["edit", ids["A"]!, "--answer", "3=6"])
        _ = try run(["prune", ids["A"]!, "--keep-history", "1"])
        var heads: [String: String] = [:]
        for (title, id) in ids {
            let list = try run(["show", id, "--json"])
            let object = try JSONSerialization.jsonObject(with: Data(list.utf8)) as! [String: Any]
            heads[title] = "\(id)/\(object["revision"] as! String)"
        }
        return (store, heads)
    }

    /// A base store, the canary, and what every case's commands need beside them.
    struct Harness {
        let directory: URL
        let base: String
        let heads: [String: String]
        let headContents: [String: Data]
        let ids: [String: String]
        let canaryTemplate: String
        let other: String
        let importable: String
        let sample: String
        let python: String
        let strace: String
        let timeout: String

        init(python: String, strace: String, timeout: String) throws {
            (self.python, self.strace, self.timeout) = (python, strace, timeout)
            directory = try CommandRunner.temporaryDirectory()
            (base, heads) = try HostileStoreTests.makeBase(in: directory)
            headContents = try heads.mapValues { [base] in
                try Data(contentsOf: URL(fileURLWithPath: "\(base)/Documents/\($0).survey/Survey.plist"))
            }
            ids = heads.mapValues { String($0.prefix { $0 != "/" }) }
            canaryTemplate = directory.appendingPathComponent("canary").path
            try FileManager.default.createDirectory(
                atPath: canaryTemplate + "/folder/sub", withIntermediateDirectories: true)
            try Data("keep me".utf8).write(to: URL(fileURLWithPath: canaryTemplate + "/folder/file"))
            try Data("keep me too".utf8).write(to: URL(fileURLWithPath: canaryTemplate + "/folder/sub/file"))
            other = directory.appendingPathComponent("other").path
            #expect(try CommandRunner.run(["init", "--store", other]).status == 0)
            importable = directory.appendingPathComponent("import.survey").path
            #expect(
                try CommandRunner.run(["export", ids["B"]!, "--package", importable, "--store", base]).status
                    == 0
            )
            sample = directory.appendingPathComponent("A.json").path
        }

        /// The harness, or `nil` when python3, strace or timeout is missing (outside CI
        /// the test is skipped; in CI `requireTool` fails it).
        static func make() throws -> Harness? {
            guard let python = CommandRunner.requireTool("python3"),
                let strace = CommandRunner.requireTool("strace"),
                let timeout = CommandRunner.requireTool("timeout")
            else { return nil }
            return try Harness(python: python, strace: strace, timeout: timeout)
        }

        /// The cases `Scripts/hostile-store.py` builds, with `arguments` after its own.
        func cases(_ arguments: [String] = []) throws -> [Case] {
            let out = directory.appendingPathComponent("cases").path
            let built = try CommandRunner.run(
                [
                    HostileStoreTests.repository.appendingPathComponent("Scripts/hostile-store.py").path,
                    base,
                    canaryTemplate, out,
                ] + arguments,
                executable: URL(fileURLWithPath: python))
            try #require(built.status == 0, "the corpus script failed: \(built.stderr)")
            return try JSONDecoder().decode([Case].self, from: Data(built.stdout.utf8))
        }

        /// Runs `verify` and then every command over the case's store, each under strace;
        /// returns the number of command runs.
        func exercise(_ hostile: Case, context: String = "") throws -> Int {
            let name = context + hostile.name + (hostile.peer.map { ", synced with " + $0.name } ?? "")
            let before = HostileStoreTests.fingerprint(hostile.canary)
            let peerBefore = hostile.peer.map { HostileStoreTests.fingerprint($0.canary) }
            // Every canary commands must leave alone: the case's, and its peer's.
            let canaries = [hostile.canary] + (hostile.peer.map { [$0.canary] } ?? [])
            // The folder the script made for the case (its name, or combined-N) is unique.
            let folder = URL(fileURLWithPath: hostile.store).deletingLastPathComponent().lastPathComponent
            let outside = directory.appendingPathComponent("outside-\(folder)").path
            try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
            // The replica synced with: a clean store, or the combined case's peer.
            let replica = hostile.peer?.store ?? outside + "/other"
            if hostile.peer == nil { try FileManager.default.copyItem(atPath: other, toPath: replica) }

            // verify first, on the store as the case left it: it names every piece of junk.
            let verify = try CommandRunner.run(["verify", "--json", "--store", hostile.store])
            #expect(
                HostileStoreTests.documentedExits.contains(verify.status),
                "\(name): verify exited \(verify.status)")
            for junk in hostile.junk {
                #expect(
                    (verify.stdout + verify.stderr).contains(junk),
                    "\(name): verify does not name \(junk): \(verify.stdout)\(verify.stderr)")
            }
            if !hostile.junk.isEmpty && !hostile.refuse && !hostile.note {
                #expect(verify.status != 0, "\(name): verify calls the store clean")
            }
            if hostile.note && !hostile.combined {
                // What the case left is harmless: named in notes, and the store clean.
                #expect(verify.status == 0, "\(name): verify finds problems: \(verify.stdout)")
            }

            // A watch on the store as the case left it reads it, watches its folders and
            // ends with success on SIGINT, never adding a watch outside the store.
            let watchLog = outside + "/watch-trace"
            let watch = try CommandRunner.run(
                ["watch", "--json", "--store", hostile.store],
                prefix: [timeout, "--preserve-status", "-s", "INT", "-k", "5", "1.5"] + traced(watchLog))
            let watching = "\(name): survey watch"
            #expect(watch.status != 137, "\(watching) did not end on SIGINT: \(watch.stderr)")
            #expect(
                HostileStoreTests.documentedExits.contains(watch.status),
                "\(watching) exited \(watch.status): \(watch.stderr)")
            expectInside(trace: watchLog, canary: hostile.canary, what: watching)

            // First everything that leaves the heads heads (reads, sync, prune, import,
            // new); then what supersedes them (save, resolve, migrate, delete).
            let commands: [[String]] = [
                ["list"], ["list", "--json"], ["conflicts", "--json"], ["show", ids["A"]!],
                ["show", ids["C"]!, "--json"],
                ["versions", ids["A"]!, "--json"], ["export", ids["A"]!, "-o", outside + "/export.json"],
                ["export", ids["C"]!, "--package", outside + "/exported.survey"], ["verify"],
                ["check", hostile.store],
                ["sync", replica], ["prune"], ["import", importable], ["new", "--title", "New"],
                ["save", ids["A"]!, "--from", sample], ["resolve", ids["A"]!, "--accept"], ["migrate"],
                ["delete", ids["B"]!],
            ]
            var runs = 0
            var saved = false
            for command in commands {
                if command[0] == "save" {
                    checkHeads(in: hostile.store, victims: hostile.victims, name: name)
                }
                let log = outside + "/trace"
                // `check` takes its paths as arguments and no --store (with one, it only
                // printed a usage error).
                let arguments = command[0] == "check" ? command : command + ["--store", hostile.store]
                let result = try CommandRunner.run(
                    arguments, prefix: [timeout, "-k", "5", "60"] + traced(log))
                runs += 1
                if command[0] == "save" { saved = result.status == 0 }
                let what = "\(name): survey \(command.joined(separator: " "))"
                #expect(result.status != 124 && result.status != 137, "\(what) hung: \(result.stderr)")
                #expect(result.status != 64, "\(what) was refused as a usage error: \(result.stderr)")
                #expect(
                    HostileStoreTests.documentedExits.contains(result.status),
                    "\(what) exited \(result.status): \(result.stderr)")
                for canary in canaries { expectInside(trace: log, canary: canary, what: what) }
                if command[0] == "sync", let peer = hostile.peer {
                    // What the sync wrote into the peer keeps the peer's heads too.
                    checkHeads(
                        in: peer.store, victims: peer.victims + hostile.victims, name: name + " (the peer)")
                }
            }
            #expect(
                HostileStoreTests.fingerprint(hostile.canary) == before, "\(name): the canary folder changed")
            if let peer = hostile.peer {
                #expect(
                    HostileStoreTests.fingerprint(peer.canary) == peerBefore,
                    "\(name): the peer's canary folder changed")
            }
            // A new head of A reads whole after everything. (Where cases are combined, one
            // can keep every write out, another leave A a damaged winner: then once save
            // wrote a new head.)
            if !hostile.refuse && !hostile.victims.contains(String(heads["A"]!.split(separator: "/")[1]))
                && (!hostile.combined || saved)
            {
                let show = try CommandRunner.run(["show", ids["A"]!, "--store", hostile.store])
                #expect(show.status == 0, "\(name): A cannot be shown at the end: \(show.stderr)")
            }
            return runs
        }

        /// strace, following children and naming descriptors' paths, writing to `log` the
        /// calls that open, create, remove, rename or link a path or add an inotify watch.
        func traced(_ log: String) -> [String] {
            [
                strace, "-f", "-y", "-qq", "-s", "512", "-o", log, "-e",
                "trace=open,openat,openat2,creat,unlink,unlinkat,rename,renameat,renameat2,mkdir,mkdirat,link,linkat,symlink,symlinkat,truncate,rmdir,inotify_add_watch",
            ]
        }

        /// No call in the trace at `log` names the canary folder; removes the trace.
        func expectInside(trace log: String, canary: String, what: String) {
            let trace = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            let touching = trace.split(separator: "\n").filter { $0.contains(canary) }
            #expect(touching.isEmpty, "\(what) reached outside the store: \(touching.prefix(3))")
            try? FileManager.default.removeItem(atPath: log)
        }

        /// Until something supersedes them, every head of the base store but `victims`
        /// keeps its content in `store`.
        func checkHeads(in store: String, victims: [String], name: String) {
            for (title, head) in heads {
                let revision = String(head.split(separator: "/")[1])
                if victims.contains(revision) { continue }
                let path = "\(store)/Documents/\(head).survey/Survey.plist"
                #expect(
                    FileManager.default.contents(atPath: path) == headContents[title],
                    "\(name): the content of \(title)'s head \(revision) was lost")
            }
        }
    }

    @Test(
        "Every command over every hostile store: a documented exit, no signal, no hang, nothing outside touched, no head lost, verify names the junk",
        CommandRunner.needs("python3", "strace", "timeout"))
    func everyCommandOverEveryCase() throws {
        guard let harness = try Harness.make() else { return }
        defer { try? FileManager.default.removeItem(at: harness.directory) }
        let cases = try harness.cases()
        #expect(cases.count >= 40)
        var runs = 0
        for hostile in cases { runs += try harness.exercise(hostile) }
        print("hostile stores: \(cases.count) cases, \(runs) command runs")
    }

    @Test(
        "Every hostile case arriving in a watched store: the watch prints only JSON events, ends on SIGTERM with success, and reaches nothing outside",
        CommandRunner.needs("python3", "strace", "timeout", "bash"))
    func everyCaseArrivingUnderWatch() throws {
        guard let bash = CommandRunner.requireTool("bash"), let harness = try Harness.make() else { return }
        let (python, timeout) = (harness.python, harness.timeout)
        defer { try? FileManager.default.removeItem(at: harness.directory) }
        // The watch runs under strace; the case is applied once it has read the store, and a
        // second later the watch itself (strace's child) is sent SIGTERM, as a user's `kill`
        // sends it: a signal sent to strace is passed on only if strace does not detach
        // first. It then has 5 s to end, or it is killed (137).
        let script = #"""
            set -u
            timeout="$1" store="$2" python="$3" corpus="$4" base="$5" canary="$6" name="$7" out="$8" err="$9"
            shift 9
            "$@" watch --json --store "$store" >"$out" 2>"$err" &
            runner=$!
            for _ in $(seq 250); do grep -q watching "$err" && break; sleep 0.02; done
            "$python" "$corpus" "$base" "$canary" - --apply "$name" "$store" || echo "not applied" >&2
            sleep 1
            watch=$(pgrep -P "$runner" | head -n 1)
            kill -TERM "${watch:-$runner}"
            if ! "$timeout" 5 tail --pid="$runner" -s 0.1 -f /dev/null; then
                kill -KILL "${watch:-$runner}" "$runner" 2>/dev/null
                wait "$runner"
                exit 137
            fi
            wait "$runner"
            """#
        let corpus = HostileStoreTests.repository.appendingPathComponent("Scripts/hostile-store.py").path
        var events = 0
        let cases = try harness.cases()
        for hostile in cases {
            let live = harness.directory.appendingPathComponent("live-\(hostile.name)").path
            try FileManager.default.createDirectory(atPath: live, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: harness.base, toPath: live + "/store")
            try FileManager.default.copyItem(atPath: harness.canaryTemplate, toPath: live + "/canary")
            let (out, err, trace) = (live + "/out", live + "/err", live + "/trace")
            let result = try ChildProcess.run(
                bash,
                [
                    "-c", script, "bash", timeout, live + "/store", python, corpus, harness.base,
                    live + "/canary",
                    hostile.name, out, err,
                ] + harness.traced(trace) + [CommandRunner.binary.path],
                timeLimit: 60)
            let what = "\(hostile.name) arriving under survey watch"
            let stderr = (try? String(contentsOfFile: err, encoding: .utf8)) ?? ""
            #expect(!result.timedOut && result.status != 137, "\(what) did not end: \(stderr)")
            #expect(!result.stderr.contains("not applied"), "\(what): \(result.stderr)")
            #expect(
                HostileStoreTests.documentedExits.contains(result.status),
                "\(what) exited \(result.status): \(stderr)")
            let lines = ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").split(separator: "\n")
            for line in lines {
                let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                #expect(object?["event"] is String, "\(what) printed \(line)")
            }
            events += lines.count
            harness.expectInside(trace: trace, canary: live + "/canary", what: what)
        }
        print("hostile stores under watch: \(cases.count) cases, \(events) events")
    }

    @Test(
        "Every command over stores holding several hostile cases at once (seeded; SURVEYSTORE_SEED replays, SURVEYSTORE_LONG=1 runs 60 stores): a documented exit, no hang, nothing outside touched, no head lost",
        CommandRunner.needs("python3", "strace", "timeout"))
    func everyCommandOverCombinedCases() throws {
        guard let harness = try Harness.make() else { return }
        let seed = SeededRandom.seed(fallback: 5858)
        let count = ProcessInfo.processInfo.environment["SURVEYSTORE_LONG"] == "1" ? 60 : 12
        defer { try? FileManager.default.removeItem(at: harness.directory) }
        let cases = try harness.cases(["--combine", "\(seed)", "\(count)"])
        #expect(cases.count == count && cases.allSatisfy(\.combined))
        var runs = 0
        for hostile in cases { runs += try harness.exercise(hostile, context: "seed \(seed), ") }
        print("hostile stores combined (seed \(seed)): \(cases.count) stores, \(runs) command runs")
    }
}

extension HostileStoreTests {
    @Test(
        "Exports write through devices and links, refuse folders and existing packages, create no parents, replace regular files atomically"
    )
    func exportsNeverReplaceWhatIsNotTheirs() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (base, heads) = try Self.makeBase(in: directory)
        let document = String(heads["B"]!.prefix { $0 != "/" })
        func export(_ arguments: [String]) throws -> CommandRunner.Result {
            try CommandRunner.run(["export", document] + arguments + ["--store", base])
        }
        let manager = FileManager.default

        // A device: written through (and the write's failure reported), never replaced.
        if manager.fileExists(atPath: "/dev/full") {
            let full = try export(["-o", "/dev/full"])
            #expect(
                full.status != 0 && full.stderr.contains("No space left on device"),
                "\(full.status) \(full.stderr)")
            #expect(
                (try manager.attributesOfItem(atPath: "/dev/full")[.type] as? FileAttributeType)
                    == .typeCharacterSpecial)
        }
        // A link: what it points to is written, the link stays a link.
        let target = directory.appendingPathComponent("target.json").path
        try Data("old".utf8).write(to: URL(fileURLWithPath: target))
        let link = directory.appendingPathComponent("link.json").path
        try manager.createSymbolicLink(atPath: link, withDestinationPath: target)
        #expect(try export(["-o", link]).status == 0)
        #expect(try manager.destinationOfSymbolicLink(atPath: link) == target)
        #expect(try String(contentsOfFile: target, encoding: .utf8).contains("\"title\""))
        // A regular file: replaced whole; a folder: refused and left alone.
        #expect(try export(["-o", target]).status == 0)
        let folder = directory.appendingPathComponent("folder").path
        try manager.createDirectory(atPath: folder + "/inside", withIntermediateDirectories: true)
        #expect(try export(["-o", folder]).status != 0)
        #expect(manager.fileExists(atPath: folder + "/inside"))
        // No parent folder is ever created.
        let missing = directory.appendingPathComponent("missing/deeper/x.json").path
        #expect(try export(["-o", missing]).status != 0)
        #expect(!manager.fileExists(atPath: directory.appendingPathComponent("missing").path))
        // A package into an existing folder: refused, the folder unchanged.
        let package = try export(["--package", folder])
        #expect(package.status != 0, "\(package.stderr)")
        #expect(try manager.contentsOfDirectory(atPath: folder) == ["inside"])
        let fresh = directory.appendingPathComponent("fresh.survey").path
        #expect(try export(["--package", fresh]).status == 0)
        #expect(
            Set(try manager.contentsOfDirectory(atPath: fresh)) == ["DocumentMetadata.plist", "Survey.plist"])
    }
}
