import Foundation
import TestSupport
import Testing

/// Standard output that cannot be written, and standard streams closed at start.
@Suite("Standard output and error closed or failing")
struct StandardStreamsTests {
    /// Runs `survey ARGUMENTS` through bash with `redirection` applied to it (`>/dev/full`,
    /// `>&-`), and with SIGPIPE ignored when `ignoringPipe`.
    static func run(_ arguments: [String], _ redirection: String, ignoringPipe: Bool = false) throws
        -> CommandRunner.Result
    {
        let trap = ignoringPipe ? #"trap "" PIPE; "# : ""
        return try CommandRunner.run(
            ["-c", trap + #"exec "$0" "$@" "# + redirection, CommandRunner.binary.path] + arguments,
            executable: URL(fileURLWithPath: "/bin/bash"), timeLimit: 60)
    }

    @Test(
        "Text output that cannot be written (a full disk, standard output closed, a pipe whose reader has gone while SIGPIPE is ignored) ends the command with exit 1 and says why, as JSON output does (it ended with 0, the output lost); what the command did is done",
        CommandRunner.needs("bash"))
    func textOutputThatCannotBeWritten() throws {
        let (directory, store, _, _) = try CommandRunner.twoStores()
        defer { try? FileManager.default.removeItem(at: directory) }
        let id = try #require(
            try CommandRunner.run(["new", "--store", store, "--title", "One"]).stdout.split(separator: "\n")
                .first)

        for (arguments, redirection, reason) in [
            (["list"], ">/dev/full", "No space left on device"),
            (["show", String(id)], ">/dev/full", "No space left on device"),
            (["--help"], ">/dev/full", "No space left on device"),
            (["list"], ">&-", "Bad file descriptor"),
            (["new", "--title", "Two"], ">&-", "Bad file descriptor"),
        ] {
            let storeArguments = arguments == ["--help"] ? [] : ["--store", store]
            let result = try Self.run(arguments + storeArguments, redirection)
            #expect(result.status == 1, "\(arguments) \(redirection): \(result.status) \(result.stderr)")
            #expect(
                result.stderr.hasSuffix("error: cannot write to standard output: \(reason)\n"),
                "\(arguments) \(redirection): \(result.stderr)")
        }
        // The new document was made, its id lost with the output: the exit status says so.
        let listed = try CommandRunner.run(["list", "--store", store, "--json"])
        let rows = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]]
        #expect(rows?.compactMap { $0["title"] as? String }.sorted() == ["One", "Two"])

        // Written after its reader has gone, with SIGPIPE ignored.
        let piped = try CommandRunner.run(
            [
                "-c",
                #"trap "" PIPE; (sleep 0.3; exec "$0" list --store "$1") | true; exit ${PIPESTATUS[0]}"#,
                CommandRunner.binary.path, store,
            ],
            executable: URL(fileURLWithPath: "/bin/bash"), timeLimit: 60)
        #expect(piped.status == 1, "\(piped.stderr)")
        #expect(piped.stderr == "error: cannot write to standard output: Broken pipe\n", "\(piped.stderr)")

        let verify = try CommandRunner.run(["verify", "--store", store])
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
    }

    @Test(
        "Standard output and error closed at start never take the number of a file the command opens: a watch running with both closed has /dev/null as descriptors 1 and 2, not the store's folder (every line and message would have been written into what was opened under that number)",
        CommandRunner.needs("bash"))
    func closedStreamsAreNotReused() throws {
        let (directory, store, _, _) = try CommandRunner.twoStores()
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try CommandRunner.run(["new", "--store", store, "--title", "One"])
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [
            "-c", #"exec "$0" watch --store "$1" >&- 2>&-"#, CommandRunner.binary.path, store,
        ]
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        func target(_ descriptor: Int) -> String? {
            try? FileManager.default.destinationOfSymbolicLink(
                atPath: "/proc/\(process.processIdentifier)/fd/\(descriptor)")
        }
        // Once the watch has opened the store (a descriptor on a folder in it), look.
        let deadline = Date().addingTimeInterval(30)
        func opened() -> [String] {
            let descriptors =
                (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.processIdentifier)/fd"))
                ?? []
            return descriptors.compactMap { Int($0) }.compactMap(target)
        }
        while !opened().contains(where: { $0.hasPrefix(store) }), Date() < deadline, process.isRunning {
            usleep(20_000)
        }
        #expect(opened().contains { $0.hasPrefix(store) }, "the watch never opened the store: \(opened())")
        #expect(target(1) == "/dev/null", "descriptor 1: \(target(1) ?? "none")")
        #expect(target(2) == "/dev/null", "descriptor 2: \(target(2) ?? "none")")
    }
}
