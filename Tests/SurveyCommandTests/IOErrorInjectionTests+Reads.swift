import Foundation
import Testing

/// Single failures, injected where a command read, looked or listed and used to pass over
/// the failure: each of these once ended in success (or in a failure reported after the
/// command had written).
extension IOErrorInjectionTests {
    /// What running a scenario's command with one call failing did.
    struct Injected {
        var result: CommandRunner.Result
        /// The stores the command changes, as copies of the scenario's.
        var stores: [String]
        /// Each store's revisions before the command.
        var before: [Set<String>]
        /// The calls the injected run made (`call`, `renameat` and `renameat2`), as `strace -y` shows them.
        var calls: [Traced]
    }

    /// Runs the command of `scenario` with `errno` injected into the `call` that `pick`
    /// chooses among the `call`s of a clean run (by position); `nil` when it chooses none,
    /// which is an issue unless `optional`.
    /// The copies are made in the folder `work` (which must not exist yet), the caller's
    /// to remove. Both runs get `environment`.
    static func injecting(
        _ errno: String, into call: String, of scenario: String, in work: URL, optional: Bool = false,
        json: Bool = true, environment: [String: String] = [:],
        sourceLocation: SourceLocation = #_sourceLocation,
        at pick: ([Traced]) -> Int?
    ) throws -> Injected? {
        let output = json ? ["--json"] : []
        guard let strace = CommandRunner.requireTool("strace") else { return nil }
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let base = try Self.scenario(scenario).prepare(work.appendingPathComponent("base"))
        let probe = try freshCopy(of: base, at: work.appendingPathComponent("probe"))
        let run = try freshCopy(of: base, at: work.appendingPathComponent("run"))
        // Read from a copy of its own: listing a store writes its summary cache, which the
        // command would then read, making calls the clean run did not.
        let reference = try freshCopy(of: base, at: work.appendingPathComponent("reference"))
        let before = try reference.stores.map { try revisions($0) }
        let traced = try Self.probe(
            probe.arguments + output, environment: environment, strace: strace,
            options: ["-y", "-s", "0", "-e", "trace=\(call)"],
            log: work.appendingPathComponent("probe.trace").path
        ).filter { $0.name == call }
        guard let position = pick(traced) else {
            if optional { return nil }
            Issue.record(
                "\(scenario): no \(call) to fail: \(traced.map(\.line))", sourceLocation: sourceLocation)
            return nil
        }
        let log = work.appendingPathComponent("run.trace").path
        let result = try CommandRunner.run(
            run.arguments + output, environment: environment,
            prefix: [
                strace, "-qq", "-y", "-s", "0", "-e", "trace=\(call),renameat,renameat2",
                "-e", "inject=\(call):error=\(errno):when=\(position + 1)", "-o", log,
            ])
        let calls = try trace(log)
        #expect(
            calls.contains { $0.line.contains("(INJECTED)") }, "\(scenario): nothing injected",
            sourceLocation: sourceLocation)
        return Injected(result: result, stores: run.stores, before: before, calls: calls)
    }

    /// ``injecting(_:into:of:in:optional:json:environment:sourceLocation:at:)`` in a temporary
    /// folder of its own, removed once `body` has looked at what the run did; `body` does
    /// not run when the run does not (the tool missing, or no call to fail).
    static func withInjected(
        _ errno: String, into call: String, of scenario: String, json: Bool = true,
        environment: [String: String] = [:], sourceLocation: SourceLocation = #_sourceLocation,
        at pick: ([Traced]) -> Int?, _ body: (Injected) throws -> Void
    ) throws {
        let work = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        guard
            let run = try injecting(
                errno, into: call, of: scenario, in: work.appendingPathComponent("run"), json: json,
                environment: environment, sourceLocation: sourceLocation, at: pick)
        else { return }
        try body(run)
    }

    /// Expects `result` to be a failure (exit 1) that names `text` on standard error and
    /// prints the error document.
    static func expectFailure(
        _ result: CommandRunner.Result, naming text: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(result.status == 1, "\(result.status) \(result.stdout)", sourceLocation: sourceLocation)
        #expect(result.stderr.contains(text), "\(result.stderr)", sourceLocation: sourceLocation)
        #expect(
            errorDocument(result)?["exit"] as? Int == 1, "\(result.stdout)", sourceLocation: sourceLocation)
    }

    /// The error document a command printed with `--json`, if that is what it printed.
    static func errorDocument(_ result: CommandRunner.Result) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])?["error"]
            as? [String: Any]
    }

    @Test(
        "prune of every document names one whose winner's content gives an input/output error, prunes nothing of it and exits 1 (it said 'skipped (its current revision cannot be read)' and exited 0)"
    )
    func pruneNamesAWinnerItCannotRead() throws {
        // The winner is the third revision; the first open of its content is the prune's
        // look at it.
        try Self.withInjected(
            "EIO", into: "openat2", of: "prune",
            at: { calls in
                calls.firstIndex { $0.line.contains("/3-") && $0.line.contains("Survey.plist\"") }
            }
        ) { run throws in
            let report =
                try JSONSerialization.jsonObject(with: Data(run.result.stdout.utf8)) as? [String: Any]
            let unreadable = report?["unreadable"] as? [[String: Any]] ?? []
            #expect(run.result.status == 1, "\(run.result.status) \(run.result.stderr)")
            #expect(
                run.result.stderr.contains("cannot be read, so it is not pruned")
                    && run.result.stderr.contains("Input/output error"), "\(run.result.stderr)")
            #expect(
                unreadable.count == 1
                    && (unreadable.first?["message"] as? String)?.contains("Input/output error") == true,
                "\(run.result.stdout)")
            #expect(Self.tombstones(run.stores[0]).isEmpty, "something was pruned")
            #expect(try Self.revisions(run.stores[0]) == run.before[0])
        }
    }

    @Test(
        "sync fails when it cannot open a document's folder for too many open files, sending and receiving nothing of it (it took that side for empty, sent nothing and exited 0)"
    )
    func syncFailsAtTooManyOpenFiles() throws {
        // The full read of this store's side of the document, under its locks (the first
        // open of its folder after the lock's).
        try Self.withInjected(
            "EMFILE", into: "openat2", of: "sync",
            at: { calls in
                calls.firstIndex {
                    $0.line.contains("/here>, \"Documents/") && $0.line.contains("O_DIRECTORY")
                } after: {
                    $0.line.contains("/here>, \"Local.nosync/locks/") && !$0.line.contains("writers.lock")
                }
            }
        ) { run throws in
            Self.expectFailure(run.result, naming: "Too many open files")
            #expect(!run.calls.contains { $0.name.hasPrefix("renameat") }, "something was published")
            for (store, before) in zip(run.stores, run.before) {
                #expect(try Self.revisions(store) == before, "\(store) changed")
            }
        }
    }

    @Test(
        "A sync that cannot read the content of the revision superseding a copy it would remove fails, naming the error (it kept the copy without a word and exited 0)"
    )
    func syncFailsWhenASuccessorCannotBeRead() throws {
        // Tombstones arrive here: the copies they disown go once the head superseding them
        // is read, after the prune note is made (the first content read after it).
        try Self.withInjected(
            "EIO", into: "openat2", of: "sync",
            at: { calls in
                calls.firstIndex {
                    $0.line.contains("/here>, \"Documents/") && $0.line.contains("Survey.plist\"")
                } after: {
                    $0.line.contains("/here>, \"Local.nosync/pruning\"") && !$0.line.contains("ENOENT")
                }
            }
        ) { run throws in
            Self.expectFailure(run.result, naming: "Input/output error")
            for (store, before) in zip(run.stores, run.before) {
                #expect(try Self.revisions(store).isSuperset(of: before), "\(store): a revision was lost")
                // The next command finishes the removal the note names.
                #expect(try CommandRunner.run(["init", "--store", store]).status == 0)
                let verify = try CommandRunner.run(["verify", "--store", store])
                #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
            }
        }
    }

    @Test(
        "edit, delete and resolve fail when looking at what a document's folder holds (for the warning naming what is no revision) gives an input/output error (it was passed over)"
    )
    func lookUpFailsOnAnIOError() throws {
        let work = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        for scenario in ["edit", "delete", "resolve"] {
            // The first open of the document's folder: the look-up's.
            guard
                let run = try Self.injecting(
                    "EIO", into: "openat2", of: scenario, in: work.appendingPathComponent(scenario),
                    at: { calls in calls.firstIndex { $0.line.contains("\"Documents/") } })
            else { continue }
            #expect(run.result.status == 1, "\(scenario): \(run.result.status) \(run.result.stdout)")
            #expect(
                run.result.stderr.contains("Input/output error")
                    && Self.errorDocument(run.result)?["exit"] as? Int == 1,
                "\(scenario): \(run.result.stderr)")
            #expect(try Self.revisions(run.stores[0]) == run.before[0], "\(scenario): the store changed")
        }
    }

    @Test(
        "new fails when looking at its new document's folder gives an input/output error (the failure was taken for a document with no revisions yet)"
    )
    func newFailsOnAnIOErrorReadingItsFolder() throws {
        try Self.withInjected(
            "EIO", into: "openat2", of: "new",
            at: { calls in
                calls.firstIndex { $0.line.contains("\"Documents/") && $0.line.contains("ENOENT") }
            }
        ) { run throws in
            #expect(run.result.status == 1, "\(run.result.status) \(run.result.stdout)")
            #expect(
                run.result.stderr.contains("Input/output error")
                    && Self.errorDocument(run.result)?["exit"] as? Int == 1,
                "\(run.result.stderr)")
            let after = try Self.revisions(run.stores[0])
            #expect(after == run.before[0], "a document was made: \(after) \(run.before[0])")
        }
    }

    @Test(
        "migrate fails, before writing anything, when reading a document's current content or listing the documents gives an input/output error (a failed read of the content was passed over, and a failed listing after the migration reported a failure although it had migrated)"
    )
    func migrateFailsBeforeWriting() throws {
        let work = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        // The first read of the winner's content (the listing's), and every listing of the
        // documents' folder.
        var points: [(call: String, pick: ([Traced]) -> Int?)] = [
            ("openat2", { calls in calls.firstIndex { $0.line.contains("Survey.plist\"") } })
        ]
        for listing in 0..<4 {
            points.append(
                (
                    "getdents64",
                    { calls in
                        let listings = calls.indices.filter { calls[$0].line.contains("/Documents>, ") }
                        return listing < listings.count ? listings[listing] : nil
                    }
                ))
        }
        var tried = 0
        for (number, (call, pick)) in points.enumerated() {
            guard
                let run = try Self.injecting(
                    "EIO", into: call, of: "migrate", in: work.appendingPathComponent("\(number)"),
                    optional: call == "getdents64", at: pick)
            else { continue }
            tried += 1
            #expect(run.result.status == 1, "\(call): \(run.result.status) \(run.result.stdout)")
            #expect(run.result.stderr.contains("Input/output error"), "\(call): \(run.result.stderr)")
            // A failure reported is a failure before anything was written.
            #expect(
                !run.calls.contains { $0.name.hasPrefix("renameat") },
                "\(call): migrated, then reported a failure")
            #expect(try Self.revisions(run.stores[0]) == run.before[0], "\(call): the store changed")
        }
        #expect(tried >= 2)
    }
}

