import ArgumentParser
import Foundation
import PropertyList

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

    @Option(help: "Rounds: each round runs every case once, in turn, in a fresh process; the median round is reported.")
    var rounds = 5

    @Option(help: "Timed runs inside each child (after one warm-up run); the child reports its best.")
    var repetitions = 3

    @Flag(help: "Print the results as one JSON document.")
    var json = false

    @Option(help: "Also save the generated document to this file (to profile one case by hand with --child).")
    var saveInput: String?

    @Option(help: .hidden)
    var child: String?

    @Option(help: .hidden)
    var input: String?

    func run() throws {
        if let child, let input {
            try runCase(child, input: input)
            return
        }
        try runAll()
    }

    /// In a child process: time one case and print its timings as one JSON line.
    private func runCase(_ name: String, input: String) throws {
        guard let benchmark = BenchmarkCase(rawValue: name) else { throw ValidationError("unknown case \(name)") }
        let data = try Data(contentsOf: URL(fileURLWithPath: input))
        let operation = try benchmark.prepare(input: data)
        let timings = try time(repetitions: repetitions, operation)
        print(String(decoding: try JSONEncoder().encode(timings), as: UTF8.self))
    }

    private func runAll() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("survey-benchmark-\(getpid())")
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
        let foundationBytes = try PropertyListSerialization.data(fromPropertyList: foundationTree, format: .xml, options: 0)
        let identical = foundationBytes == xml
        guard try PlistDecoder().decode(BenchSurvey.self, from: xml) == model,
            try PropertyListDecoder().decode(BenchSurvey.self, from: xml) == model
        else { throw BenchmarkError("the generated document does not decode back to its model") }

        let executable = CommandLine.arguments[0].contains("/")
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
                    command = [executable, "--child", benchmark.rawValue, "--input", inputURL.path, "--repetitions", String(repetitions)]
                }
                rounds[benchmark, default: []].append(try runChild(command))
            }
        }
        // Each round contributes the child's best run; the table shows the median round.
        let results = rounds.mapValues { runs in
            ChildResult(timings: Timings(seconds: runs.map(\.timings.minimum)), peakBytes: runs.map(\.peakBytes).max() ?? 0)
        }
        let report = Report(items: items, bytes: xml.count, repetitions: repetitions, rounds: self.rounds, results: results, byteIdentical: identical)
        if json {
            print(try report.json())
        } else {
            print(report.table())
        }
    }

    private func findExecutable(_ name: String) -> String? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let path = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }
}
