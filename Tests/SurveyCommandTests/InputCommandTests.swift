import Foundation
import SurveyStore
import Testing

/// What the `survey` binary reads: dates, numbers, JSON, standard input, the envelope of
/// `show --json`, and the model's rules, as a user meets them.
@Suite("survey input: dates, numbers, strict JSON, stdin, envelope", .serialized)
struct InputCommandTests {
    static let sample = #"""
        {"title": "Visits", "items": [
          {"title": "Name", "kind": "textField"},
          {"title": "Rate", "kind": "slider", "minimum": 0, "maximum": 1e20},
          {"title": "Dish", "kind": "picker", "options": ["Soup", "Cake"]},
          {"title": "Date of visit", "kind": "datePicker"}
        ]}
        """#

    typealias Store = StoreCommandTests.Store

    func makeDocument(_ store: Store, _ json: String = sample) throws -> String {
        #expect(try store.run(["init", "--device", "test"]).status == 0)
        let created = try store.run(["new", "--from", store.write(json, "new.json")])
        #expect(created.status == 0, "\(created.stderr)")
        return created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(
        "Impossible dates are refused with exit 65 naming the item and the rule, not rolled over",
        arguments: [
            "2026-02-30T00:00:00Z", "2026-01-01T24:00:00Z",
        ])
    func impossibleDates(date: String) throws {
        let store = try Store()
        let id = try makeDocument(store)
        let edited = try store.run(["edit", id, "--answer", "4=\(date)"])
        #expect(edited.status == 65)
        #expect(
            edited.stderr.contains(#"item 4 ("Date of visit"): the answer is not a possible date"#),
            "\(edited.stderr)")
        #expect(edited.stderr.contains("[invalidDate]"))
        let json = #"{"title": "T", "items": [{"title": "D", "kind": "datePicker", "answer": "\#(date)"}]}"#
        let created = try store.run(["new", "--from", store.write(json, "bad.json")])
        #expect(created.status == 65)
        #expect(
            created.stderr.contains(#"item 1 ("D"): the answer is not a possible date"#), "\(created.stderr)")
        let fine = try store.run(["edit", id, "--answer", "4=2024-02-29T10:00:00.5Z"])
        #expect(fine.status == 0, "a fraction of a second is accepted (and dropped): \(fine.stderr)")
        let shown = try store.run(["show", id])
        #expect(shown.stdout.contains("Date of visit (datePicker): 2024-02-29T10:00:00Z"), "\(shown.stdout)")
    }

    @Test(
        "A date answer outside the years 1 to 9999 is refused with exit 65 (the file it made could not be read by plistlib); the edges are saved and plistlib reads them",
        CommandRunner.needs("python3"))
    func answerYears() throws {
        guard let python = CommandRunner.requireTool("python3") else { return }
        let store = try Store()
        let id = try makeDocument(store)
        for date in ["0000-12-31T23:59:59Z", "10000-01-01T00:00:00Z", "-001-01-01T00:00:00Z"] {
            let edited = try store.run(["edit", id, "--answer", "4=\(date)"])
            #expect(edited.status == 65, "\(date): \(edited.stderr)")
            #expect(
                edited.stderr.contains(
                    #"item 4 ("Date of visit"): the answer \#(date) lies outside the years 1 to 9999"#)
                    && edited.stderr.contains("[invalidDate]"),
                "\(edited.stderr)")
        }
        for date in ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z"] {
            let edited = try store.run(["edit", id, "--answer", "4=\(date)"])
            #expect(edited.status == 0, "\(date): \(edited.stderr)")
            let revision = edited.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let file = "\(store.path)/Documents/\(id)/\(revision).survey/Survey.plist"
            let read = try CommandRunner.run(
                [
                    "-c",
                    "import plistlib, sys; d = plistlib.load(open(sys.argv[1], 'rb'))['items'][3]['answer']; "
                        + "print(d.isoformat() + 'Z')",
                    file,
                ], executable: URL(fileURLWithPath: python))
            #expect(read.status == 0, "plistlib: \(read.stderr)")
            #expect(read.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == date)
        }
    }

    @Test(
        "An argument that is not UTF-8 is refused with exit 64 naming its position, and nothing is saved (it was saved with U+FFFD in place of the byte)"
    )
    func argumentNotUTF8() throws {
        let store = try Store()
        let id = try makeDocument(store)
        let before = try store.run(["show", id, "--json"]).stdout
        // "Adèle" in Latin-1, as a terminal set to it would pass it.
        let script = #"exec "$0" edit "$1" --answer "$(printf '1=Ad\351le')" --store "$2" $3"#
        for json in [false, true] {
            let result = try CommandRunner.run(
                ["-c", script, CommandRunner.binary.path, id, store.path, json ? "--json" : ""],
                executable: URL(fileURLWithPath: "/bin/sh"))
            #expect(result.status == 64, "\(result.stderr)")
            #expect(
                result.stderr.contains("error: argument 4 (1=Ad\u{FFFD}le as read) is not UTF-8 text"),
                "\(result.stderr)")
            if json {
                let report =
                    try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
                let error = report?["error"] as? [String: Any]
                #expect(
                    error?["code"] as? String == "usage" && error?["exit"] as? Int == 64, "\(result.stdout)")
            }
        }
        #expect(try store.run(["show", id, "--json"]).stdout == before)
        #expect(try store.run(["edit", id, "--answer", "1=Adèle"]).status == 0, "UTF-8 goes through")
    }

    @Test("plist convert --to json prints dates before 1582 in the proleptic Gregorian calendar")
    func oldDatesInJSON() throws {
        let store = try Store()
        let plist = try store.write(
            "<plist><array><date>0009-09-15T00:00:00Z</date><date>0000-01-02T00:00:00Z</date><date>1582-10-14T00:00:00Z</date></array></plist>",
            "old.plist")
        let converted = try CommandRunner.run(["plist", "convert", plist, "--to", "json"])
        #expect(converted.status == 0, "\(converted.stderr)")
        let dates = try JSONSerialization.jsonObject(with: Data(converted.stdout.utf8)) as? [String]
        #expect(dates == ["0009-09-15T00:00:00Z", "0000-01-02T00:00:00Z", "1582-10-14T00:00:00Z"])
    }

    @Test("A slider answer of 1e19 or -1e300 is shown, not a crash")
    func largeNumbers() throws {
        let store = try Store()
        let id = try makeDocument(store)
        #expect(try store.run(["edit", id, "--answer", "2=1e19"]).status == 0)
        let shown = try store.run(["show", id])
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("Rate (slider): 1e+19"), "\(shown.stdout)")
        let negative =
            #"{"title": "N", "items": [{"title": "R", "kind": "slider", "minimum": -1e301, "maximum": 0, "answer": -1e300}]}"#
        let other = try store.run(["new", "--from", store.write(negative, "negative.json")])
        #expect(other.status == 0, "\(other.stderr)")
        let shownOther = try store.run(["show", other.stdout.trimmingCharacters(in: .whitespacesAndNewlines)])
        #expect(shownOther.status == 0, "\(shownOther.stderr)")
        #expect(shownOther.stdout.contains("R (slider): -1e+300"), "\(shownOther.stdout)")
    }

    @Test(
        "A slider bound of inf, -inf or nan in a plist is refused as not finite, naming the file, item and rule",
        arguments: [
            ("0", "inf", "maximum (inf)"), ("-inf", "10", "minimum (-inf)"), ("nan", "10", "minimum (nan)"),
        ])
    func nonFiniteSliderBounds(minimum: String, maximum: String, named: String) throws {
        let store = try Store()
        #expect(try store.run(["init"]).status == 0)
        let file = try store.write(
            """
            <plist version="1.0"><dict><key>title</key><string>T</string><key>items</key><array><dict>\
            <key>title</key><string>Rate us</string><key>kind</key><string>slider</string>\
            <key>minimum</key><real>\(minimum)</real><key>maximum</key><real>\(maximum)</real>\
            </dict></array></dict></plist>
            """, "bounds.plist")
        let created = try store.run(["new", "--from", file])
        #expect(created.status == 65)
        #expect(
            created.stderr
                == "\(file): item 1 (\"Rate us\"): a slider's \(named) must be a finite number [sliderBounds]\n",
            "\(created.stderr)")
    }

    @Test(
        "new --from refuses a slider integer a double cannot hold exactly (it stored 18446744073709551615 as 1.8446744073709552e+19), writing nothing"
    )
    func inexactSliderInteger() throws {
        let store = try Store()
        #expect(try store.run(["init"]).status == 0)
        let file = try store.write(
            #"{"title":"T","items":[{"title":"S","kind":"slider","minimum":0,"maximum":18446744073709551615,"answer":18446744073709551615}]}"#,
            "big.json")
        let created = try store.run(["new", "--from", file])
        #expect(created.status == 65)
        #expect(
            created.stderr
                == "\(file): item 1 (\"S\"): a slider's maximum (18446744073709551615) is an integer a double cannot hold exactly; a slider's minimum, maximum and answer are doubles, exact for every integer up to 2^53 (9007199254740992) in magnitude but only for some beyond [sliderBounds]\n",
            "\(created.stderr)")
        #expect(try store.run(["list", "--json"]).stdout == "[]\n")
    }

    @Test(
        "edit --answer refuses a slider integer a double cannot hold exactly, as a file's (9007199254740993 was saved as 9007199254740992)"
    )
    func inexactSliderAnswerTyped() throws {
        let store = try Store()
        #expect(try store.run(["init"]).status == 0)
        let file = try store.write(
            #"{"title":"T","items":[{"title":"S","kind":"slider","minimum":0,"maximum":1e17}]}"#, "s.json")
        let id = try store.run(["new", "--from", file]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        for text in ["9007199254740993", " +009007199254740995 ", "99999999999999999"] {
            let edited = try store.run(["edit", id, "--answer", "1=\(text)"])
            #expect(edited.status == 65, "\(text): \(edited.stderr)")
            #expect(
                edited.stderr
                    == "error: item 1 (\"S\"): the answer is an integer a double cannot hold exactly; a slider's minimum, maximum and answer are doubles, exact for every integer up to 2^53 (9007199254740992) in magnitude but only for some beyond [answerOutOfRange]\n",
                "\(text): \(edited.stderr)")
        }
        for (text, shown) in [
            ("9007199254740992", "9007199254740992"), ("100000000000000000", "1e+17"),
            ("9007199254740993.0", "9007199254740992"),
        ] {
            let edited = try store.run(["edit", id, "--answer", "1=\(text)"])
            #expect(edited.status == 0, "\(text): \(edited.stderr)")
            #expect(try store.run(["show", id]).stdout.contains("S (slider): \(shown)\n"), "\(text)")
        }
    }

    @Test("--from reads standard input: '-', a pipe and /dev/stdin")
    func standardInput() throws {
        let store = try Store()
        let id = try makeDocument(store)
        let survey = Data(#"{"title": "From a pipe", "items": []}"#.utf8)
        for path in ["-", "/dev/stdin"] {
            let saved = try CommandRunner.run(
                ["save", id, "--from", path, "--store", store.path], input: survey)
            #expect(saved.status == 0, "\(path): \(saved.stderr)")
        }
        let shown = try store.run(["show", id])
        #expect(shown.stdout.hasPrefix("From a pipe"), "\(shown.stdout)")
        let bad = try CommandRunner.run(
            ["new", "--from", "-", "--store", store.path],
            input: Data("{\"title\": \"T\",\n \"title\": \"U\", \"items\": []}".utf8))
        #expect(bad.status == 65)
        #expect(
            bad.stderr.contains(#"<stdin>:2:2: the key "title" appears twice in one object"#), "\(bad.stderr)"
        )
    }

    @Test("--from tells the form by content: a UTF-16 plist is a plist; a binary plist is named")
    func formatByContent() throws {
        let store = try Store()
        #expect(try store.run(["init"]).status == 0)
        var utf16 = Data([0xFF, 0xFE])
        utf16.append(
            #"<?xml version="1.0" encoding="UTF-16"?><plist version="1.0"><dict><key>title</key><string>Sixteen</string><key>items</key><array/></dict></plist>"#
                .data(using: .utf16LittleEndian)!)
        let url = store.directory.appendingPathComponent("utf16.plist")
        try utf16.write(to: url)
        let created = try store.run(["new", "--from", url.path])
        #expect(created.status == 0, "\(created.stderr)")
        let binary = store.directory.appendingPathComponent("binary.plist")
        try Data("bplist00\u{8}".utf8).write(to: binary)
        let refused = try store.run(["new", "--from", binary.path])
        #expect(refused.status == 65)
        #expect(
            refused.stderr.contains("\(binary.path):1:1: binary property lists are not supported"),
            "\(refused.stderr)")
        let linted = try CommandRunner.run(["plist", "lint", binary.path])
        #expect(linted.status == 65)
        #expect(linted.stderr.contains("binary property lists are not supported"), "\(linted.stderr)")
    }

    @Test("show --json saves back; another document's id is refused; unknown keys still are")
    func showJSONSavesBack() throws {
        let store = try Store()
        let id = try makeDocument(store)
        let shown = try store.run(["show", id, "--json"])
        #expect(shown.status == 0)
        let edited = shown.stdout.replacingOccurrences(of: "\"Visits\"", with: "\"Visits, edited\"")
        let saved = try store.run(["save", id, "--from", store.write(edited, "shown.json")])
        #expect(saved.status == 0, "\(saved.stderr)")
        #expect(try store.run(["show", id]).stdout.hasPrefix("Visits, edited"))

        let other = try store.run(["new", "--title", "Other"]).stdout.trimmingCharacters(
            in: .whitespacesAndNewlines)
        let wrong = try store.run(["save", other, "--from", store.write(edited, "shown.json")])
        #expect(wrong.status == 65)
        #expect(wrong.stderr.contains("its 'id' names document \(id)"), "\(wrong.stderr)")
        #expect(wrong.stderr.contains("[otherDocument]"))
        let unknown = edited.replacingOccurrences(of: "\"conflicts\"", with: "\"remarks\"")
        let refused = try store.run(["save", id, "--from", store.write(unknown, "unknown.json")])
        #expect(refused.status == 65)
        #expect(refused.stderr.contains("unknown key 'remarks'"), "\(refused.stderr)")
    }

    @Test(
        "Repeated options, equal binary options and an empty title are refused with exit 65",
        arguments: [
            (
                #"{"title": "T", "items": [{"title": "P", "kind": "picker", "options": ["A", "A"]}]}"#,
                "[duplicateOptions]"
            ),
            (
                #"{"title": "T", "items": [{"title": "B", "kind": "binary", "options": ["A", "A"]}]}"#,
                "[duplicateOptions]"
            ),
            (#"{"title": "", "items": []}"#, "[emptyTitle]"),
        ])
    func validation(json: String, rule: String) throws {
        let store = try Store()
        #expect(try store.run(["init"]).status == 0)
        let created = try store.run(["new", "--from", store.write(json, "v.json")])
        #expect(created.status == 65)
        #expect(created.stderr.contains(rule), "\(created.stderr)")
        let titled = try store.run(["new", "--title", "   "])
        #expect(titled.status == 65)
    }

    /// A package as an older app wrote it: metadata naming a new document in format 2,
    /// with no revision id (so its content is taken as stored, under the rules of then).
    static func legacyPackage(in store: Store) throws -> (package: URL, document: String) {
        let package = store.directory.appendingPathComponent("old.survey")
        try FileManager.default.createDirectory(at: package, withIntermediateDirectories: true)
        let document = UUID().uuidString.lowercased()
        try Data(
            """
            <plist version="1.0"><dict><key>DocumentUUID</key><string>\(document)</string>\
            <key>FormatVersion</key><integer>2</integer></dict></plist>
            """.utf8
        ).write(to: package.appendingPathComponent("DocumentMetadata.plist"))
        return (package, document)
    }

    @Test(
        "A document stored before the newer rules opens, exports with a warning, and is fixed by the next edit"
    )
    func legacyContentStillOpens() throws {
        let store = try Store()
        #expect(try store.run(["init"]).status == 0)
        let (package, document) = try Self.legacyPackage(in: store)
        try Data(
            """
            <plist version="1.0"><dict><key>title</key><string></string><key>items</key><array><dict>\
            <key>id</key><string>\(UUID().uuidString)</string><key>title</key><string>Q</string>\
            <key>kind</key><string>textField</string></dict></array></dict></plist>
            """.utf8
        ).write(to: package.appendingPathComponent("Survey.plist"))
        let imported = try store.run(["import", package.path])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try store.run(["show", document]).status == 0)
        // export carries it as it is and warns that new --from will refuse the file.
        let exportedFile = store.directory.appendingPathComponent("old.json").path
        let exported = try store.run(["export", document, "-o", exportedFile])
        #expect(exported.status == 0, "\(exported.stderr)")
        #expect(
            exported.stderr.hasPrefix("warning: ") && exported.stderr.contains("survey: the title is empty")
                && exported.stderr.contains("[emptyTitle]"), "\(exported.stderr)")
        let reported = try store.run(["export", document, "-o", exportedFile, "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(reported.stdout.utf8)) as? [String: Any]
        let problem = object?["newContentProblem"] as? [String: Any]
        #expect(
            problem?["rule"] as? String == "emptyTitle" && problem?["item"] is NSNull, "\(reported.stdout)")
        let recreated = try store.run(["new", "--from", exportedFile])
        #expect(recreated.status == 65 && recreated.stderr.contains("[emptyTitle]"), "\(recreated.stderr)")
        let answered = try store.run(["edit", document, "--answer", "1=Ada"])
        #expect(answered.status == 65)
        #expect(answered.stderr.contains("[emptyTitle]"), "\(answered.stderr)")
        let fixed = try store.run(["edit", document, "--title", "Named", "--answer", "1=Ada"])
        #expect(fixed.status == 0, "\(fixed.stderr)")
        #expect(try store.run(["show", document]).stdout.hasPrefix("Named"))
        let clean = try store.run(["export", document, "-o", exportedFile])
        #expect(clean.status == 0 && clean.stderr.isEmpty, "\(clean.stderr)")
        let cleanJSON = try store.run(["export", document, "-o", exportedFile, "--json"])
        #expect(!cleanJSON.stdout.contains("newContentProblem"), "\(cleanJSON.stdout)")
        #expect(try store.run(["new", "--from", exportedFile]).status == 0)
    }

    @Test("export of content stored before the newer rules warns about every problem, not only the first")
    func legacyContentEveryProblem() throws {
        let store = try Store()
        #expect(try store.run(["init"]).status == 0)
        let (package, document) = try Self.legacyPackage(in: store)
        func item(_ title: String, _ kind: String, _ options: [String]) -> String {
            """
            <dict><key>id</key><string>\(UUID().uuidString)</string><key>title</key><string>\(title)</string>\
            <key>kind</key><string>\(kind)</string><key>options</key><array>\
            \(options.map { "<string>\($0)</string>" }.joined())</array></dict>
            """
        }
        try Data(
            """
            <plist version="1.0"><dict><key>title</key><string> </string><key>items</key><array>\
            \(item("Fine", "picker", ["A", "B"]))\(item("Come again?", "binary", ["Yes", "Yes"]))\
            \(item("Dish", "picker", ["Soup", "Fish", "Soup"]))</array></dict></plist>
            """.utf8
        ).write(to: package.appendingPathComponent("Survey.plist"))
        let imported = try store.run(["import", package.path])
        #expect(imported.status == 0, "\(imported.stderr)")

        let exported = try store.run([
            "export", document, "-o", store.directory.appendingPathComponent("old.json").path,
        ])
        #expect(exported.status == 0, "\(exported.stderr)")
        let warnings = exported.stderr.split(separator: "\n")
        #expect(
            warnings.count == 3 && warnings.allSatisfy { $0.hasPrefix("warning: ") }, "\(exported.stderr)")
        for expected in [
            "survey: the title is only white space", #"item 2 ("Come again?"): a binary item's two options"#,
            #"item 3 ("Dish"): option 3 has the same label as option 1"#,
        ] {
            #expect(exported.stderr.contains(expected), "\(expected): \(exported.stderr)")
        }

        let reported = try store.run(["export", document, "--json"])
        #expect(reported.status == 0, "\(reported.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(reported.stdout.utf8)) as? [String: Any]
        let problems = object?["newContentProblems"] as? [[String: Any]] ?? []
        #expect(
            problems.map { $0["rule"] as? String } == ["emptyTitle", "duplicateOptions", "duplicateOptions"])
        #expect(problems.map { $0["item"] as? Int } == [nil, 2, 3], "\(reported.stdout)")
        // The first, as before, under its own key.
        #expect((object?["newContentProblem"] as? [String: Any])?["rule"] as? String == "emptyTitle")
    }

    @Test(
        "export of content whose file would be over the 128 MiB a survey file may be writes it with a warning that new --from refuses it; --package and import carry it"
    )
    func exportOverTheFileLimit() throws {
        let store = try Store()
        defer { try? FileManager.default.removeItem(at: store.directory) }
        #expect(try store.run(["init", "--device", "test"]).status == 0)
        // The library takes content up to the 256 MiB a revision's Survey.plist is read at.
        let title = String(repeating: "a", count: 65 << 20)
        let (id, _) = try SurveyStore.open(at: store.path).create(
            Survey(
                title: "Big",
                items: [
                    Item(title: title, kind: .textField(subtitle: nil)),
                    Item(title: title, kind: .textOnly(text: nil)),
                ]))
        let document = id.uuidString.lowercased()
        let file = store.directory.appendingPathComponent("big.json").path
        let exported = try store.run(["export", document, "-o", file])
        #expect(exported.status == 0, "\(exported.stderr)")
        #expect(
            exported.stderr.contains("MiB a survey file may be, so new --from and save --from refuse it"),
            "\(exported.stderr)")
        let size = try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int ?? 0
        #expect(size > Survey.maximumFileSize)
        let refused = try store.run(["new", "--from", file])
        #expect(
            refused.status == 65 && refused.stderr.contains("the most a survey file may be"),
            "\(refused.stderr)")
        // The way the warning gives.
        let package = store.directory.appendingPathComponent("big-package").path
        #expect(try store.run(["export", document, "--package", package]).status == 0)
        let imported = try store.run(["import", package, "--json"])
        #expect(imported.status == 0, "\(imported.stderr)")
        // A file within the limit gets no warning.
        let small = try store.run(["new", "--from", store.write(Self.sample, "small.json")])
        let plain = try store.run(["export", small.stdout.trimmingCharacters(in: .whitespacesAndNewlines)])
        #expect(plain.status == 0 && plain.stderr.isEmpty, "\(plain.stderr)")
    }
}

extension InputCommandTests {
    @Test(
        "More items than a survey may hold: JSON and XML are refused alike, code invalidSurvey and rule tooManyItems (JSON said neither the rule nor the shape XML said), JSON with the place its reader stopped"
    )
    func itemLimitAlike() throws {
        let store = try Store()
        #expect(try store.run(["init"]).status == 0)
        let count = Survey.maximumItemCount + 1
        let item = #"{"title": "Q", "kind": "textOnly"}"#
        let json = try store.write(
            #"{"title": "T", "items": ["# + Array(repeating: item, count: count).joined(separator: ",\n")
                + "]}",
            "big.json")
        let xmlItem =
            "<dict><key>kind</key><string>textOnly</string><key>title</key><string>Q</string></dict>"
        let xml = try store.write(
            "<plist version=\"1.0\"><dict><key>items</key><array>"
                + String(repeating: xmlItem, count: count)
                + "</array><key>title</key><string>T</string></dict></plist>",
            "big.plist")
        func error(_ file: String) throws -> (stderr: String, body: [String: Any]) {
            let result = try store.run(["new", "--from", file, "--json"])
            #expect(result.status == 65, "\(result.stderr)")
            let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            return (result.stderr, try #require(object?["error"] as? [String: Any]))
        }
        let fromJSON = try error(json), fromXML = try error(xml)
        #expect(fromJSON.body["code"] as? String == "invalidSurvey")
        #expect(fromXML.body["code"] as? String == "invalidSurvey")
        #expect(
            fromXML.body["message"] as? String
                == "survey: it has \(count) items; a survey has at most 100000 [tooManyItems]")
        #expect(
            fromJSON.body["message"] as? String
                == "survey: it has more than 100000 items; a survey has at most 100000 [tooManyItems]")
        #expect(fromJSON.body["file"] as? String == json && fromXML.body["file"] as? String == xml)
        #expect(fromJSON.body["line"] as? Int == count && fromJSON.body["column"] as? Int == 1)
        #expect(
            fromJSON.stderr
                == "\(json):\(count):1: survey: it has more than 100000 items; a survey has at most 100000 [tooManyItems]\n"
        )
        #expect(
            fromXML.stderr
                == "\(xml): survey: it has \(count) items; a survey has at most 100000 [tooManyItems]\n")
        #expect((try store.json(["list"]) as? [Any])?.isEmpty == true)
    }
}
