import Foundation
import Testing

@testable import Versions

/// A revision id's digest is that of the bytes the writer makes of the rest of the
/// metadata (docs/FORMAT.md): a file whose own bytes hash to its id but are not those bytes
/// does not verify, however the XML parser reads it.
@Suite("Revision ids are digests of the writer's bytes")
struct RevisionDigestTests {
    static func metadata() throws -> RevisionMetadata {
        var clock = HybridClock(wallClock: { 1_795_168_800_005 })
        return try RevisionMetadata.make(
            documentID: UUID(uuidString: "5A1D1E7C-0B7E-4F0A-9C3B-2F6E8D9A4001")!, parents: [],
            content: Data("content".utf8), formatVersion: 3, device: Device(id: "device-5", name: "Laptop"),
            clock: &clock)
    }

    /// `text` (a metadata file) with `from` replaced by `to`, and a revision id made of the
    /// digest of the result's own bytes without the id's entry, as a writer other than the
    /// store's might make it.
    static func forged(_ text: String, id: RevisionID, _ from: String, _ to: String) -> Data {
        let entry = "\t<key>RevisionID</key>\n\t<string>\(id)</string>\n"
        let rest = text.replacingOccurrences(of: entry, with: "").replacingOccurrences(of: from, with: to)
        precondition(rest != text.replacingOccurrences(of: entry, with: ""), "\(from) is not in the file")
        let forgedID = RevisionID(generation: id.generation, digest: RevisionID.sha256Hex(Data(rest.utf8)))
        let forgedEntry = "\t<key>RevisionID</key>\n\t<string>\(forgedID)</string>\n"
        return Data(
            rest.replacingOccurrences(
                of: "\t<key>TimestampCounter</key>", with: forgedEntry + "\t<key>TimestampCounter</key>"
            ).utf8)
    }

    @Test("A written file verifies, and its digest is taken around the id's entry without writing it again")
    func writtenFile() throws {
        let metadata = try Self.metadata()
        let data = try metadata.plistData()
        let read = try #require(CanonicalMetadata.read(data))
        #expect(read.metadata == metadata)
        #expect(read.digestWithoutID == metadata.id.digest)
        #expect(try read.metadata.computedDigest() == metadata.id.digest)
        #expect(try RevisionMetadata(plist: data) == metadata)
    }

    @Test(
        "A file whose own bytes hash to its id but are not the writer's is refused: a document id Foundation reads leniently, in lower case, another date text, another indentation"
    )
    func forgedDigests() throws {
        let metadata = try Self.metadata()
        let text = String(decoding: try metadata.plistData(), as: UTF8.self)
        let date = "2026-11-20T10:00:00Z"
        #expect(text.contains("<date>\(date)</date>"))
        let variants: [(String, String)] = [
            // `UUID(uuidString:)` reads "40 1" as 0x40 0x01 (through `sscanf`): the same id.
            ("9A4001</string>", "9A40 1</string>"),
            ("5A1D1E7C-0B7E-4F0A-9C3B-2F6E8D9A4001", "5a1d1e7c-0b7e-4f0a-9c3b-2f6e8d9a4001"),
            ("<date>\(date)</date>", "<date>2026-11-20T10:00:00.005Z</date>"),
            ("<date>\(date)</date>", "<date>2026-11-20T10:00:01Z</date>"),
            ("\t<key>DeviceID</key>", "  <key>DeviceID</key>"),
        ]
        for (from, to) in variants {
            let data = Self.forged(text, id: metadata.id, from, to)
            #expect(CanonicalMetadata.read(data) == nil, "\(to)")
            // The XML parser reads it, and the values written again give another digest.
            let parsed = try RevisionMetadata.parsed(data, file: "forged")
            #expect(try parsed.computedDigest() != parsed.id.digest, "\(to)")
            #expect(throws: VersionsError.digestMismatch("forged", parsed.id), "\(to)") {
                try RevisionMetadata(plist: data, file: "forged")
            }
        }
    }
}
