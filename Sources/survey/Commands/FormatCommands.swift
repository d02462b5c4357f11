import ArgumentParser
import Foundation
import SurveyStore

struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Format-migration check of stores, document folders or bare revision packages.",
        discussion: """
            For each revision: its status (current, migratable, newer, invalid), format version and path; \
            --json: {"revisions": [{"path", "document", "revision", "formatVersion", "status", "message"}]}. \
            Exits 0 only if every revision is current or migratable (a store with no documents has none to \
            check: it passes, and a note on standard error says so); 66 when a PATH does not exist, else 65. \
            A bare package whose content was only re-encoded (line ends, a byte-order mark, UTF-16) passes, \
            with a note, as import keeps its revision; in a store such content is invalid (it does not open). \
            An entry of a store's Documents that verify names as skipped (a link or file in a document \
            folder's place), and a folder that cannot be listed, are invalid rows too; so is a store's \
            Store.plist that is not a layout file (damaged, or cut short), which every other command \
            refuses, and then no revision of that store is checked.

            \(SurveyTool.exitCodesReference)
            """)
    @Argument(help: "Stores, document folders or revision packages.") var paths: [String]
    @Flag(help: "Print one JSON document.") var json = false

    func validate() throws {
        try PathArgument.requireNames(paths, for: "<paths>")
    }

    func run() throws {
        let progress = ProgressBar(label: "revisions", json: json)
        let results = paths.flatMap { path in
            let found = FormatCheck.check(path) { done, total in progress.update(done, of: total) }
            if found.isEmpty {
                Console.error(
                    "note: \(ShownText.escaping(path)): the store has no documents, so no revision to check")
            }
            return found
        }
        if json {
            try Console.printJSON(["revisions": results])
        } else {
            for result in results {
                let version = result.formatVersion.map { "format \($0)" } ?? "format ?"
                print(
                    "\(result.status.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0)) \(version)  \(ShownText.escaping(result.path))"
                )
            }
        }
        for result in results
        where result.message != nil || result.status == .invalid || result.status == .newer {
            let passes = result.status == .current || result.status == .migratable
            Console.error((passes ? "note: " : "") + Self.message(result))
        }
        if paths.contains(where: { !FormatCheck.exists($0) }) { throw ExitStatus.noInput }
        if results.contains(where: { $0.status == .invalid || $0.status == .newer }) {
            throw ExitStatus.invalidData
        }
    }
}

extension CheckCommand {
    /// Why `result` failed, as standard error says it: `PATH: message`, or the message
    /// alone when it starts with a path beneath PATH. Each path is written out
    /// (`ShownText`), so that a line feed in a name never splits the line.
    static func message(_ result: FormatCheck.Result) -> String {
        let message = result.message ?? result.status.rawValue
        let shown = ShownText.escaping(result.path)
        // A file's error names it written out already; the check's own messages, as it is.
        if message.hasPrefix(shown) { return message }
        if message.hasPrefix(result.path) { return shown + message.dropFirst(result.path.count) }
        return "\(shown): \(message)"
    }
}

struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Rewrite winners in older formats as new revisions in the current format.",
        discussion: """
            Winners in a format newer than this build are left as they are and listed ("newer" with --json). \
            A winner that cannot be migrated (malformed or damaged content, or not a valid survey once \
            migrated) is left as it is and listed with its revision and why ("notMigrated" with --json); \
            every other document is migrated, and the command then exits 65. So is a document whose lock \
            file is a folder or a link, or keeps being replaced, and one whose folder holds a revision that \
            cannot be read yet (half-copied or damaged), which may supersede its winner (exit 1 when no \
            winner is invalid). A document no revision of which can be read yet is named on standard error \
            and left as it is, and the command then exits 1 (when no winner is invalid). \
            --json: {"migrated": [{"id", "from", "fromFormat", "revision"}], "newer": [id], "notMigrated": \
            [{"id", "revision", "fromFormat", "error": {"code", "message", "exit"}}], "unreadable": [{"id", \
            "path", "message"}]}, where "revision" in "migrated" is the new revision (null with --dry-run).

            \(SurveyTool.exitCodesReference)
            """)
    @OptionGroup var options: StoreOptions
    @Flag(
        help:
            "Say what would be migrated, and change nothing (the store is only read; no lock, no Local.nosync/)."
    ) var dryRun = false

    struct Row: Encodable {
        var id, from: String
        var fromFormat: Int
        /// The new revision; `null` in a dry run, where none is written.
        @NullIfAbsent var revision: String?

        init(_ migration: SurveyStore.Migration) {
            id = migration.document.lowercased
            from = migration.from.id.description
            fromFormat = migration.from.formatVersion
            revision = migration.to?.id.description
        }
    }

    /// A document whose winner could not be migrated, and why.
    struct NotMigrated: Encodable {
        var id, revision: String
        var fromFormat: Int
        var error: CommandFailure.Body
    }

    /// `ID: format 1 → 2 as REV`, or `… (dry run)`.
    static func line(_ row: Row) -> String {
        "\(row.id): format \(row.fromFormat) → \(SurveyStore.formatVersion)\(row.revision.map { " as \($0)" } ?? " (dry run)")"
    }

    func run() throws {
        try runReporting {
            let progress = ProgressBar(label: "documents", json: options.json)
            let store = try dryRun ? options.openForDryRun() : options.open()
            var writtenBefore: [SurveyStore.Migration] = []
            let report: SurveyStore.MigrationReport
            do {
                report = try store.migrate(
                    dryRun: dryRun, progress: { done, total in progress.update(done, of: total) },
                    written: { writtenBefore += $0 })
            } catch {
                // The batches written before the failure stay migrated: they are said, as
                // rows (but with --json, whose one document is the error) and in a count.
                if !writtenBefore.isEmpty {
                    if !options.json { for migration in writtenBefore { print(Self.line(Row(migration))) } }
                    let count = writtenBefore.count == 1 ? "1 document" : "\(writtenBefore.count) documents"
                    Console.error("\(count) migrated before the failure; the others are left as they were")
                }
                throw error
            }
            let rows = report.migrated.map(Row.init)
            let newer = report.newer
            // Each is named by its document and revision: a broken rule needs no file too.
            let failures = report.notMigrated.map { failed in
                (
                    failed: failed,
                    failure: CommandFailure((failed.error as? SurveyError)?.leavingOutFile ?? failed.error)
                )
            }
            let unreadable = report.unreadable.map { Unreadable($0) }
            if options.json {
                struct Report: Encodable {
                    var migrated: [Row]
                    var newer: [String]
                    var notMigrated: [NotMigrated]
                    var unreadable: [Unreadable]
                }
                try Console.printJSON(
                    Report(
                        migrated: rows, newer: newer.map(\.id.lowercased),
                        notMigrated: failures.map { failed, failure in
                            NotMigrated(
                                id: failed.document.lowercased, revision: failed.from.id.description,
                                fromFormat: failed.from.formatVersion,
                                error: failure.body)
                        }, unreadable: unreadable))
            } else {
                for row in rows { print(Self.line(row)) }
                for summary in newer {
                    print(
                        "\(summary.id.lowercased): format \(summary.revision.formatVersion) is newer than this build supports (\(SurveyStore.formatVersion)); left as it is"
                    )
                }
                for (failed, failure) in failures {
                    var reason = failure.file == nil && failure.line == nil ? failure.message : failure.text
                    if case StoreError.unseenForMigration(_, let revisions) = failed.error {
                        // Not "document ID is not migrated" again after the row's own words.
                        reason =
                            "its folder holds \(revisions.count == 1 ? "a revision" : "revisions") it cannot read yet (\(revisions.map(\.description).joined(separator: ", ")); half-copied, damaged, or something else in its place), which may supersede its winner: migrated now, the two would be in conflict"
                            + Advice.namingStore(
                                in: Advice.suffix(for: .finishCopyThenMigrate(count: revisions.count)))
                    }
                    Console.printRow(
                        "\(failed.document.lowercased): format \(failed.from.formatVersion) (\(failed.from.id)) not migrated: \(reason)"
                    )
                }
                if rows.isEmpty && newer.isEmpty && failures.isEmpty && unreadable.isEmpty {
                    print("every winner is in the current format")
                } else if rows.isEmpty {
                    // Winners in newer formats, or ones that could not be migrated or read
                    // (named).
                    print(failures.isEmpty && unreadable.isEmpty ? "nothing to migrate" : "nothing migrated")
                }
            }
            // Named on standard error, as every command over many documents names what it
            // could not read, and counted at the end.
            for issue in report.unreadable { Console.error("error: \(Advice.describe(issue))") }
            if !unreadable.isEmpty {
                Console.error("error: \(Unreadable.count(unreadable.count)), so not migrated")
            }
            guard let first = failures.first else {
                if !unreadable.isEmpty { throw ExitStatus.failure }
                return
            }
            let count = failures.count == 1 ? "1 document" : "\(failures.count) documents"
            Console.error(
                "error: \(count) not migrated, left as \(failures.count == 1 ? "it is" : "they are")")
            // A winner that is invalid data decides the exit; lock files alone exit 1.
            let invalid = failures.contains { $0.failure.exit == ExitStatus.invalidData.rawValue }
            throw invalid ? ExitStatus.invalidData : ExitCode(first.failure.exit)
        }
    }
}
