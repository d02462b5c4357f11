import Foundation
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

    @Test(
        "Every command over every hostile store: a documented exit, no signal, no hang, nothing outside touched, no head lost, verify names the junk",
        CommandRunner.needs("python3", "strace", "timeout"))
    func everyCommandOverEveryCase() throws {
        guard let python = CommandRunner.requireTool("python3"),
            let strace = CommandRunner.requireTool("strace"),
            let timeout = CommandRunner.requireTool("timeout")
        else { return }
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (base, heads) = try Self.makeBase(in: directory)
        let headContents = try heads.mapValues {
            try Data(contentsOf: URL(fileURLWithPath: "\(base)/Documents/\($0).survey/Survey.plist"))
        }
        let ids = heads.mapValues { String($0.prefix { $0 != "/" }) }

        let canaryTemplate = directory.appendingPathComponent("canary").path
        try FileManager.default.createDirectory(
            atPath: canaryTemplate + "/folder/sub", withIntermediateDirectories: true)
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: canaryTemplate + "/folder/file"))
        try Data("keep me too".utf8).write(to: URL(fileURLWithPath: canaryTemplate + "/folder/sub/file"))
        let other = directory.appendingPathComponent("other").path
        #expect(try CommandRunner.run(["init", "--store", other]).status == 0)
        let importable = directory.appendingPathComponent("import.survey").path
        #expect(
            try CommandRunner.run(["export", ids["B"]!, "--package", importable, "--store", base]).status == 0
        )
        let sample = directory.appendingPathComponent("A.json").path

        let out = directory.appendingPathComponent("cases").path
        let built = try CommandRunner.run(
            [
                Self.repository.appendingPathComponent("Scripts/hostile-store.py").path, base, canaryTemplate,
                out,
            ],
            executable: URL(fileURLWithPath: python))
        try #require(built.status == 0, "the corpus script failed: \(built.stderr)")
        let cases = try JSONDecoder().decode([Case].self, from: Data(built.stdout.utf8))
        #expect(cases.count >= 40)

        var runs = 0
        for hostile in cases {
            let before = Self.fingerprint(hostile.canary)
            let outside = directory.appendingPathComponent("outside-\(hostile.name)").path
            try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: other, toPath: outside + "/other")

            // verify first, on the store as the case left it: it names every piece of junk.
            let verify = try CommandRunner.run(["verify", "--json", "--store", hostile.store])
            #expect(
                Self.documentedExits.contains(verify.status),
                "\(hostile.name): verify exited \(verify.status)")
            for junk in hostile.junk {
                #expect(
                    (verify.stdout + verify.stderr).contains(junk),
                    "\(hostile.name): verify does not name \(junk): \(verify.stdout)\(verify.stderr)")
            }
            if !hostile.junk.isEmpty && !hostile.refuse && !hostile.note {
                #expect(verify.status != 0, "\(hostile.name): verify calls the store clean")
            }

            // First everything that leaves the heads heads (reads, sync, prune, import,
            // new); then what supersedes them (save, resolve, migrate, delete).
            let commands: [[String]] = [
                ["list"], ["list", "--json"], ["conflicts", "--json"], ["show", ids["A"]!],
                ["show", ids["C"]!, "--json"],
                ["versions", ids["A"]!, "--json"], ["export", ids["A"]!, "-o", outside + "/export.json"],
                ["export", ids["C"]!, "--package", outside + "/exported.survey"], ["verify"],
                ["check", hostile.store],
                ["sync", outside + "/other"], ["prune"], ["import", importable], ["new", "--title", "New"],
                ["save", ids["A"]!, "--from", sample], ["resolve", ids["A"]!, "--accept"], ["migrate"],
                ["delete", ids["B"]!],
            ]
            for command in commands {
                if command[0] == "save" { checkHeads() }
                let log = outside + "/trace"
                let result = try CommandRunner.run(
                    command + ["--store", hostile.store],
                    prefix: [
                        timeout, "-k", "5", "60", strace, "-f", "-y", "-qq", "-s", "512", "-o", log, "-e",
                        "trace=open,openat,openat2,creat,unlink,unlinkat,rename,renameat,renameat2,mkdir,mkdirat,link,linkat,symlink,symlinkat,truncate,rmdir",
                    ])
                runs += 1
                let what = "\(hostile.name): survey \(command.joined(separator: " "))"
                #expect(result.status != 124 && result.status != 137, "\(what) hung: \(result.stderr)")
                #expect(
                    Self.documentedExits.contains(result.status),
                    "\(what) exited \(result.status): \(result.stderr)")
                let trace = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                let touching = trace.split(separator: "\n").filter { $0.contains(hostile.canary) }
                #expect(touching.isEmpty, "\(what) reached outside the store: \(touching.prefix(3))")
                try? FileManager.default.removeItem(atPath: log)
            }
            #expect(Self.fingerprint(hostile.canary) == before, "\(hostile.name): the canary folder changed")
            // A new head of A reads whole after everything.
            if !hostile.refuse && !hostile.victims.contains(String(heads["A"]!.split(separator: "/")[1])) {
                let show = try CommandRunner.run(["show", ids["A"]!, "--store", hostile.store])
                #expect(show.status == 0, "\(hostile.name): A cannot be shown at the end: \(show.stderr)")
            }

            /// Until something supersedes them, every head keeps its content.
            func checkHeads() {
                for (title, head) in heads {
                    let revision = String(head.split(separator: "/")[1])
                    if hostile.victims.contains(revision) { continue }
                    let path = "\(hostile.store)/Documents/\(head).survey/Survey.plist"
                    #expect(
                        FileManager.default.contents(atPath: path) == headContents[title],
                        "\(hostile.name): the content of \(title)'s head \(revision) was lost")
                }
            }
        }
        print("hostile stores: \(cases.count) cases, \(runs) command runs")
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
