import Foundation
import Testing

@Suite("survey plist lint on the hostile corpus", CommandRunner.needs("strace"))
struct HostileLintTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/hostile")

    static var files: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: corpus.path)) ?? [])
            .filter { $0.hasSuffix(".plist") }.sorted().map { corpus.appendingPathComponent($0).path }
    }

    @Test("Every file is refused: exit 65 and one FILE:LINE:COLUMN line per file, no crash")
    func everyFileRefused() throws {
        let files = Self.files
        #expect(files.count >= 40)
        let result = try CommandRunner.run(["plist", "lint"] + files)
        #expect(result.status == 65)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == files.count)
        for (file, line) in zip(files, lines) {
            #expect(line.hasPrefix(file + ":"), "\(line)")
            let position = line.dropFirst(file.count + 1).split(separator: ":").prefix(2)
            #expect(position.count == 2 && position.allSatisfy { Int($0) != nil }, "\(line)")
        }
    }

    @Test("Under strace: no file other than the inputs is opened after start-up, and no socket is made")
    func noFileOrNetworkAccess() throws {
        guard let strace = CommandRunner.requireTool("strace") else { return }
        let directory = try CommandRunner.temporaryDirectory()
        let log = directory.appendingPathComponent("trace")
        let files = Self.files
        let result = try CommandRunner.run(
            ["plist", "lint"] + files,
            prefix: [
                strace, "-f", "-qq", "-e", "trace=open,openat,openat2,connect,socket,execve", "-o", log.path,
            ])
        #expect(result.status == 65)
        let trace = try String(contentsOf: log, encoding: .utf8).split(separator: "\n")
        #expect(!trace.contains { $0.contains("socket(") || $0.contains("connect(") }, "a socket was created")
        // Everything opened after the first input file must be an input file.
        guard let first = trace.firstIndex(where: { $0.contains(files[0]) }) else {
            Issue.record("the trace does not show the inputs being opened")
            return
        }
        let inputs = Set(files)
        for line in trace[first...] where line.contains("open") {
            guard let start = line.firstIndex(of: "\""),
                let end = line[line.index(after: start)...].firstIndex(of: "\"")
            else { continue }
            let path = String(line[line.index(after: start)..<end])
            // The C library loads its character-conversion modules on demand for documents
            // in encodings such as ISO-2022-JP: code, not data.
            if path.contains("/gconv/") && (path.hasSuffix(".so") || path.hasSuffix(".cache")) { continue }
            #expect(inputs.contains(path), "opened \(path)")
        }
        #expect(
            !trace.contains {
                $0.contains("/etc/passwd") || $0.contains("/dev/zero") || $0.contains("/etc/hostname")
            })
    }
}
