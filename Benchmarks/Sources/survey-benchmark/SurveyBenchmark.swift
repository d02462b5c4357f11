import ArgumentParser
import Foundation
import PropertyList
import SurveyStore

/// `survey-benchmark`: the property-list codec against Foundation, Python and the bare
/// libxml2 floor, side by side in one run.
@main
struct SurveyBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "survey-benchmark",
        abstract: "Time SurveyStore's property-list codec against its peers, as ratios measured in one run."
    )

    @Option(help: "Items in the generated survey (20,000 gives about 14 MB of XML).")
    var items = 20_000

    @Option(
        help:
            "Rounds: each round runs every case once, in turn, in a fresh process; the median round is reported."
    )
    var rounds = 5

    @Option(help: "Timed runs inside each child (after one warm-up run); the child reports its best.")
    var repetitions = 3

    @Flag(help: "Print the results as one JSON document.")
    var json = false

    @Option(help: "Also save the generated document to this file (to profile one case by hand with --child).")
    var saveInput: String?

    @Option(help: "The rows to run, comma-separated: codec, save, list, sync, conflicts, merge, watch.")
    var rows = "codec,save,list,sync,conflicts,merge,watch"

    @Option(
        help: "Watch row: revisions renamed into a watched folder per round (the latency is their median).")
    var watchRenames = 200

    @Option(help: "Watch row: documents in the store whose watch start-up and memory are measured.")
    var watchDocuments = 10_000

    @Flag(help: "Smaller stores for a smoke run: list at 100, 1,000 and 10,000 documents, sync of 1,000.")
    var quick = false

    @Option(
        help:
            "Rounds of the store rows (save and conflicts take the median of several saves or reads per round)."
    )
    var storeRounds = 3

    @Option(
        help:
            "The survey binary for the sync row (default: the main package's release build, built if missing)."
    )
    var surveyBinary: String?

    @Option(
        help: "Where the store rows make their trees (default: the temporary folder); removed afterwards.")
    var workDirectory: String?

    @Option(
        help:
            "Only write a store of --documents generated documents (3 revisions each) at this path, to profile a command by hand."
    )
    var makeStore: String?

    @Flag(
        help:
            "Sync row: the source and each timed command's target on a freshly made, journaled ext4 file system of its own (a loop-mounted sparse image). Needs root and mkfs.ext4; exits with status 69 when they are missing."
    )
    var freshFileSystems = false

    @Option(help: "Documents for --make-store.")
    var documents = 1_000

    @Option(help: .hidden)
    var child: String?

    @Option(help: .hidden)
    var input: String?

    @Option(help: .hidden)
    var watchChild: String?

    func run() throws {
        if let watchChild, let input {
            try WatchBenchmarks.child(watchChild, path: input)
            return
        }
        if let child, let input {
            try runCase(child, input: input)
            return
        }
        if let makeStore {
            _ = try SurveyStore.create(at: makeStore, deviceName: "Benchmark")
            let contents = try (0..<3).map {
                try StoreTrees.survey(items: StoreSizes().treeItems, variant: $0).plistData()
            }
            try StoreTrees.replicate(into: makeStore, count: documents, contents: contents, seed: 1)
            return
        }
        try runAll()
    }

    /// In a child process: time one case and print its timings as one JSON line.
    private func runCase(_ name: String, input: String) throws {
        guard let benchmark = BenchmarkCase(rawValue: name) else {
            throw ValidationError("unknown case \(name)")
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: input))
        let operation = try benchmark.prepare(input: data)
        let timings = try time(repetitions: repetitions, operation)
        print(String(decoding: try JSONEncoder().encode(timings), as: UTF8.self))
    }

    private func runAll() throws {
        let selected = Set(rows.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        let known: Set<String> = ["codec", "save", "list", "sync", "conflicts", "merge", "watch"]
        guard selected.isSubset(of: known), !selected.isEmpty else {
            throw ValidationError(
                "--rows takes a comma-separated list of \(known.sorted().joined(separator: ", "))")
        }
        if freshFileSystems && !selected.contains("sync") {
            throw ValidationError("--fresh-file-systems applies to the sync row only: add sync to --rows")
        }
        var codec: Report?
        if selected.contains("codec") {
            codec = try runCodec()
            if !json, let codec {
                print(codec.table())
                fflush(nil)
            }
        }
        var store: StoreReport?
        // Removing the generated trees is slow (on a file system mounted with `discard`
        // every freed block is trimmed at once), so it comes after the table is printed.
        let workFolder =
            (workDirectory ?? FileManager.default.temporaryDirectory.path)
            + "/survey-store-benchmark-\(getpid())"
        defer {
            if FileManager.default.fileExists(atPath: workFolder) {
                if !json {
                    FileHandle.standardError.write(
                        Data("removing the generated trees in \(workFolder)…\n".utf8))
                }
                try? FileManager.default.removeItem(atPath: workFolder)
            }
        }
        // Made (and checked) before anything is timed; unmounted before the work folder
        // is removed.
        var fileSystems: FreshFileSystems?
        if freshFileSystems {
            do {
                fileSystems = try FreshFileSystems(folder: workFolder + "/file-systems")
            } catch let error as FreshFileSystemsUnavailable {
                FileHandle.standardError.write(Data("error: \(error.description)\n".utf8))
                throw ExitCode(FreshFileSystems.unavailableExitCode)
            }
        }
        defer { fileSystems?.removeAll() }
        if !selected.isDisjoint(with: ["save", "list", "sync", "conflicts", "merge"]) {
            do {
                store = try runStore(selected, directory: workFolder, fileSystems: fileSystems)
            } catch let error as FreshFileSystemsUnavailable {
                FileHandle.standardError.write(Data("error: \(error.description)\n".utf8))
                throw ExitCode(FreshFileSystems.unavailableExitCode)
            }
        }
        var watch: [Report.Row]?
        if selected.contains("watch") { watch = try runWatch(directory: workFolder) }
        if json {
            struct Document: Encodable {
                var codec: Report.JSONDocument?
                var store: [Report.Row]?
                var storeSizes: StoreSizes?
                var storeRounds: Int?
                var freshFileSystems: Bool?
                var watch: [Report.Row]?
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            let document = Document(
                codec: codec?.jsonDocument, store: store?.rows, storeSizes: store?.sizes,
                storeRounds: store.map { _ in storeRounds },
                freshFileSystems: selected.contains("sync") ? freshFileSystems : nil, watch: watch)
            print(String(decoding: try encoder.encode(document), as: UTF8.self))
            return
        }
        if let store {
            if codec != nil { print("") }
            print(
                "SurveyStore store benchmark: median (min–max) of \(storeRounds) rounds; ours and the baseline interleaved in each round"
            )
            print("")
            print(formatTable(store.rows).joined(separator: "\n"))
            print("")
            print(
                "Save: per save, the median of \(store.sizes.savesPerRound) saves per round. List/open: per document, warm page cache, \(store.sizes.treeItems)-item documents of 3 revisions; open is a sample of \(store.sizes.openSample) winners. Sync: wall-clock time of the whole command."
                    + (freshFileSystems && store.sync != nil
                        ? " Sync with --fresh-file-systems: the source and each command's target on a freshly made, journaled ext4 file system of its own (loop-mounted sparse image); the sync after the edits into the round's fresh replica, on its file system."
                        : "")
            )
            fflush(nil)
        }
        if let watch {
            if codec != nil || store != nil { print("") }
            print("SurveyStore watch benchmark: median (min–max) of \(storeRounds) rounds")
            print("")
            print(formatTable(watch).joined(separator: "\n"))
            print("")
            print(
                "Latency: from rename(2) of a complete revision package into a watched document folder to the change reaching the consumer of store.changes() (ours) and to a bare inotify watch's read(2) returning (baseline), both watching at once; the median of \(watchRenames) renames per round. The consumer is a task that prefers the watch's own thread (Task(executorPreference: changes.executor)), then, in a second phase with its own bare watch timings, a plain Task on the global concurrent executor. Start-up and memory: a child process that opens the store and starts store.changes() (every folder read, one inotify watch each), against one that lists it (store.documents()); memory is each child's peak resident set (VmHWM), kernel memory for watches not included."
            )
            fflush(nil)
        }
    }

    private func runWatch(directory: String) throws -> [Report.Row] {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let quiet = json
        let executable =
            CommandLine.arguments[0].contains("/")
            ? URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.path
            : CommandLine.arguments[0]
        let result = try WatchBenchmarks(
            directory: directory, renames: watchRenames, documents: quick ? 1_000 : watchDocuments,
            rounds: storeRounds,
            executable: executable,
            log: { message in if !quiet { FileHandle.standardError.write(Data((message + "\n").utf8)) } }
        ).run()
        let documents = (quick ? 1_000 : watchDocuments).formatted()
        let megabytes = { (bytes: Int) in String(format: "%.1f MB", Double(bytes) / 1e6) }
        let memoryRatio = Double(result.watchPeak) / Double(result.listPeak)
        return [
            StoreReport.ratioRow(
                "watch: latency of a revision renamed into place, consumer on changes.executor",
                ours: result.ours, baselineName: "bare inotify watch", baseline: result.bare, limit: 2,
                unit: "bare inotify"),
            StoreReport.ratioRow(
                "watch: latency, consumer a plain Task (global executor)", ours: result.oursPool,
                baselineName: "bare inotify watch", baseline: result.barePool, limit: nil,
                unit: "bare inotify"),
            StoreReport.ratioRow(
                "watch: start-up on \(documents) documents, store.changes()", ours: result.startup,
                baselineName: "listing them, store.documents()", baseline: result.list, limit: nil,
                unit: "listing"),
            Report.Row(
                name: "watch: peak memory, watching \(documents) documents",
                ours: megabytes(result.watchPeak), oursSeconds: nil,
                baseline: "listing them: \(megabytes(result.listPeak))", baselineSeconds: nil,
                ratio: memoryRatio,
                ratioText: String(format: "%.2f× listing", memoryRatio), target: "–", met: nil),
        ]
    }

    private func runStore(_ selected: Set<String>, directory: String, fileSystems: FreshFileSystems?) throws
        -> StoreReport
    {
        let sizes = quick ? StoreSizes.quick : StoreSizes()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let quiet = json
        let benchmarks = StoreBenchmarks(
            directory: directory, sizes: sizes, rounds: storeRounds,
            surveyBinary: { try locateSurveyBinary() },
            log: { message in if !quiet { FileHandle.standardError.write(Data((message + "\n").utf8)) } },
            freshFileSystems: fileSystems)
        var report = StoreReport(sizes: sizes)
        if selected.contains("save") { report.save = try benchmarks.save() }
        if selected.contains("conflicts") { report.conflicts = try benchmarks.conflicts() }
        if selected.contains("merge") { report.merge = try benchmarks.merge() }
        if selected.contains("list") { report.list = try benchmarks.list() }
        if selected.contains("sync") { report.sync = try benchmarks.sync() }
        return report
    }

    /// `--survey-binary`, else the main package's release build (`swift build -c release
    /// --product survey` in the repository root, run here if the binary is missing).
    private func locateSurveyBinary() throws -> String {
        if let surveyBinary { return surveyBinary }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().path
        let binary = root + "/.build/release/survey"
        if !FileManager.default.isExecutableFile(atPath: binary) {
            FileHandle.standardError.write(
                Data("building the survey command: swift build -c release --product survey in \(root)\n".utf8)
            )
            guard let swift = findExecutable("swift"),
                try runQuietly([
                    swift, "build", "-c", "release", "--product", "survey", "--package-path", root,
                ]) == 0
            else { throw BenchmarkError("cannot build the survey command; pass --survey-binary PATH") }
        }
        return binary
    }

    private func runCodec() throws -> Report {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "survey-benchmark-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        let model = SurveyGenerator.make(items: items)
        let xml = try PlistEncoder().encode(model)
        let inputURL = directory.appendingPathComponent("survey.plist")
        try xml.write(to: inputURL)
        if let saveInput { try xml.write(to: URL(fileURLWithPath: saveInput)) }
        // The generated document must be what Foundation writes for the same values, and
        // must decode back to the model, or the comparison would be meaningless.
        let foundationTree = try PropertyListSerialization.propertyList(from: xml, options: [], format: nil)
        let foundationBytes = try PropertyListSerialization.data(
            fromPropertyList: foundationTree, format: .xml, options: 0)
        let identical = foundationBytes == xml
        guard try PlistDecoder().decode(BenchSurvey.self, from: xml) == model,
            try PropertyListDecoder().decode(BenchSurvey.self, from: xml) == model
        else { throw BenchmarkError("the generated document does not decode back to its model") }

        let executable =
            CommandLine.arguments[0].contains("/")
            ? URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.path
            : CommandLine.arguments[0]
        // Rounds interleave the cases, so that a burst of load on a shared machine falls
        // on all of them alike rather than on whichever case happened to be running.
        var rounds: [BenchmarkCase: [ChildResult]] = [:]
        let script = directory.appendingPathComponent("plistlib_bench.py")
        try Data(pythonScript.utf8).write(to: script)
        let python = findExecutable("python3")
        for round in 1...self.rounds {
            if !json { FileHandle.standardError.write(Data("round \(round) of \(self.rounds)…\n".utf8)) }
            for benchmark in BenchmarkCase.allCases {
                let command: [String]
                if benchmark == .pythonRead {
                    guard let python else { continue }
                    command = [python, script.path, inputURL.path, String(repetitions)]
                } else {
                    command = [
                        executable, "--child", benchmark.rawValue, "--input", inputURL.path, "--repetitions",
                        String(repetitions),
                    ]
                }
                rounds[benchmark, default: []].append(try runChild(command))
            }
        }
        // Each round contributes the child's best run; the table shows the median round.
        let results = rounds.mapValues { runs in
            ChildResult(
                timings: Timings(seconds: runs.map(\.timings.minimum)),
                peakBytes: runs.map(\.peakBytes).max() ?? 0)
        }
        return Report(
            items: items, bytes: xml.count, repetitions: repetitions, rounds: self.rounds, results: results,
            byteIdentical: identical)
    }
}
