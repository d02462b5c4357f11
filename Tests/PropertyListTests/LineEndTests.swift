import Foundation
import PropertyList
import TestSupport
import Testing

/// XML 1.0 takes CR, CR LF and LF alike for one line end; libxml2 counts lines by line
/// feeds alone. The reader's places (of libxml2's errors and of its own) are the same
/// whichever line ends a document has.
@Suite("Error places with CR, CR LF and LF line ends")
struct LineEndTests {
    /// A broken document, one line per element, and where the error is.
    struct Broken: Sendable, CustomTestStringConvertible {
        var name: String
        var lines: [String]
        var line: Int
        var column: Int
        var message: String
        var testDescription: String { name }
    }

    static let head = [
        #"<?xml version="1.0" encoding="UTF-8"?>"#,
        #"<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">"#,
        #"<plist version="1.0">"#, "<dict>",
        "\t<key>title</key>", "\t<string>Café ☕️</string>",
    ]

    static let cases: [Broken] = [
        Broken(
            name: "a bad integer (the reader's)",
            lines: head + ["\t<key>n</key>", "\t<integer>12x</integer>", "</dict>", "</plist>"],
            line: 8, column: 11, message: "integer '12x' contains an invalid character"),
        Broken(
            name: "a bad date after a key with accents on its line (the reader's)",
            lines: head + [
                "\t<key>n</key>", "\t<integer>1</integer>",
                "\t<key>ñé</key><date>2020-13-01T00:00:00Z</date>", "</dict>",
            ],
            line: 9, column: 21, message: "has month 13"),
        Broken(
            name: "a duplicate key (the reader's)",
            lines: head + [
                "\t<key>a</key>", "\t<true/>", "", "\t<key>a</key>", "\t<false/>", "</dict>", "</plist>",
            ],
            line: 10, column: 7, message: "duplicate key 'a'"),
        Broken(
            name: "a mismatched tag (libxml2's)",
            lines: head + ["\t<key>s</key>", "\t<string>x</strin>", "</dict>", "</plist>"],
            line: 8, column: 19, message: "Opening and ending tag mismatch: string line 8 and strin"),
        Broken(
            name: "an array closed by </dict> lines later (libxml2's)",
            lines: head + ["\t<key>list</key>", "\t<array>", "\t\t<true/>", "", "\t</dict>", "</plist>"],
            line: 11, column: 9, message: "Opening and ending tag mismatch: array line 8 and dict"),
        Broken(
            name:
                "an array holding arrays, and one in a comment and a processing instruction, closed by </dict> (libxml2's)",
            lines: head + [
                "\t<key>list</key>", "\t<array>", "\t\t<array/>", "\t\t<array><true/></array>",
                "\t\t<!-- <array> </array> -->",
                "\t\t<?note <array>?>", "\t</dict>", "</plist>",
            ],
            line: 13, column: 9, message: "Opening and ending tag mismatch: array line 8 and dict"),
        Broken(
            name: "an unclosed string (libxml2's)",
            lines: head + ["\t<key>s</key>", "\t<string>x", "</dict>", "</plist>"],
            line: 9, column: 8, message: "Opening and ending tag mismatch: string line 8 and dict"),
        Broken(
            name: "an undefined entity (libxml2's)",
            lines: head + ["\t<key>s</key>", "\t<string>a &nope; b</string>", "</dict>", "</plist>"],
            line: 8, column: 18, message: "Entity 'nope' not defined"),
        Broken(
            name: "text between elements (the reader's)",
            lines: head + ["\t<key>s</key>", "\t<true/>", "  stray", "</dict>", "</plist>"],
            line: 9, column: 3, message: "text 'stray' between elements"),
        Broken(
            name: "a key without a value (the reader's, at the key)",
            lines: head + ["", "\t<key>lonely</key>", "</dict>", "</plist>"],
            line: 8, column: 7, message: "the key 'lonely' has no value"),
    ]

    static let endings: [(name: String, end: String)] = [("LF", "\n"), ("CR", "\r"), ("CR LF", "\r\n")]

