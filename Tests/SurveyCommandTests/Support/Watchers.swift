import Foundation
import SurveyStore
import Testing
import Versions

/// A change as both watchers report it: `event id revision`, heads apart.
struct SeenChange: Hashable, CustomStringConvertible {
    var event: String
    var id: String?
    var revision: String?
    var heads: [String]

    /// The event, document and revision, without the heads.
    var key: String { "\(event) \(id ?? "-") \(revision ?? "-")" }

    var description: String { "\(event) \(id ?? "-") \(revision ?? "-") heads \(heads)" }

    init(event: String, id: String?, revision: String?, heads: [String]) {
        self.event = event
        self.id = id
        self.revision = revision
        self.heads = heads
    }

    init(_ change: StoreChange) {
        self.init(
            event: change.kind.rawValue, id: change.document?.uuidString.lowercased(),
            revision: change.revision?.description,
            heads: change.heads.map(\.description))
    }

    /// One line of `survey watch --json`, or `nil` when it is not such a line.
    init?(jsonLine line: String) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            Set(object.keys) == ["event", "id", "revision", "heads"]
                || (object["event"] as? String == "unreadable"
                    && Set(object.keys) == ["event", "id", "revision", "heads", "path", "message"]),
            let event = object["event"] as? String,
            let heads = object["heads"] as? [String]
        else { return nil }
        self.init(
            event: event, id: object["id"] as? String, revision: object["revision"] as? String, heads: heads)
    }
}

/// Changes collected from another thread, waited for with a time limit.
final class Collected: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [SeenChange] = []
    private var lines: [String] = []
    private(set) var failure: String?

    func append(_ change: SeenChange) { lock.withLock { items.append(change) } }
    func appendLine(_ line: String) { lock.withLock { lines.append(line) } }
    func fail(_ message: String) { lock.withLock { failure = message } }
    var changes: [SeenChange] { lock.withLock { items } }
    var rawLines: [String] { lock.withLock { lines } }

    /// Waits until `done` holds of the changes, or `seconds` pass; returns the changes.
    @discardableResult
    func wait(seconds: Double = 30, until done: ([SeenChange]) -> Bool) -> [SeenChange] {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if done(changes) { break }
            usleep(5_000)
        }
        return changes
    }

    /// How long `settle` waits for a duplicate by default: half a second, or a polling
    /// interval and a half when polling.
    var quiet = 0.5

    /// Waits until at least `count` changes arrived, then for `quiet` seconds more, so
    /// that a duplicate would have arrived too.
    func settle(count: Int, quiet: Double? = nil) -> [SeenChange] {
        let quiet = quiet ?? self.quiet
        wait { $0.count >= count }
        usleep(UInt32(quiet * 1_000_000))
        return changes
    }
}

/// `store.changes()` consumed by a task of this process.
final class LibraryWatch {
    let collected: Collected
    private let task: Task<Void, Never>

    init(store path: String, document: UUID? = nil, mechanism: FolderWatcher.Mechanism = .automatic) throws {
        let store = try SurveyStore.openForReading(at: path)
        let changes =
            try document.map { try store.changes(of: $0, mechanism: mechanism) }
            ?? store.changes(mechanism: mechanism)
        let collected = Collected()
        if mechanism == .polling { collected.quiet = 1.5 }
        self.collected = collected
        // On a thread of its own: tests that block the cooperative pool's few threads
        // (waiting on processes, sleeping) must not delay the consumer.
        task = Task(executorPreference: ConsumerExecutor()) {
            do {
                for try await change in changes { collected.append(SeenChange(change)) }
            } catch {
                collected.fail("\(error)")
            }
        }
    }

    func stop() { task.cancel() }

    deinit { task.cancel() }
}

/// Runs a task's jobs on a serial queue of its own, off the cooperative pool.
final class ConsumerExecutor: TaskExecutor, @unchecked Sendable {
    private let queue = DispatchQueue(label: "store.changes() consumer")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// `survey watch --json` running as a child process, its lines collected.
final class CommandWatch {
    let collected: Collected
    let process: Process
    private let reader: Thread
    private let errors: Pipe
    /// The first line it wrote on standard error (`watching PATH`), with its line feed.
    private(set) var said = ""

    /// Starts `survey watch --json --store PATH` (with `SURVEYSTORE_WATCH=polling` for
    /// the polling mechanism) and waits until it says it is watching.
    init(
        store path: String, json: Bool = true, mechanism: FolderWatcher.Mechanism = .automatic,
        prefix: [String] = []
    ) throws {
        let process = Process()
        let arguments = ["watch", "--store", path] + (json ? ["--json"] : [])
        if let program = prefix.first {
            // Run through another program (`setpriv` to run as another user).
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = Array(prefix.dropFirst()) + [CommandRunner.binary.path] + arguments
        } else {
            process.executableURL = CommandRunner.binary
            process.arguments = arguments
        }
        var environment = ProcessInfo.processInfo.environment
        environment["SURVEYSTORE_WATCH"] = mechanism == .polling ? "polling" : nil
        process.environment = environment
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        let collected = Collected()
        if mechanism == .polling { collected.quiet = 1.5 }
        let handle = output.fileHandleForReading
        let reader = Thread {
            var pending = Data()
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                // read(2) itself: FileHandle's reads wait for a full buffer or the end.
                let count = buffer.withUnsafeMutableBytes {
                    read(handle.fileDescriptor, $0.baseAddress, $0.count)
                }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return }
                pending.append(contentsOf: buffer[0..<count])
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    collected.appendLine(line)
                    if let change = SeenChange(jsonLine: line) {
                        collected.append(change)
                    } else if json {
                        collected.fail("not a watch line: \(line)")
                    }
                }
            }
        }
        self.process = process
        self.reader = reader
        self.collected = collected
        self.errors = errors
        try process.run()
        reader.start()
        // "watching PATH" on standard error: the store has been read.
        var said = Data()
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, said.last != UInt8(ascii: "\n") {
            guard let chunk = try errors.fileHandleForReading.read(upToCount: 1), !chunk.isEmpty else {
                break
            }
            said.append(chunk)
        }
        self.said = String(decoding: said, as: UTF8.self)
        #expect(self.said.hasPrefix("watching "), "survey watch said: \(self.said)")
    }

    /// What it wrote on standard error after its first line, once it has ended.
    func laterErrors() -> String {
        String(decoding: (try? errors.fileHandleForReading.readToEnd()) ?? Data(), as: UTF8.self)
    }

    /// Sends `signal`, and returns the exit status (or -1 when it did not end within 10 s).
    func stop(signal: Int32 = SIGTERM) -> Int32 {
        kill(process.processIdentifier, signal)
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return -1
        }
        while !reader.isFinished, Date() < deadline { usleep(1_000) }
        return process.terminationReason == .exit ? process.terminationStatus : -1
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
