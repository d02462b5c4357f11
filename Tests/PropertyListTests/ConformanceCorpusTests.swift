import Foundation
import PropertyList
import Testing

/// Property lists from seven independent implementations' own test suites, read from
/// `../shared/conformance` next to the repository (other projects' data, never copied
/// here; see that folder's README). Each case must come out as its source expects —
/// valid cases read to the expected value and re-write byte-identically to Foundation's
/// `PropertyListSerialization`, invalid cases refused with a position — except where the
/// README documents the opposite answer (`documented_strict` in the corpus, and
/// ``ConformanceCorpus/exceptions`` below).
@Suite("Conformance with other implementations' test suites")
struct ConformanceCorpusTests {
    @Test("The conformance corpus is there in CI", .enabled(if: ExternalTool.isCI))
    func corpusIsPresentInCI() {
        #expect(ConformanceCorpus.isPresent, "CI=true but \(ConformanceCorpus.folder.path) is missing")
    }

    @Test(
        "Every case comes out as its source or the README expects", .enabled(if: ConformanceCorpus.isPresent))
    func everyCase() throws {
        let corpus = try ConformanceCorpus.load()
        var failures: [String] = []
        var held = 0
        var documented: [String] = []
        for name in corpus.cases.keys.sorted() {
            let expected = corpus.cases[name]!
            let strictReason = corpus.documentedStrict[name] ?? ConformanceCorpus.exceptions[name]
            let data = try Data(
                contentsOf: ConformanceCorpus.folder.appendingPathComponent("plist-cases/\(name)"))
            let outcome = Result { try PropertyList(xml: data, file: name) }
            let wantsValid = strictReason == nil ? expected.valid : !expected.valid
            if let problem = ConformanceCorpus.check(outcome, wantsValid: wantsValid, expected: expected) {
                failures.append("\(name): \(problem)")
            } else if strictReason != nil {
                documented.append(name)
            } else {
                held += 1
            }
        }
        print(
            "conformance: \(corpus.cases.count) cases; \(held) as their source expects, \(documented.count) documented exceptions, \(failures.count) failures"
        )
        #expect(corpus.cases.count == 295)
        #expect(failures.isEmpty, "\(failures.prefix(20).joined(separator: "\n"))")
        // Every exception listed here must still be needed: a case that now holds as its
        // source expects would show up as a failure above.
        for name in ConformanceCorpus.exceptions.keys {
            #expect(corpus.cases[name] != nil, "\(name) is not in the corpus")
        }
    }