    @Test(
        "Each error is at the same line and column, with the same message, for CR, CR LF and LF",
        arguments: cases)
    func samePlace(_ broken: Broken) throws {
        for (name, end) in Self.endings {
            let text = broken.lines.joined(separator: end) + end
            let error = #expect(throws: PropertyListError.self, "\(name)") {
                try PropertyList(xml: Data(text.utf8), file: "in.plist")
            }
            #expect(
                error?.line == broken.line && error?.column == broken.column,
                "\(name): \(String(describing: error))")
            #expect(error?.message.contains(broken.message) == true, "\(name): \(String(describing: error))")
        }
    }

    @Test("The same in other encodings: UTF-8 with a byte order mark, UTF-16 both ways, ISO-8859-1")
    func otherEncodings() throws {
        let broken = Self.cases[1]
        for (name, end) in Self.endings {
            let text = broken.lines.joined(separator: end) + end
            let encoded: [(String, Data)] = [
                ("UTF-8 with a byte order mark", Data([0xEF, 0xBB, 0xBF]) + Data(text.utf8)),
                (
                    "UTF-16LE",
                    Data([0xFF, 0xFE]) + text.replacingOccurrences(of: "UTF-8", with: "UTF-16")
                        .data(using: .utf16LittleEndian)!
                ),
                (
                    "UTF-16BE",
                    Data([0xFE, 0xFF]) + text.replacingOccurrences(of: "UTF-8", with: "UTF-16")
                        .data(using: .utf16BigEndian)!
                ),
                (
                    "ISO-8859-1",
                    text.replacingOccurrences(of: "UTF-8", with: "ISO-8859-1")
                        .replacingOccurrences(of: " ☕️", with: "").data(using: .isoLatin1)!
                ),
            ]
            for (encoding, data) in encoded {
                let error = #expect(throws: PropertyListError.self) { try PropertyList(xml: data) }
                #expect(
                    error?.line == broken.line && error?.column == broken.column
                        && error?.message.contains(broken.message) == true,
                    "\(encoding), \(name): \(String(describing: error))")
            }
        }
    }

    /// Ways to break a valid document at one of its lines, each kept within that line:
    /// the reader's own errors and libxml2's.
    static func breakLine(_ line: String, way: Int) -> String? {
        guard let open = line.firstIndex(of: "<") else { return nil }
        let indent = String(line[..<open])
        switch way {
        case 0: return indent + "<integer>1_0</integer>"
        case 1: return indent + "<date>2020-02-30T00:00:00Z</date>"
        case 2: return indent + "<string>x</strng>"
        case 3: return indent + "<real>1.2.3</real>"
        case 4: return indent + "<data>@@@</data>"
        case 5: return indent + "<true>yes</true>"
        case 6: return indent + "<bogus/>"
        case 7: return indent + "<string>&undefined;</string>"
        default: return indent + "<string a=\"1\">x</string>"
        }
    }

    @Test(
        "Seeded: documents broken at a random line, with random line ends (each line its own), report the place and message of the LF document"
    )
    func randomDocuments() throws {
        let seed = SeededRandom.seed(fallback: 0xC0_5E_ED)
        let replay = "seed \(seed); replay with SURVEYSTORE_SEED=\(seed)"
        var random = SeededRandom(seed: seed)
        var values = RandomPropertyList(seed: seed)
        var checked = 0
        for round in 0..<300 {
            let value = PropertyList.dictionary([
                "a": values.value(), "b": values.value(), "c": values.value(),
            ])
            guard let xml = try? value.xmlData() else { continue }
            var lines = String(decoding: xml, as: UTF8.self).split(
                separator: "\n", omittingEmptySubsequences: false
            )
            .map(String.init)
            lines.removeLast()  // after the last line feed
            // A line that holds one whole element, in the value (not the header or <plist>).
            let candidates = lines.indices.filter { index in
                index > 3 && index < lines.count - 1 && lines[index].contains("</")
                    && !lines[index].contains("<key>")
            }
            guard let target = candidates.randomElement(using: &random),
                let broken = Self.breakLine(lines[target], way: Int.random(in: 0..<9, using: &random))
            else { continue }
            lines[target] = broken
            let lf = lines.joined(separator: "\n") + "\n"
            let expected = #expect(throws: PropertyListError.self, "round \(round), \(replay)") {
                try PropertyList(xml: Data(lf.utf8))
            }
            guard let expected else { continue }
            var mixed = ""
            for line in lines {
                // A CR, an empty line and an LF would be one CR LF, one line end, not two.
                let endings = line.isEmpty && mixed.hasSuffix("\r") ? ["\r", "\r\n"] : ["\n", "\r", "\r\n"]
                mixed += line + endings.randomElement(using: &random)!
            }
            for (name, text) in [
                ("CR", lines.joined(separator: "\r") + "\r"),
                ("CR LF", lines.joined(separator: "\r\n") + "\r\n"),
                ("mixed", mixed),
            ] {
                let error = #expect(throws: PropertyListError.self, "round \(round), \(name), \(replay)") {
                    try PropertyList(xml: Data(text.utf8))
                }
                #expect(
                    error?.line == expected.line && error?.column == expected.column
                        && error?.message == expected.message,
                    "round \(round), \(name), \(replay): \(String(describing: error)), with LF: \(expected)")
            }
            checked += 1
        }
        #expect(checked > 150, "only \(checked) documents checked (\(replay))")
    }
}
