import Foundation
import TestSupport
import Testing

/// `EIO` and `ENOSPC` injected by `strace --inject` into the real binary's writes,
/// fsyncs (and the `syncfs` of a batch) and renames, one call at a time, for every
/// mutating command; and `EIO`, `ENOSPC` and `EMFILE` into every other call on a store
/// (``Faults/others``): opens, folders made, removals, reads, listings, status, closes
/// and locks.
///
/// Each run starts from a copy of a prepared store. The command must fail with a clear
/// message naming the error and exit non-zero, print no success, publish nothing after
/// the failed call (a failed fsync is never retried and then trusted) and lose no
/// revision. Straight after it, `verify` may name only what the next command removes
/// (packages that an already published tombstone disowns); after the next command the
/// store is `verify`-clean. A call whose failure the command may pass over
/// (``Faults/bestEffort(in:command:)``) must then leave every store as a clean run does.
@Suite("I/O errors injected into the real binary", .serialized, CommandRunner.needs("strace"))
struct IOErrorInjectionTests {
    static let errors = [("EIO", "Input/output error"), ("ENOSPC", "No space left on device")]

    struct Prepared {
        var directory: URL
        /// Stores the command changes, by name in `arguments` (`{store}`, `{other}`).
        var stores: [String: String]
        var arguments: [String]
        /// The command that follows a failed one (`{store}`, `{other}` as in `arguments`):
        /// by default `init` on each store, which cleans what the failure left.
        var next: [String]? = nil
        /// The files (beneath `{store}`) the command is to repair: `verify` may name them
        /// until `next` has run.
        var damaged: [String] = []
    }

    /// A fresh copy of a scenario's stores: the command's arguments and the next command's
    /// naming the copies, and the copies.
    struct Copy {
        var arguments: [String]
        var next: [String]?
        var stores: [String]
    }

    static func copy(_ source: String, to destination: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/cp")
        process.arguments = ["-a", source, destination]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }

