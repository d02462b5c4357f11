import ArgumentParser
import Foundation
import SurveyStore
import Surveys
import Versions

struct VersionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "versions", abstract: "Every revision of a document.",
        discussion: """
            State: current (the winner), conflict (another head that is not a deletion), deleted (a head \
            that is a deletion), superseded (any revision a later one is based on, a deletion included).

            \(SurveyTool.exitCodesReference)
            """)
    @OptionGroup var options: StoreOptions
    @Argument(help: "The document.") var document: String

    struct Row: Encodable {
        var revision: String
        var parents: [String]
        var modified, device: String
        var formatVersion: Int
        var state: String
        var pruned: Bool
        /// The timestamp lies more than a day ahead of this device's clock: not trusted.
        var futureTimestamp: Bool
    }

    func run() throws {
        try runReporting {
            let store = try options.open()
            let id = try store.document(document)
            let rows = try versionRows(store, id)
            if options.json { try Console.printJSON(rows); return }
            for row in rows {
                print("\(row.revision)  \(row.modified)\(row.futureTimestamp ? " (ahead of this clock!)" : "")  \(row.device)  \(row.state)\(row.pruned ? " (pruned)" : "")")
            }
        }
    }
}

func versionRows(_ store: SurveyStore, _ id: UUID) throws -> [VersionsCommand.Row] {
    let graph = try store.graph(of: id)
    let pruned = try store.prunedRevisions(of: id)
    let heads = Set(graph.heads.map(\.id))
    let winner = graph.winner?.id
    return graph.revisions.values.sorted { RevisionGraph.precedes($0, $1) }.map { revision in
        let state: String =
            !heads.contains(revision.id) ? "superseded"
            : revision.isDeleted ? "deleted"
            : revision.id == winner ? "current" : "conflict"
        return VersionsCommand.Row(
            revision: revision.id.description, parents: revision.parents.map(\.description), modified: iso(revision.timestamp),
            device: revision.device.name, formatVersion: revision.formatVersion, state: state, pruned: pruned.contains(revision.id),
            futureTimestamp: HybridClock().isFarAhead(revision.timestamp))
    }
}

struct ConflictsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conflicts", abstract: "Documents in conflict.", discussion: SurveyTool.exitCodesReference)
    @OptionGroup var options: StoreOptions

    struct Row: Encodable {
        var id, current: String
        var title: String?
        var conflicts: [String]
    }

    func run() throws {
        try runReporting {
            let rows = try options.open().documents().filter { !$0.conflicts.isEmpty }.map {
                Row(id: $0.id.lowercased, current: $0.revision.id.description, title: $0.title, conflicts: $0.conflicts.map(\.description))
            }
            if options.json { try Console.printJSON(rows); return }
            for row in rows { print("\(row.id)  \(row.title ?? "—")  winner \(row.current)  conflicts \(row.conflicts.joined(separator: ", "))") }
        }
    }
}

struct ResolveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resolve", abstract: "Resolve every head into one new revision.",
        discussion: """
            A document that is not in conflict is left as it is ("resolved": false with --json); a \
            revision named with --keep must exist all the same. A deleted document is restored by \
            --keep REV (an earlier revision) or --from FILE.

            \(SurveyTool.exitCodesReference)
            """)
    @OptionGroup var options: StoreOptions
    @Argument(help: "The document.") var document: String
    @Flag(help: "Keep the nominated winner's content.") var accept = false
    @Option(help: "Keep this revision's content.") var keep: String?
    @Option(help: "Use this survey (JSON or XML plist).") var from: String?

    func validate() throws {
        if [accept, keep != nil, from != nil].filter({ $0 }).count != 1 {
            throw ValidationError("give exactly one of --accept, --keep REV and --from FILE")
        }
    }

    func run() throws {
        try runReporting {
            let store = try options.open()
            let id = try store.document(document)
            let resolution: SurveyStore.Resolution =
                accept ? .acceptWinner : try keep.map { .keep($0) } ?? .content(try readSurvey(from: from!))
            struct Resolved: Encodable {
                var id, revision: String
                var resolved: Bool
            }
            guard let resolved = try store.resolve(id, resolution) else {
                let current = try store.revision(id, nil).id.description
                if options.json { try Console.printJSON(Resolved(id: id.lowercased, revision: current, resolved: false)) }
                else { Console.error("\(id.lowercased) is not in conflict; nothing to resolve (it stays at \(current))") }
                return
            }
            if options.json { try Console.printJSON(Resolved(id: id.lowercased, revision: resolved.id.description, resolved: true)) }
            else { print(resolved.id.description) }
        }
    }
}

