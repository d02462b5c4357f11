import Foundation
import TestSupport
import Testing

/// Runs the built `survey` binary, as a user would, and collects its output.
enum CommandRunner {
    struct Result {
        /// The exit code, or the signal's number when ``signalled``.
        var status: Int32
        var stdout: String
        var stderr: String
        /// The process was ended by a signal (a trap, a crash) rather than exiting.
        var signalled = false
        /// The process ran past the time limit it was given, and was terminated.
        var timedOut = false
    }

    static var isCI: Bool { Tools.isCI }

    /// The `survey` executable built next to the test bundle.
    static let binary: URL = {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent()
        // The test bundle lives in the build products folder, possibly inside a .xctest folder.
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("survey")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
                ".build/debug/survey")
    }()

    /// Runs `survey` with `arguments` in `directory`, with `environment` added.
    static func run(
        _ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:],
        executable: URL? = nil, prefix: [String] = [], input: Data? = nil, timeLimit: TimeInterval? = nil
    ) throws -> Result {
        let survey = (executable ?? binary).path
        let (program, allArguments) =
            prefix.isEmpty
            ? (survey, arguments) : (prefix[0], Array(prefix.dropFirst()) + [survey] + arguments)
        let output = try ChildProcess.run(
            program, allArguments, in: directory, environment: environment, input: input, timeLimit: timeLimit
        )
        return Result(
            status: output.status, stdout: String(decoding: output.stdout, as: UTF8.self),
            stderr: output.stderr,
            signalled: output.signalled, timedOut: output.timedOut)
    }

    /// Starts `survey` with `arguments`, its standard output into a pipe to read, its
    /// standard error discarded; the caller reads the pipe to its end, then waits.
    static func start(_ arguments: [String]) throws -> (process: Process, output: Pipe) {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        return (process, output)
    }

    /// Starts `survey` with `arguments`, output discarded, and sends it SIGKILL after
    /// `microseconds` unless it has finished by then.
    ///
    /// - Returns: Whether the process was killed.
    static func runKilled(_ arguments: [String], after microseconds: UInt32) throws -> Bool {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        usleep(microseconds)
        var killed = false
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            killed = true
        }
        process.waitUntilExit()
        return killed
    }

    /// A new empty temporary directory.
    static func temporaryDirectory() throws -> URL {
        try ChildProcess.temporaryDirectory(prefix: "survey-cli")
    }

    /// Two new empty stores, `store` and `other`, in a new temporary directory, and the
    /// sample survey (`StoreCommandTests.sample`) written to a file beside them.
    static func twoStores() throws -> (directory: URL, store: String, other: String, sample: URL) {
        let directory = try temporaryDirectory()
        let store = directory.appendingPathComponent("store").path,
            other = directory.appendingPathComponent("other").path
        #expect(try run(["init", "--store", store]).status == 0)
        #expect(try run(["init", "--store", other]).status == 0)
        let sample = directory.appendingPathComponent("sample.json")
        try Data(StoreCommandTests.sample.utf8).write(to: sample)
        return (directory, store, other, sample)
    }

    /// Whether `name` is on `PATH`.
    static func hasTool(_ name: String) -> Bool { Tools.find(name) != nil }

    /// A trait for a test that needs `tools` (see `Tools.needs`).
    static func needs(_ tools: String...) -> ConditionTrait { Tools.needs(tools) }

    /// The path of `name` on `PATH`; an issue in CI when it is missing (see `Tools.require`).
    static func requireTool(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        Tools.require(name, sourceLocation: sourceLocation)
    }
}
