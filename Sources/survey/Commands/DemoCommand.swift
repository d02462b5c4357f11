import ArgumentParser
import Foundation
import Packages
import SurveyStore

/// `survey demo`: the README's run command. Two devices (two stores) share a sample
/// survey, edit it offline, sync, see the conflict and the winner, merge item by item
/// (once cleanly, once with a contested field) and end with the same revisions.
struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract:
            "Walk through two devices editing a sample survey offline: sync, conflict, winner, item-level merge, prune.",
        discussion: """
            Without --store the two stores go in a new temporary folder that is removed at the end. \
            With --store PATH they are PATH/laptop and PATH/phone and are kept; a re-run uses them again. \
            A file at PATH (or at PATH/laptop or PATH/phone) is refused as init refuses one: it is a file, \
            not a folder (exit 66, code notAFolder).

            \(SurveyTool.exitCodesReference)
            """)

    @Option(
        help: "A folder to keep the demo's two stores in (default: a temporary folder, removed at the end).")
    var store: String?
    @Flag(help: "Print one JSON document summarising the walk-through instead of the narration.") var json =
        false

    /// Narration goes to standard output, or nowhere with `--json`.
    private func say(_ line: String) {
        if !json { print(line) }
    }

    struct Summary: Encodable {
        var folder: String
        var kept, reused: Bool
        var id, first: String
        var cleanMerge: String
        var editLaptop, editPhone, winner: String
        var contested: [String]
        var resolutionLaptop, resolutionPhone: String
        var agree: Bool
        var pruned: [String]
        var clean: Bool
    }

    func validate() throws {
        try PathArgument.requireName(store, for: "--store")
    }

    func run() throws {
        try runReporting {
            let temporary = store == nil
            // `DIR/` names the folder `DIR`, whose stores are `DIR/laptop` and `DIR/phone`.
            let folder =
                store.map(SafeName.withoutTrailingSlashes)
                ?? FileManager.default.temporaryDirectory.appendingPathComponent(
                    "survey-demo-\(UUID().uuidString.prefix(8))"
                ).path
            defer { if temporary { try? SurveyStore.removeFolder(folder) } }
            // A file where a folder belongs: said as init says it, rather than as a
            // folder that cannot be opened (exit 1).
            if !temporary {
                try SurveyStore.refuseInsideStore(folder)
                for (path, what) in [
                    (folder, "cannot keep the demo's stores in"),
                    (folder + "/laptop", "cannot create a store at"),
                    (folder + "/phone", "cannot create a store at"),
                ] {
                    if let reason = StoreFolder.notAFolder(path) {
                        throw CommandFailure(
                            code: "notAFolder", message: "\(what) \(ShownText.escaping(path)): \(reason)",
                            exit: ExitStatus.noInput.rawValue)
                    }
                }
            }
            let summary = try walkThrough(folder: folder, temporary: temporary)
            if json { try Console.printJSON(summary) }
        }
    }

    private func walkThrough(folder: String, temporary: Bool) throws -> Summary {
        let reused = SurveyStore.exists(at: folder + "/laptop")
        let laptop = try SurveyStore.create(at: folder + "/laptop", deviceName: "demo laptop")
        let phone = try SurveyStore.create(at: folder + "/phone", deviceName: "demo phone")
        if reused {
            say(
                "1. Using the existing demo stores in \(folder): laptop and phone (a new sample document is added)."
            )
        } else {
            say(
                "1. Created two stores, one per device, in \(folder)\(temporary ? " (a temporary folder, removed at the end)" : ""):"
            )
            say("   laptop (device \"\(laptop.device.name)\") and phone (device \"\(phone.device.name)\").")
        }

        let survey = try Survey(json: Data(Survey.exampleJSON.utf8))
        let (id, first) = try laptop.create(survey)
        _ = try laptop.sync(with: phone)
        say(
            "2. The laptop created \"\(survey.title)\" (\(survey.items.count) items, one of each kind) and synced: both hold revision \(first.id.short)."
        )
        let name = survey.items[2].id, rate = survey.items[4].id, dish = survey.items[5].id

        // Round 1: edits of different items, merged by sync --merge.
        var onLaptop = survey
        try onLaptop.setAnswer(.text("Grace"), forItem: name)
        _ = try laptop.save(onLaptop, to: id, base: first.id)
        var onPhone = survey
        try onPhone.setAnswer(.text("Soup"), forItem: dish)
        _ = try phone.save(onPhone, to: id, base: first.id)
        say("3. Offline, the laptop sets \"Your name\" = Grace and the phone sets \"Favourite dish\" = Soup.")
        let merging = try laptop.syncMerging(with: phone)
        let cleanMerge = try laptop.graph(of: id).winner!
        let agreeAfterRound1 = try laptop.graph(of: id).heads.map(\.id) == phone.graph(of: id).heads.map(\.id)
        let merged = try laptop.survey(id, cleanMerge)
        say(
            "4. sync --merge: the edits touch different items, so the merge contests nothing; both devices wrote the same"
        )
        say(
            "   resolution \(cleanMerge.id.short) (\(merging.merged.contains(id) ? "merged" : "not merged")), and they \(agreeAfterRound1 ? "agree" : "DISAGREE")."
        )
        say(
            "   It says \"Your name\" = \(answer(merged, name)), \"Favourite dish\" = \(answer(merged, dish))."
        )

        // Round 2: both edit "Rate us", the laptop also its title.
        var laptopEdit = merged
        try laptopEdit.setAnswer(.number(9), forItem: rate)
        laptopEdit.title = "Visitor feedback (autumn)"
        let a = try laptop.save(laptopEdit, to: id, base: cleanMerge.id)
        Thread.sleep(forTimeInterval: 0.01)
        var phoneEdit = merged
        try phoneEdit.setAnswer(.number(6), forItem: rate)
        try phoneEdit.setAnswer(.choice(0), forItem: survey.items[0].id)
        let b = try phone.save(phoneEdit, to: id, base: cleanMerge.id)
        say("5. Offline again: the laptop sets \"Rate us\" = 9 and renames the survey (\(a.id.short));")
        say("   the phone sets \"Rate us\" = 6 and \"Would you come again?\" = No (\(b.id.short)).")
        _ = try laptop.sync(with: phone)
        let graph = try laptop.graph(of: id)
        let winner = graph.winner!
        say(
            "6. After a plain sync both devices hold both edits: \(graph.heads.count) heads, in conflict. The winner, the same on"
        )
        say("   both, is the newest: \(winner.id.short) from \(winner.device.name).")
        for pair in try laptop.diffs(id) {
            say("   survey diff (the winner against the other head):")
            for line in MergeText.lines(pair.diff) { say("   " + line) }
        }

        // Each device merges on its own, offline; the resolutions are the same revision.
        let onLaptopMerge = try laptop.resolveMerge(id)!
        let onPhoneMerge = try phone.resolveMerge(id)!
        let contested = onLaptopMerge.plan.result?.contested ?? []
        say("7. Each device runs resolve --merge on its own. Different items merge; one field is contested:")
        for line in MergeText.lines(onLaptopMerge.plan).dropFirst() { say("   " + line) }
        let laptopRevision = onLaptopMerge.revision!, phoneRevision = onPhoneMerge.revision!
        say(
            "   laptop wrote \(laptopRevision.id.short), phone wrote \(phoneRevision.id.short): \(laptopRevision.id == phoneRevision.id ? "the same revision" : "DIFFERENT revisions")."
        )
        _ = try laptop.sync(with: phone)
        let laptopGraph = try laptop.graph(of: id), phoneGraph = try phone.graph(of: id)
        let agree = laptopGraph.heads.map(\.id) == phoneGraph.heads.map(\.id) && laptopGraph.heads.count == 1
        say(
            "8. After syncing: laptop heads \(laptopGraph.heads.map(\.id.short).joined(separator: ", ")), phone heads \(phoneGraph.heads.map(\.id.short).joined(separator: ", ")): \(agree ? "no conflict, they agree" : "THEY DISAGREE")."
        )

        let pruned = try laptop.prune(id)
        _ = try laptop.sync(with: phone)
        say(
            "9. The laptop pruned the content of \(pruned.count) superseded revisions and synced; their ids stay as tombstones on both."
        )
        let problems = laptop.verify() + phone.verify()
        say(
            "10. verify, both stores: \(problems.isEmpty ? "clean" : problems.map(\.description).joined(separator: "; "))"
        )
        if temporary {
            say("The demo's temporary folder is removed now. To keep the stores: survey demo --store DIR")
        } else {
            let laptop = Advice.shellWord(ShownText.escaping(folder + "/laptop"))
            say("Explore it: survey versions --store \(laptop) \(id.lowercased.prefix(8))")
        }
        return Summary(
            folder: folder, kept: !temporary, reused: reused, id: id.lowercased, first: first.id.description,
            cleanMerge: cleanMerge.id.description, editLaptop: a.id.description, editPhone: b.id.description,
            winner: winner.id.description,
            contested: contested.map { "\($0.itemTitle).\($0.field)" },
            resolutionLaptop: laptopRevision.id.description,
            resolutionPhone: phoneRevision.id.description, agree: agree && agreeAfterRound1,
            pruned: pruned.map(\.description),
            clean: problems.isEmpty)
    }

    private func answer(_ survey: Survey, _ item: UUID) -> String {
        survey.items.first { $0.id == item }?.answerText ?? "—"
    }
}

extension RevisionID {
    /// The first characters of the id, enough to recognise it in the demo.
    var short: String { String(description.prefix(12)) + "…" }
}
