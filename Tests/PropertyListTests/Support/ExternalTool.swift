import Foundation
import Testing

/// Runs independent tools (Python's plistlib, libplist's plistutil) for interop tests.
///
/// A missing tool skips its test only outside CI; with `CI=true` it is a failure,
/// because `.ci/run` installs every tool the tests need.
enum ExternalTool {
    struct Output {
        var status: Int32
        var stdout: Data
        var stderr: String
    }

    static var isCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    /// The path of `name` on `PATH`, if it is there.
    static func find(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Whether `name` is present; records an issue in CI when it is not, and says why it
    /// is skipped otherwise.
    /// A trait for a test that needs `tools`: outside CI the test is skipped (and shown
    /// as skipped) when one is missing; with `CI=true` it always runs, and ``require(_:sourceLocation:)``
    /// fails it when a tool is missing.
    static func needs(_ tools: String...) -> ConditionTrait {
        .enabled(if: isCI || tools.allSatisfy { find($0) != nil }, "needs \(tools.joined(separator: ", ")), which is not installed")
    }

    static func require(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        if let found = find(name) { return found }
        if isCI {
            Issue.record("\(name) is not installed, but CI=true: .ci/run should have installed it",
                         sourceLocation: sourceLocation)
        } else {
            print("note: skipping a check that needs \(name), which is not installed (CI would fail here)")
        }
        return nil
    }

    /// Runs `executable` with `arguments` and waits for it.
    static func run(_ executable: String, _ arguments: [String], stdin: Data? = nil) throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let input = Pipe()
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(stdin) }
        try input.fileHandleForWriting.close()
        // Read both pipes concurrently so that neither fills up and blocks the child.
        nonisolated(unsafe) var errorData = Data()
        let errorReader = Thread { errorData = err.fileHandleForReading.readDataToEndOfFile() }
        errorReader.start()
        let outputData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while !errorReader.isFinished { usleep(1000) }
        return Output(status: process.terminationStatus, stdout: outputData,
                      stderr: String(decoding: errorData, as: UTF8.self))
    }

    /// A new empty temporary directory.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("surveystore-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