extension IOErrorInjectionTests {
    @Test(
        "sync --merge fails when listing a document for the merge gives an input/output error, naming the error, the conflict left for the next merge (it left the document in conflict, named neither merged nor unmerged, and exited 0)"
    )
    func syncMergeFailsWhenItCannotListADocument() throws {
        // The listings of this side's document folder that return entries: the last is the
        // merge's own, under its lock; the one before it, the look for conflicts to merge.
        try Self.withInjected(
            "EIO", into: "getdents64", of: "sync --merge",
            at: { calls in
                calls.nextToLastIndex {
                    $0.line.contains("/here/Documents/") && !$0.line.hasSuffix(" = 0")
                }
            }
        ) { run throws in
            Self.expectFailure(run.result, naming: "Input/output error")
            // The sync itself went ahead: both sides hold the conflict, which the next merge takes.
            for (store, before) in zip(run.stores, run.before) {
                #expect(try Self.revisions(store).isSuperset(of: before), "\(store): a revision was lost")
            }
            let again = try CommandRunner.run([
                "sync", run.stores[1], "--merge", "--json", "--store", run.stores[0],
            ])
            let report = try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any]
            #expect(
                again.status == 0 && (report?["merged"] as? [String])?.count == 1,
                "\(again.stdout)\(again.stderr)")
        }
    }
}

