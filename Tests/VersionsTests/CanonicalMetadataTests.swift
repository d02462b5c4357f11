import Foundation
import TestSupport
import Testing

@testable import Versions

/// The reading of metadata files in the writer's form without the XML parser: it must
/// read every written file, and read nothing the XML parser would read otherwise.
@Suite("Metadata in the writer's form, read without the XML parser")
struct CanonicalMetadataTests {
    /// Device names that exercise the escapes and the characters beyond ASCII, and some
    /// the fast path leaves to the XML parser (a tab, a line feed).
    static let names = [
        "Laptop", "", "Zoë’s iPhone", "R&D <lab> 5 > 4", "&amp; literally", "日本語のマシン", "🦊 fox",
        "tab\there", "two\nlines", "a]]b", "quote \" and ' marks", "\u{7F}del", "\u{FFFD}",
    ]

    /// Random metadata, each a child of the one before when it is not a first revision.
    static func randomMetadata(count: Int, using generator: inout SeededRandom) throws -> [RevisionMetadata] {
        var made: [RevisionMetadata] = []
        var clock = HybridClock(wallClock: { 1_795_168_800_000 })
        for index in 0..<count {
            let document = UUID()
            let parentCount = made.isEmpty ? 0 : Int.random(in: 0...min(3, made.count), using: &generator)
            let parents = made.shuffled(using: &generator).prefix(parentCount)
            let deleted = index % 7 == 3
            let device = Device(
                id: UUID().uuidString.lowercased(), name: names.randomElement(using: &generator)!)
            let metadata = try RevisionMetadata.make(
                documentID: parents.first?.documentID ?? document, parents: Array(parents),
                content: deleted ? nil : Data("content \(index)".utf8),
                formatVersion: Int.random(in: 1...1_000_000, using: &generator), device: device, clock: &clock
            )
            made.append(metadata)
        }
        return made
    }

    @Test("Every file the writer makes is read without the XML parser, as the XML parser reads it")
    func writtenFiles() throws {
        let seed = SeededRandom.seed(fallback: 0x5eed_00c4)
        var generator = SeededRandom(seed: seed)
        var fast = 0
        for metadata in try Self.randomMetadata(count: 300, using: &generator) {
            let data = try metadata.plistData()
            let parsed = try RevisionMetadata.parsed(data, file: nil)
            #expect(parsed == metadata, "seed \(seed); replay with SURVEYSTORE_SEED=\(seed)")
            let read = CanonicalMetadata.read(data)
            let leftToParser = metadata.device.name.utf8.contains { $0 < 0x20 }
            #expect((read == nil) == leftToParser, "\(metadata.device.name) (seed \(seed))")
            if let read {
                #expect(read.metadata == metadata, "seed \(seed); replay with SURVEYSTORE_SEED=\(seed)")
                #expect(read.digestWithoutID == metadata.id.digest)
                #expect(try read.metadata.plistData() == data)
                fast += 1
            }
            #expect(try RevisionMetadata(plist: data) == metadata)
            // A slice of a larger buffer reads the same.
            let padded = Data("xyz".utf8) + data
            #expect(CanonicalMetadata.read(padded[3...])?.metadata == read?.metadata)
            #expect(CanonicalMetadata.read(padded[3...])?.digestWithoutID == read?.digestWithoutID)
        }
        #expect(fast > 200)
    }