    @Test("A UTF-32 document is refused with a message and the position of its first character")
    func utf32IsRefusedAtItsStart() {
        let text =
            "<?xml version=\"1.0\" encoding=\"UTF-32\"?>\n<plist version=\"1.0\"><string>a</string></plist>\n"
        for (bytes, bigEndian) in [(Array(text.unicodeScalars), true), (Array(text.unicodeScalars), false)] {
            var data = Data()
            for scalar in bytes {
                let value = bigEndian ? scalar.value.bigEndian : scalar.value.littleEndian
                withUnsafeBytes(of: value) { data.append(contentsOf: $0) }
            }
            #expect(
                throws: PropertyListError(
                    code: .malformedXML,
                    message:
                        "the document is UTF-32 text, which is not supported; convert it to UTF-8 or UTF-16",
                    file: "u.plist", line: 1, column: 1)
            ) { try PropertyList(xml: data, file: "u.plist") }
        }
    }

    @Test(
        "UTF-16 text that is not markup (JSON, say) is named as such, where libxml2 said 'no root element'; UTF-16 XML is read"
    )
    func utf16NonMarkupIsNamed() throws {
        let json = "\n {\"title\": \"T\"}\n"
        let cases: [(String, Data)] = [
            (
                "little endian with a byte order mark",
                Data([0xFF, 0xFE]) + json.data(using: .utf16LittleEndian)!
            ),
            ("big endian with a byte order mark", Data([0xFE, 0xFF]) + json.data(using: .utf16BigEndian)!),
            ("little endian", json.data(using: .utf16LittleEndian)!),
            ("big endian", json.data(using: .utf16BigEndian)!),
        ]
        for (what, data) in cases {
            #expect(
                throws: PropertyListError(
                    code: .malformedXML,
                    message: "the document is UTF-16 text but not an XML property list (JSON must be UTF-8)",
                    file: "j.json", line: 1, column: 1), "\(what)"
            ) { try PropertyList(xml: data, file: "j.json") }
        }
        let xml =
            "<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n<plist version=\"1.0\"><string>a</string></plist>\n"
        for data in [
            Data([0xFF, 0xFE]) + xml.data(using: .utf16LittleEndian)!,
            Data([0xFE, 0xFF]) + xml.data(using: .utf16BigEndian)!,
        ] {
            #expect(try PropertyList(xml: data) == .string("a"))
        }
    }

    @Test("A binary property list is named as such")
    func binaryPlistIsNamed() {
        let data = Data("bplist00\u{08}\u{09}\u{00}\u{00}".utf8)
        #expect(
            throws: PropertyListError(
                code: .malformedXML,
                message:
                    "binary property lists are not supported; convert it to XML first "
                    + "(plutil -convert xml1 FILE on macOS, plistutil -i FILE -o OUT -f xml on Linux)",
                file: "b.plist", line: 1, column: 1)
        ) { try PropertyList(xml: data, file: "b.plist") }
    }

    @Test(
        "A JSON document is named as such, with its position",
        arguments: ["{\"a\": 1}", "  \n[1, 2]", "\u{FEFF}{}"])
    func jsonIsNamed(_ text: String) {
        #expect(
            throws: PropertyListError(
                code: .malformedXML, message: "the document is JSON, not an XML property list",
                file: "j.plist",
                line: 1, column: 1)
        ) { try PropertyList(xml: Data(text.utf8), file: "j.plist") }
    }

    @Test(
        "Error messages quote the text as it is, whitespace included",
        arguments: [
            ("<plist><real>1.5  </real></plist>", "real '1.5  ' is not a number"),
            ("<plist><real> -3.14</real></plist>", "real ' -3.14' is not a number"),
            ("<plist><integer> 7</integer></plist>", "integer ' 7' contains an invalid character"),
        ])
    func quotesUntrimmedText(xml: String, message: String) {
        #expect(throws: PropertyListError.self) { try PropertyList(xml: Data(xml.utf8)) }
        do {
            _ = try PropertyList(xml: Data(xml.utf8))
        } catch let error as PropertyListError {
            #expect(error.message == message)
            #expect(error.line == 1)
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }
}

/// The corpus at `../shared/conformance` and how to compare against it.
enum ConformanceCorpus {
    static let folder = Fixtures.root.deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("shared/conformance")

    static var isPresent: Bool {
        FileManager.default.fileExists(atPath: folder.appendingPathComponent("plist-expected.json").path)
    }

    /// Cases where this project's README documents the opposite of what the source
    /// expects, beyond the corpus's own `documented_strict` list.
    static let exceptions: [String: String] = [
        "ddplist__xml_encoding_utf_32be.plist": utf32,
        "ddplist__xml_encoding_utf_32be_bom.plist": utf32,
        "ddplist__xml_encoding_utf_32le.plist": utf32,
        "ddplist__xml_encoding_utf_32le_bom.plist": utf32,
        "swiftfoundation__dataWithBOM_utf32be.plist": utf32,
        "swiftfoundation__XMLReals.plist":
            "README, Refused: \"integers and reals with any other character, including spaces\" (`<real>  -3.14</real>`)",
    ]
    private static let utf32 =
        "README, Refused: \"UTF-32 documents (libxml2 2.9 cannot decode them), refused at 1:1 with a message saying so\""

    struct Case: Decodable {
        var valid: Bool
        var valueJSON: JSONValue?
        var valueTagged: JSONValue?

        enum CodingKeys: String, CodingKey {
            case valid
            case valueJSON = "value_json"
            case valueTagged = "value_tagged"
        }
    }

    struct Corpus: Decodable {
        var cases: [String: Case]
        var documentedStrict: [String: String]

        enum CodingKeys: String, CodingKey {
            case cases
            case documentedStrict = "documented_strict"
        }
    }

    static func load() throws -> Corpus {
        try JSONDecoder().decode(
            Corpus.self, from: Data(contentsOf: folder.appendingPathComponent("plist-expected.json")))
    }