extension IOErrorInjectionTests {
    @Test(
        "verify --repair-from names a document whose revision's content gives an input/output error when it looks for damage, repairs nothing of it and exits 1; the repair run again repairs it (the error was taken for no damage: the torn content was left unrepaired and the error never named)"
    )
    func repairNamesADocumentItCannotLookAt() throws {
        // The torn content is the one file the replica's copy of is read: the first open of
        // this store's copy is the look for damage. Hashing made deterministic, so that the
        // injected run looks at the revisions in the order the clean run did.
        try Self.withInjected(
            "EIO", into: "openat2", of: "verify --repair-from",
            environment: ["SWIFT_DETERMINISTIC_HASHING": "1"],
            at: { calls in
                func file(_ line: String) -> Substring? {
                    line.split(separator: "\"").dropFirst().first
                }
                guard
                    let copy = calls.first(where: {
                        $0.line.contains("/replica>, \"Documents/") && $0.line.contains("Survey.plist\"")
                    }), let torn = file(copy.line)
                else { return nil }
                return calls.firstIndex { $0.line.contains("/store>, \"") && file($0.line) == torn }
            }
        ) { run throws in
            #expect(run.result.status == 1, "\(run.result.status) \(run.result.stdout)")
            #expect(
                run.result.stderr.contains("not repaired: ")
                    && run.result.stderr.contains("cannot be read, so it is not repaired")
                    && run.result.stderr.contains("Input/output error"), "\(run.result.stderr)")
            let report =
                try JSONSerialization.jsonObject(with: Data(run.result.stdout.utf8)) as? [String: Any]
            let unrepaired = report?["unrepaired"] as? [[String: Any]] ?? []
            #expect(
                unrepaired.count == 1
                    && (unrepaired.first?["message"] as? String)?.contains("Input/output error") == true,
                "\(run.result.stdout)")
            try Self.expectRepairedWhenRunAgain(run)
        }
    }

    @Test(
        "verify --repair-from names the other store's copy of a document it cannot read for an input/output error (it said that the other store had no copy of the damaged package)"
    )
    func repairNamesACopyItCannotRead() throws {
        // The replica's document folder, listed to read its copy of the document.
        try Self.withInjected(
            "EIO", into: "getdents64", of: "verify --repair-from of metadata",
            at: { calls in calls.firstIndex { $0.line.contains("/replica/Documents/") } }
        ) { run throws in
            #expect(run.result.status == 1, "\(run.result.status) \(run.result.stdout)")
            #expect(
                run.result.stderr.contains("cannot be read, so it is not used for the repair")
                    && run.result.stderr.contains("Input/output error")
                    && !run.result.stderr.contains("has no copy"), "\(run.result.stderr)")
            try Self.expectRepairedWhenRunAgain(run)
        }
    }

    @Test(
        "conflicts names a head whose content gives an input/output error in a warning, leaves its merge unpreviewed and exits 1, the listing incomplete (it said 'cannot be merged' without a word of why, exit 0)"
    )
    func conflictsNamesAHeadItCannotRead() throws {
        // The last read of a head's content: the merge's preview (the listing reads the
        // winner's before).
        try Self.withInjected(
            "EIO", into: "read", of: "conflicts",
            at: { calls in calls.lastIndex { $0.line.contains(".survey/Survey.plist>") } }
        ) { run throws in
            Self.expectIncompleteListing(run.result, saying: "so the merge preview of document")
            let rows =
                try JSONSerialization.jsonObject(with: Data(run.result.stdout.utf8)) as? [[String: Any]]
            #expect(rows?.count == 1 && rows?.first?["contested"] is NSNull, "\(run.result.stdout)")
        }
    }

    @Test(
        "conflicts' text row says that a merge it could not preview for an input/output error is not previewed (it said 'cannot be merged', which the heads may well be)"
    )
    func conflictsSaysAMergeIsNotPreviewed() throws {
        // The last read of a head's content, as in `conflictsNamesAHeadItCannotRead`.
        try Self.withInjected(
            "EIO", into: "read", of: "conflicts", json: false,
            at: { calls in calls.lastIndex { $0.line.contains(".survey/Survey.plist>") } }
        ) { run throws in
            Self.expectIncompleteListing(run.result, saying: "so the merge preview of document")
            let rows = run.result.stdout.split(separator: "\n")
            #expect(
                rows.count == 1 && rows[0].hasSuffix("  merge not previewed")
                    && !rows[0].contains("cannot be merged"), "\(run.result.stdout)")
        }
    }

    @Test(
        "conflicts names a document whose folder gives an input/output error when it looks for deletions among the heads, and exits 1, the listing incomplete (it listed no deletion, exit 0)"
    )
    func conflictsNamesDeletionsItCannotLookFor() throws {
        // The document folder's listings (each a call that returns entries, then one that
        // returns none) end with the one read for the deletions and the merge preview: the
        // last.
        try Self.withInjected(
            "EIO", into: "getdents64", of: "conflicts",
            at: { calls in
                calls.lastIndex {
                    $0.line.contains("/Documents/") && !$0.line.contains(".survey>")
                        && !$0.line.hasSuffix(" = 0")
                }
            }
        ) { run throws in
            Self.expectIncompleteListing(
                run.result, saying: "so the deletions and the merge preview of document")
            let rows =
                try JSONSerialization.jsonObject(with: Data(run.result.stdout.utf8)) as? [[String: Any]]
            #expect(rows?.count == 1, "\(run.result.stdout)")
        }
    }

    /// Expects the injected repair `run` to have published nothing, and the same repair run
    /// again without the failure to repair the store.
    private static func expectRepairedWhenRunAgain(
        _ run: Injected, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(
            !run.calls.contains { $0.name.hasPrefix("renameat") }, "something was published",
            sourceLocation: sourceLocation)
        // The stores in the order of their names: the replica (`other`), then this store.
        let again = try CommandRunner.run([
            "verify", "--repair-from", run.stores[0], "--store", run.stores[1],
        ])
        #expect(
            again.status == 0 && again.stderr.contains("repaired: "), "\(again.stdout)\(again.stderr)",
            sourceLocation: sourceLocation)
    }

    /// Expects `result` to be a listing that warns of an input/output error with `text`, then
    /// ends saying it is incomplete, exit 1.
    private static func expectIncompleteListing(
        _ result: CommandRunner.Result, saying text: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(result.status == 1, "\(result.status) \(result.stderr)", sourceLocation: sourceLocation)
        #expect(
            result.stderr.contains("Input/output error") && result.stderr.contains(text)
                && result.stderr.hasSuffix(
                    "error: 1 document could not be read, so this listing is incomplete\n"),
            "\(result.stderr)", sourceLocation: sourceLocation)
    }

    /// Runs `verify` with `EIO` injected into the `call` that `pick` chooses, and expects it
    /// to exit 1 naming the error among its problems, where it said "clean".
    private static func expectVerifyNamesFailure(
        of call: String, _ label: String, sourceLocation: SourceLocation = #_sourceLocation,
        at pick: ([Traced]) -> Int?
    ) throws {
        try Self.withInjected(
            "EIO", into: call, of: "verify",
            sourceLocation: sourceLocation, at: pick
        ) { run throws in
            let report =
                try? JSONSerialization.jsonObject(with: Data(run.result.stdout.utf8)) as? [String: Any]
            let problems = (report?["problems"] as? [[String: Any]] ?? []).filter {
                ($0["message"] as? String ?? "").contains("Input/output error")
            }
            #expect(run.result.status == 1, "\(label): \(run.result.stdout)", sourceLocation: sourceLocation)
            #expect(
                problems.count == 1 && run.result.stderr.contains("Input/output error"),
                "\(label): \(run.result.stdout)\(run.result.stderr)", sourceLocation: sourceLocation)
        }
    }

    @Test(
        "verify names what it could not look at for an input/output error: this device's identity file, a lock file, a package's entries (it passed over each and said clean)"
    )
    func verifyNamesWhatItCannotLookAt() throws {
        // The identity file's status that verify takes itself (the last look at it).
        try Self.expectVerifyNamesFailure(of: "newfstatat", "identity file") { calls in
            calls.lastIndex {
                $0.line.contains("\"Device.plist\"") && $0.line.contains("AT_SYMLINK_NOFOLLOW")
            }
        }
        // A lock file's: verify looks for one with more than one name.
        try Self.expectVerifyNamesFailure(of: "newfstatat", "lock file") { calls in
            calls.lastIndex { $0.line.contains("/Local.nosync/locks>, \"") }
        }
        // A package's entries: verify looks for anything else inside it.
        try Self.expectVerifyNamesFailure(of: "getdents64", "package") { calls in
            calls.firstIndex { $0.line.contains(".survey>") }
        }
    }
}

extension [IOErrorInjectionTests.Traced] {
    /// The position of the first call that `isMatch` takes from the first that `isAfter`
    /// takes on.
    func firstIndex(where isMatch: (Element) -> Bool, after isAfter: (Element) -> Bool) -> Int? {
        guard let start = firstIndex(where: isAfter) else { return nil }
        return self[start...].firstIndex(where: isMatch)
    }

    /// The position of the last call but one that `isMatch` takes.
    func nextToLastIndex(where isMatch: (Element) -> Bool) -> Int? {
        let matches = indices.filter { isMatch(self[$0]) }
        return matches.count >= 2 ? matches[matches.count - 2] : nil
    }
}
