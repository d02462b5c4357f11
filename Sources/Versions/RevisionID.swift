import Crypto
import Foundation

/// The identity of a revision: its generation (one more than its deepest parent's, 1 for
/// a first revision) and the SHA-256 digest of its metadata, which names the content's
/// digest. Written `3-9f2c…` (64 lower-case hex digits).
///
/// Anyone can recompute an id from a revision's bytes, and the same revision made twice
/// (same parents, time, device and content) gets the same id, so the copies collapse.
public struct RevisionID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// One more than the largest parent's generation; 1 for a first revision.
    public let generation: Int
    /// 64 lower-case hexadecimal digits.
    public let digest: String

    /// The largest generation a revision id may have (2^48), so that one more never
    /// overflows however ids are made.
    public static let maximumGeneration = 1 << 48

    /// Creates an id from its parts, as they are (`init(_:)` parses and checks text).
    public init(generation: Int, digest: String) {
        self.generation = generation
        self.digest = digest
    }

    /// Parses `GENERATION-DIGEST`; `nil` for anything else.
    ///
    /// One pass over the UTF-8 bytes: the generation is decimal digits without a leading
    /// zero (at most 15 of them), the digest 64 lower-case hex digits.
    public init?(_ text: String) { self.init(Substring(text)) }

    /// Parses `GENERATION-DIGEST` from part of a text; `nil` for anything else.
    public init?(_ text: Substring) {
        var text = text
        guard let id = text.withUTF8({ Self.parsing($0.span) }) else { return nil }
        self = id
    }

    /// Parses `GENERATION-DIGEST` from UTF-8 bytes, in place; `nil` for anything else.
    static func parsing(_ bytes: Span<UInt8>) -> RevisionID? {
        var generation = 0
        var index = 0
        while index < bytes.count, bytes[index] != UInt8(ascii: "-") {
            let byte = bytes[index]
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), index < 15,
                index > 0 || byte != UInt8(ascii: "0")
            else { return nil }
            generation = generation * 10 + Int(byte - UInt8(ascii: "0"))
            index += 1
        }
        guard index > 0, generation <= Self.maximumGeneration, bytes.count - index == 65 else { return nil }
        let digest = bytes.extracting((index + 1)...)
        for offset in 0..<digest.count {
            let byte = digest[offset]
            guard
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            else { return nil }
        }
        return RevisionID(
            generation: generation,
            digest: digest.withUnsafeBufferPointer { String(decoding: $0, as: UTF8.self) })
    }

    public var description: String { "\(generation)-\(digest)" }

    /// Orders by generation, then by digest: the tie-break of the winner order.
    public static func < (lhs: RevisionID, rhs: RevisionID) -> Bool {
        (lhs.generation, lhs.digest) < (rhs.generation, rhs.digest)
    }

    /// The SHA-256 of `bytes`, in lower-case hex.
    public static func sha256Hex(_ bytes: Data) -> String {
        hex(SHA256.hash(data: bytes))
    }

    /// A SHA-256 digest in lower-case hex.
    static func hex(_ digest: SHA256.Digest) -> String {
        digest.withUnsafeBytes { bytes in
            String(unsafeUninitializedCapacity: bytes.count * 2) { buffer in
                func digit(_ nibble: UInt8) -> UInt8 {
                    nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") - 10 + nibble
                }
                for (index, byte) in bytes.enumerated() {
                    buffer[2 * index] = digit(byte >> 4)
                    buffer[2 * index + 1] = digit(byte & 0x0F)
                }
                return bytes.count * 2
            }
        }
    }
}
