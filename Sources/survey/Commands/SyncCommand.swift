import ArgumentParser
import Foundation
import Packages
import SurveyStore

struct SyncCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Two-way sync with another store: both end with the same revisions and tombstones.",
        discussion: """
            Only what a side lacks is copied, each revision written atomically and durably; \
            nothing in Local.nosync/ (device state, locks, temporary files) is ever copied. A revision one side holds damaged (torn content, of another \
            size than the other side's copy; metadata or a tombstone that does not verify; a link, FIFO or folder where one of its files \
            belongs) is repaired from the other side's intact copy, and a link or FIFO where a \
            document's folder or a package belongs is removed (never followed) to make way: each is \
            named on standard error ("repaired: ...") and in --json's repaired. What cannot be copied \
            or repaired (no side has it intact, a package or tombstone damaged on one side that the other \
            lacks, or a file or a folder holding files is in the way), \
            and a document whose lock file is something else (a folder, a link), \
            is named ("error: ...", damaged), everything else is still synced, and the exit \
            status is 1. So is a document whose folder, or a package or file in it, may not be read \
            on either side (permission denied, an input/output error): nothing of it is copied either \
            way, it is named ("error: PATH: cannot be read, ...", unreadable: [{"id", "path", "message"}]), \
            every other document is synced (and with --merge, merged), and the exit status is 1. So is a \
            document whose folder (or, for a document new there, the documents' folder) may not be written \
            on a side (permission denied, a read-only file system): what cannot go there is not copied, it is \
            named ("error: PATH: cannot be written, ...", unwritable: [{"id", "path", "message"}]), and every \
            other document is synced. Content damaged without a change of size is not looked for, since that would \
            read every file on both sides: `survey verify` finds it, and `survey verify --repair-from \
            OTHER_STORE` repairs it.

            \(SurveyTool.exitCodesReference)
            """)
    @OptionGroup var options: StoreOptions
    @Argument(help: "The other store's folder.") var otherStore: String
    /// As typed: the next word is taken whatever it is, so that `--jobs -1` is refused as
    /// a count, not taken for an option with the count missing (see ``validate()``).
    @Option(
        name: .customLong("jobs"), parsing: .unconditional,
        help:
            "How many documents to sync at once, at most, a positive integer (1 syncs them one after another; fewer under a low limit of open files)."
    )
    var jobsText = String(SurveyStore.syncConcurrency)

    /// `--jobs`, once ``validate()`` has accepted it.
    var jobs: Int { Int(jobsText) ?? SurveyStore.syncConcurrency }
    @Flag(
        help:
            "Afterwards resolve, on both sides, every conflict that merges cleanly (resolve --merge --strict)."
    )
    var merge = false

    func validate() throws {
        guard let jobs = Int(jobsText), jobs >= 1 else {
            throw ValidationError("--jobs must be a positive integer, not '\(jobsText)'")
        }
        try PathArgument.requireName(otherStore, for: "<other-store>")
    }

    struct Report: Encodable {
        var sent, received, documents: Int
        var conflictsAppeared, conflictsResolved: [String]
        /// Revisions not copied or repaired: no side has them intact, or something that is
        /// not the store's to remove is in the way.
        var damaged: [String]
        /// Content, metadata and tombstone files, on either side, replaced by the other
        /// side's intact copy, and links or special files removed to make way.
        var repaired: [String]
        /// Documents not synced because one side's folder, or a package or file in it, may
        /// not be read.
        var unreadable: [Unreadable]
        /// Documents not synced whole because one side's folder may not be written.
        var unwritable: [Unreadable]
        /// The packages (paths in the store that received them) of revisions copied that
        /// are stamped more than a day ahead of this clock.
        var aheadOfClock: [String]
        /// With `--merge`: documents merged on both sides, and those left in conflict.
        var merged, unmerged: [String]?
    }

    func run() throws {
        try runReporting {
            let store = try options.open()
            let other = try SurveyStore.open(at: otherStore)
            // A progress line on a terminal; nothing when standard error is a file or pipe.
            let progress = ProgressBar(label: "documents", json: options.json)
            let report: SurveyStore.SyncReport
            var merging: SurveyStore.MergingSyncReport?
            if merge {
                merging = try store.syncMerging(with: other, concurrency: jobs) { done, total in
                    progress.update(done, of: total)
                }
                report = merging!.sync
            } else {
                report = try store.sync(with: other, concurrency: jobs) { done, total in
                    progress.update(done, of: total)
                }
            }
            let result = Report(
                sent: report.sent, received: report.received, documents: report.documents,
                conflictsAppeared: report.conflictsAppeared.map(\.lowercased),
                conflictsResolved: report.conflictsResolved.map(\.lowercased),
                damaged: report.damaged.map(\.path), repaired: report.repaired.map(\.path),
                unreadable: report.unreadable.map { Unreadable($0) },
                unwritable: report.unwritable.map { Unreadable($0) },
                aheadOfClock: report.aheadOfClock.map(\.path),
                merged: merging?.merged.map(\.lowercased), unmerged: merging?.unmerged.map(\.lowercased))
            for issue in report.aheadOfClock { Console.error("warning: \(Advice.describe(issue))") }
            for issue in report.repaired { Console.error("repaired: \(Advice.describe(issue))") }
            // Damaged revisions are skipped, everything else is synced; the exit says so.
            for issue in report.damaged { Console.error("error: \(Advice.describe(issue))") }
            for issue in report.unreadable { Console.error("error: \(Advice.describe(issue))") }
            for issue in report.unwritable { Console.error("error: \(Advice.describe(issue))") }
            if options.json {
                try Console.printJSON(result)
            } else {
                print(
                    "sent \(result.sent), received \(result.received) revision(s) and tombstone(s) over \(result.documents) document(s)"
                )
                if !report.repaired.isEmpty {
                    let revisions = report.repaired.revisionCount, folders = report.repaired.folderCount
                    let parts = [
                        revisions > 0 ? "\(revisions) damaged revision(s)" : nil,
                        folders > 0 ? "\(folders) document folder(s)" : nil,
                    ]
                    print("repaired " + parts.compactMap { $0 }.joined(separator: " and "))
                }
                printList("now in conflict", result.conflictsAppeared)
                printList("conflicts resolved", result.conflictsResolved)
                printList("merged on both sides", result.merged ?? [])
                printList("still in conflict, not merged", result.unmerged ?? [])
            }
            if !report.unreadable.isEmpty {
                let documents = Set(result.unreadable.map(\.id)).count
                Console.error(
                    "error: \(Unreadable.count(documents)), so not synced\(merge ? " or not merged" : "")")
            }
            if !report.unwritable.isEmpty {
                let documents = Set(result.unwritable.map(\.id)).count
                Console.error(
                    "error: \(Unreadable.documents(documents)) could not be written, so not synced whole"
                )
            }
            if !report.damaged.isEmpty || !report.unreadable.isEmpty || !report.unwritable.isEmpty {
                throw ExitStatus.failure
            }
        }
    }

    /// A heading with the count, then one document id a line, indented: nothing when
    /// there is none, so that hundreds of ids stay readable and each one can be found
    /// with `grep`.
    private func printList(_ heading: String, _ ids: [String]) {
        guard !ids.isEmpty else { return }
        print("\(heading) (\(ids.count)):")
        for id in ids { print("  \(id)") }
    }
}
