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
}
