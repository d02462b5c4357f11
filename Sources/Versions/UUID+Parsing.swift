import Foundation

extension UUID {
    /// `UUID(uuidString:)`, read in one pass when `text` has the canonical form (8-4-4-4-12
    /// hexadecimal digits, either case, as every folder name and metadata file of a store
    /// holds it); anything else is left to `UUID(uuidString:)`, so the two accept and
    /// reject the same texts. Foundation's reader goes through `sscanf`, which costs far more.
    package static func parsing(_ text: String) -> UUID? {
        var text = text
        return text.withUTF8 { parsing(canonical: $0.span) } ?? UUID(uuidString: text)
    }

    /// The UUID `bytes` hold in the canonical form (8-4-4-4-12 hexadecimal digits, either
    /// case); `nil` for anything else.
    static func parsing(canonical bytes: Span<UInt8>) -> UUID? {
        guard bytes.count == 36 else { return nil }
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let parsed = withUnsafeMutableBytes(of: &value) { output -> Bool in
            var high: UInt8?
            var written = 0
            for offset in 0..<36 {
                let byte = bytes[offset]
                if offset == 8 || offset == 13 || offset == 18 || offset == 23 {
                    guard byte == UInt8(ascii: "-") else { return false }
                    continue
                }
                let nibble: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = byte - UInt8(ascii: "A") + 10
                default: return false
                }
                if let first = high {
                    output[written] = first << 4 | nibble
                    written += 1
                    high = nil
                } else {
                    high = nibble
                }
            }
            return written == 16
        }
        return parsed ? UUID(uuid: value) : nil
    }
}
