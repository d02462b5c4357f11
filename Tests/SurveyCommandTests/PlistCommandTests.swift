import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("survey plist lint and convert")
struct PlistCommandTests {
    static let valid = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
        \t<key>b</key>
        \t<array><integer>18446744073709551615</integer><real>2.5</real><true/></array>
        \t<key>a</key>
        \t<string>x &amp; y</string>
        \t<key>when</key>
        \t<date>1969-07-20T20:17:40Z</date>
        \t<key>bytes</key>
        \t<data>AAEC</data>
        </dict>
        </plist>
        """

    func write(_ text: String, _ name: String, in directory: URL) throws -> String {
        let url = directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    @Test("lint exits 0 for valid files and 65 with FILE:LINE:COLUMN for each invalid one")
    func lint() throws {
        let directory = try CommandRunner.temporaryDirectory()
        let good = try write(Self.valid, "good.plist", in: directory)
        let bad = try write(
            "<plist>\n<dict>\n  <key>a</key>\n</dict>\n</plist>\n", "bad.plist", in: directory)
        let worse = try write("<plist><integer>12x</integer></plist>", "worse.plist", in: directory)

        let ok = try CommandRunner.run(["plist", "lint", good])
        #expect(ok.status == 0)
        #expect(ok.stderr.isEmpty)

        let failed = try CommandRunner.run(["plist", "lint", good, bad, worse])
        #expect(failed.status == 65)
        let lines = failed.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines.first?.hasPrefix("\(bad):3:") == true, "\(lines)")
        #expect(lines.first?.contains("'a' has no value") == true)
        #expect(lines.last?.hasPrefix("\(worse):1:") == true)
        #expect(lines.last?.contains("invalid character") == true)
    }

    @Test(
        "A line feed or an escape in a file's name is written out in FILE:LINE:COLUMN and read errors, so the name never splits the message"
    )
    func controlCharactersInNames() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let bad = try write(
            "<plist>\n<dict>\n  <key>a</key>\n</dict>\n</plist>\n", "bad\nname\u{1B}.plist", in: directory)
        let shown = directory.path + "/bad\\u{A}name\\u{1B}.plist"
        let lint = try CommandRunner.run(["plist", "lint", bad])
        #expect(lint.status == 65)
        #expect(lint.stderr.split(separator: "\n").count == 1, "\(lint.stderr)")
        #expect(lint.stderr.hasPrefix(shown + ":3:"), "\(lint.stderr)")
        #expect(try CommandRunner.run(["init", "--store", directory.path + "/store"]).status == 0)
        let fromFile = try CommandRunner.run([
            "new", "--from", directory.path + "/missing\nfile.json", "--store", directory.path + "/store",
        ])
        #expect(fromFile.stderr.split(separator: "\n").count == 1, "\(fromFile.stderr)")
        #expect(fromFile.stderr.contains("missing\\u{A}file.json"), "\(fromFile.stderr)")
    }

    @Test("lint --json prints one document with a result per file")
    func lintJSON() throws {
        let directory = try CommandRunner.temporaryDirectory()
        let good = try write(Self.valid, "good.plist", in: directory)
        let bad = try write("<plist><true>x</true></plist>", "bad.plist", in: directory)
        let result = try CommandRunner.run(["plist", "lint", "--json", good, bad])
        #expect(result.status == 65)
        let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let files = try #require(json?["files"] as? [[String: Any]])
        #expect(files.count == 2)
        #expect(files[0]["valid"] as? Bool == true)
        #expect(files[1]["valid"] as? Bool == false)
        #expect(files[1]["line"] as? Int == 1)
        #expect((files[1]["message"] as? String)?.contains("<true> must be empty") == true)
    }

    @Test("A missing file exits 66 and names the file")
    func missingFile() throws {
        let result = try CommandRunner.run(["plist", "lint", "/nonexistent/file.plist"])
        #expect(result.status == 66)
        #expect(result.stderr.contains("/nonexistent/file.plist"))
        let convert = try CommandRunner.run(["plist", "convert", "/nonexistent/file.plist", "--to", "json"])
        #expect(convert.status == 66)
        // An empty path (a usage error, as everywhere a command takes a path), and -o into
        // a folder that does not exist: said in words, never as Foundation's error domain
        // and number.
        let empty = try CommandRunner.run(["plist", "lint", ""])
        #expect(
            empty.status == 64 && !empty.stderr.contains("error 256")
                && empty.stderr.contains("<files> is an empty path"), "\(empty.stderr)")
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = try write(Self.valid, "a.plist", in: directory)
        let nowhere = try CommandRunner.run([
            "plist", "convert", file, "--to", "xml", "-o", "/nonexistent/x.plist",
        ])
        #expect(nowhere.status == 66, "\(nowhere.stderr)")
        #expect(nowhere.stderr.contains("/nonexistent: no such folder"), "\(nowhere.stderr)")
    }

    @Test(
        "lint and convert read a FIFO, standard input (-) and a device to their end, as survey files are read (a FIFO said 'permission denied'); a folder is named as one; UTF-16 JSON is named as such"
    )
    func specialFiles() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A FIFO, written by a second process while the command reads it.
        let fifo = directory.appendingPathComponent("fifo.plist").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: "/bin/sh")
        writer.arguments = [
            "-c", "printf '<plist version=\"1.0\"><integer>12x</integer></plist>' > \"$0\"", fifo,
        ]
        try writer.run()
        let fromFIFO = try CommandRunner.run(["plist", "lint", fifo], timeLimit: 60)
        writer.waitUntilExit()
        #expect(fromFIFO.status == 65, "\(fromFIFO.stderr)")
        #expect(fromFIFO.stderr.hasPrefix("\(fifo):1:"), "\(fromFIFO.stderr)")
        #expect(fromFIFO.stderr.contains("invalid character"), "\(fromFIFO.stderr)")

        let fromStdin = try CommandRunner.run(
            ["plist", "convert", "-", "--to", "json"],
            input: Data("<plist version=\"1.0\"><true/></plist>".utf8))
        #expect(
            fromStdin.status == 0 && fromStdin.stdout == "true\n", "\(fromStdin.stdout) \(fromStdin.stderr)")
        let badStdin = try CommandRunner.run(
            ["plist", "lint", "-"], input: Data("<plist><true>x</true></plist>".utf8))
        #expect(badStdin.status == 65 && badStdin.stderr.hasPrefix("<stdin>:1:"), "\(badStdin.stderr)")

        let device = try CommandRunner.run(["plist", "convert", "/dev/null", "--to", "json"])
        #expect(device.status == 65, "\(device.stderr)")
        #expect(!device.stderr.contains("permission denied"), "\(device.stderr)")

        let folder = try CommandRunner.run(["plist", "lint", "--json", directory.path])
        #expect(folder.status == 66)
        #expect(folder.stderr == "\(directory.path): is a folder, not a file\n", "\(folder.stderr)")
        let files = (try JSONSerialization.jsonObject(with: Data(folder.stdout.utf8)) as? [String: Any])?[
            "files"]
        #expect((files as? [[String: Any]])?.first?["message"] as? String == "is a folder, not a file")

        let json = directory.appendingPathComponent("u16.json")
        try (Data([0xFF, 0xFE]) + "{\"a\": 1}".data(using: .utf16LittleEndian)!).write(to: json)
        for arguments in [["plist", "lint", json.path], ["plist", "convert", json.path, "--to", "xml"]] {
            let result = try CommandRunner.run(arguments)
            #expect(result.status == 65)
            #expect(
                result.stderr
                    == "\(json.path):1:1: the document is UTF-16 text but not an XML property list (JSON must be UTF-8)\n",
                "\(result.stderr)")
        }
        // `new --from` says it in the same words (it said "the file is UTF-16 text …; JSON
        // must be UTF-8").
        let store = directory.appendingPathComponent("store").path
        #expect(try CommandRunner.run(["init", "--store", store]).status == 0)
        let created = try CommandRunner.run(["new", "--from", json.path, "--store", store])
        #expect(created.status == 65)
        #expect(
            created.stderr
                == "\(json.path):1:1: the document is UTF-16 text but not an XML property list (JSON must be UTF-8)\n",
            "\(created.stderr)")
    }

    @Test("convert --to xml rewrites a file in CoreFoundation's canonical form")
    func convertToXML() throws {
        let directory = try CommandRunner.temporaryDirectory()
        let path = try write(Self.valid, "in.plist", in: directory)
        let result = try CommandRunner.run(["plist", "convert", path, "--to", "xml"])
        #expect(result.status == 0)
        let expected = try PropertyListSerialization.data(
            fromPropertyList: PropertyListSerialization.propertyList(
                from: Data(Self.valid.utf8), format: nil),
            format: .xml, options: 0)
        #expect(result.stdout == String(decoding: expected, as: UTF8.self))
    }

    @Test("convert --to json maps dates to ISO 8601 and data to base64, and refuses NaN")
    func convertToJSON() throws {
        let directory = try CommandRunner.temporaryDirectory()
        let path = try write(Self.valid, "in.plist", in: directory)
        let output = directory.appendingPathComponent("out.json")
        let result = try CommandRunner.run(["plist", "convert", path, "--to", "json", "-o", output.path])
        #expect(result.status == 0)
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: output)) as? [String: Any]
        #expect(json?["a"] as? String == "x & y")
        #expect(json?["when"] as? String == "1969-07-20T20:17:40Z")
        #expect(json?["bytes"] as? String == "AAEC")
        #expect((json?["b"] as? [Any])?.first as? NSNumber == NSNumber(value: UInt64.max))

        let nan = try write("<plist><array><real>nan</real></array></plist>", "nan.plist", in: directory)
        let refused = try CommandRunner.run(["plist", "convert", nan, "--to", "json"])
        #expect(refused.status == 65)
        #expect(refused.stderr.contains("nan.plist"))
        #expect(refused.stdout.isEmpty)
    }

    @Test(
        "convert reads JSON too: --to xml writes what PropertyListSerialization writes, errors have a position"
    )
    func convertFromJSON() throws {
        let directory = try CommandRunner.temporaryDirectory()
        let json = try write(
            "{\"title\": \"T\", \"n\": [1, 2.5, true], \"nested\": {\"k\": \"v\"}}\n", "in.json",
            in: directory)
        let result = try CommandRunner.run(["plist", "convert", json, "--to", "xml"])
        #expect(result.status == 0, "\(result.stderr)")
        let expected = try PropertyListSerialization.data(
            fromPropertyList: ["title": "T", "n": [1, 2.5, true] as [Any], "nested": ["k": "v"]]
                as [String: Any],
            format: .xml, options: 0)
        #expect(result.stdout == String(decoding: expected, as: UTF8.self))

        // XML to JSON and back gives the same XML, for values JSON can carry.
        let plain = try write(
            PlistCommandTests.valid.replacingOccurrences(
                of: "<date>1969-07-20T20:17:40Z</date>", with: "<string/>"
            )
            .replacingOccurrences(of: "<data>AAEC</data>", with: "<integer>-3</integer>"),
            "plain.plist", in: directory)
        let asJSON = directory.appendingPathComponent("plain.json").path
        #expect(try CommandRunner.run(["plist", "convert", plain, "--to", "json", "-o", asJSON]).status == 0)
        let back = try CommandRunner.run(["plist", "convert", asJSON, "--to", "xml"])
        #expect(back.status == 0)
        #expect(back.stdout == (try CommandRunner.run(["plist", "convert", plain, "--to", "xml"])).stdout)

        let bad = try write("{\n  \"a\": null\n}\n", "bad.json", in: directory)
        let refused = try CommandRunner.run(["plist", "convert", bad, "--to", "xml"])
        #expect(refused.status == 65)
        #expect(refused.stdout.isEmpty)
        #expect(refused.stderr.contains("\(bad):2:8: null is not allowed"), "\(refused.stderr)")
        let refusedJSON = try CommandRunner.run(["plist", "convert", bad, "--to", "xml", "--json"])
        let error = try JSONSerialization.jsonObject(with: Data(refusedJSON.stdout.utf8)) as? [String: Any]
        let body = try #require(error?["error"] as? [String: Any])
        #expect(body["line"] as? Int == 2 && body["column"] as? Int == 8 && body["exit"] as? Int == 65)

        // lint stays a check of XML property lists.
        let lint = try CommandRunner.run(["plist", "lint", json])
        #expect(lint.status == 65 && lint.stderr.contains("the document is JSON"))
    }

    @Test(
        "A JSON string holding what XML cannot carry: convert --to xml and new --from name the file, line and column of its escape (they named none); --to json still converts it"
    )
    func unwritableJSONTextLocated() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = try write(
            "{\n  \"title\": \"T\",\n  \"items\": [\n    {\"kind\": \"textOnly\", \"title\": \"a\\u0000b\"}\n  ]\n}\n",
            "nul.json", in: directory)
        let reason = "the string contains the control character U+0000, which XML 1.0 cannot carry"
        let converted = try CommandRunner.run(["plist", "convert", file, "--to", "xml"])
        #expect(converted.status == 65 && converted.stdout.isEmpty)
        #expect(
            converted.stderr == "\(file):4:37: cannot be written as XML: \(reason)\n", "\(converted.stderr)")
        let convertedJSON = try CommandRunner.run(["plist", "convert", file, "--to", "xml", "--json"])
        let convertError = try #require(
            (try JSONSerialization.jsonObject(with: Data(convertedJSON.stdout.utf8)) as? [String: Any])?[
                "error"]
                as? [String: Any])
        #expect(
            convertError["code"] as? String == "invalidPropertyList" && convertError["exit"] as? Int == 65)
        #expect(convertError["line"] as? Int == 4 && convertError["column"] as? Int == 37, "\(convertError)")

        let store = directory.appendingPathComponent("store").path
        #expect(try CommandRunner.run(["init", "--store", store]).status == 0)
        let created = try CommandRunner.run(["new", "--from", file, "--store", store])
        #expect(created.status == 65)
        #expect(
            created.stderr
                == "\(file):4:37: item 1 (\"a\\0b\"): its title cannot be saved: \(reason) [unwritableText]\n",
            "\(created.stderr)")
        let createdJSON = try CommandRunner.run(["new", "--from", file, "--json", "--store", store])
        let newError = try #require(
            (try JSONSerialization.jsonObject(with: Data(createdJSON.stdout.utf8)) as? [String: Any])?[
                "error"]
                as? [String: Any])
        #expect(newError["code"] as? String == "invalidSurvey" && newError["file"] as? String == file)
        #expect(newError["line"] as? Int == 4 && newError["column"] as? Int == 37, "\(newError)")
        let listed = try CommandRunner.run(["list", "--json", "--store", store])
        #expect(listed.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]", "\(listed.stdout)")

        // JSON carries it: converting to JSON is no error.
        let toJSON = try CommandRunner.run(["plist", "convert", file, "--to", "json"])
        #expect(toJSON.status == 0, "\(toJSON.stderr)")
        #expect(toJSON.stdout.contains(#""a\u0000b""#), "\(toJSON.stdout)")
    }

    @Test(
        "Standard input is named <stdin> everywhere: in lint's and convert's messages and in their --json (lint's path and convert's file said '-')"
    )
    func standardInputName() throws {
        let bad = Data("<plist><true>x</true></plist>".utf8)
        let lint = try CommandRunner.run(["plist", "lint", "--json", "-"], input: bad)
        #expect(lint.status == 65 && lint.stderr.hasPrefix("<stdin>:1:"), "\(lint.stderr)")
        let files =
            (try JSONSerialization.jsonObject(with: Data(lint.stdout.utf8)) as? [String: Any])?["files"]
            as? [[String: Any]]
        #expect(files?.first?["path"] as? String == "<stdin>", "\(lint.stdout)")
        let good = try CommandRunner.run(
            ["plist", "lint", "--json", "-"], input: Data("<plist><true/></plist>".utf8))
        let goodFiles =
            (try JSONSerialization.jsonObject(with: Data(good.stdout.utf8)) as? [String: Any])?["files"]
            as? [[String: Any]]
        #expect(good.status == 0 && goodFiles?.first?["path"] as? String == "<stdin>", "\(good.stdout)")

        let refused = try CommandRunner.run(["plist", "convert", "--json", "-", "--to", "xml"], input: bad)
        let error =
            (try JSONSerialization.jsonObject(with: Data(refused.stdout.utf8)) as? [String: Any])?["error"]
            as? [String: Any]
        #expect(refused.status == 65 && error?["file"] as? String == "<stdin>", "\(refused.stdout)")
        #expect(refused.stderr.hasPrefix("<stdin>:1:"), "\(refused.stderr)")
        let converted = try CommandRunner.run(
            ["plist", "convert", "--json", "-", "--to", "json"], input: Data("<plist><true/></plist>".utf8))
        let report = try JSONSerialization.jsonObject(with: Data(converted.stdout.utf8)) as? [String: Any]
        #expect(converted.status == 0 && report?["file"] as? String == "<stdin>", "\(converted.stdout)")
    }

    @Test("Unknown options and formats are usage errors (exit 64)")
    func usage() throws {
        #expect(try CommandRunner.run(["plist", "convert", "x.plist", "--to", "yaml"]).status == 64)
        #expect(try CommandRunner.run(["plist", "lint"]).status == 64)
    }
}
