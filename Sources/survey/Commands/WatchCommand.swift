import ArgumentParser
import Dispatch
import Foundation
import SurveyStore

struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch", abstract: "Print each change of the store as it happens, until interrupted.",
        discussion: """
            One line per change, written as soon as it is seen: a document created, a revision added, \
            a conflict appeared or resolved, a document deleted or restored (by this machine's commands, another \
            process, survey sync, or a file-sync engine copying files in; a package being copied in \
            counts once it is complete), or "reread" \
            when changes may have been missed and everything should be read again. Standard error says \
            "watching PATH" once the store has been read and every later change will be printed.

            With --json, the one command whose --json is a stream: one JSON object per line, \
            {"event", "id", "revision", "heads"}, where event is created, revision-added, conflict-appeared, \
            conflict-resolved, deleted, restored (no longer deleted, and not in conflict), reread \
            (id and revision null, heads empty) or unreadable (revision null, heads empty, and "path" and \
            "message" besides).

            A document whose folder, or a package or file in it, may not be read (permission denied, \
            another user's files) or gives an input/output error does not keep the others from being \
            watched: it is named once on standard error ("warning: PATH: cannot be read, ...") and as a \
            line "unreadable ID", and once its folder changes and it can be read, what changed since it \
            was last read is printed (for one never read, created and each revision). It does not \
            change the exit status: the watch goes on waiting for it.

            On Linux changes come from inotify, one watch per document folder and per package not \
            complete yet (the per-user limit is fs.inotify.max_user_watches: a folder that cannot be \
            watched for it ends the watch, exit 1, code watchLimit, rather than let a change go unseen). With SURVEYSTORE_WATCH=polling in the environment (and \
            where there is no inotify) every watched folder is listed once a second instead: changes \
            are printed up to a second late, and each second costs a listing of every document folder.

            Runs until SIGINT (Ctrl-C) or SIGTERM, then exits 0 (a signal while the store is \
            first read ends it as soon as the read is done; one sent while the program is still \
            being loaded, its first few milliseconds, ends it as it ends any program). The store's folder removed, moved away \
            or replaced (or its Store.plist removed) ends it with exit 66, code storeGone; a store whose \
            Documents is a link or a file is refused at once, exit 65.

            \(SurveyTool.exitCodesReference)
            """)
    @OptionGroup var options: WatchOptions

    func run() throws {
        // A failure, even after lines were written, is one more line, `{"error": …}`:
        // `SurveyTool.main` sets `Console.streamsLines` for this command before parsing.
        try runReporting {
            let json = options.json
            let finished = Finished()
            // SIGINT and SIGTERM end the watch with success: every line was written whole.
            // Held since `SurveyTool.main` began (``holdEndingSignals()``), so that one
            // while the arguments are parsed or the store is first read (a large store takes
            // a while) ends the watch as one afterwards does.
            var sources: [any DispatchSourceSignal] = []
            for signalNumber in Self.endingSignals {
                let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
                source.setEventHandler { finished.finish(nil) }
                source.resume()
                sources.append(source)
            }
            defer { for source in sources { source.cancel() } }
            let store = try SurveyStore.openForReading(at: StoreOptions.path(options.store))
            let changes = try store.changes()
            if finished.isFinished { return }
            Console.error("watching \(ShownText.escaping(store.root))")
            let task = Task {
                do {
                    for try await change in changes {
                        if let issue = change.issue { Console.error("warning: \(Advice.describe(issue))") }
                        Console.write(
                            Data((json ? try Self.jsonLine(change) : change.description + "\n").utf8))
                    }
                    finished.finish(nil)
                } catch {
                    finished.finish(error)
                }
            }
            let error = finished.wait()
            task.cancel()
            if let error { throw error }
        }
    }

    /// The signals that end the watch with success.
    static let endingSignals = [SIGINT, SIGTERM]

    /// Holds ``endingSignals`` for the dispatch sources that ``run()`` makes: blocked on
    /// this thread before any other is made (each inherits the mask), so that the kernel
    /// leaves them pending for the sources to read, rather than handing them to a thread
    /// that does not block them, and ignored besides. Called first thing by
    /// `SurveyTool.main` for this command, so that a signal sent as the watch starts is
    /// not taken by the default action (the process killed, exit 143); only one sent
    /// before `main` runs is.
    static func holdEndingSignals() {
        var blocked = sigset_t()
        sigemptyset(&blocked)
        for signalNumber in endingSignals { sigaddset(&blocked, signalNumber) }
        pthread_sigmask(SIG_BLOCK, &blocked, nil)
        for signalNumber in endingSignals { signal(signalNumber, SIG_IGN) }
    }

    /// `{"event":…,"heads":[…],"id":…,"revision":…}` (and `"path"` and `"message"` for
    /// `unreadable`) and a newline.
    static func jsonLine(_ change: StoreChange) throws -> String {
        var object: [String: Any] = [
            "event": change.kind.rawValue,
            "id": change.document.map { $0.uuidString.lowercased() as Any } ?? NSNull(),
            "revision": change.revision.map { $0.description as Any } ?? NSNull(),
            "heads": change.heads.map(\.description),
        ]
        if let issue = change.issue {
            object["path"] = issue.path
            object["message"] = Advice.message(of: issue)
        }
        let data = try JSONSerialization.data(
            withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}

/// The options of `survey watch`: those of every store command, but `--json` asks for a
/// stream rather than one document.
struct WatchOptions: ParsableArguments {
    @Option(help: "The store folder (default: $SURVEY_STORE unless empty, else ./Surveys).")
    var store: String?

    @Flag(
        help: """
            Print a stream on standard output: one JSON object per change, one per line, each \
            line flushed (on failure, at start-up or later, one more line: {"error": …}).
            """)
    var json = false

    func validate() throws {
        try PathArgument.requireName(store, for: "--store")
        try StoreOptions.requireUTF8Environment(unless: store)
        Advice.store = store
    }
}

/// The end of a watch: a signal, or the sequence failing; the first one counts.
private final class Finished: @unchecked Sendable {
    private let lock = NSLock()
    private let semaphore = DispatchSemaphore(value: 0)
    private var done = false
    private var error: (any Error)?

    func finish(_ error: (any Error)?) {
        let first = lock.withLock {
            defer { done = true }
            if !done { self.error = error }
            return !done
        }
        if first { semaphore.signal() }
    }

    /// Whether the watch has ended already (a signal during start-up).
    var isFinished: Bool { lock.withLock { done } }

    func wait() -> (any Error)? {
        semaphore.wait()
        return lock.withLock { error }
    }
}
