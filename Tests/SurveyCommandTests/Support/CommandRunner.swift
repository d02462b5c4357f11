import Foundation
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

    static var isCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    /// The `survey` executable built next to the test bundle.
    static let binary: URL = {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        // The test bundle lives in the build products folder, possibly inside a .xctest folder.
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("survey")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(".build/debug/survey")
    }()

    /// Runs `survey` with `arguments` in `directory`, with `environment` added.
    static func run(
        _ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:],
        executable: URL? = nil, prefix: [String] = [], input: Data? = nil, timeLimit: TimeInterval? = nil
    ) throws -> Result {
        let process = Process()
        if prefix.isEmpty {
            process.executableURL = executable ?? binary
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: prefix[0])
            process.arguments = Array(prefix.dropFirst()) + [(executable ?? binary).path] + arguments
        }
        if let directory { process.currentDirectoryURL = directory }
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let inputPipe = input.map { _ in Pipe() }
        process.standardInput = inputPipe ?? FileHandle.nullDevice
        try process.run()
        nonisolated(unsafe) var timedOut = false
        let deadline = timeLimit.map { limit in
            DispatchWorkItem {
                timedOut = true
                // SIGKILL: a child started by Process may not act on SIGTERM.
                kill(process.processIdentifier, SIGKILL)
            }
        }
        if let deadline, let timeLimit { DispatchQueue.global().asyncAfter(deadline: .now() + timeLimit, execute: deadline) }
        if let inputPipe, let input {
            let writer = inputPipe.fileHandleForWriting
            Thread {
                try? writer.write(contentsOf: input)
                try? writer.close()
            }.start()
        }
        nonisolated(unsafe) var errorData = Data()
        let reader = Thread { errorData = readAll(err.fileHandleForReading) }
        reader.start()
        let outputData = readAll(out.fileHandleForReading)
        process.waitUntilExit()
        deadline?.cancel()
        while !reader.isFinished { usleep(1000) }
        return Result(
            status: process.terminationStatus, stdout: String(decoding: outputData, as: UTF8.self),
            stderr: String(decoding: errorData, as: UTF8.self), signalled: process.terminationReason == .uncaughtSignal,
            timedOut: timedOut)
    }

    /// Everything `handle` gives until end of file. Unlike `readDataToEndOfFile`, which
    /// traps when a read is interrupted by a signal (a child exiting, while many run at
    /// once), this reads again.
    static func readAll(_ handle: FileHandle) -> Data {
        var data = Data()
        while true {
            do {
                guard let chunk = try handle.read(upToCount: 1 << 16), !chunk.isEmpty else { return data }
                data.append(chunk)
            } catch let error as NSError where (error.userInfo[NSUnderlyingErrorKey] as? NSError)?.code == Int(EINTR) {
                continue
            } catch {
                return data
            }
        }
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
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("survey-cli-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Whether `name` is on `PATH`.
    static func hasTool(_ name: String) -> Bool {
        (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").contains {
            FileManager.default.isExecutableFile(atPath: "\($0)/\(name)")
        }
    }

    /// A trait for a test that needs `tools`: outside CI the test is skipped (and shown
    /// as skipped) when one is missing; with `CI=true` it always runs, and
    /// ``requireTool(_:sourceLocation:)`` fails it when a tool is missing.
    static func needs(_ tools: String...) -> ConditionTrait {
        .enabled(if: isCI || tools.allSatisfy(hasTool), "needs \(tools.joined(separator: ", ")), which is not installed")
    }

    /// The path of `name` on `PATH`; records an issue in CI when it is missing, and says
    /// why the check is skipped otherwise.
    static func requireTool(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        if isCI {
            Issue.record("\(name) is not installed, but CI=true: .ci/run should have installed it", sourceLocation: sourceLocation)
        } else {
            print("note: skipping a check that needs \(name), which is not installed (CI would fail here)")
        }
        return nil
    }
}
