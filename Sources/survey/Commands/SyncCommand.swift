import ArgumentParser
import Foundation
import SurveyStore

#if canImport(Glibc)
import Glibc
#endif

struct SyncCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync", abstract: "Two-way sync with another store: both end with the same revisions and tombstones.")
    @OptionGroup var options: StoreOptions
    @Argument(help: "The other store's folder.") var otherStore: String

    struct Report: Encodable {
        var sent, received, documents: Int
        var conflictsAppeared, conflictsResolved: [String]
    }

    func run() throws {
        try runReporting {
            let store = try options.open()
            let other = try SurveyStore.open(at: otherStore)
            // A progress line on a terminal; nothing when standard error is a file or pipe.
            let onTerminal = isatty(2) == 1 && !options.json
            let report = try store.sync(with: other) { done, total in
                guard onTerminal, total >= 20 else { return }
                let width = 30
                let filled = width * done / total
                Console.progress("\r[\(String(repeating: "#", count: filled))\(String(repeating: " ", count: width - filled))] \(done)/\(total) documents")
            }
            if onTerminal && report.documents >= 20 { Console.progress("\n") }
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