    /// Why `outcome` is not what the case wants, or `nil` when it is.
    static func check(_ outcome: Result<PropertyList, any Error>, wantsValid: Bool, expected: Case) -> String?
    {
        switch (outcome, wantsValid) {
        case (.success(let value), true):
            if let tagged = expected.valueTagged {
                if let difference = tagged.difference(from: value, tagged: true) {
                    return "value differs: \(difference)"
                }
            } else if let plain = expected.valueJSON {
                if let difference = plain.difference(from: value, tagged: false) {
                    return "value differs: \(difference)"
                }
            }
            do {
                let ours = try value.xmlData()
                let theirs = try FoundationBridge.xml(value)
                if ours != theirs { return "re-written bytes differ from PropertyListSerialization's" }
            } catch {
                return "could not be re-written: \(error)"
            }
            return nil
        case (.success, false):
            return "read, but should be refused"
        case (.failure(let error), true):
            return "refused, but should be read: \(error)"
        case (.failure(let error), false):
            guard let error = error as? PropertyListError else {
                return "refused with \(error), not a PropertyListError"
            }
            guard let line = error.line, line >= 1, let column = error.column, column >= 1 else {
                return "refused without a position: \(error)"
            }
            return nil
        }
    }
}

/// A JSON value as the corpus writes it, decoded without losing integer-or-real.
enum JSONValue: Decodable, Equatable {
    case bool(Bool)
    case integer(String)  // the digits, so that 2^64−1 and −2^63 survive
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
    case null

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let signed = try? container.decode(Int64.self) {
            self = .integer(String(signed))
        } else if let unsigned = try? container.decode(UInt64.self) {
            self = .integer(String(unsigned))
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([JSONValue].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// How `value` differs from this expected value, or `nil` when it matches. Dates are
    /// compared as the project prints them (``ISO8601Date``), data as base64.
    func difference(from value: PropertyList, tagged: Bool, path: String = "") -> String? {
        let here = path.isEmpty ? "top level" : path
        func mismatch() -> String { "at \(here): expected \(self), read \(value)" }
        switch (self, value) {
        case (.bool(let a), .boolean(let b)): return a == b ? nil : mismatch()
        case (.string(let a), .string(let b)): return a == b ? nil : mismatch()
        case (.integer(let a), .integer(let b)): return a == b.description ? nil : mismatch()
        case (.integer(let a), .real(let b)) where !tagged: return Double(a) == b ? nil : mismatch()
        case (.number(let a), .real(let b)) where !tagged: return a == b ? nil : mismatch()
        case (.string(let a), .date(let b)) where !tagged:
            return a == ISO8601Date.string(from: b) ? nil : mismatch()
        case (.string(let a), .data(let b)) where !tagged:
            return a == b.base64EncodedString() ? nil : mismatch()
        case (.object(let tag), _) where tagged && tag.count == 1 && tag.keys.first!.hasPrefix("$"):
            switch (tag.first!.key, tag.first!.value, value) {
            case ("$real", .number(let a), .real(let b)): return a == b ? nil : mismatch()
            case ("$real", .integer(let a), .real(let b)): return Double(a) == b ? nil : mismatch()
            case ("$real", .string("nan"), .real(let b)): return b.isNaN ? nil : mismatch()
            case ("$real", .string("inf"), .real(let b)): return b == .infinity ? nil : mismatch()
            case ("$real", .string("-inf"), .real(let b)): return b == -.infinity ? nil : mismatch()
            case ("$date", .string(let a), .date(let b)):
                return a == ISO8601Date.string(from: b) ? nil : mismatch()
            case ("$data", .string(let a), .data(let b)):
                return a == b.base64EncodedString() ? nil : mismatch()
            default: return mismatch()
            }
        case (.array(let a), .array(let b)):
            guard a.count == b.count else {
                return "at \(here): expected \(a.count) elements, read \(b.count)"
            }
            for (index, pair) in zip(a, b).enumerated() {
                if let difference = pair.0.difference(from: pair.1, tagged: tagged, path: "\(path)[\(index)]")
                {
                    return difference
                }
            }
            return nil
        case (.object(let a), .dictionary(let b)):
            guard Set(a.keys) == Set(b.keys) else {
                return "at \(here): keys \(a.keys.sorted()) expected, read \(b.keys.sorted())"
            }
            for key in a.keys.sorted() {
                if let difference = a[key]!.difference(
                    from: b[key]!, tagged: tagged, path: path.isEmpty ? key : "\(path).\(key)")
                {
                    return difference
                }
            }
            return nil
        case (.null, _): return nil  // not representable in JSON (the tagged form, if any, was checked)
        default: return mismatch()
        }
    }
}