    /// The revisions of every document of a store, as `versions --json` lists them.
    static func revisions(_ store: String) throws -> Set<String> {
        let listed = try CommandRunner.run(["list", "--json", "--store", store])
        guard let rows = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]]
        else { return [] }
        var result = Set<String>()
        for row in rows {
            let id = row["id"] as! String
            let versions = try CommandRunner.run(["versions", id, "--json", "--store", store])
            let list =
                try JSONSerialization.jsonObject(with: Data(versions.stdout.utf8)) as? [[String: Any]] ?? []
            for version in list { result.insert("\(id)/\(version["revision"] as! String)") }
        }
        return result
    }

    /// The tombstones of a store, as `DOCUMENT/NAME` paths beneath `Documents/`.
    static func tombstones(_ store: String) -> Set<String> {
        let documents = store + "/Documents"
        var result = Set<String>()
        for folder in (try? FileManager.default.contentsOfDirectory(atPath: documents)) ?? [] {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: documents + "/" + folder)) ?? []
            where name.hasSuffix(".pruned") {
                result.insert(folder.lowercased() + "/" + name)
            }
        }
        return result
    }

    /// One traced call: its name, and the descriptor path or first quoted path it names.
    struct Traced {
        var name: String
        var line: String
    }

    static func trace(_ log: String) throws -> [Traced] {
        try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").compactMap { line in
            guard let paren = line.firstIndex(of: "(") else { return nil }
            return Traced(name: String(line[..<paren]), line: String(line))
        }
    }

    /// The calls a clean run of `survey ARGUMENTS` makes, as strace traces them with
    /// `options` (what to trace, and how to show it) into `log`; the run must succeed.
    static func probe(
        _ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:], strace: String,
        options: [String], log: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> [Traced] {
        let run = try CommandRunner.run(
            arguments, in: directory, environment: environment,
            prefix: [strace, "-qq"] + options + ["-o", log])
        #expect(
            run.status == 0, "\(arguments): the clean run fails: \(run.stderr)\(run.stdout)",
            sourceLocation: sourceLocation)
        return try trace(log)
    }

    /// The calls a scenario fails, one at a time.
    enum Faults {
        /// Every write to a store, every fsync, `syncfs` and rename: `EIO` and `ENOSPC`.
        case writes
        /// Every other call that touches a store (opening, making, removing, reading,
        /// listing, looking at, closing and locking files and folders): `EIO`, `ENOSPC`
        /// where the call creates, `EMFILE` where it opens (a user can reach the limit of
        /// open files). `ENOENT` is no fault: it is what absence says.
        case others

        /// The calls besides writes, fsyncs and renames that the write commands make (as
        /// a clean run traced with `strace -f` shows) or might make.
        static let otherCalls = [
            "openat", "openat2", "mkdir", "mkdirat", "unlink", "unlinkat", "rmdir", "read", "pread64",
            "getdents64", "newfstatat", "fstat", "statx", "close", "flock", "fcntl", "linkat",
            "symlinkat", "ftruncate", "fchmod",
        ]

        /// What strace traces: the calls to fail, and the renames a failure must not be
        /// followed by.
        var traced: String {
            switch self {
            case .writes: "trace=write,fsync,syncfs,renameat,renameat2"
            case .others: "trace=" + (Self.otherCalls + ["renameat", "renameat2"]).joined(separator: ",")
            }
        }

        /// The errors to inject into `call` of a clean run, none when it is not one to fail.
        func errors(_ call: Traced, stores: [String]) -> [(errno: String, text: String)] {
            let touchesStore = stores.contains {
                call.line.contains($0 + "/") || call.line.contains($0 + ">") || call.line.contains($0 + "\"")
            }
            switch self {
            case .writes:
                // Writes to standard output and error are the report, not the store.
                return call.name != "write" || stores.contains(where: { call.line.contains($0 + "/") })
                    ? IOErrorInjectionTests.errors : []
            case .others:
                guard Self.otherCalls.contains(call.name), touchesStore else { return [] }
                var errors = [("EIO", "Input/output error")]
                if call.name.hasPrefix("mkdir")
                    || call.name.hasPrefix("openat") && call.line.contains("O_CREAT")
                {
                    errors.append(("ENOSPC", "No space left on device"))
                }
                if call.name.hasPrefix("openat") { errors.append(("EMFILE", "Too many open files")) }
                return errors
            }
        }

        /// Why each call of a clean run's `trace` that may fail without failing `command`
        /// may (the command must then do what a clean run does), by position; any other
        /// call's failure must fail the command.
        func bestEffort(in trace: [Traced], command: String) -> [Int: String] {
            guard case .others = self else { return [:] }
            var reasons: [Int: String] = [:]
            // The summary cache (`Local.nosync/summaries.cache`), which a listing of every
            // document reads and keeps up to date: it opens the store folder twice (one
            // through its reader), then `Documents`, then the file; later it looks at
            // document folders through that `Documents` descriptor to stamp their state.
            // Any failure there only leaves the cache out.
            var cache = Set<String>()
            var cacheStarts: [Int: Set<String>] = [:]
            for (fileOpen, call) in trace.enumerated()
            where call.name.hasPrefix("openat") && call.line.contains("\"Local.nosync/summaries.cache\"") {
                guard let reader = Self.descriptor(call.line)?.number,
                    let documentsOpen = trace[..<fileOpen].lastIndex(where: {
                        $0.name == "openat2" && $0.line.contains(", \"Documents\", ")
                    }),
                    let folder = Self.descriptor(trace[documentsOpen].line)?.number,
                    let documents = Self.result(trace[documentsOpen].line)?.number,
                    let folderOpen = trace[..<documentsOpen].lastIndex(where: {
                        Self.result($0.line)?.number == folder
                    }),
                    let readerOpen = trace[..<folderOpen].lastIndex(where: {
                        Self.result($0.line)?.number == reader
                    })
                else { continue }
                for position in readerOpen...fileOpen {
                    reasons[position] = "the summary cache (left out when it fails)"
                }
                cacheStarts[fileOpen] = [reader, folder, documents]
            }
            // A store opened for reading (the other store of a repair, the store verify
            // reads after it) reads this device's identity only as a label ("unknown" when it
            // cannot): its layout file is read, then the store's folder opened and the
            // identity file read through it. verify looks at that file again on its own.
            for (rootOpen, call) in trace.enumerated()
            where call.name == "openat" && call.line.contains("(AT_FDCWD") {
                guard let root = Self.result(call.line)?.number,
                    let identity = trace[(rootOpen + 1)...].firstIndex(where: { $0.name != "close" }),
                    trace[identity].name == "openat2",
                    trace[identity].line.contains("\"Local.nosync/Device.plist\""),
                    Self.descriptor(trace[identity].line)?.number == root,
                    let file = Self.result(trace[identity].line)?.number,
                    let layout = trace[..<rootOpen].lastIndex(where: { $0.name.hasPrefix("openat") }),
                    trace[layout].line.contains("\"Store.plist\"")
                else { continue }
                var position = rootOpen
                var open = Set([root, file])
                while position < trace.count, !open.isEmpty {
                    let descriptor = Self.descriptor(trace[position].line)?.number
                    if position == rootOpen || position == identity || descriptor.map(open.contains) == true {
                        reasons[position] =
                            "the device identity read as a label by a store opened for reading"
                        if trace[position].name == "close", let descriptor { open.remove(descriptor) }
                    }
                    position += 1
                }
            }
            var written = Set<String>()
            for (index, call) in trace.enumerated() {
                if let descriptors = cacheStarts[index] { cache.formUnion(descriptors) }
                guard reasons[index] == nil else { continue }
                let descriptor = Self.descriptor(call.line)?.number
                if let descriptor, cache.contains(descriptor) {
                    reasons[index] = "the summary cache (left out when it fails)"
                    if call.name == "close" { cache.remove(descriptor) }
                    if let opened = Self.result(call.line)?.number { cache.insert(opened) }
                    continue
                }
                if call.name.hasPrefix("openat"), let opened = Self.result(call.line)?.number {
                    cache.remove(opened)
                    if call.line.contains("O_WRONLY") {
                        written.insert(opened)
                    } else {
                        written.remove(opened)
                    }
                }
                switch call.name {
                case "close":
                    // A descriptor written through is closed as part of the write, and a
                    // failure fails it; any other close releases the descriptor whatever
                    // it returns (Linux), and nothing waits on it.
                    if let descriptor, written.remove(descriptor) == nil {
                        reasons[index] = "close of a descriptor nothing was written through"
                    }
                case "fcntl" where call.line.contains("F_UNLCK"):
                    reasons[index] = "unlock: the close that follows releases the lock"
                default:
                    // sync first compares the names and sizes in a document's folder on
                    // both sides, before taking the document's locks: a failure there only
                    // sends the document to a full read under its locks.
                    guard command == "sync", let document = Self.document(in: call.line),
                        !trace[..<index].contains(where: {
                            $0.name.hasPrefix("openat") && $0.line.contains("/\(document).lock")
                        })
                    else { break }
                    reasons[index] = "sync's comparison of a document's folders before its locks"
                }
            }
            return reasons
        }

        /// A call's first argument when it is a descriptor, as `strace -y` shows it
        /// (`3</store/Documents>`): its number and path.
        static func descriptor(_ line: String) -> (number: String, path: String)? {
            guard let open = line.firstIndex(of: "("), let less = line[open...].firstIndex(of: "<"),
                let more = line[less...].firstIndex(of: ">")
            else { return nil }
            let number = line[line.index(after: open)..<less]
            guard !number.isEmpty, number.allSatisfy(\.isNumber) else { return nil }
            return (String(number), String(line[line.index(after: less)..<more]))
        }

        /// The descriptor a call returned (`= 5</store/Documents>`): its number and path.
        static func result(_ line: String) -> (number: String, path: String)? {
            guard line.hasSuffix(">"), let equals = line.range(of: ") = ", options: .backwards) else {
                return nil
            }
            let rest = line[equals.upperBound...]
            guard let less = rest.firstIndex(of: "<") else { return nil }
            let number = rest[..<less]
            guard !number.isEmpty, number.allSatisfy(\.isNumber) else { return nil }
            return (String(number), String(rest[rest.index(after: less)..<rest.index(before: rest.endIndex)]))
        }

        /// The id of the document whose folder (`Documents/ID`) a call names, if any.
        static func document(in line: String) -> String? {
            guard let range = line.range(of: "Documents/") else { return nil }
            let id = line[range.upperBound...].prefix(36)
            return id.count == 36 && UUID(uuidString: String(id)) != nil ? String(id) : nil
        }
    }

    /// Whether every injection point is tried (`SURVEYSTORE_EXHAUSTIVE=1`, or the long
    /// forms' `SURVEYSTORE_LONG=1`); otherwise `Faults.others` tries a seeded sample.
    static var exhaustive: Bool {
        let environment = ProcessInfo.processInfo.environment
        return environment["SURVEYSTORE_EXHAUSTIVE"] == "1" || environment["SURVEYSTORE_LONG"] == "1"
    }

    /// What a store holds, whatever the clock said while it was written: each document
    /// (its id when `known` holds it, else `new`) with its title, whether it is deleted and
    /// in conflict, its winner's content, and each revision (its id when `known` holds it,
    /// else `new-GENERATION`) with its parents, state, format and whether it is pruned.
    static func shape(_ store: String, known: Set<String>) throws -> [String] {
        let listed = try CommandRunner.run(["list", "--json", "--store", store])
        guard listed.status == 0,
            let rows = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]]
        else { return ["list: \(listed.status) \(listed.stderr)"] }
        let documents = Set(known.map { $0.prefix { $0 != "/" } })
        var result: [String] = []
        for row in rows {
            let id = row["id"] as? String ?? ""
            let document = documents.contains(Substring(id)) ? id : "new"
            func name(_ revision: String) -> String {
                known.contains("\(id)/\(revision)") ? revision : "new-" + revision.prefix { $0 != "-" }
            }
            let export = try CommandRunner.run(["export", id, "--store", store])
            result.append(
                "\(document) \(row["title"] ?? "-") deleted \(row["deleted"] ?? "-") conflicts \(row["conflicts"] ?? "-") content \(export.status) \(export.stdout)"
            )
            let versions = try CommandRunner.run(["versions", id, "--json", "--store", store])
            for version in try JSONSerialization.jsonObject(with: Data(versions.stdout.utf8))
                as? [[String: Any]] ?? []
            {
                let parents = (version["parents"] as? [String] ?? []).map(name).sorted()
                result.append(
                    "\(document) \(name(version["revision"] as? String ?? "")) parents \(parents) \(version["state"] ?? "-") format \(version["formatVersion"] ?? "-") pruned \(version["pruned"] ?? "-")"
                )
            }
        }
        return result.sorted()
    }

    /// A fresh copy of the prepared stores at `target`, each opened once (a copied store
    /// takes a new device id on its first command, which would shift the call counts):
    /// the command's arguments naming the copies, and the copies.
    static func freshCopy(of base: Prepared, at target: URL) throws -> Copy {
        try copy(base.directory.path, to: target.path)
        var copy = Copy(arguments: base.arguments, next: base.next, stores: [])
        for (key, relative) in base.stores.sorted(by: { $0.key < $1.key }) {
            let path = target.appendingPathComponent(relative).path
            // `init` on an existing store only takes the copy's new device id.
            #expect(try CommandRunner.run(["init", "--store", path]).status == 0)
            copy.arguments = copy.arguments.map { $0 == "{\(key)}" ? path : $0 }
            copy.next = copy.next?.map { $0 == "{\(key)}" ? path : $0 }
            copy.stores.append(path)
        }
        return copy
    }

    /// Runs `command` once per injection point and error (`faults` says which; a seeded
    /// sample of them for `.others` unless ``exhaustive``); returns the points tried.
    /// `flushedBy` names the call the clean run must make durable by (`syncfs` for a
    /// batch, `fsync` for a single package), when the scenario is about one of them.
    ///
    /// A call `Faults.bestEffort` names may fail without failing the command: it must then
    /// succeed and leave every store as the clean run left it (``shape(_:known:)``), and
    /// `verify`-clean. Any other failure must fail the command cleanly.
    @discardableResult
    static func expectCleanFailures(
        _ name: String, faults: Faults = .writes, sample: Int = 48, flushedBy: String? = nil,
        prepare: (URL) throws -> Prepared
    ) throws -> Int {
        guard let strace = CommandRunner.requireTool("strace") else { return 0 }
        let work = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let base = try prepare(work.appendingPathComponent("base"))

        func freshCopy(_ label: String) throws -> Copy {
            try Self.freshCopy(of: base, at: work.appendingPathComponent(label))
        }

        // What every copy holds before its command runs, read from a copy of its own
        // (listing a store writes its summary cache, which the command would then read).
        let reference = try freshCopy("reference")
        let before = try reference.stores.map { try revisions($0) }
        let tombstonesBefore = reference.stores.map { tombstones($0) }
        let known = before.reduce(into: Set<String>()) { $0.formUnion($1) }
        try FileManager.default.removeItem(at: work.appendingPathComponent("reference"))
        // A clean run, traced, to find the calls to fail.
        let probe = try freshCopy("probe")
        let probeLog = work.appendingPathComponent("probe.trace").path
        let traced = try Self.probe(
            probe.arguments + ["--json"], strace: strace, options: ["-y", "-s", "0", "-e", faults.traced],
            log: probeLog)
        let cleanShapes = try probe.stores.map { try shape($0, known: known) }
        var points:
            [(call: String, index: Int, errno: String, text: String, bestEffort: String?, line: String)] =
                []
        var counts: [String: Int] = [:]
        let bestEffort = faults.bestEffort(in: traced, command: base.arguments[0])
        for (position, call) in traced.enumerated() {
            counts[call.name, default: 0] += 1
            for (errno, text) in faults.errors(call, stores: probe.stores) {
                points.append((call.name, counts[call.name]!, errno, text, bestEffort[position], call.line))
            }
        }
        switch faults {
        case .writes:
            // A flush of each kind the command makes durable by: fsyncs, or a batch's syncfs.
            #expect(
                points.contains { $0.call == "fsync" || $0.call == "syncfs" }
                    && points.contains { $0.call.hasPrefix("renameat") },
                "\(name): nothing to inject")
            if let flushedBy {
                #expect(points.contains { $0.call == flushedBy }, "\(name): no \(flushedBy) to inject")
            }
        case .others:
            // A plain verify reads only: it takes no lock.
            let locks = base.arguments == ["verify", "--store", "{store}"] ? [] : ["fcntl"]
            #expect(
                Set(points.map(\.call)).isSuperset(
                    of: ["openat2", "read", "getdents64", "newfstatat"] + locks),
                "\(name): nothing to inject: \(Set(points.map(\.call)))")
        }
        try FileManager.default.removeItem(atPath: work.appendingPathComponent("probe").path)

        // A seeded sample: one point of each call, error and kind (must fail, or may fail
        // silently) first, then others at random.
        let all = points.count
        var replay = ""
        if case .others = faults, !exhaustive, points.count > sample {
            let seed = SeededRandom.seed(fallback: 2607)
            var random = SeededRandom(seed: seed ^ name.utf8.reduce(UInt64(0)) { $0 &* 31 &+ UInt64($1) })
            points.shuffle(using: &random)
            var seen = Set<String>()
            let first = points.filter {
                seen.insert("\($0.call) \($0.errno) \($0.bestEffort != nil)").inserted
            }
            let rest = points.filter { point in
                !first.contains {
                    $0.call == point.call && $0.index == point.index && $0.errno == point.errno
                }
            }
            points = Array((first + rest).prefix(max(sample, first.count)))
            replay =
                " (seed \(seed): SURVEYSTORE_SEED=\(seed) replays, SURVEYSTORE_EXHAUSTIVE=1 tries all \(all))"
        }

        var tried = 0
        /// The best-effort calls whose failure the command passed over, by reason.
        var passedOver: [String: Int] = [:]
        for (call, index, errno, text, bestEffort, line) in points {
            let label = "\(call)-\(index)-\(errno)"
            let run = try freshCopy(label)
            defer { try? FileManager.default.removeItem(at: work.appendingPathComponent(label)) }
            let log = work.appendingPathComponent(label + ".trace").path
            let result = try CommandRunner.run(
                run.arguments + ["--json"],
                prefix: [
                    strace, "-qq", "-y", "-s", "0", "-e", faults.traced,
                    "-e", "inject=\(call):error=\(errno):when=\(index)", "-o", log,
                ])
            let point = "\(name), \(call) #\(index) failing with \(errno)\(replay) [in a clean run: \(line)]"
            tried += 1
            let calls = try trace(log)
            guard let failed = calls.firstIndex(where: { $0.line.contains("(INJECTED)") }) else {
                Issue.record("\(point): the failure was not injected")
                continue
            }
            if result.status == 0, let bestEffort {
                // A call whose failure changes nothing: the command does what a clean run does.
                passedOver[bestEffort, default: 0] += 1
                let report = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
                #expect(
                    report != nil && (report as? [String: Any])?["error"] == nil,
                    "\(point) (\(bestEffort)): standard output is no report: \(result.stdout)")
                for (store, clean) in zip(run.stores, cleanShapes) {
                    let verify = try CommandRunner.run(["verify", "--store", store])
                    #expect(
                        verify.status == 0,
                        "\(point) (\(bestEffort)): verify: \(verify.stdout)\(verify.stderr)")
                    let found = try shape(store, known: known)
                    #expect(
                        found == clean,
                        "\(point) (\(bestEffort)): the store is not what a clean run leaves: \(found) \(clean)"
                    )
                    let temporary = store + "/Local.nosync/tmp"
                    #expect(
                        (try? FileManager.default.contentsOfDirectory(atPath: temporary))?.isEmpty ?? true,
                        "\(point) (\(bestEffort)): a temporary is left")
                }
                continue
            }
            #expect(
                result.status != 0,
                "\(point): the command reported success\(bestEffort.map { " but left the store unlike a clean run (\($0))" } ?? "")"
            )
            #expect(
                result.stderr.contains(text),
                "\(point): the message does not say \(text): \(result.stderr)")
            // With --json, standard output holds the one JSON document: the error, or (for
            // a sync or prune of every document, which leave a document they cannot read
            // as it is and go on with the others) the report naming that document; for an
            // import of several packages, which imports the others, the entry of each
            // package that failed; for verify, which names what it cannot read among the
            // problems it finds, the problem.
            let output = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
            let report = output as? [String: Any]
            let unreadable = (report?["unreadable"] as? [[String: Any]] ?? []).filter {
                ($0["message"] as? String ?? "").contains(text)
            }
            let failedPackages = (output as? [[String: Any]] ?? []).filter {
                (($0["error"] as? [String: Any])?["message"] as? String ?? "").contains(text)
            }
            let problems = (report?["problems"] as? [[String: Any]] ?? []).filter {
                ($0["message"] as? String ?? "").contains(text)
            }
            // A repair names a document it cannot read and repairs the others.
            let unrepaired = (report?["unrepaired"] as? [[String: Any]] ?? []).filter {
                ($0["message"] as? String ?? "").contains(text)
            }
            if case .others = faults, !failedPackages.isEmpty {
                // The exit is the first failed package's; nothing of the document of one
                // that failed is published after the failure.
                let first = (output as? [[String: Any]] ?? []).first { $0["error"] != nil }
                #expect(
                    (first?["error"] as? [String: Any])?["exit"] as? Int == Int(result.status),
                    "\(point): the exit is not the first failed package's: \(result.stdout)")
                let documents = failedPackages.compactMap { entry in
                    (entry["path"] as? String).flatMap { documentOf(package: $0) }
                }
                #expect(documents.count == failedPackages.count, "\(point): \(failedPackages)")
                #expect(
                    !calls[(failed + 1)...].contains { call in
                        call.name.hasPrefix("renameat")
                            && documents.contains { call.line.lowercased().contains("/documents/\($0)") }
                    },
                    "\(point): something of \(documents) was published after the failure")
            } else if case .others = faults, base.arguments[0] == "verify",
                !problems.isEmpty || !unrepaired.isEmpty
            {
                #expect(result.status == 1, "\(point): \(result.status)")
                // Nothing of a document named unrepaired is published after the failure.
                let folders = unrepaired.compactMap { $0["path"] as? String }
                #expect(
                    !calls[(failed + 1)...].contains { call in
                        call.name.hasPrefix("renameat")
                            && (problems.isEmpty ? folders.contains { call.line.contains($0 + "/") } : true)
                    },
                    "\(point): something was published after the failure")
            } else if case .others = faults, !unreadable.isEmpty, result.status == 1 {
                // Nothing of a document left as it is is published after the failure.
                let documents = unreadable.compactMap { $0["id"] as? String }
                #expect(
                    !calls[(failed + 1)...].contains { call in
                        call.name.hasPrefix("renameat")
                            && documents.contains { call.line.contains("/Documents/\($0)") }
                    },
                    "\(point): something of \(documents) was published after the failure")
            } else {
                let reported = report?["error"] as? [String: Any]
                #expect(
                    reported?["exit"] as? Int == Int(result.status),
                    "\(point): standard output is not the error: \(result.stdout)")
                #expect(
                    !calls[(failed + 1)...].contains { $0.name.hasPrefix("renameat") },
                    "\(point): something was published after the failure")
            }
            for (position, store) in run.stores.enumerated() {
                // A prune note stays only for a document that a tombstone published
                // now disowns: a command failing before it publishes any leaves none.
                let published = tombstones(store).subtracting(tombstonesBefore[position])
                for note
                    in (try? FileManager.default.contentsOfDirectory(
                        atPath: store + "/Local.nosync/pruning")) ?? []
                where !published.contains(where: { $0.hasPrefix(note.lowercased() + "/") }) {
                    Issue.record("\(point): a prune note is left with no tombstone published: \(note)")
                }
                // No document folder is left empty (a document with no revision,
                // which a deletion would then make out of nothing).
                let documents = store + "/Documents"
                for name in (try? FileManager.default.contentsOfDirectory(atPath: documents)) ?? []
                where (try? FileManager.default.contentsOfDirectory(atPath: documents + "/" + name))?
                    .isEmpty == true
                {
                    Issue.record("\(point): an empty document folder is left: \(name)")
                }
                // Straight after the failure, verify may find only what the next
                // command removes: packages a published tombstone disowns, and the
                // note of that interrupted prune.
                let first = try CommandRunner.run(["verify", "--json", "--store", store])
                let found =
                    (try? JSONSerialization.jsonObject(with: Data(first.stdout.utf8)) as? [String: Any])?[
                        "problems"]
                    as? [[String: Any]] ?? []
                // And, where the command repairs, the damage it was to repair.
                for problem in found
                where !(problem["message"] as? String ?? "").contains("(the next command")
                    && !base.damaged.contains(where: {
                        (problem["path"] as? String ?? "").hasSuffix("/" + $0)
                    })
                {
                    Issue.record("\(point): verify right after the failure: \(problem)")
                }
            }
            if let next = run.next {
                let again = try CommandRunner.run(next)
                #expect(again.status == 0, "\(point): \(next): \(again.stdout)\(again.stderr)")
            } else {
                for store in run.stores {
                    #expect(try CommandRunner.run(["init", "--store", store]).status == 0)
                }
            }
            for (position, store) in run.stores.enumerated() {
                let verify = try CommandRunner.run(["verify", "--store", store])
                #expect(verify.status == 0, "\(point): verify: \(verify.stdout)\(verify.stderr)")
                let after = try revisions(store)
                #expect(
                    before[position].isSubset(of: after),
                    "\(point): revisions lost: \(before[position].subtracting(after))")
            }
        }
        let sampled = tried < all ? " of \(all)\(replay)" : ""
        let silent =
            passedOver.isEmpty
            ? ""
            : "; passed over, the store as a clean run leaves it: "
                + passedOver.sorted { $0.key < $1.key }.map { "\($0.value) at \($0.key)" }.joined(
                    separator: ", ")
        print("I/O errors: \(name): \(tried) injected failures\(sampled)\(silent)")
        return tried
    }

    /// The document (its id, in lower case) whose revision the package at `path` holds, as
    /// its metadata says.
    static func documentOf(package path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path + "/DocumentMetadata.plist"),
            let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any]
        else { return nil }
        return (plist["DocumentUUID"] as? String)?.lowercased()
    }

    /// A store with one document edited once; returns the store and the document id.
    static func storeWithHistory(_ directory: URL, name: String = "store") throws -> (String, String) {
        let store = directory.appendingPathComponent(name).path
        #expect(try CommandRunner.run(["init", "--store", store]).status == 0)
        let sample = directory.appendingPathComponent("\(name).json")
        try Data(StoreCommandTests.sample.utf8).write(to: sample)
        let id = try CommandRunner.run(["new", "--from", sample.path, "--store", store]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try CommandRunner.run(["edit", id, "--answer", "2=Grace", "--store", store]).status == 0)
        return (store, id)
    }

    /// The two revisions of a store made by ``storeWithHistory(_:name:)``: the first, and
    /// the edit saved from it.
    static func history(_ store: String, _ id: String) throws -> (first: String, second: String) {
        let versions = try CommandRunner.run(["versions", id, "--json", "--store", store]).stdout
        let rows = try JSONSerialization.jsonObject(with: Data(versions.utf8)) as! [[String: Any]]
        let first = rows.first { ($0["parents"] as? [String])?.isEmpty == true }!["revision"] as! String
        let second = rows.first { ($0["parents"] as? [String]) == [first] }!["revision"] as! String
        return (first, second)
    }

    /// The scenarios, by name: each prepares its stores in a new folder and says the
    /// command to run.
    struct Scenario: Sendable {
        var name: String
        /// The flush the clean run must make, when the scenario is about one (see
        /// ``expectCleanFailures(_:faults:sample:flushedBy:prepare:)``).
        var flushedBy: String? = nil
        var prepare: @Sendable (URL) throws -> Prepared
    }

    static let scenarios: [Scenario] = [
        Scenario(
            name: "new",
            prepare: { directory in
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                _ = try storeWithHistory(directory)
                return Prepared(
                    directory: directory, stores: ["store": "store"],
                    arguments: ["new", "--title", "Another", "--store", "{store}"])
            }
        ),
        Scenario(
            name: "edit",
            prepare: { directory in
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                let (_, id) = try storeWithHistory(directory)
                return Prepared(
                    directory: directory, stores: ["store": "store"],
                    arguments: ["edit", id, "--answer", "2=Ada", "--store", "{store}"])
            }
        ),
        Scenario(
            name: "delete",
            prepare: { directory in
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                let (_, id) = try storeWithHistory(directory)
                return Prepared(
                    directory: directory, stores: ["store": "store"],
                    arguments: ["delete", id, "--store", "{store}"])
            }
        ),
        Scenario(
            name: "resolve",
            prepare: { directory in
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                let (store, id) = try storeWithHistory(directory)
                let (first, _) = try history(store, id)
                #expect(
                    try CommandRunner.run([
                        "edit", id, "--base", first, "--answer", "2=Lin", "--store", store,
                    ]).status == 0)
                return Prepared(
                    directory: directory, stores: ["store": "store"],
                    arguments: ["resolve", id, "--accept", "--store", "{store}"])
            }
        ),
        // Three heads, two saved from the second revision and one from the first: the two
        // are merged first as a group from their own base (README rule 12), each base read.
        Scenario(
            name: "resolve --merge",
            prepare: { directory in
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                let (store, id) = try storeWithHistory(directory)
                let (first, second) = try history(store, id)
                for (base, answer) in [(second, "2=Lin"), (second, "3=4"), (first, "3=9")] {
                    #expect(
                        try CommandRunner.run([
                            "edit", id, "--base", base, "--answer", answer, "--store", store,
                        ]).status == 0)
                }
                return Prepared(
                    directory: directory, stores: ["store": "store"],
                    arguments: ["resolve", id, "--merge", "--store", "{store}"])
            }
        ),
        Scenario(
            name: "prune",
            prepare: { directory in
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                let (store, id) = try storeWithHistory(directory)
                #expect(
                    try CommandRunner.run(["edit", id, "--answer", "2=Lin", "--store", store]).status == 0)
                return Prepared(
                    directory: directory, stores: ["store": "store"],
                    arguments: ["prune", "--store", "{store}"])
            }
        ),
        // Each side receives one package: a batch of one, fsynced file by file.
        Scenario(
            name: "sync", flushedBy: "fsync",
            prepare: { directory in
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                let (here, id) = try storeWithHistory(directory, name: "here")
                let (there, _) = try storeWithHistory(directory, name: "there")
                #expect(try CommandRunner.run(["sync", there, "--store", here]).status == 0)
                #expect(
                    try CommandRunner.run(["edit", id, "--answer", "2=Here", "--store", here]).status == 0)
                #expect(
                    try CommandRunner.run(["edit", id, "--answer", "2=There", "--store", there]).status == 0)
                #expect(try CommandRunner.run(["prune", "--store", there]).status == 0)
                return Prepared(
                    directory: directory, stores: ["store": "here", "other": "there"],
                    // One document at a time: strace counts the calls of the main thread.
                    arguments: ["sync", "{other}", "--jobs", "1", "--store", "{store}"])
            }
        ),
        // Two revisions into an empty store: a batch, flushed by syncfs.
        Scenario(
            name: "sync of a batch", flushedBy: "syncfs",
            prepare: { directory in
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                _ = try storeWithHistory(directory, name: "here")
                let there = directory.appendingPathComponent("there").path
                #expect(try CommandRunner.run(["init", "--store", there]).status == 0)
                return Prepared(
                    directory: directory, stores: ["store": "here", "other": "there"],
                    arguments: ["sync", "{other}", "--jobs", "1", "--store", "{store}"])
            }
        ),
        Scenario(
            name: "migrate",
            prepare: { directory in
                let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                    .deletingLastPathComponent()
                    .deletingLastPathComponent().appendingPathComponent(
                        "Fixtures/formats/stores/format1-store")
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                try copy(fixture.path, to: directory.appendingPathComponent("store").path)
                return Prepared(
                    directory: directory, stores: ["store": "store"],
                    arguments: ["migrate", "--store", "{store}"])
            }
        ),
        // Content from a file replacing the winner's (its export with one answer changed,
        // the item ids kept), and the same on the condition that the winner is still the
        // only head.
        Scenario(
            name: "save",
            prepare: { directory in
                let (id, content, _) = try contentToSave(directory)
                return Prepared(
                    directory: directory, stores: ["store": "store"],
                    arguments: ["save", id, "--from", content, "--store", "{store}"])
            }
        ),
        // The same content without its items' ids, which are matched with the base's:
        // the base's content is read too.
        Scenario(
            name: "save of a file without ids",
            prepare: { directory in
                let (id, content, _) = try contentToSave(directory)
                let text = try String(contentsOfFile: content, encoding: .utf8)
                let bare = text.replacingOccurrences(
                    of: #"\n *"id" : "[0-9A-F-]+","#, with: "", options: .regularExpression)
                #expect(bare != text && !bare.contains("\"id\""), "\(bare)")
                try Data(bare.utf8).write(to: URL(fileURLWithPath: content))
                return Prepared(
                    directory: directory, stores: ["store": "store"],
                    arguments: ["save", id, "--from", content, "--store", "{store}"])
            }
        ),
        Scenario(
            name: "save --if-current",
            prepare: { directory in
                let (id, content, base) = try contentToSave(directory)
                return Prepared(
                    directory: directory, stores: ["store": "store"],
                    arguments: [
                        "save", id, "--from", content, "--base", base, "--if-current", "--store", "{store}",
                    ])
            }
        ),
        // One package: a revision of a document the store holds (a batch of one, fsynced
        // file by file).
        Scenario(
            name: "import", flushedBy: "fsync",
            prepare: { directory in
                let packages = try packages(directory, edits: ["2=Lin"], titles: [])
                return Prepared(
                    directory: directory, stores: ["store": "store"],
                    arguments: ["import"] + packages + ["--store", "{store}"])
            }
        ),
        // Three packages, a revision of a known document and two new documents: a batch,
        // flushed by syncfs.
        Scenario(
            name: "import of several", flushedBy: "syncfs",
            prepare: { directory in
                let packages = try packages(directory, edits: ["2=Lin"], titles: ["Second", "Third"])
                return Prepared(
                    directory: directory, stores: ["store": "store"],
                    arguments: ["import"] + packages + ["--store", "{store}"])
            }
        ),
        // Each side edits another field of one document: the sync puts it in conflict on
        // both sides, and the merge resolves it on both.
        Scenario(
            name: "sync --merge",
            prepare: { directory in
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                let (here, id) = try storeWithHistory(directory, name: "here")
                let there = directory.appendingPathComponent("there").path
                #expect(try CommandRunner.run(["init", "--store", there]).status == 0)
                #expect(try CommandRunner.run(["sync", there, "--store", here]).status == 0)
                #expect(
                    try CommandRunner.run(["edit", id, "--answer", "2=Here", "--store", here]).status == 0)
                #expect(try CommandRunner.run(["edit", id, "--answer", "3=4", "--store", there]).status == 0)
                return Prepared(
                    directory: directory, stores: ["store": "here", "other": "there"],
                    arguments: ["sync", "{other}", "--merge", "--jobs", "1", "--store", "{store}"])
            }
        ),
        // The winner's content torn (cut to half under its final name), repaired from a
        // replica; a repair that fails leaves it for the repair run again.
        Scenario(
            name: "verify --repair-from",
            prepare: { directory in
                try tornWinner(directory, file: "Survey.plist") { package in package + "/Survey.plist" }
            }
        ),
        // The winner's metadata torn: the repair reads the replica's copy of the document,
        // then replaces the file. verify names the package, whose metadata it cannot read.
        Scenario(
            name: "verify --repair-from of metadata",
            prepare: { directory in
                try tornWinner(directory, file: "DocumentMetadata.plist") { package in package }
            }
        ),
        // Two documents, one in conflict whose heads merge cleanly (each changed another
        // field): --all lists the documents, then merges the one in conflict.
        Scenario(
            name: "resolve --all --merge",
            prepare: { directory in
                let store = try conflicted(directory, answers: ["2=Lin", "3=4"])
                #expect(try CommandRunner.run(["new", "--title", "Other", "--store", store]).status == 0)
                return Prepared(
                    directory: directory, stores: ["store": "store"],
                    arguments: ["resolve", "--all", "--merge", "--store", "{store}"])
            }
        ),
        // A listing of the documents in conflict, with the preview of each one's merge (a
        // listing warns of what it cannot read, lists the rest and exits 1, its JSON the
        // listing alone: not in the samples, which look for the failure named in the JSON;
        // `conflictsNamesAHeadItCannotRead` and `conflictsNamesDeletionsItCannotLookFor`
        // check it).
        Scenario(
            name: "conflicts",
            prepare: { directory in
                let store = try conflicted(directory, answers: ["2=Lin", "2=Ada"])
                return Prepared(
                    directory: directory, stores: ["store": "store"],
                    arguments: ["conflicts", "--store", "{store}"])
            }
        ),
        // verify writes nothing, and says "clean" only when it could look at everything.
        Scenario(
            name: "verify",
            prepare: { directory in
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                _ = try storeWithHistory(directory)
                return Prepared(
                    directory: directory, stores: ["store": "store"],
                    arguments: ["verify", "--store", "{store}"])
            }
        ),
    ]

    /// A store with a history (``storeWithHistory(_:name:)``) whose document is put in
    /// conflict by one edit for each of `answers`, each based on its second revision; the
    /// store's path.
    static func conflicted(_ directory: URL, answers: [String]) throws -> String {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let (store, id) = try storeWithHistory(directory)
        let (_, second) = try history(store, id)
        for answer in answers {
            let edit = try CommandRunner.run([
                "edit", id, "--base", second, "--answer", answer, "--store", store,
            ])
            #expect(edit.status == 0, "\(edit.stderr)")
        }
        return store
    }

    /// A store with history (``storeWithHistory(_:name:)``) and an intact replica, the
    /// winner's `file` cut to half under its final name; the command repairs the store from
    /// the replica, and runs again after a failure. `damaged` gives, from the winner's
    /// package path, what verify names until then.
    static func tornWinner(_ directory: URL, file: String, damaged: (String) -> String) throws -> Prepared {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let (store, id) = try storeWithHistory(directory)
        let replica = directory.appendingPathComponent("replica").path
        #expect(try CommandRunner.run(["init", "--store", replica]).status == 0)
        #expect(try CommandRunner.run(["sync", replica, "--store", store]).status == 0)
        let (_, second) = try history(store, id)
        let package = "Documents/\(id.lowercased())/\(second).survey"
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: store + "/" + package + "/" + file))
        try handle.truncate(atOffset: try handle.seekToEnd() / 2)
        try handle.close()
        let repair = ["verify", "--repair-from", "{other}", "--store", "{store}"]
        return Prepared(
            directory: directory, stores: ["store": "store", "other": "replica"], arguments: repair,
            next: repair, damaged: [damaged(package)])
    }

    /// A store with history (``storeWithHistory(_:name:)``) and a replica of it, `source`,
    /// in which `edits` are made and `titles` are new documents: the winner of each exported
    /// as a revision package into `packages/` (the edited document's first), in that order.
    static func packages(_ directory: URL, edits: [String], titles: [String]) throws -> [String] {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let (store, id) = try storeWithHistory(directory)
        let source = directory.appendingPathComponent("source").path
        #expect(try CommandRunner.run(["init", "--store", source]).status == 0)
        #expect(try CommandRunner.run(["sync", source, "--store", store]).status == 0)
        var documents: [String] = []
        for answer in edits {
            #expect(try CommandRunner.run(["edit", id, "--answer", answer, "--store", source]).status == 0)
        }
        if !edits.isEmpty { documents.append(id) }
        for title in titles {
            let made = try CommandRunner.run(["new", "--title", title, "--store", source])
            #expect(made.status == 0)
            documents.append(made.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let folder = directory.appendingPathComponent("packages")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return try documents.enumerated().map { number, document in
            let package = folder.appendingPathComponent("\(number).survey").path
            let export = try CommandRunner.run(["export", document, "--package", package, "--store", source])
            #expect(export.status == 0, "\(export.stderr)")
            return package
        }
    }

    /// A store with history (``storeWithHistory(_:name:)``) and, beside it, its document
    /// exported with one answer changed: the document, the file and the revision it is
    /// based on.
    static func contentToSave(_ directory: URL) throws -> (id: String, file: String, base: String) {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let (store, id) = try storeWithHistory(directory)
        let export = try CommandRunner.run(["export", id, "--store", store])
        #expect(export.status == 0 && export.stdout.contains("\"Grace\""), "\(export.stdout)")
        let content = directory.appendingPathComponent("content.json")
        try Data(export.stdout.replacingOccurrences(of: "\"Grace\"", with: "\"Lin\"").utf8).write(to: content)
        return (id, content.path, try history(store, id).second)
    }

    static func scenario(_ name: String) -> Scenario {
        scenarios.first { $0.name == name }!
    }

    @Test("new, edit and delete fail cleanly at every injected write, fsync and rename")
    func documentCommands() throws {
        for name in ["new", "edit", "delete"] {
            try Self.expectCleanFailures(name, prepare: Self.scenario(name).prepare)
        }
    }

    @Test(
        "resolve, resolve --merge (with a group of heads) and prune fail cleanly at every injected write, fsync and rename"
    )
    func resolveAndPrune() throws {
        for name in ["resolve", "resolve --merge", "prune"] {
            try Self.expectCleanFailures(name, prepare: Self.scenario(name).prepare)
        }
    }

    @Test("sync and migrate fail cleanly at every injected write, fsync, syncfs and rename")
    func syncAndMigrate() throws {
        for name in ["sync", "sync of a batch", "migrate"] {
            let scenario = Self.scenario(name)
            try Self.expectCleanFailures(name, flushedBy: scenario.flushedBy, prepare: scenario.prepare)
        }
    }

    @Test(
        "save and import (one package, and a batch of several) fail cleanly at every injected write, fsync, syncfs and rename"
    )
    func saveAndImport() throws {
        for name in [
            "save", "save of a file without ids", "save --if-current", "import", "import of several",
        ] {
            let scenario = Self.scenario(name)
            try Self.expectCleanFailures(name, flushedBy: scenario.flushedBy, prepare: scenario.prepare)
        }
    }

    @Test(
        "sync --merge, verify --repair-from and resolve --all --merge fail cleanly at every injected write, fsync and rename"
    )
    func mergeAndRepair() throws {
        for name in [
            "sync --merge", "verify --repair-from", "verify --repair-from of metadata",
            "resolve --all --merge",
        ] {
            try Self.expectCleanFailures(name, prepare: Self.scenario(name).prepare)
        }
    }

    /// The scenarios of ``documentCommands()``, ``resolveAndPrune()`` and ``syncAndMigrate()``.
    static let firstScenarios = [
        "new", "edit", "delete", "resolve", "resolve --merge", "prune", "sync", "sync of a batch", "migrate",
    ]

    /// Every call beyond the writes in each of `names`, as ``expectCleanFailures(_:faults:sample:flushedBy:prepare:)``
    /// tries them; prints the total.
    static func expectCleanFailuresBeyondWrites(_ names: [String], _ label: String) throws {
        var total = 0
        for name in names {
            total += try expectCleanFailures(name, faults: .others, prepare: scenario(name).prepare)
        }
        print("I/O errors beyond writes, \(label): \(total) injected failures")
    }

    @Test(
        "Every write command fails cleanly at injected opens, folder makings, removals, reads, listings, status, closes and locks (a seeded sample; SURVEYSTORE_EXHAUSTIVE=1 tries all), or, at a best-effort call, does what a clean run does"
    )
    func beyondWrites() throws {
        try Self.expectCleanFailuresBeyondWrites(Self.firstScenarios, "new to migrate")
    }

    @Test(
        "save, import, sync --merge, verify --repair-from, resolve --all --merge and verify fail cleanly at injected opens, folder makings, removals, reads, listings, status, closes and locks (a seeded sample; SURVEYSTORE_EXHAUSTIVE=1 tries all), or, at a best-effort call, do what a clean run does"
    )
    func beyondWritesOfSaveImportMergeAndRepair() throws {
        try Self.expectCleanFailuresBeyondWrites(
            Self.scenarios.map(\.name).filter { !Self.firstScenarios.contains($0) && $0 != "conflicts" },
            "save to verify")
    }

    @Test(
        "init of a new store fails cleanly at every injected mkdir, open, write, fsync and rename: what it left is no store (or an empty one) to list and verify, and init again completes it"
    )
    func initOfANewStore() throws {
        guard let strace = CommandRunner.requireTool("strace") else { return }
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let calls = "trace=mkdirat,openat,openat2,write,fsync,renameat2"
        // A store in a folder that does not exist yet: init makes both.
        func store(_ label: String) -> String { directory.appendingPathComponent(label).path + "/new/store" }
        let probeLog = directory.appendingPathComponent("probe.trace").path
        let traced = try Self.probe(
            ["init", "--store", store("probe")], strace: strace, options: ["-y", "-e", calls], log: probeLog)
        // Every call on the store's folders (the count of its kind, as strace counts them).
        var points: [(call: String, index: Int)] = []
        var counts: [String: Int] = [:]
        for call in traced {
            counts[call.name, default: 0] += 1
            if call.line.contains(directory.path + "/probe") {
                points.append((call.name, counts[call.name]!))
            }
        }
        #expect(
            Set(points.map(\.call)).isSuperset(of: ["mkdirat", "write", "fsync", "renameat2"]),
            "nothing to inject: \(points)")
        var tried = 0
        for (call, index) in points {
            for (errno, text) in Self.errors {
                let label = "\(call)-\(index)-\(errno)"
                let path = store(label)
                let point = "init, \(call) #\(index) failing with \(errno)"
                let result = try CommandRunner.run(
                    ["init", "--store", path],
                    prefix: [
                        strace, "-qq", "-o", "/dev/null", "-e", calls, "-e",
                        "inject=\(call):error=\(errno):when=\(index)",
                    ])
                tried += 1
                #expect(
                    result.status == 1 && result.stderr.contains(text) && result.stdout.isEmpty,
                    "\(point): \(result.status) \(result.stderr)")
                // What is left is no store, said with how to make one, or a store with no
                // documents yet (its layout file written); verify says the same.
                let list = try CommandRunner.run(["list", "--store", path])
                let noStore =
                    "error: there is no store at \(path) (create one with `survey init --store \(path)`)\n"
                #expect(
                    list.status == 66 && list.stderr == noStore
                        || list.status == 0 && list.stderr.contains("no documents yet"),
                    "\(point): list: \(list.status) \(list.stderr)")
                let verify = try CommandRunner.run(["verify", "--store", path])
                #expect(
                    verify.status == 66 && verify.stderr == noStore || verify.status == 0,
                    "\(point): verify: \(verify.status) \(verify.stdout)\(verify.stderr)")
                // init again completes it: a store that takes a document and verifies clean.
                let again = try CommandRunner.run(["init", "--store", path])
                #expect(again.status == 0, "\(point): init again: \(again.stderr)")
                #expect(
                    try CommandRunner.run(["new", "--title", "T", "--store", path]).status == 0, "\(point)")
                let clean = try CommandRunner.run(["verify", "--store", path])
                #expect(clean.status == 0, "\(point): verify: \(clean.stdout)\(clean.stderr)")
                try? FileManager.default.removeItem(at: directory.appendingPathComponent(label))
            }
        }
        print("I/O errors: init of a new store: \(tried) injected failures")
    }

    @Test(
        "init of a store in folders that do not exist yet: a failed fsync of a folder it made names that folder as typed (the first, made in the current folder, was named '.')"
    )
    func initNamesTheFolderNotMadeDurable() throws {
        guard let strace = CommandRunner.requireTool("strace") else { return }
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let here = directory.resolvingSymlinksInPath().path
        let probeLog = directory.appendingPathComponent("probe.trace").path
        let traced = try Self.probe(
            ["init", "--store", "probe/b/store"], in: directory, strace: strace,
            options: ["-y", "-e", "trace=mkdirat,fsync"], log: probeLog)
        // Each folder made (as typed, relative to the current folder) and the fsync of its
        // parent that makes it durable, by that fsync's count.
        var points: [(index: Int, folder: String)] = []
        var made: (parent: String, folder: String)?
        var fsyncs = 0
        for call in traced {
            let parts = call.line.split(separator: "<", maxSplits: 1).last?.split(
                separator: ">", maxSplits: 1)
            guard let folder = parts?.first.map(String.init) else { continue }
            if call.name == "mkdirat", call.line.hasSuffix("= 0"),
                let name = call.line.split(separator: "\"").dropFirst().first
            {
                made = (folder, folder + "/" + name)
            } else if call.name == "fsync" {
                fsyncs += 1
                if let (parent, madeFolder) = made, parent == folder, madeFolder.hasPrefix(here + "/") {
                    points.append((fsyncs, String(madeFolder.dropFirst(here.count + 1))))
                }
                made = nil
            }
        }
        let expected = ["probe", "probe/b", "probe/b/store"]
        #expect(Array(points.map(\.folder).prefix(3)) == expected, "\(points)")
        for (index, folder) in points.prefix(3) {
            let typed = "a" + folder.dropFirst("probe".count)
            let result = try CommandRunner.run(
                ["init", "--store", "a/b/store"], in: directory,
                prefix: [
                    strace, "-qq", "-o", "/dev/null", "-e", "trace=fsync", "-e",
                    "inject=fsync:error=EIO:when=\(index)",
                ])
            #expect(
                result.status == 1
                    && result.stderr == "error: cannot flush to disk (fsync) \(typed): Input/output error\n",
                "fsync #\(index), making \(typed) durable: \(result.status) \(result.stderr)")
            try? FileManager.default.removeItem(at: directory.appendingPathComponent("a"))
        }
    }

    @Test(
        "export -o FILE and --package DIR into the current folder: a failed fsync of the folder after the rename names the file or package (it was named '.')"
    )
    func exportNamesTheOutputNotMadeDurable() throws {
        guard let strace = CommandRunner.requireTool("strace") else { return }
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("store").path
        #expect(try CommandRunner.run(["init", "--store", store]).status == 0)
        let id = try CommandRunner.run(["new", "--title", "Out", "--store", store]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        for (option, name) in [("-o", "out.json"), ("--package", "copy.survey")] {
            // The last fsync of a clean run is the folder's, after the rename.
            let log = directory.appendingPathComponent("\(name).trace").path
            let fsyncs = try Self.probe(
                ["export", id, option, "probe-" + name, "--store", store], in: directory, strace: strace,
                options: ["-e", "trace=fsync"], log: log
            ).filter { $0.name == "fsync" }.count
            let result = try CommandRunner.run(
                ["export", id, option, name, "--store", store], in: directory,
                prefix: [
                    strace, "-qq", "-o", "/dev/null", "-e", "trace=fsync", "-e",
                    "inject=fsync:error=EIO:when=\(fsyncs)",
                ])
            #expect(
                result.status == 1
                    && result.stderr.hasSuffix("cannot flush to disk (fsync) \(name): Input/output error\n"),
                "\(option) \(name), fsync #\(fsyncs) failing: \(result.status) \(result.stderr)")
        }
    }

    @Test("An I/O error looking at the store folder fails a write and keeps the device id")
    func storeFolderStatusError() throws {
        guard let strace = CommandRunner.requireTool("strace") else { return }
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (store, id) = try Self.storeWithHistory(directory)
        func deviceID() throws -> String {
            let data = try Data(contentsOf: URL(fileURLWithPath: store + "/Local.nosync/Device.plist"))
            let plist = try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any]
            return plist?["DeviceID"] as? String ?? ""
        }
        let device = try deviceID()
        let before = try Self.revisions(store)
        // The calls that take the status of the store folder itself, through its descriptor.
        let log = directory.appendingPathComponent("probe.trace").path
        let edit = ["edit", id, "--answer", "2=Ada", "--store", store]
        let calls = try Self.probe(
            ["edit", id, "--answer", "2=Lin", "--store", store], strace: strace,
            options: ["-y", "-s", "0", "-e", "trace=newfstatat"], log: log)
        let points = calls.indices.filter {
            calls[$0].line.contains("<\(store)>, \"\"") && calls[$0].line.contains("AT_EMPTY_PATH")
        }
        #expect(!points.isEmpty, "no status of the store folder taken: \(calls.map(\.line))")
        let after = try Self.revisions(store)
        for index in points {
            let result = try CommandRunner.run(
                edit,
                prefix: [
                    strace, "-qq", "-o", "/dev/null", "-e", "trace=newfstatat",
                    "-e", "inject=newfstatat:error=EIO:when=\(index + 1)",
                ])
            let point = "newfstatat #\(index + 1) of the store folder failing with EIO"
            #expect(result.status == 1, "\(point): \(result.status) \(result.stderr)")
            #expect(
                result.stderr.contains(store) && result.stderr.contains("Input/output error"),
                "\(point): \(result.stderr)")
            #expect(try deviceID() == device, "\(point): the device id was renewed")
            #expect(try Self.revisions(store) == after, "\(point): a revision was written")
        }
        #expect(after.count == before.count + 1)
    }

    @Test("verify says that an identity file it cannot read for an I/O error is unreadable, not replaced")
    func unreadableDeviceFile() throws {
        guard let strace = CommandRunner.requireTool("strace") else { return }
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (store, _) = try Self.storeWithHistory(directory)
        let log = directory.appendingPathComponent("probe.trace").path
        let verify = ["verify", "--json", "--store", store]
        let calls = try Self.probe(verify, strace: strace, options: ["-y", "-e", "trace=openat2"], log: log)
        // The last open is the check's (opening the store for reading looks at it first).
        let opens = calls.indices.filter { calls[$0].line.contains("\"Local.nosync/Device.plist\"") }
        #expect(!opens.isEmpty, "Device.plist is not opened: \(calls.map(\.line))")
        for index in opens.suffix(1) {
            let result = try CommandRunner.run(
                verify,
                prefix: [
                    strace, "-qq", "-o", "/dev/null", "-e", "trace=openat2",
                    "-e", "inject=openat2:error=EIO:when=\(index + 1)",
                ])
            let report = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            let problems = report?["problems"] as? [[String: Any]] ?? []
            let messages = problems.filter { ($0["path"] as? String)?.hasSuffix("/Device.plist") == true }
                .compactMap { $0["message"] as? String }
            #expect(result.status == 1, "\(result.status) \(result.stdout)")
            #expect(
                messages.count == 1 && messages.allSatisfy { $0.contains("Input/output error") },
                "\(messages)")
            // An I/O error fails the next command that writes; it never renews the identity.
            #expect(!messages.contains { $0.contains("replaces it") }, "\(messages)")
        }
    }
}
