import ArgumentParser
import Foundation
import SurveyStore


struct SyncCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync", abstract: "Two-way sync with another store: both end with the same revisions and tombstones.",
        discussion: SurveyTool.exitCodesReference)
    @OptionGroup var options: StoreOptions
    @Argument(help: "The other store's folder.") var otherStore: String
    @Option(help: "How many documents to sync at once (1 syncs them one after another).")
    var jobs = SurveyStore.syncConcurrency

    func validate() throws {
        guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
    }

    struct Report: Encodable {
        var sent, received, documents: Int
        var conflictsAppeared, conflictsResolved: [String]
    }

    func run() throws {
        try runReporting {
            let store = try options.open()
            let other = try SurveyStore.open(at: otherStore)
            // A progress line on a terminal; nothing when standard error is a file or pipe.
            let progress = ProgressBar(label: "documents", json: options.json)
            let report = try store.sync(with: other, concurrency: jobs) { done, total in progress.update(done, of: total) }
            let result = Report(
                sent: report.sent, received: report.received, documents: report.documents,
                conflictsAppeared: report.conflictsAppeared.map(\.lowercased), conflictsResolved: report.conflictsResolved.map(\.lowercased))
            if options.json { try Console.printJSON(result); return }
            print("sent \(result.sent), received \(result.received) revision(s) and tombstone(s) over \(result.documents) document(s)")
            if !result.conflictsAppeared.isEmpty { print("now in conflict: \(result.conflictsAppeared.joined(separator: ", "))") }
            if !result.conflictsResolved.isEmpty { print("conflicts resolved: \(result.conflictsResolved.joined(separator: ", "))") }
        }
    }
}
