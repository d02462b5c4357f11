import Foundation
import Testing

/// README's "Using the library" and the example app it is taken from.
@Suite("README's app story and the example app")
struct ExampleAppTests {
    typealias Store = StoreCommandTests.Store

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent()
    static let exampleFolder = repository.appendingPathComponent("Examples/ExampleApp")

    /// The bodies of README's ```swift blocks.
    static func swiftBlocks(_ markdown: String) -> [[String]] {
        var blocks: [[String]] = []
        var current: [String]?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if current == nil, line == "```swift" {
                current = []
            } else if current != nil, line == "```" {
                blocks.append(current!)
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    /// Whether `block` is in `source`: its `import` lines anywhere, its other lines
    /// (without their indentation, blank lines left out) one after another.
    static func contains(_ source: String, _ block: [String]) -> Bool {
        let trimmed = { (lines: [String]) in
            lines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        let sourceLines = trimmed(source.components(separatedBy: "\n"))
        let lines = trimmed(block)
        let imports = lines.filter { $0.hasPrefix("import ") }
        let body = lines.filter { !$0.hasPrefix("import ") }
        guard imports.allSatisfy(sourceLines.contains) else { return false }
        guard !body.isEmpty else { return true }
        guard body.count <= sourceLines.count else { return false }
        return (0...(sourceLines.count - body.count)).contains {
            Array(sourceLines[$0..<$0 + body.count]) == body
        }
    }

    @Test("Every Swift snippet in README is in the example app's sources, line for line")
    func snippetsAreInTheExample() throws {
        let readme = try String(
            contentsOf: Self.repository.appendingPathComponent("README.md"), encoding: .utf8)
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.exampleFolder.path).filter {
            $0.hasSuffix(".swift")
        }
        let sources = try files.map {
            try String(contentsOf: Self.exampleFolder.appendingPathComponent($0), encoding: .utf8)
        }
        let blocks = Self.swiftBlocks(readme)
        #expect(blocks.count >= 4, "README's Swift snippets were not found")
        for block in blocks {
            #expect(
                sources.contains { Self.contains($0, block) },
                "this README snippet is not in Examples/ExampleApp:\n\(block.joined(separator: "\n"))")
        }
        // The check itself can fail: a line the example does not have is caught.
        #expect(
            !sources.contains { Self.contains($0, ["let store = try await SurveyStore.open(at: nowhere)"]) })
    }

    @Test(
        "The example app runs: a conflict from another device is merged item by item; the stores verify clean"
    )
    func exampleRuns() throws {
        let example = CommandRunner.binary.deletingLastPathComponent().appendingPathComponent("ExampleApp")
        #expect(
            FileManager.default.isExecutableFile(atPath: example.path), "build the package first: swift build"
        )
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "example-app-\(UUID().uuidString)"
        ).path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try CommandRunner.run([folder], executable: example, timeLimit: 300)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("in conflict: "))
        #expect(result.stdout.contains("merged: Grace, 9, Soup"))
        for device in ["Laptop", "Phone"] {
            let verify = try CommandRunner.run(["verify", "--store", folder + "/" + device])
            #expect(verify.status == 0, "\(device): \(verify.stderr)")
        }
        let conflicts = try CommandRunner.run(["conflicts", "--json", "--store", folder + "/Laptop"])
        let rows = (try? JSONSerialization.jsonObject(with: Data(conflicts.stdout.utf8))) as? [Any]
        #expect(conflicts.status == 0 && rows?.isEmpty == true, "\(conflicts.stdout)")
    }

    @Test(
        "survey sync and verify --repair-from with the store itself (another path) are refused: exit 64, code sameStore, no writes"
    )
    func syncWithItself() throws {
        let store = try Store()
        let (id, _) = try store.makeDocument()
        let before = try store.versions(id)
        for command in [["sync", store.path + "/."], ["verify", "--repair-from", store.path + "/."]] {
            let result = try store.run(command + ["--json"])
            #expect(result.status == 64, "\(command)")
            let object = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any]
            let error = object?["error"] as? [String: Any]
            #expect(error?["code"] as? String == "sameStore" && error?["exit"] as? Int == 64, "\(command)")
            let message = error?["message"] as? String ?? ""
            #expect(
                message.contains("is this store itself; sync and repair need another store"), "\(command)")
        }
        #expect(try store.versions(id).count == before.count)
    }
}
