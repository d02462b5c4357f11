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
            check: it passes, and a note on standard error says so); 66 when a PATH does not exist, else 65.

            \(SurveyTool.exitCodesReference)
            """)
    @Argument(help: "Stores, document folders or revision packages.") var paths: [String]
    @Flag(help: "Print one JSON document.") var json = false

    func run() throws {
        let progress = ProgressBar(label: "revisions", json: json)
        let results = paths.flatMap { path in
            let found = FormatCheck.check(path) { done, total in progress.update(done, of: total) }
            if found.isEmpty {
                Console.error("note: \(path): the store has no documents, so no revision to check")
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
        for result in results where result.status == .invalid || result.status == .newer {
            let message = result.message ?? result.status.rawValue
            Console.error(message.hasPrefix(result.path) ? message : "\(result.path): \(message)")
        }
        if paths.contains(where: { !FormatCheck.exists($0) }) { throw ExitStatus.noInput }
        if results.contains(where: { $0.status == .invalid || $0.status == .newer }) {
            throw ExitStatus.invalidData
        }
    }
}

struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Rewrite winners in older formats as new revisions in the current format.",
        discussion: """
            Winners in a format newer than this build are left as they are and listed ("newer" with --json). \
            --json: {"migrated": [{"id", "from", "fromFormat", "revision"}], "newer": [id]}, where "revision" is \
            the new revision (null with --dry-run).

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
    }

    func run() throws {
        try runReporting {
            let progress = ProgressBar(label: "documents", json: options.json)
            let store = try dryRun ? options.openForReading() : options.open()
            let rows = try store.migrate(dryRun: dryRun) { done, total in progress.update(done, of: total) }
                .map {
                    Row(
                        id: $0.document.lowercased, from: $0.from.id.description,
                        fromFormat: $0.from.formatVersion, revision: $0.to?.id.description)
                }
            let newer = try store.documents().filter {
                !$0.isDeleted && $0.revision.formatVersion > SurveyStore.formatVersion
            }
            if options.json {
                struct Report: Encodable {
                    var migrated: [Row]
                    var newer: [String]
                }
                try Console.printJSON(Report(migrated: rows, newer: newer.map(\.id.lowercased)))
                return
            }
            for row in rows {
                print(
                    "\(row.id): format \(row.fromFormat) → \(SurveyStore.formatVersion)\(row.revision.map { " as \($0)" } ?? " (dry run)")"
                )
            }
            for summary in newer {
                print(
                    "\(summary.id.lowercased): format \(summary.revision.formatVersion) is newer than this build supports (\(SurveyStore.formatVersion)); left as it is"
                )
            }
            if rows.isEmpty && newer.isEmpty {
                print("every winner is in the current format")
            } else if rows.isEmpty {
                print("nothing to migrate")
            }
        }
    }
}
