import Crypto
import Foundation
import PropertyList

/// Reads a metadata file in the one form ``RevisionMetadata/plistData()`` writes, without
/// the XML parser: the header, then each key on a tab-indented line in the writer's order
/// and its value on the next, the strings escaped as the writer escapes them, the document
/// id in upper case and the date the one the writer makes of the timestamp.
///
/// Every file a store writes has that form, so nearly every read of a metadata file (a
/// listing, a sync, the change feed's check that a package is complete) takes this path
/// and skips libxml2's parser, which for a file of a kilobyte costs more in setting up
/// than in reading. Anything else, by one byte (another order of keys, an entity other
/// than the writer's three, a control character, a character XML cannot carry, a number
/// or id that does not parse, a document id in lower case, another date), gives `nil`, and
/// the file is read by the XML parser as before, with its errors. So every file this
/// accepts is, byte for byte, the file the writer makes of the values read, which the XML
/// parser reads the same: the tests compare the three on written and on damaged files, and
/// `Fuzz/run metadata` on whatever a fuzzer makes of them.
enum CanonicalMetadata {
    /// The metadata `data` holds, read without the XML parser, and the digest of its bytes
    /// without the revision id's entry (hashed where the entry was read: since the bytes
    /// are the writer's, it is the digest the revision id must have); `nil` when `data`
    /// does not have the writer's form exactly, or a value in it does not parse. The checks
    /// that follow parsing (ranges, parents, generation, digest) are the caller's.
    static func read(_ data: Data) -> (metadata: RevisionMetadata, digestWithoutID: String)? {
        let bytes = data.span
        var offset = 0
        guard expect(header, in: bytes, at: &offset) else { return nil }
        var contentDigest: String?
        if expect("\t<key>ContentDigest</key>\n", in: bytes, at: &offset) {
            guard let text = string(in: bytes, at: &offset) else { return nil }
            contentDigest = text
        }
        guard expect("\t<key>Deleted</key>\n", in: bytes, at: &offset) else { return nil }
        let isDeleted: Bool
        if expect("\t<true/>\n", in: bytes, at: &offset) {
            isDeleted = true
        } else if expect("\t<false/>\n", in: bytes, at: &offset) {
            isDeleted = false
        } else {
            return nil
        }
        guard expect("\t<key>DeviceID</key>\n", in: bytes, at: &offset),
            let deviceID = string(in: bytes, at: &offset),
            expect("\t<key>DeviceName</key>\n", in: bytes, at: &offset),
            let deviceName = string(in: bytes, at: &offset),
            expect("\t<key>DocumentUUID</key>\n", in: bytes, at: &offset),
            let documentID = uuid(in: bytes, at: &offset),
            expect("\t<key>FormatVersion</key>\n", in: bytes, at: &offset),
            let formatVersion = integer(in: bytes, at: &offset),
            expect("\t<key>Modified</key>\n", in: bytes, at: &offset)
        else { return nil }
        let dateStart = offset
        guard expect("\t<date>", in: bytes, at: &offset), skipDate(in: bytes, at: &offset),
            expect("</date>\n", in: bytes, at: &offset)
        else { return nil }
        let dateEnd = offset
        guard expect("\t<key>Parents</key>\n", in: bytes, at: &offset),
            let parents = revisionIDs(in: bytes, at: &offset)
        else { return nil }
        let entryStart = offset
        guard expect("\t<key>RevisionID</key>\n", in: bytes, at: &offset),
            let idText = string(in: bytes, at: &offset),
            let id = RevisionID(idText)
        else { return nil }
        let entryEnd = offset
        guard
            expect("\t<key>TimestampCounter</key>\n", in: bytes, at: &offset),
            let counter = integer(in: bytes, at: &offset),
            expect("\t<key>TimestampMilliseconds</key>\n", in: bytes, at: &offset),
            let milliseconds = integer(in: bytes, at: &offset),
            expect("</dict>\n</plist>\n", in: bytes, at: &offset), offset == bytes.count
        else { return nil }
        let timestamp = HybridTimestamp(milliseconds: milliseconds, counter: Int(counter))
        guard isWritersDate(of: timestamp, bytes.extracting(dateStart..<dateEnd)) else { return nil }
        let metadata = RevisionMetadata(
            documentID: documentID, id: id, parents: parents,
            timestamp: timestamp,
            device: Device(id: deviceID, name: deviceName), formatVersion: Int(formatVersion),
            isDeleted: isDeleted, contentDigest: contentDigest)
        let digest = bytes.withUnsafeBufferPointer { buffer in
            var hasher = SHA256()
            hasher.update(
                bufferPointer: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: buffer[..<entryStart])))
            hasher.update(
                bufferPointer: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: buffer[entryEnd...])))
            return RevisionID.hex(hasher.finalize())
        }
        return (metadata, digest)
    }

    /// The writer's header and the dictionary's opening line.
    private static let header: StaticString = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>

        """

    /// Whether `literal` comes next; moves past it if so.
    private static func expect(_ literal: StaticString, in bytes: Span<UInt8>, at offset: inout Int) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard count <= bytes.count - offset else { return false }
        let start = offset
        let equal = bytes.withUnsafeBufferPointer {
            memcmp($0.baseAddress! + start, literal.utf8Start, count) == 0
        }
        guard equal else { return false }
        offset += count
        return true
    }

    /// A `\t<string>…</string>\n` line's text.
    private static func string(in bytes: Span<UInt8>, at offset: inout Int) -> String? {
        guard expect("\t<string>", in: bytes, at: &offset), let text = text(in: bytes, at: &offset),
            expect("</string>\n", in: bytes, at: &offset)
        else { return nil }
        return text
    }

    /// A `\t<string>…</string>\n` line's document id, as the writer writes it (8-4-4-4-12
    /// hexadecimal digits, upper case: `uuidString`).
    private static func uuid(in bytes: Span<UInt8>, at offset: inout Int) -> UUID? {
        guard expect("\t<string>", in: bytes, at: &offset), bytes.count - offset >= 36,
            let id = UUID.parsing(canonical: bytes.extracting(offset..<(offset + 36)))
        else { return nil }
        for index in offset..<(offset + 36) where bytes[index] >= UInt8(ascii: "a") { return nil }
        offset += 36
        return expect("</string>\n", in: bytes, at: &offset) ? id : nil
    }

    /// The text up to the next `<`, unescaped: any character XML 1.0 can carry but a
    /// control character or `>`, and the writer's three entities `&amp;`, `&lt;` and
    /// `&gt;`.
    private static func text(in bytes: Span<UInt8>, at offset: inout Int) -> String? {
        var unescaped: [UInt8] = []
        var runStart = offset
        var isASCII = true
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte == UInt8(ascii: "<") { break }
            if byte < 0x20 || byte == UInt8(ascii: ">") { return nil }
            if byte >= 0x80 { isASCII = false }
            if byte == UInt8(ascii: "&") {
                for index in runStart..<offset { unescaped.append(bytes[index]) }
                if expect("&amp;", in: bytes, at: &offset) {
                    unescaped.append(UInt8(ascii: "&"))
                } else if expect("&lt;", in: bytes, at: &offset) {
                    unescaped.append(UInt8(ascii: "<"))
                } else if expect("&gt;", in: bytes, at: &offset) {
                    unescaped.append(UInt8(ascii: ">"))
                } else {
                    return nil
                }
                runStart = offset
                continue
            }
            offset += 1
        }
        if unescaped.isEmpty { return makeString(bytes.extracting(runStart..<offset), isASCII: isASCII) }
        for index in runStart..<offset { unescaped.append(bytes[index]) }
        return makeString(unescaped.span, isASCII: isASCII)
    }

    /// The string of `bytes`: `nil` unless they are UTF-8 whose every character XML 1.0
    /// can carry (so not U+FFFE or U+FFFF; surrogates are not UTF-8).
    private static func makeString(_ bytes: Span<UInt8>, isASCII: Bool) -> String? {
        if !isASCII {
            var index = 0
            while index + 2 < bytes.count {
                if bytes[index] == 0xEF && bytes[index + 1] == 0xBF && bytes[index + 2] >= 0xBE { return nil }
                index += 1
            }
        }
        return bytes.withUnsafeBufferPointer {
            isASCII ? String(decoding: $0, as: UTF8.self) : String(validating: $0, as: UTF8.self)
        }
    }

    /// A `\t<integer>…</integer>\n` line's number: decimal digits without a leading zero,
    /// perhaps after a minus sign (not `-0`), valued by the XML reader's own integer
    /// parser and within `Int64`, as the metadata's integers must be.
    private static func integer(in bytes: Span<UInt8>, at offset: inout Int) -> Int64? {
        guard expect("\t<integer>", in: bytes, at: &offset) else { return nil }
        let start = offset
        let negative = expect("-", in: bytes, at: &offset)
        let digitsStart = offset
        while offset < bytes.count, bytes[offset] >= UInt8(ascii: "0"), bytes[offset] <= UInt8(ascii: "9") {
            offset += 1
        }
        let digits = offset - digitsStart
        guard digits > 0, digits == 1 || bytes[digitsStart] != UInt8(ascii: "0"),
            !(negative && bytes[digitsStart] == UInt8(ascii: "0"))
        else { return nil }
        let value = bytes.extracting(start..<offset).withUnsafeBufferPointer {
            PropertyList.Integer(xmlText: $0)?.int64Value
        }
        guard let value, expect("</integer>\n", in: bytes, at: &offset) else { return nil }
        return value
    }

    /// Moves past a date's text, up to the `<` that ends it; whether it is the text the
    /// writer makes is checked once the timestamp is read (``isWritersDate(of:_:)``).
    private static func skipDate(in bytes: Span<UInt8>, at offset: inout Int) -> Bool {
        while offset < bytes.count, bytes[offset] != UInt8(ascii: "<") { offset += 1 }
        return offset < bytes.count
    }

    /// Whether `line` (`\t<date>…</date>\n`) is the line the writer makes of `timestamp`'s
    /// date: the writer keeps only the whole second, and other texts read as the same date
    /// (a fraction, another year's width) but are not its bytes.
    private static func isWritersDate(of timestamp: HybridTimestamp, _ line: Span<UInt8>) -> Bool {
        var writer = XMLPlistWriter(capacity: 64)
        guard (try? writer.writeDate(timestamp.date, depth: 1)) != nil else { return false }
        let written = writer.takeData()
        return written.count == line.count
            && written.withUnsafeBytes { expected in
                line.withUnsafeBufferPointer {
                    memcmp(expected.baseAddress!, $0.baseAddress!, line.count) == 0
                }
            }
    }

    /// The `Parents` array: `\t<array/>\n`, or `\t<array>\n`, a `\t\t<string>…</string>\n`
    /// line per revision id, and `\t</array>\n`.
    private static func revisionIDs(in bytes: Span<UInt8>, at offset: inout Int) -> [RevisionID]? {
        if expect("\t<array/>\n", in: bytes, at: &offset) { return [] }
        guard expect("\t<array>\n", in: bytes, at: &offset) else { return nil }
        var ids: [RevisionID] = []
        while expect("\t\t<string>", in: bytes, at: &offset) {
            guard let text = text(in: bytes, at: &offset), let id = RevisionID(text),
                expect("</string>\n", in: bytes, at: &offset)
            else { return nil }
            ids.append(id)
        }
        guard !ids.isEmpty, expect("\t</array>\n", in: bytes, at: &offset) else { return nil }
        return ids
    }
}
