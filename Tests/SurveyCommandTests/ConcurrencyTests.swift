import Foundation
import Testing

/// Several real processes saving at once. CI runs the short form; set
/// SURVEYSTORE_LONG=1 for the design's 4 processes × 250 saves.
@Suite("Concurrent writers", .serialized)
struct ConcurrencyTests {
    static var savesPerProcess: Int {
        ProcessInfo.processInfo.environment["SURVEYSTORE_LONG"] == "1" ? 250 : 20
    }

    /// Runs `count` edits of `document` (or of a new document per process when `nil`)
    /// in a shell loop; returns the revisions the command acknowledged.
    static func writer(store: String, document: String, process: Int, count: Int) throws -> Process {
        let script = """
            for i in $(seq 1 \(count)); do
              "\(CommandRunner.binary.path)" edit "\(document)" --title "writer \(process) save $i" --store "\(store)" || echo "FAILED $i" >&2
            done
            """
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", script]
        return shell
    }

    @Test(
        "4 processes saving one document at once: every acknowledged revision is there, the graph is consistent"
    )
    func oneDocument() throws {
        let directory = try CommandRunner.temporaryDirectory()
        let store = directory.appendingPathComponent("s").path
        #expect(try CommandRunner.run(["init", "--store", store]).status == 0)
        let id = try CommandRunner.run(["new", "--title", "shared", "--store", store]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let count = Self.savesPerProcess
        var outputs: [(Process, Pipe, Pipe)] = []
        for process in 0..<4 {
            let shell = try Self.writer(store: store, document: id, process: process, count: count)
            let out = Pipe(), err = Pipe()
            shell.standardOutput = out
            shell.standardError = err
            try shell.run()
            outputs.append((shell, out, err))
        }
        var acknowledged: [String] = []
        for (shell, out, err) in outputs {
            let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            shell.waitUntilExit()
            #expect(!stderr.contains("FAILED"), "\(stderr)")
            acknowledged += stdout.split(separator: "\n").map(String.init)
        }
        #expect(acknowledged.count == 4 * count)
        let versions =
            try JSONSerialization.jsonObject(
                with: Data(try CommandRunner.run(["versions", id, "--json", "--store", store]).stdout.utf8))
            as! [[String: Any]]
        let present = Set(versions.map { $0["revision"] as! String })
        #expect(versions.count == 1 + 4 * count, "every save is a revision")
        #expect(Set(acknowledged).isSubset(of: present), "no acknowledged save is lost")
        #expect(try CommandRunner.run(["verify", "--store", store]).status == 0)
    }

    @Test("4 processes saving different documents at once")
    func differentDocuments() throws {
        let directory = try CommandRunner.temporaryDirectory()
        let store = directory.appendingPathComponent("s").path
        #expect(try CommandRunner.run(["init", "--store", store]).status == 0)
        let ids = try (0..<4).map { _ in
            try CommandRunner.run(["new", "--title", "doc", "--store", store]).stdout.trimmingCharacters(
                in: .whitespacesAndNewlines)
        }
        let count = Self.savesPerProcess
        let shells = try ids.enumerated().map {
            try Self.writer(store: store, document: $1, process: $0, count: count)
        }
        for shell in shells {
            shell.standardOutput = FileHandle.nullDevice
            try shell.run()
        }
        for shell in shells { shell.waitUntilExit() }
        for id in ids {
            let versions =
                try JSONSerialization.jsonObject(
                    with: Data(
                        try CommandRunner.run(["versions", id, "--json", "--store", store]).stdout.utf8))
                as! [Any]
            #expect(versions.count == 1 + count)
        }
        #expect(try CommandRunner.run(["verify", "--store", store]).status == 0)
    }
}
