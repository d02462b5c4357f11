import Foundation

extension PropertyList {
    /// Reads a property list written as JSON (RFC 8259, UTF-8).
    ///
    /// Objects become dictionaries, arrays arrays, strings strings and `true`/`false`
    /// booleans; a number without a fraction or an exponent that fits −2^63…2^64−1 becomes
    /// an integer, every other number a real. JSON has no dates and no data, so text that
    /// looks like either stays a string. Refused, with the line and column: `null`, a key
    /// repeated in one object, invalid UTF-8, a lone surrogate in a `\u` escape, and
    /// nesting deeper than ``maximumDepth``.
    ///
    /// - Parameters:
    ///   - json: The JSON document.
    ///   - file: Where it came from, for messages.
    /// - Throws: ``PropertyListError`` with code `malformedJSON`, the line and the column.
    public init(json: Data, file: String? = nil) throws(PropertyListError) {
        do throws(JSONReader.Failure) {
            self = try JSONReader.read(json, itemLimit: .max)
        } catch {
            throw PropertyListError(
                code: .malformedJSON, message: error.message, file: file, line: error.line,
                column: error.column)
        }
    }

    /// Why text in `encoding` (`UTF-16`, say) that does not begin with markup cannot be
    /// read: it is no XML property list, and JSON must be UTF-8. The XML reader and the
    /// survey reader (which tells the two forms apart) say it in these same words.
    ///
    /// - Parameter encoding: The name of the text's encoding.
    /// - Returns: The message, without the file or the place in it.
    public static func notMarkupMessage(encoding: String) -> String {
        "the document is \(encoding) text but not an XML property list (JSON must be UTF-8)"
    }

    /// Whether `bytes` look like JSON rather than XML: their first character, after any
    /// white space and a UTF-8 byte order mark, opens an object or an array.
    ///
    /// - Parameter bytes: The start of a document.
    /// - Returns: `true` for `{` or `[` first.
    public static func looksLikeJSON<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        let text = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? bytes.dropFirst(3) : bytes.dropFirst(0)
        guard let first = text.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) else { return false }
        return first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
    }
}
