import ArgumentParser
import Foundation
import SurveyStore
import Surveys
import Versions

/// `survey demo`: the README's run command. Creates a store with the sample survey,
/// makes two concurrent edits, shows the conflict and the winner, resolves and prunes.
struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Walk through a conflict on a sample survey: two concurrent edits, the winner, resolve, prune.")

    @Option(help: "Where to create the demo store (default: a new temporary folder).") var store: String?
    @Flag(help: "Print one JSON document summarising the walk-through instead of the narration.") var json = false

    /// Narration goes to standard output, or nowhere with `--json`.
    private func say(_ line: String) {
        if !json { print(line) }
    }

    func run() throws {
        try runReporting {
            let path = store ?? FileManager.default.temporaryDirectory.appendingPathComponent("survey-demo-\(UUID().uuidString.prefix(8))").path
            let store = try SurveyStore.create(at: path, deviceName: "demo laptop")
            say("1. Created the store \(path) (device \"\(store.device.name)\").")

            let survey = try Survey(json: Data(Survey.exampleJSON.utf8))
            let (id, first) = try store.create(survey)
            say("2. Created \"\(survey.title)\" with \(survey.items.count) items, one of each kind:")
            say("   document \(id.lowercased), revision \(first.id)")

            var edit = survey
            try edit.setAnswer(.number(9), forItem: survey.items[4].id)
            let a = try store.save(edit, to: id, base: first.id.description)
            say("3. Edit A, based on \(first.id.short): \"Rate us\" = 9 → revision \(a.id.short)")

            // A second edit from the same base, as another device or process would make
            // while the first was not yet visible to it.
            Thread.sleep(forTimeInterval: 0.01)
            var other = survey
            try other.setAnswer(.number(6), forItem: survey.items[4].id)
            try other.setAnswer(.text("Grace"), forItem: survey.items[2].id)
            let b = try store.save(other, to: id, base: first.id.description)
            say("4. Edit B, also based on \(first.id.short): \"Rate us\" = 6, \"Your name\" = Grace → revision \(b.id.short)")

            let graph = try store.graph(of: id)
            say("5. Both edits are kept: the document has \(graph.heads.count) heads and is \(graph.isInConflict ? "in conflict" : "not in conflict").")
            if let winner = graph.winner {
                say("   The winner, the same on every replica, is the newest: \(winner.id.short) from \(iso(winner.timestamp)).")
                let shown = try store.survey(id, winner)
                say("   It says \"Rate us\" = \(shown.items[4].answer.map(describe) ?? "—"), \"Your name\" = \(shown.items[2].answer.map(describe) ?? "—").")
            }
            say("   Unresolved conflict versions: \(graph.conflicts.map(\.id.short).joined(separator: ", "))")

            let resolved = try store.resolve(id, .acceptWinner)!
            let after = try store.graph(of: id)
            say("6. Resolved by accepting the winner: revision \(resolved.id.short) with parents \(resolved.parents.map(\.short).joined(separator: " and ")).")
            say("   Heads now: \(after.heads.count); in conflict: \(after.isInConflict ? "yes" : "no").")

            let pruned = try store.prune(id)
            say("7. Pruned the content of \(pruned.count) revisions no longer current: \(pruned.map(\.short).joined(separator: ", ")).")
            say("   Their ids and parents stay, as tombstones:")
            for row in try versionRows(store, id) {
                say("     \(row.revision.prefix(14))…  \(row.state)\(row.pruned ? ", pruned" : "")")
            }

            let problems = store.verify()
            say("8. verify: \(problems.isEmpty ? "clean" : problems.map(\.description).joined(separator: "; "))")
            say("Explore it: survey versions \(id.lowercased.prefix(8)) --store \(path)")
            if json {
                struct Summary: Encodable {
                    var store, id, first, editA, editB, winner, resolution: String
                    var conflicts, pruned: [String]
                    var clean: Bool
                }
                try Console.printJSON(Summary(
                    store: path, id: id.lowercased, first: first.id.description, editA: a.id.description, editB: b.id.description,
                    winner: graph.winner?.id.description ?? "", resolution: resolved.id.description,
                    conflicts: graph.conflicts.map(\.id.description), pruned: pruned.map(\.description), clean: problems.isEmpty))
            }
        }
    }
}

extension RevisionID {
    /// The first characters of the id, enough to recognise it in the demo.
    var short: String { String(description.prefix(12)) + "…" }
}
