import Foundation

/// The repository's `Fixtures/` folder.
enum Fixtures {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
        .appendingPathComponent("Fixtures")

    struct HostileCase: Decodable, Sendable, CustomStringConvertible {
        var file: String
        var what: String
        var line: Int
        var message: String
        var description: String { file }
    }

    /// The hostile corpus and what each file must produce.
    static let hostile: [HostileCase] = {
        let url = root.appendingPathComponent("hostile/expected.json")
        guard let data = try? Data(contentsOf: url),
            let cases = try? JSONDecoder().decode([HostileCase].self, from: data)
        else { return [] }
        return cases
    }()
}
