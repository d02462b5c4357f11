import Foundation
import Testing

@testable import Versions

/// The check of a metadata file against its id by hashing its bytes without the id's
/// entry, and the byte search it uses.
@Suite("Metadata digest without the revision id")
struct MetadataDigestTests {
    @Test("The byte search finds the first occurrence anywhere, and nothing where there is none")
    func search() {
        let cases: [(haystack: String, needle: String, offset: Int?)] = [
            ("abcabc", "abc", 0), ("xxabc", "abc", 2), ("xabcabc", "bca", 2), ("aab", "ab", 1),
            ("abc", "abcd", nil), ("", "a", nil), ("abd", "abc", nil), ("ab\tab", "\tab", 2),
        ]
        for (haystack, needle, offset) in cases {
            let found = Array(haystack.utf8).withUnsafeBytes { bytes in
                Array(needle.utf8).withUnsafeBytes { RevisionMetadata.firstOffset(of: $0, in: bytes) }
            }
            #expect(found == offset, "\(needle) in \(haystack)")
        }
    }

    @Test("A metadata file as plistData() writes it hashes, without its id's entry, to its id's digest")
    func writtenFile() throws {
        let device = Device(id: "device", name: "Device")
        var clock = HybridClock(wallClock: { 1_000 })
        let metadata = try RevisionMetadata.make(
            documentID: UUID(), parents: [], content: Data("content".utf8), formatVersion: 1, device: device,
            clock: &clock)
        let data = try metadata.plistData()
        #expect(RevisionMetadata.digestWithoutRevisionID(data, id: metadata.id) == metadata.id.digest)
        // The same bytes in a slice that does not start at index 0.
        let padded = Data("xx".utf8) + data
        #expect(RevisionMetadata.digestWithoutRevisionID(padded[2...], id: metadata.id) == metadata.id.digest)
        // Without the entry there is nothing to take out.
        let other = try RevisionMetadata.make(
            documentID: UUID(), parents: [], content: Data("other".utf8), formatVersion: 1, device: device,
            clock: &clock)
        #expect(RevisionMetadata.digestWithoutRevisionID(data, id: other.id) == nil)
    }
}
