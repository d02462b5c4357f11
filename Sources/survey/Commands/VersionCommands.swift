import ArgumentParser
import Foundation
import SurveyStore
import Surveys
import Versions

struct VersionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "versions", abstract: "Every revision of a document.")
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
            let store = try options.openForReading()
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
            revision.isDeleted ? "deleted"
            : revision.id == winner ? "current"
            : heads.contains(revision.id) ? "conflict" : "superseded"
        return VersionsCommand.Row(
            revision: revision.id.description, parents: revision.parents.map(\.description), modified: iso(revision.timestamp),
            device: revision.device.name, formatVersion: revision.formatVersion, state: state, pruned: pruned.contains(revision.id),
            futureTimestamp: HybridClock().isFarAhead(revision.timestamp))
    }
}

struct ConflictsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "conflicts", abstract: "Documents in conflict.")
    @OptionGroup var options: StoreOptions

    struct Row: Encodable {
        var id, current: String
        var title: String?
        var conflicts: [String]
    }

    func run() throws {
        try runReporting {
            let rows = try options.listDocuments().filter { !$0.conflicts.isEmpty }.map {
                Row(id: $0.id.lowercased, current: $0.revision.id.description, title: $0.title, conflicts: $0.conflicts.map(\.description))
            }
            if options.json { try Console.printJSON(rows); return }
            for row in rows { print("\(row.id)  \(row.title ?? "—")  winner \(row.current)  conflicts \(row.conflicts.joined(separator: ", "))") }
        }
    }
}

struct ResolveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "resolve", abstract: "Resolve every head into one new revision.")
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
                accept ? .acceptWinner : try keep.map { .keep($0) } ?? .content(try readSurvey(from: from!, document: id))
            guard let resolved = try store.resolve(id, resolution) else {
                if options.json { try Console.printJSON(["id": id.lowercased, "revision": try store.revision(id, nil).id.description]) }
                else { Console.error("\(id.lowercased) is not in conflict; nothing to resolve") }
                return
            }
            try options.report(id, resolved)
        }
    }
}

struct PruneCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "prune", abstract: "Remove the content of losing and superseded revisions.")
    @OptionGroup var options: StoreOptions
    @Argument(help: "The document (default: every document).") var document: String?
    @Option(help: "Keep this many ancestors of the winner.") var keepHistory = 0
    @Flag(help: "Say what would be pruned, and change nothing.") var dryRun = false

    struct Row: Encodable {
        var id: String
        var pruned: [String]
        var skipped: String?
    }

    func run() throws {
        try runReporting {
            let store = try options.open()
            let ids = try document.map { [try store.document($0)] } ?? store.documents().map(\.id)
            var rows: [Row] = []
            for id in ids {
                do {
                    rows.append(Row(id: id.lowercased, pruned: try store.prune(id, keepHistory: keepHistory, dryRun: dryRun).map(\.description)))
                } catch StoreError.inConflict(let id) where document == nil {
                    rows.append(Row(id: id.lowercased, pruned: [], skipped: "in conflict"))
                } catch StoreError.unreadableWinner(let id, _) where document == nil {
                    rows.append(Row(id: id.lowercased, pruned: [], skipped: "its current revision cannot be read"))
                }
            }
            if options.json { try Console.printJSON(["documents": rows]); return }
            for row in rows {
                if let skipped = row.skipped { print("\(row.id): skipped (\(skipped))") }
                else { print("\(row.id): \(dryRun ? "would prune" : "pruned") \(row.pruned.count) revision(s)") }
            }
        }
    }
}

struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "verify", abstract: "Check the store's integrity.")
    @OptionGroup var options: StoreOptions

    func run() throws {
        try runReporting {
            // Read only: verify reports leftovers instead of removing them, and works on a
            // read-only store.
            let found = try SurveyStore.openForReading(at: options.path).verify()
            let problems = found.filter { !$0.isNote }, notes = found.filter(\.isNote)
            struct Report: Encodable {
                struct Entry: Encodable { var path, message: String }
                var clean: Bool
                var problems: [Entry]
                var notes: [Entry]
            }
            if options.json {
                try Console.printJSON(
                    Report(
                        clean: problems.isEmpty, problems: problems.map { .init(path: $0.path, message: $0.message) },
                        notes: notes.map { .init(path: $0.path, message: $0.message) }))
            }
            for entry in found { Console.error(entry.description) }
            if !options.json {
                print(problems.isEmpty ? "clean" + (notes.isEmpty ? "" : " (\(notes.count) note(s))") : "\(problems.count) problem(s)")
            }
            if !problems.isEmpty { throw ExitStatus.failure }
        }
    }
}
