import Foundation
import Testing

/// Every subcommand over edge inputs: an empty survey, empty strings, positions of 0,
/// negative and huge, names that match nothing. Whatever the input, the tool exits with
/// a documented code, never by a signal, and with `--json` prints exactly one JSON
/// document (an `{"error": …}` one when it fails). And it finishes.
@Suite("Edge inputs: documented exit codes, never a signal")
struct EdgeInputTests {
    static let documented: Set<Int32> = [0, 1, 64, 65, 66, 75]

    /// A slider whose answer is a whole number far beyond `Int`: showing it once trapped.
    static let bigNumber = #"""
        {"title": "Big", "items": [
          {"title": "Distance", "kind": "slider", "minimum": 0, "maximum": 1e300, "roundToInteger": false, "answer": 1e20}
        ]}
        """#

    /// A store made once (the sample, an empty survey and the big number), copied for
    /// each case so that cases never see each other's changes.
    struct Template {
        let path: String
        let names: [String: String]

        init() throws {
            let store = try StoreCommandTests.Store()
            let (id, revision) = try store.makeDocument()
            let empty = try store.json(["new", "--title", "Nothing yet"]) as! [String: Any]
            let big =
                try store.json(["new", "--from", store.write(EdgeInputTests.bigNumber, "big.json")])
                as! [String: Any]
            path = store.path
            names = [
                "{DOC}": id, "{REV}": revision, "{EMPTY}": empty["id"] as! String,
                "{BIG}": big["id"] as! String,
                "{FILE}": try store.write(StoreCommandTests.sample, "sample.json"),
                "{DIR}": store.directory.path,
            ]
        }
    }

    static let template = Result { try Template() }

    static let cases: [[String]] = [
        ["init", "--device", ""], ["new", "--title", ""], ["new", "--from", ""], ["new", "--from", "{DIR}"],
        ["list"], ["conflicts"], ["verify"], ["migrate", "--dry-run"], ["migrate"],
        ["show", ""], ["show", "{EMPTY}"], ["show", "{BIG}"], ["show", "{DOC}", "--revision", ""],
        ["show", "{DOC}", "--revision", "0"],
        ["show", "{DOC}", "--revision", "-1"], ["show", "{DOC}", "--revision", "99999999999999999999"],
        ["edit", "{EMPTY}", "--answer", "5=8.5"], ["edit", "{EMPTY}", "--answer", "1="],
        ["edit", "{EMPTY}", "--answer", "0=0"],
        ["edit", "{DOC}", "--answer", "0=1"], ["edit", "{DOC}", "--answer", "-1=1"],
        ["edit", "{DOC}", "--answer", "4=1"],
        ["edit", "{DOC}", "--answer", "99999999999999999999=1"],
        ["edit", "{DOC}", "--answer", "9223372036854775807=1"],
        ["edit", "{DOC}", "--answer", "-9223372036854775808=1"], ["edit", "{DOC}", "--answer", "=1"],
        ["edit", "{DOC}", "--answer", "="],
        ["edit", "{DOC}", "--answer", ""], ["edit", "{DOC}", "--answer", "1=99999999999999999999"],
        ["edit", "{DOC}", "--answer", "1=-1"],
        ["edit", "{DOC}", "--answer", "1=9223372036854775807"], ["edit", "{DOC}", "--answer", "3=1e308"],
        ["edit", "{DOC}", "--answer", "3=-0"],
        ["edit", "{DOC}", "--answer", "3=nan"], ["edit", "{DOC}", "--answer", "3=-inf"],
        ["edit", "{DOC}", "--answer", "2="],
        ["edit", "{BIG}", "--answer", "1=1e300"], ["edit", "{DOC}", "--title", ""],
        ["edit", "{DOC}", "--base", ""], ["edit", "{DOC}"],
        ["save", "{DOC}", "--from", ""], ["save", "{EMPTY}", "--from", "{FILE}", "--base", "0"],
        ["save", "{DOC}", "--from", "{FILE}"],
        ["delete", ""], ["delete", "{DOC}", "--base", "-1"], ["delete", "{EMPTY}"],
        ["export", "{EMPTY}"], ["export", "{BIG}", "--format", "plist"], ["export", "{DOC}", "--format", ""],
        ["export", "{DOC}", "--revision", "0"], ["export", "{DOC}", "-o", ""],
        ["export", "{DOC}", "--package", ""],
        ["export", "{DOC}", "--package", "{DIR}"], ["import", ""], ["import", "{DIR}"],
        ["versions", ""], ["versions", "{EMPTY}"], ["versions", "0"],
        ["resolve", "{EMPTY}", "--accept"], ["resolve", "{DOC}", "--keep", ""],
        ["resolve", "{DOC}", "--keep", "0"],
        ["resolve", "{DOC}", "--keep", "{REV}"], ["resolve", "{DOC}", "--from", ""],
        ["prune", "--keep-history", "-1"], ["prune", "--keep-history", "99999999999999999999"],
        ["prune", "--keep-history", "9223372036854775807"], ["prune", "{EMPTY}", "--keep-history", "0"],
        ["prune", ""],
        ["sync", ""], ["sync", "{DIR}/nothing-here"], ["sync", "{DIR}/store", "--jobs", "0"],
        ["sync", "{DIR}/store", "--jobs", "-1"],
        ["check", ""], ["check", "{DIR}/nothing-here"], ["check", "{FILE}"], ["check", "{DIR}/store"],
        ["plist", "lint", ""], ["plist", "convert", "", "--to", "json"],
        ["plist", "convert", "{FILE}", "--to", "json"],
    ]

    @Test(
        "Every subcommand over edge inputs exits with a documented code, and --json prints one JSON document",
        arguments: cases)
    func edgeInput(_ template: [String]) throws {
        let made = try Self.template.get()
        let directory = try CommandRunner.temporaryDirectory()
        let store = directory.appendingPathComponent("store").path
        try FileManager.default.copyItem(atPath: made.path, toPath: store)
        var names = made.names
        names["{DIR}"] = directory.path  // {FILE} stays the template's: it is only read
        let arguments = template.map { argument in
            names.reduce(argument) { $0.replacingOccurrences(of: $1.key, with: $1.value) }
        }
        let usesStore = !["check", "plist"].contains(arguments[0])
        for json in [false, true] {
            let line = arguments + (usesStore ? ["--store", store] : []) + (json ? ["--json"] : [])
            let result = try CommandRunner.run(line, timeLimit: 120)
            #expect(!result.timedOut, "\(template) was still running after two minutes")
            #expect(
                !result.signalled,
                "\(template) ended by signal \(result.status): \(result.stderr.prefix(300))")
            #expect(
                Self.documented.contains(result.status),
                "\(template) exited \(result.status): \(result.stderr.prefix(300))")
            guard json else { continue }
            let parsed = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
            #expect(parsed != nil, "\(template) --json printed: \(result.stdout.prefix(300))")
            if let error = (parsed as? [String: Any])?["error"] as? [String: Any] {
                #expect(result.status != 0)
                #expect(error["exit"] as? Int == Int(result.status), "\(template): \(error)")
                #expect((error["message"] as? String)?.isEmpty == false && error["code"] is String)
            }
        }
    }
}
