import Foundation
import Testing

/// Runs another program and collects what it printed: the one process runner every test
/// target uses (the `survey` binary, Python, plistutil, rsync, strace …).
public enum ChildProcess {
    /// What a finished process left.
    public struct Output: Sendable {
        /// The exit code, or the signal's number when ``signalled``.
        public var status: Int32
        /// Standard output, as bytes.
        public var stdout: Data
        /// Standard error, as text.
        public var stderr: String
        /// The process was ended by a signal (a trap, a crash) rather than exiting.
        public var signalled: Bool
        /// The process ran past its time limit and was killed.
        public var timedOut: Bool
    }

    /// Runs `executable` with `arguments` and waits for it.
    ///
    /// - Parameters:
    ///   - directory: The working folder, if not this process's.
    ///   - environment: Variables added to this process's environment.
    ///   - input: Bytes written to the child's standard input, which is otherwise empty.
    ///   - timeLimit: Seconds after which the child is killed (SIGKILL) and
    ///     ``Output/timedOut`` set.
    public static func run(
        _ executable: String, _ arguments: [String], in directory: URL? = nil,
        environment: [String: String] = [:],
        input: Data? = nil, timeLimit: TimeInterval? = nil
    ) throws -> Output {
        _ = openFileLimitRaised
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let inputPipe = input.map { _ in Pipe() }
        process.standardInput = inputPipe ?? FileHandle.nullDevice
        try process.run()
        // Set on the deadline's queue, read here: under a lock.
        let lock = NSLock()
        nonisolated(unsafe) var timedOut = false
        let deadline = timeLimit.map { _ in
            DispatchWorkItem {
                lock.withLock { timedOut = true }
                // SIGKILL: a child started by Process may not act on SIGTERM.
                kill(process.processIdentifier, SIGKILL)
            }
        }
        if let deadline, let timeLimit {
            DispatchQueue.global().asyncAfter(deadline: .now() + timeLimit, execute: deadline)
        }
        if let inputPipe, let input {
            let writer = inputPipe.fileHandleForWriting
            Thread {
                try? writer.write(contentsOf: input)
                try? writer.close()
            }.start()
        }
        // Both pipes are read at once, so that neither fills up and blocks the child. The
        // reader's bytes are read here once its semaphore says it is done.
        nonisolated(unsafe) var errorData = Data()
        let errorRead = DispatchSemaphore(value: 0)
        Thread {
            errorData = readAll(err.fileHandleForReading)
            errorRead.signal()
        }.start()
        let outputData = readAll(out.fileHandleForReading)
        process.waitUntilExit()
        deadline?.cancel()
        errorRead.wait()
        return Output(
            status: process.terminationStatus, stdout: outputData,
            stderr: String(decoding: errorData, as: UTF8.self),
            signalled: process.terminationReason == .uncaughtSignal, timedOut: lock.withLock { timedOut })
    }

    /// The test process's soft limit of open files raised to 1,024 (or its hard limit,
    /// if lower) when it starts below that, as macOS's default of 256 does: parameterized
    /// tests run their cases at once, each holding a child's pipes and its own stores,
    /// and with 256 the process runs out of descriptors. Children inherit the limit;
    /// tests that need a lower one set it for their child alone.
    private static let openFileLimitRaised: Void = {
        #if os(Linux)
            let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
            let resource = RLIMIT_NOFILE
        #endif
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0, limit.rlim_cur < 1024 else { return }
        limit.rlim_cur = min(1024, limit.rlim_max)
        _ = setrlimit(resource, &limit)
    }()

    /// Everything `handle` gives until end of file. Unlike `readDataToEndOfFile`, which
    /// traps when a read is interrupted by a signal (a child exiting, while many run at
    /// once), this reads again.
    public static func readAll(_ handle: FileHandle) -> Data {
        var data = Data()
        while true {
            do {
                guard let chunk = try handle.read(upToCount: 1 << 16), !chunk.isEmpty else { return data }
                data.append(chunk)
            } catch let error as NSError
                where (error.userInfo[NSUnderlyingErrorKey] as? NSError)?.code == Int(EINTR)
            {
                continue
            } catch {
                return data
            }
        }
    }

    /// A new empty temporary folder whose name starts with `prefix`.
    public static func temporaryDirectory(prefix: String = "surveystore-tests") throws -> URL {
        _ = openFileLimitRaised
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

/// The external tools tests use, found on `PATH`.
///
/// A missing tool skips its test only outside CI; with `CI=true` it is a failure,
/// because `.ci/run` installs every tool the tests need.
public enum Tools {
    /// Whether the tests run in CI (`CI=true`).
    public static var isCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    /// The path of `name` on `PATH`, if it is there.
    public static func find(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// A trait for a test that needs `tools`: outside CI the test is skipped (and shown
    /// as skipped) when one is missing; with `CI=true` it always runs, and
    /// ``require(_:sourceLocation:)`` fails it when a tool is missing.
    public static func needs(_ tools: [String]) -> ConditionTrait {
        .enabled(
            if: isCI || tools.allSatisfy { find($0) != nil },
            "needs \(tools.joined(separator: ", ")), which is not installed")
    }

    /// The path of `name` on `PATH`; records an issue in CI when it is missing, and says
    /// why the check is skipped otherwise.
    public static func require(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        if let found = find(name) { return found }
        if isCI {
            Issue.record(
                "\(name) is not installed, but CI=true: .ci/run should have installed it",
                sourceLocation: sourceLocation)
        } else {
            print("note: skipping a check that needs \(name), which is not installed (CI would fail here)")
        }
        return nil
    }
}
