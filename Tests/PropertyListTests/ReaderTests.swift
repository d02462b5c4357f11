import Foundation
import PropertyList
import Testing

@Suite("What the reader accepts")
struct ReaderTests {
    static let header = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">

        """

    static let acceptedDocuments: [(String, String, PropertyList)] = [
        ("the Apple DOCTYPE", header + "<plist version=\"1.0\"><string>a</string></plist>", "a"),
        ("no DOCTYPE and no declaration", "<plist><integer>1</integer></plist>", 1),
        (
            "the old Apple Computer DOCTYPE",
            "<!DOCTYPE plist PUBLIC \"-//Apple Computer//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\"><plist><true/></plist>",
            true
        ),
        (
            "comments and processing instructions between elements",
            "<?xml version=\"1.0\"?><!-- c --><plist><?pi x?><dict><!-- c --><key>a</key><!-- c --><false/></dict></plist><!-- end -->",
            ["a": false]
        ),
        ("CDATA inside a string", "<plist><string><![CDATA[<a & b>]]> c</string></plist>", "<a & b> c"),
        ("character references", "<plist><string>&#x1F600;&#10;&#65;</string></plist>", "😀\nA"),
        ("predefined entities", "<plist><string>&lt;&gt;&amp;&apos;&quot;</string></plist>", "<>&'\""),
        (
            "<true></true> and <false></false>",
            "<plist><array><true></true><false> </false></array></plist>", [true, false]
        ),
        (
            "empty containers and strings",
            "<plist><array><dict/><array/><string/><string></string><data></data></array></plist>",
            [.dictionary([:]), .array([]), "", "", .data(Data())]
        ),
        (
            "the integer limits",
            "<plist><array><integer>-9223372036854775808</integer><integer>18446744073709551615</integer></array></plist>",
            [.integer(.min), .integer(.max)]
        ),
        (
            "hexadecimal and signed integers",
            "<plist><array><integer>0x1F</integer><integer>+5</integer><integer>-0</integer></array></plist>",
            [31, 5, 0]
        ),
        (
            "the spellings of special reals",
            "<plist><array><real>nan</real><real>+infinity</real><real>-infinity</real><real>inf</real><real>-Infinity</real><real>NaN</real></array></plist>",
            [
                .real(.nan), .real(.infinity), .real(-.infinity), .real(.infinity), .real(-.infinity),
                .real(.nan),
            ]
        ),
        (
            "decimal reals",
            "<plist><array><real>1</real><real>-1.5</real><real>.5</real><real>2.</real><real>1E3</real><real>1e-324</real></array></plist>",
            [1.0, -1.5, 0.5, 2.0, 1000.0, 0.0]
        ),
        (
            "dates before 1970, after 2100, with fractions and in year 1",
            "<plist><array><date>1969-12-31T23:59:59Z</date><date>2200-01-01T00:00:00Z</date><date>2001-01-01T00:00:00.5Z</date><date>1-01-01T00:00:00Z</date></array></plist>",
            [
                .date(Date(timeIntervalSince1970: -1)), .date(Date(timeIntervalSince1970: 7_258_118_400)),
                .date(Date(timeIntervalSinceReferenceDate: 0.5)),
                .date(Date(timeIntervalSinceReferenceDate: -63_113_904_000)),
            ]
        ),
        (
            "base64 over several lines with spaces", "<plist><data>\n\tAAEC\n\tAw==\n</data></plist>",
            .data(Data([0, 1, 2, 3]))
        ),
        (
            "an encoding other than UTF-8",
            "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><plist><string>caf\u{E9}</string></plist>", "café"
        ),
    ]

    @Test("Accepted documents read as the expected value", arguments: acceptedDocuments)
    func accepted(name: String, xml: String, expected: PropertyList) throws {
        let bytes: Data =
            xml.contains("ISO-8859-1") ? Data(xml.unicodeScalars.map { UInt8($0.value) }) : Data(xml.utf8)
        #expect(try PropertyList(xml: bytes) == expected, "\(name)")
    }

    @Test("A UTF-16 document with a byte-order mark is read")
    func utf16() throws {
        let xml = "<?xml version=\"1.0\" encoding=\"UTF-16\"?><plist><string>ä😀</string></plist>"
        var bytes: [UInt8] = [0xFF, 0xFE]
        for unit in xml.utf16 { bytes += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        #expect(try PropertyList(xml: Data(bytes)) == "ä😀")
    }

    @Test("Keys that are the same text in different Unicode normal forms are refused as duplicates")
    func canonicalDuplicates() {
        let xml = "<plist><dict><key>\u{E9}</key><true/><key>e\u{301}</key><false/></dict></plist>"
        let error = #expect(throws: PropertyListError.self) { try PropertyList(xml: Data(xml.utf8)) }
        #expect(error?.message.contains("duplicate key") == true)
    }

    @Test(
        "A key that is an earlier one's text in another normal form is refused where it is, not where its dictionary ends",
        arguments: [
            ("\u{E9}", "e\u{301}"), ("e\u{301}", "\u{E9}"),
            // U+212A KELVIN SIGN is canonically K: the second key may be ASCII.
            ("\u{212A}", "K"), ("K", "\u{212A}"),
        ])
    func canonicalDuplicatePosition(first: String, second: String) {
        let xml = """
            <plist>
            <dict>
            \t<key>\(first)</key>
            \t<dict><key>\u{E9}</key><true/><key>x</key><true/></dict>
            \t<key>a</key><true/>
            \t<key>\(second)</key>
            \t<false/>
            \t<key>z</key><true/>
            </dict>
            </plist>
            """
        let error = #expect(throws: PropertyListError.self) {
            try PropertyList(xml: Data(xml.utf8), file: "nf.plist")
        }
        #expect(error?.code == .invalidStructure)
        #expect(error?.line == 6 && error?.column == 7, "\(String(describing: error))")
    }

    @Test("Large dictionaries: every key is found and a late duplicate is caught")
    func largeDictionaries() throws {
        let keys = (0..<5000).map { "key-\($0)" }
        var xml =
            "<plist><dict>" + keys.map { "<key>\($0)</key><integer>1</integer>" }.joined() + "</dict></plist>"
        let value = try PropertyList(xml: Data(xml.utf8))
        #expect(value.dictionaryValue?.count == 5000)
        xml = xml.replacingOccurrences(of: "</dict>", with: "<key>key-17</key><true/></dict>")
        let error = #expect(throws: PropertyListError.self) { try PropertyList(xml: Data(xml.utf8)) }
        #expect(error?.message == "duplicate key 'key-17'")
    }

    @Test(
        "A decimal real too large for a double is refused with its position (it read as infinity); infinity spelled out, the largest double and values below the smallest subnormal are read",
        arguments: ["1e400", "-1e400", "1.8e308", "+2E308", String(repeating: "9", count: 310) + ".5"])
    func realTooLarge(text: String) throws {
        let xml = "<plist>\n<array><real>\(text)</real></array></plist>"
        let error = #expect(throws: PropertyListError.self) {
            try PropertyList(xml: Data(xml.utf8), file: "r.plist")
        }
        let quoted = text.count > 40 ? String(text.prefix(40)) + "…" : text
        #expect(error?.code == .invalidValue)
        #expect(
            error?.description
                == "r.plist:2:14: real '\(quoted)' is too large for a double (the largest is 1.7976931348623157e+308)",
            "\(error?.description ?? "no error")")
        let read = try PropertyList(
            xml: Data(
                "<plist><array><real>inf</real><real>+infinity</real><real>-INF</real><real>1.7976931348623157e308</real><real>-1e-400</real><real>1e-320</real></array></plist>"
                    .utf8))
        #expect(
            read == [
                .real(.infinity), .real(.infinity), .real(-.infinity), .real(.greatestFiniteMagnitude),
                .real(-0.0), .real(1e-320),
            ])
        #expect(read.arrayValue?[4].realValue?.sign == .minus)
    }

    @Test("Errors name the file, line and column in FILE:LINE:COLUMN form")
    func errorForm() {
        let xml = "<plist>\n  <array>\n    <integer>1</integer>\n    <real>x</real>\n  </array>\n</plist>"
        let error = #expect(throws: PropertyListError.self) {
            try PropertyList(xml: Data(xml.utf8), file: "in.plist")
        }
        #expect(error?.description == "in.plist:4:11: real 'x' is not a number")
    }
}
