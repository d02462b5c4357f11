import Foundation
import Testing

/// The order of system calls of a real `survey edit`, read from `strace -f -y`.
@Suite("Durable ordering under strace")
struct DurabilityTraceTests {
    struct Call {
        var index: Int
        var name: String
        var text: String
    }

    /// The path strace -y prints for the first descriptor argument, `5</path>`.
    static func descriptorPath(_ line: String) -> String? {
        guard let open = line.range(of: "("), let start = line.range(of: "<", range: open.upperBound..<line.endIndex),
            let end = line.range(of: ">", range: start.upperBound..<line.endIndex)
        else { return nil }
        return String(line[start.upperBound..<end.lowerBound])
    }

    /// The quoted path arguments of a call, in order.
    static func quotedPaths(_ line: String) -> [String] {
        var paths: [String] = []
        var rest = line[...]
        while let start = rest.firstIndex(of: "\"") {
            let after = rest.index(after: start)
            guard let end = rest[after...].firstIndex(of: "\"") else { break }
            paths.append(String(rest[after..<end]))
            rest = rest[rest.index(after: end)...]
        }
        return paths
    }

    @Test("survey edit fsyncs each new file after its last write and before the rename, the package before its rename, and the parent before reporting success")
    func editOrdering() throws {
        guard let strace = CommandRunner.requireTool("strace") else { return }
        let directory = try CommandRunner.temporaryDirectory()
        let store = directory.appendingPathComponent("store").path
        #expect(try CommandRunner.run(["init", "--store", store]).status == 0)
        let sample = directory.appendingPathComponent("s.json")
        try Data(StoreCommandTests.sample.utf8).write(to: sample)
        let created = try CommandRunner.run(["new", "--from", sample.path, "--store", store])
        let id = created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let log = directory.appendingPathComponent("trace").path
        let result = try CommandRunner.run(
            ["edit", id, "--answer", "3=6", "--store", store],
            prefix: [strace, "-f", "-y", "-qq", "-s", "256", "-e", "trace=openat,write,fsync,close,rename,renameat,renameat2,mkdirat,mkdir", "-o", log])
        #expect(result.status == 0, "\(result.stderr)")
        let calls = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").enumerated().compactMap { index, line -> Call? in
            // Lines start with the pid; the call name runs up to the parenthesis.
            let text = String(line)
            guard let paren = text.firstIndex(of: "("), let space = text[..<paren].lastIndex(of: " ") else { return nil }
            return Call(index: index, name: String(text[text.index(after: space)..<paren]), text: text)
        }
        let temporary = store + "/Local.nosync/tmp/"
        guard let publish = calls.first(where: { $0.name == "renameat2" && $0.text.contains("/Documents/") }) else {
            Issue.record("no renameat2 into Documents/ in the trace")
            return
        }
        let paths = Self.quotedPaths(publish.text)
        let package = try #require(paths.first { $0.hasPrefix(temporary) })
        let destination = try #require(paths.last)
        #expect(publish.text.contains("RENAME_NOREPLACE"))

        // Each file created in the package: fsynced after its last write, before the rename.
        let created_ = calls.filter { $0.name == "openat" && $0.text.contains("O_CREAT") && Self.quotedPaths($0.text).first?.hasPrefix(package + "/") == true }
        #expect(created_.count == 2, "DocumentMetadata.plist and Survey.plist")
        for file in created_ {
            let path = Self.quotedPaths(file.text)[0]
            let writes = calls.filter { $0.name == "write" && Self.descriptorPath($0.text) == path }
            let fsyncs = calls.filter { $0.name == "fsync" && Self.descriptorPath($0.text) == path }
            #expect(!writes.isEmpty, "\(path) is written")
            guard let lastWrite = writes.last, let fsync = fsyncs.first else {
                Issue.record("\(path) is never fsynced")
                continue
            }
            #expect(fsync.index > lastWrite.index, "\(path): fsync after the last write")
            #expect(fsync.index < publish.index, "\(path): fsync before the rename that publishes it")
        }
        // The package directory itself, before its rename.
        let packageSync = calls.first { $0.name == "fsync" && Self.descriptorPath($0.text) == package }
        #expect(packageSync.map { $0.index < publish.index } == true, "the package directory is fsynced before its rename")
        // The destination's parent, after the rename and before success is reported.
        let parent = String(destination[..<destination.lastIndex(of: "/")!])
        let parentSync = calls.first { $0.name == "fsync" && $0.index > publish.index && Self.descriptorPath($0.text) == parent }
        let report = calls.first { $0.name == "write" && $0.text.contains("write(1<") }
        #expect(parentSync != nil, "the parent directory is fsynced after the rename")
        #expect(report != nil, "the new revision is printed")
        if let parentSync, let report { #expect(parentSync.index < report.index, "the parent is fsynced before success is reported") }
    }
}
