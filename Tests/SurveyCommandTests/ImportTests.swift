import Foundation
import Testing

/// `survey import`: a revision that verifies keeps its id wherever it goes, and what a
/// document already has is never added twice.
@Suite("Importing revision packages", .serialized)
struct ImportTests {
    @Test(
        "Importing the same package twice, or content the document has, adds nothing; an imported revision keeps its id and syncs without a conflict"
    )
    func identicalContent() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let a = directory.appendingPathComponent("a").path, c = directory.appendingPathComponent("c").path
        let documents = try ReplicaSafetyTests.makeStore(a, in: directory)
        let document = documents[0]
        let package = directory.appendingPathComponent("exported.survey").path
        #expect(try CommandRunner.run(["export", document, "--package", package, "--store", a]).status == 0)
        let exported =
            try JSONSerialization.jsonObject(
                with: Data(try CommandRunner.run(["show", document, "--json", "--store", a]).stdout.utf8))
            as! [String: Any]
        let revision = exported["revision"] as! String

        #expect(try CommandRunner.run(["init", "--store", c]).status == 0)
        let first = try CommandRunner.run(["import", package, "--json", "--store", c])
        #expect(first.status == 0, "\(first.stderr)")
        let added = try JSONSerialization.jsonObject(with: Data(first.stdout.utf8)) as! [String: Any]
        #expect(added["revision"] as? String == revision, "the revision keeps its id")
        #expect(added["outcome"] as? String == "added")
        let second = try CommandRunner.run(["import", package, "--json", "--store", c])
        let again = try JSONSerialization.jsonObject(with: Data(second.stdout.utf8)) as! [String: Any]
        #expect(again["outcome"] as? String == "already present")
        let conflicts = try CommandRunner.run(["conflicts", "--json", "--store", c]).stdout
        #expect(
            (try JSONSerialization.jsonObject(with: Data(conflicts.utf8)) as! [Any]).isEmpty, "\(conflicts)")
        // Its history is not here: a note, not a problem.
        #expect(try CommandRunner.run(["verify", "--store", c]).status == 0)

        // The same content under a package that does not verify (its metadata edited):
        // nothing is added either.
        let edited = directory.appendingPathComponent("edited.survey").path
        try FileManager.default.copyItem(atPath: package, toPath: edited)
        let metadataPath = edited + "/DocumentMetadata.plist"
        let metadata = try String(contentsOfFile: metadataPath, encoding: .utf8).replacingOccurrences(
            of: "laptop", with: "desk")
        try FileManager.default.removeItem(atPath: metadataPath)
        try Data(metadata.utf8).write(to: URL(fileURLWithPath: metadataPath))
        let third = try CommandRunner.run(["import", edited, "--json", "--store", c])
        #expect(
            (try JSONSerialization.jsonObject(with: Data(third.stdout.utf8)) as! [String: Any])["outcome"]
                as? String == "already present")

        // Syncing with the store it came from fills in the history: no conflict.
        let sync = try CommandRunner.run(["sync", a, "--store", c])
        #expect(sync.status == 0, "\(sync.stderr)")
        for store in [a, c] {
            let list = try CommandRunner.run(["conflicts", "--json", "--store", store]).stdout
            #expect(
                (try JSONSerialization.jsonObject(with: Data(list.utf8)) as! [Any]).isEmpty,
                "\(store): \(list)")
            let verify = try CommandRunner.run(["verify", "--store", store])
            #expect(verify.status == 0 && !verify.stderr.contains("note"), "\(verify.stderr)")
        }
    }

    @Test(
        "A package with a link, FIFO, folder or oversized file in a file's place, a missing file, or no package at all is refused naming the file, with a documented exit code, and the store is unchanged"
    )
    func unimportablePackages() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let a = directory.appendingPathComponent("a").path
        let documents = try ReplicaSafetyTests.makeStore(a, in: directory)
        let good = directory.appendingPathComponent("good.survey").path
        #expect(try CommandRunner.run(["export", documents[0], "--package", good, "--store", a]).status == 0)
        let c = directory.appendingPathComponent("c").path
        #expect(try CommandRunner.run(["init", "--store", c]).status == 0)
        let manager = FileManager.default
        let metadata = "DocumentMetadata.plist", content = "Survey.plist"

        // Each case: how to spoil a copy of the package, the file the message names
        // (relative to the copy), its code, its exit and the reason given.
        typealias Spoil = (String) throws -> Void
        let cases: [(name: String, spoil: Spoil, file: String, code: String, exit: Int32, why: String)] = [
            (
                "link",
                {
                    try manager.removeItem(atPath: $0 + "/" + content)
                    try manager.createSymbolicLink(
                        atPath: $0 + "/" + content, withDestinationPath: good + "/" + content)
                }, content, "unimportablePackage", 65, "it is a symbolic link"
            ),
            (
                "fifo",
                {
                    try manager.removeItem(atPath: $0 + "/" + content)
                    #expect(mkfifo($0 + "/" + content, 0o644) == 0)
                }, content, "unimportablePackage", 65, "not a regular file"
            ),
            (
                "folder",
                {
                    try manager.removeItem(atPath: $0 + "/" + metadata)
                    try manager.createDirectory(
                        atPath: $0 + "/" + metadata, withIntermediateDirectories: false)
                }, metadata, "unimportablePackage", 65, "it is a folder"
            ),
            (
                "oversized", { #expect(truncate($0 + "/" + content, 300 << 20) == 0) },
                content, "unimportablePackage", 65, "larger than the limit"
            ),
            (
                "no content", { try manager.removeItem(atPath: $0 + "/" + content) },
                content, "unimportablePackage", 65, "it is missing"
            ),
            (
                "no metadata", { try manager.removeItem(atPath: $0 + "/" + metadata) },
                "", "unimportablePackage", 65, "holds no DocumentMetadata.plist"
            ),
            (
                "a file",
                {
                    try manager.removeItem(atPath: $0)
                    try Data("not a package".utf8).write(to: URL(fileURLWithPath: $0))
                }, "", "unimportablePackage", 65, "not a folder"
            ),
            (
                "nothing", { try manager.removeItem(atPath: $0) }, "", "noSuchPackage", 66,
                "no revision package at"
            ),
        ]
        let before = try Self.tree(c)
        for (index, item) in cases.enumerated() {
            let package = directory.appendingPathComponent("bad\(index).survey").path
            try manager.copyItem(atPath: good, toPath: package)
            try item.spoil(package)
            let named = item.file.isEmpty ? package : package + "/" + item.file
            let text = try CommandRunner.run(["import", package, "--store", c])
            #expect(text.status == item.exit, "\(item.name): \(text.stderr)")
            #expect(
                text.stderr.contains("error: \(item.file.isEmpty ? "" : named + ": ")")
                    && text.stderr.contains(package) && text.stderr.contains(item.why),
                "\(item.name): \(text.stderr)")
            let json = try CommandRunner.run(["import", package, "--json", "--store", c])
            let error = try #require(
                (try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])?["error"]
                    as? [String: Any], "\(item.name): \(json.stdout)")
            #expect(
                error["code"] as? String == item.code && error["exit"] as? Int == Int(item.exit),
                "\(item.name)")
            #expect(json.status == item.exit)
        }
        // A package in a newer format that is no revision this build can verify (the
        // fixture's metadata has no revision id): it can be neither kept nor read.
        let newer = FormatCommandTests.fixtures + "/format3/newer.survey"
        let refused = try CommandRunner.run(["import", newer, "--store", c])
        #expect(refused.status == 65, "\(refused.stderr)")
        #expect(
            refused.stderr.contains(
                "error: \(newer): cannot be imported: it is no revision this build can verify, and its format 3 is newer than this build supports (2)"
            ), "\(refused.stderr)")
        #expect(try Self.tree(c) == before, "a refused import changes nothing in the store")
    }

    /// Every path beneath `root` with its size (folders -1), sorted.
    static func tree(_ root: String) throws -> [String] {
        let manager = FileManager.default
        return try (manager.subpathsOfDirectory(atPath: root)).map { path in
            let attributes = try manager.attributesOfItem(atPath: root + "/" + path)
            let size =
                attributes[.type] as? FileAttributeType == .typeDirectory
                ? -1 : (attributes[.size] as? Int ?? 0)
            return "\(path) \(size)"
        }.sorted()
    }
}
