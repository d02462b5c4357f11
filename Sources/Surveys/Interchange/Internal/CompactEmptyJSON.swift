import Foundation

/// Pretty-printed JSON as people read it: Foundation's pretty printer writes an empty array
/// or object over three lines (`[`, an empty line, `]`), and this writes it `[]` or `{}`.
package enum CompactEmptyJSON {
    /// `json` with every empty array and object, whatever white space it holds, written
    /// `[]` and `{}`; text inside strings is never touched.
    ///
    /// - Parameter json: A JSON document.
    /// - Returns: The same document with its empty containers on one line.
    package static func compacting(_ json: Data) -> Data {
        let bytes = [UInt8](json)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var inString = false
        var escaped = false
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            output.append(byte)
            index += 1
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                let close = byte == UInt8(ascii: "[") ? UInt8(ascii: "]") : UInt8(ascii: "}")
                var end = index
                while end < bytes.count, isWhiteSpace(bytes[end]) { end += 1 }
                if end < bytes.count, bytes[end] == close {
                    output.append(close)
                    index = end + 1
                }
            default:
                break
            }
        }
        return Data(output)
    }

    /// JSON's four white-space bytes.
    private static func isWhiteSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D
    }
}