struct PruneCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prune", abstract: "Remove the content of losing and superseded revisions.",
        discussion: """
            Prints a line for each document as soon as something in it is pruned (or it is skipped, being \
            in conflict), then a summary. --json: {"documents": [{"id", "pruned", "skipped"}], "revisions", \
            "skipped"} (the counts), listing only the documents something was pruned from or skipped.

            \(SurveyTool.exitCodesReference)
            """)
    @OptionGroup var options: StoreOptions
    @Argument(help: "The document (default: every document).") var document: String?
    @Option(help: "Keep this many ancestors of the winner.") var keepHistory = 0

    func validate() throws {
        if keepHistory < 0 { throw ValidationError("--keep-history is a count of revisions, 0 or more") }
    }
    @Flag(help: "Say what would be pruned, and change nothing.") var dryRun = false

    struct Row: Encodable {
        var id: String
        var pruned: [String]
        var skipped: String?
    }

    func run() throws {
        try runReporting {
            let store = try options.open()
            // Only the folder names are listed up front: each document is read when its turn comes.
            let ids = try document.map { [try store.document($0)] } ?? store.documentIDs()
            let progress = ProgressBar(label: "documents", json: options.json)
            var rows: [Row] = []
            var pruned = 0
            for (index, id) in ids.enumerated() {
                let row: Row
                do {
                    row = Row(id: id.lowercased, pruned: try store.prune(id, keepHistory: keepHistory, dryRun: dryRun).map(\.description))
                } catch StoreError.inConflict(let id) where document == nil {
                    row = Row(id: id.lowercased, pruned: [], skipped: "in conflict")
                } catch StoreError.noSuchDocument where document == nil {
                    continue  // a folder without a revision is not a document
                }
                pruned += row.pruned.count
                if row.skipped != nil || !row.pruned.isEmpty {
                    rows.append(row)
                    if !options.json {
                        progress.clear()
                        if let skipped = row.skipped { print("\(row.id): skipped (\(skipped))") }
                        else { print("\(row.id): \(dryRun ? "would prune" : "pruned") \(row.pruned.count) revision(s)") }
                        fflush(nil)  // each line as it happens, also into a pipe
                    }
                }
                progress.update(index + 1, of: ids.count)
            }
            let skipped = rows.filter { $0.skipped != nil }.count
            if options.json {
                struct Report: Encodable {
                    var documents: [Row]
                    var revisions, skipped: Int
                }
                try Console.printJSON(Report(documents: rows, revisions: pruned, skipped: skipped))
                return
            }
            let verb = dryRun ? "would prune" : "pruned"
            let touched = rows.count - skipped
            print("\(verb) \(pruned) revision(s) in \(touched) of \(ids.count) document(s)\(skipped > 0 ? "; \(skipped) skipped (in conflict)" : "")")
        }
    }
}

struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify", abstract: "Check the store's integrity.",
        discussion: "Exits 0 only when the store is clean, 1 when it finds problems. \(SurveyTool.exitCodesReference)")
    @OptionGroup var options: StoreOptions

    func run() throws {
        try runReporting {
            guard FileManager.default.fileExists(atPath: options.path + "/Store.plist") else { throw StoreError.noSuchStore(options.path) }
            // Opening would remove leftovers; verify reports them instead.
            let problems = try SurveyStore.openWithoutCleaning(at: options.path).verify()
            struct Report: Encodable {
                struct Entry: Encodable { var path, message: String }
                var clean: Bool
                var problems: [Entry]
            }
            if options.json {
                try Console.printJSON(Report(clean: problems.isEmpty, problems: problems.map { .init(path: $0.path, message: $0.message) }))
            }
            for problem in problems { Console.error(problem.description) }
            if !options.json { print(problems.isEmpty ? "clean" : "\(problems.count) problem(s)") }
            if !problems.isEmpty { throw ExitStatus.failure }
        }
    }
}