    @Test("Damaged or rewritten files are read without the XML parser only when it would read the same")
    func damagedFiles() throws {
        let seed = SeededRandom.seed(fallback: 0x5eed_00c5)
        var generator = SeededRandom(seed: seed)
        let files = try Self.randomMetadata(count: 40, using: &generator).map { try $0.plistData() }
        // Bytes that matter to the form: markup, entities, control characters, the start
        // of a character beyond ASCII, U+FFFE's first bytes, digits and a minus sign.
        let interesting: [UInt8] =
            Array("<>&;/!?#\t\n\r -0159azAZ\"'".utf8) + [0x00, 0x7F, 0xC3, 0xA9, 0xEF, 0xBF, 0xBE]
        let replacements = [
            ("&amp;", "&#38;"), ("&lt;", "&#x3C;"), ("<false/>", "<false />"),
            ("<array/>", "<array></array>"),
            ("<string>", "<string >"), ("\t<key>", "  <key>"), ("</dict>", "</dict >"), ("UTF-8", "utf-8"),
            ("<integer>", "<integer>+"), ("<integer>", "<integer>0"), ("<integer>", "<integer>-"),
            ("Z</date>", ".5Z</date>"), ("T", "t"), ("Laptop", "Lap&#116;op"), ("\n", "\r\n"),
        ]
        var accepted = 0
        var tried = 0
        for (fileIndex, file) in files.enumerated() {
            for round in 0..<150 {
                var bytes = [UInt8](file)
                switch Int.random(in: 0..<5, using: &generator) {
                case 0:
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = interesting.randomElement(
                        using: &generator)!
                case 1:
                    bytes.remove(at: Int.random(in: 0..<bytes.count, using: &generator))
                case 2:
                    bytes.insert(
                        interesting.randomElement(using: &generator)!,
                        at: Int.random(in: 0...bytes.count, using: &generator))
                case 3:
                    // A digit or hex digit changed in place: still the writer's form.
                    let positions = bytes.indices.filter { (0x30...0x39).contains(bytes[$0]) }
                    let position = positions.randomElement(using: &generator)!
                    bytes[position] = UInt8(ascii: "0") + UInt8.random(in: 0...9, using: &generator)
                default:
                    let (from, to) = replacements.randomElement(using: &generator)!
                    var text = String(decoding: bytes, as: UTF8.self)
                    if let range = text.range(of: from) { text.replaceSubrange(range, with: to) }
                    bytes = Array(text.utf8)
                }
                tried += 1
                let data = Data(bytes)
                guard let (read, digest) = CanonicalMetadata.read(data) else { continue }
                accepted += 1
                let parsed = try? RevisionMetadata.parsed(data, file: nil)
                #expect(
                    parsed == read,
                    "file \(fileIndex), round \(round): read as \(read), the XML parser gives \(String(describing: parsed)) (seed \(seed); replay with SURVEYSTORE_SEED=\(seed))"
                )
                // What it accepts is the writer's bytes for what it read: the digest taken
                // around the id's entry is the one the writer's bytes give.
                #expect(
                    try read.plistData() == data,
                    "file \(fileIndex), round \(round) (seed \(seed); replay with SURVEYSTORE_SEED=\(seed))")
                #expect(try digest == read.computedDigest())
            }
        }
        // The comparison is not empty: some damage keeps the writer's form.
        #expect(accepted > tried / 20, "\(accepted) of \(tried) accepted")
    }

    @Test("What the writer never writes is left to the XML parser, which reads it or names what is wrong")
    func leftToTheParser() throws {
        var clock = HybridClock(wallClock: { 1_795_168_800_000 })
        let metadata = try RevisionMetadata.make(
            documentID: UUID(), parents: [], content: Data("content".utf8), formatVersion: 2,
            device: Device(id: "laptop-1", name: "Laptop"), clock: &clock)
        let text = String(decoding: try metadata.plistData(), as: UTF8.self)
        func variant(_ from: String, _ to: String) -> Data {
            Data(text.replacingOccurrences(of: from, with: to).utf8)
        }
        // Read the same by the XML parser, but not in the writer's form.
        for data in [
            variant("Laptop", "Lap&#116;op"), variant("<false/>", "<false></false>"),
            variant("\t<key>", "  <key>"), variant("<array/>", "<array></array>"),
        ] {
            #expect(CanonicalMetadata.read(data) == nil)
            #expect(try RevisionMetadata.parsed(data, file: nil) == metadata)
        }
        // Refused by both: U+FFFE in a string, an impossible date, a number too large.
        for data in [
            Data(text.utf8).replacing(Data("Laptop".utf8), with: Data([0x4C, 0xEF, 0xBF, 0xBE])),
            variant("<date>2026-11-20T", "<date>2026-02-30T"),
            variant("<integer>2</integer>", "<integer>99999999999999999999</integer>"),
        ] {
            #expect(CanonicalMetadata.read(data) == nil)
            #expect(throws: (any Error).self) { try RevisionMetadata(plist: data, file: "Metadata.plist") }
        }
    }
}
