import Foundation
import TestSupport
import Testing

@testable import Versions

/// The readers of revision ids, package names and document ids, which every listing and
/// every change of a watched store goes through.
@Suite("Parsing ids and names")
struct ParsingTests {
    static let digest = String(repeating: "0123456789abcdef", count: 4)

    @Test("A revision id is a generation without a leading zero, a dash and 64 lower-case hex digits")
    func revisionIDs() {
        #expect(RevisionID("1-" + Self.digest) == RevisionID(generation: 1, digest: Self.digest))
        #expect(
            RevisionID("999999999999999-" + Self.digest) == nil, "more than the largest generation")
        #expect(
            RevisionID("\(RevisionID.maximumGeneration)-" + Self.digest)
                == RevisionID(generation: RevisionID.maximumGeneration, digest: Self.digest))
        #expect(RevisionID("\(RevisionID.maximumGeneration + 1)-" + Self.digest) == nil)
        for bad in [
            "", "-", "1-", "-" + Self.digest, "0-" + Self.digest, "01-" + Self.digest, "+1-" + Self.digest,
            "1--" + Self.digest.dropFirst(), "1-" + Self.digest.uppercased(), "1-" + Self.digest + "0",
            "1-" + Self.digest.dropLast(), "1 -" + Self.digest, "١-" + Self.digest,
            "1-" + Self.digest.dropLast() + "g",
            "1234567890123456-" + Self.digest,
        ] {
            #expect(RevisionID(bad) == nil, "\(bad)")
        }
        let text = "xx7-" + Self.digest + "yy"
        let middle = text.dropFirst(2).dropLast(2)
        #expect(RevisionID(middle) == RevisionID(generation: 7, digest: Self.digest))
    }

    @Test("A package name is a revision id and the package suffix, nothing else")
    func packageNames() {
        let id = RevisionID(generation: 3, digest: Self.digest)
        #expect(StoreLayout.revision(packageName: StoreLayout.packageName(id)) == id)
        for bad in [
            StoreLayout.packageSuffix, id.description, id.description + StoreLayout.packageSuffix + "x",
            id.description + ".Survey", id.description + StoreLayout.packageSuffix + "\u{301}",
            "x" + id.description + StoreLayout.packageSuffix,
        ] {
            #expect(StoreLayout.revision(packageName: bad) == nil, "\(bad)")
        }
    }

    @Test("Document ids read as UUID(uuidString:) reads them, canonical or not")
    func documentIDs() {
        let seed = SeededRandom.seed(fallback: 0x5eed_0001)
        var generator = SeededRandom(seed: seed)
        var texts = [
            "", "x", "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "e621e1f8-c36c-495a-93fc-0c247a3e6e5f",
            "e621e1f8c36c495a93fc0c247a3e6e5f", "e621e1f8-c36c-495a-93fc-0c247a3e6e5",
            "e621e1f8-c36c-495a-93fc-0c247a3e6e5fa",
            "g621e1f8-c36c-495a-93fc-0c247a3e6e5f", "e621e1f8_c36c-495a-93fc-0c247a3e6e5f",
            "e621e1f8-c36c-495a-93fc-0c247a3e6e5 ", " e621e1f8-c36c-495a-93fc-0c247a3e6e5",
            "0x21e1f8-c36c-495a-93fc-0c247a3e6e5f", "e621e1f8-c36c-495a-93fc-0c247a3e6é5",
        ]
        for _ in 0..<200 {
            let random = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let uuid = random.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
            texts.append(uuid.uuidString)
            texts.append(uuid.uuidString.lowercased())
            // One character replaced by a random ASCII one.
            var bytes = Array(uuid.uuidString.utf8)
            bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(
                in: 32...126, using: &generator)
            texts.append(String(decoding: bytes, as: UTF8.self))
        }
        for text in texts {
            #expect(
                UUID.parsing(text) == UUID(uuidString: text),
                "\(text) (seed \(seed); replay with SURVEYSTORE_SEED=\(seed))")
        }
    }

    @Test(
        "A metadata file as written is checked without writing it again; reformatted, it is checked by writing it again; altered, it is refused"
    )
    func metadataChecks() throws {
        var clock = HybridClock(wallClock: { 1_795_168_800_000 })
        let parent = try RevisionMetadata.make(
            documentID: UUID(), parents: [], content: Data("first".utf8), formatVersion: 2,
            device: Device(id: "laptop-1", name: "Laptop"), clock: &clock)
        let metadata = try RevisionMetadata.make(
            documentID: parent.documentID, parents: [parent], content: Data("second".utf8), formatVersion: 2,
            device: Device(id: "laptop-1", name: "Laptop"), clock: &clock)
        let data = try metadata.plistData()
        // Written by this writer: the bytes without the id's entry are those the id was made from.
        #expect(CanonicalMetadata.read(data)?.digestWithoutID == metadata.id.digest)
        #expect(try RevisionMetadata(plist: data) == metadata)
        // The same property list indented otherwise: not that shape, yet the same metadata.
        let text = String(decoding: data, as: UTF8.self)
        let reformatted = Data(text.replacingOccurrences(of: "\t", with: "  ").utf8)
        #expect(CanonicalMetadata.read(reformatted) == nil)
        #expect(try RevisionMetadata(plist: reformatted) == metadata)
        // A value changed, or the id's entry moved into the parents' array: refused.
        for altered in [
            text.replacingOccurrences(of: "Laptop", with: "Lapt0p"),
            text.replacingOccurrences(of: "<integer>2</integer>", with: "<integer>3</integer>"),
            text.replacingOccurrences(
                of: "\t<key>RevisionID</key>\n\t<string>\(metadata.id)</string>\n", with: ""
            ).replacingOccurrences(
                of: "<string>\(parent.id)</string>",
                with:
                    "<string>\(parent.id)</string>\n\t<key>RevisionID</key>\n\t<string>\(metadata.id)</string>\n"
            ),
        ] {
            #expect(throws: (any Error).self, "\(altered)") {
                try RevisionMetadata(plist: Data(altered.utf8))
            }
        }
    }
}
