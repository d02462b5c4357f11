import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A strict JSON reader (RFC 8259, UTF-8) that builds a ``PropertyList`` directly.
///
/// Stricter than `JSONSerialization`: a key repeated in one object, `null`, invalid UTF-8,
/// lone surrogates in `\u` escapes and nesting deeper than ``PropertyList/maximumDepth``
/// are refused, each with the line and column. Numbers without a fraction or exponent
/// that fit −2^63…2^64−1 become integers, every other number a real. The array under the
/// top-level key `items` may hold at most `itemLimit` elements: the reader stops at the
/// first one too many instead of building them all.
///
/// ``PropertyList/init(json:file:)`` is its public face; the survey reader uses it
/// directly for the item limit.
package struct JSONReader {
    /// Why a document was refused, and where.
    package struct Failure: Error {
        package var message: String
        package var line: Int
        package var column: Int
        /// Whether the document was refused for holding more than `itemLimit` items (a
        /// limit of the survey, not of JSON) rather than for what JSON or a property list
        /// cannot be.
        package var isItemLimit = false
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    private let itemLimit: Int

    /// Reads one JSON document.
    ///
    /// - Throws: ``Failure`` with the position of the first problem.
    package static func read(_ data: Data, itemLimit: Int) throws(Failure) -> PropertyList {
        var result: Result<PropertyList, Failure>!
        data.withUnsafeBytes { raw in
            var reader = JSONReader(bytes: raw.bindMemory(to: UInt8.self), itemLimit: itemLimit)
            do throws(Failure) {
                result = .success(try reader.document())
            } catch {
                result = .failure(error)
            }
        }
        return try result.get()
    }

    private init(bytes: UnsafeBufferPointer<UInt8>, itemLimit: Int) {
        self.bytes = bytes
        self.itemLimit = itemLimit
    }

    private mutating func document() throws(Failure) -> PropertyList {
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
        skipWhitespace()
        guard index < bytes.count else { throw fail("the document is empty; expected a JSON object") }
        let value = try self.value(depth: 0, isItems: false)
        skipWhitespace()
        guard index == bytes.count else { throw fail("unexpected text after the JSON value") }
        return value
    }

    // MARK: Values

    private mutating func value(depth: Int, isItems: Bool) throws(Failure) -> PropertyList {
        guard index < bytes.count else { throw fail("the document ends where a value was expected") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1, isItems: isItems)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .boolean(true)
        case UInt8(ascii: "f"): try literal("false"); return .boolean(false)
        case UInt8(ascii: "n"):
            try literal("null")
            throw fail("null is not allowed; leave the key out instead", at: index - 4)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw fail("unexpected character \(describe(bytes[index])); expected a JSON value")
        }
    }

    private mutating func object(depth: Int) throws(Failure) -> PropertyList {
        try checkDepth(depth)
        index += 1
        var entries: [String: PropertyList] = [:]
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .dictionary(entries)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw fail("expected a key in double quotes")
            }
            let keyStart = index
            let key = try string()
            skipWhitespace()
            try expect(UInt8(ascii: ":"), "expected ':' after a key")
            skipWhitespace()
            let value = try self.value(depth: depth, isItems: depth == 1 && key == "items")
            if entries.updateValue(value, forKey: key) != nil {
                // Keys are compared as text: the same text in another normal form (é as one
                // scalar or as e and a combining accent) is the same key, and is said to be.
                let first = entries.keys[entries.index(forKey: key)!]
                let forms =
                    first.unicodeScalars.elementsEqual(key.unicodeScalars)
                    ? "" : " (two keys are the same text in different Unicode normal forms)"
                throw fail(
                    "the key \(key.debugDescription) appears twice in one object\(forms)", at: keyStart)
            }
            skipWhitespace()
            guard index < bytes.count else { throw fail("the document ends inside an object") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            try expect(UInt8(ascii: "}"), "expected ',' or '}' in an object")
            return .dictionary(entries)
        }
    }

    private mutating func array(depth: Int, isItems: Bool) throws(Failure) -> PropertyList {
        try checkDepth(depth)
        index += 1
        var elements: [PropertyList] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            if isItems && elements.count == itemLimit {
                var failure = fail("the survey has more than \(itemLimit) items, the most a survey may have")
                failure.isItemLimit = true
                throw failure
            }
            elements.append(try value(depth: depth, isItems: false))
            skipWhitespace()
            guard index < bytes.count else { throw fail("the document ends inside an array") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            try expect(UInt8(ascii: "]"), "expected ',' or ']' in an array")
            return .array(elements)
        }
    }

    private func checkDepth(_ depth: Int) throws(Failure) {
        if depth > PropertyList.maximumDepth {
            throw fail("arrays and objects are nested deeper than \(PropertyList.maximumDepth) levels")
        }
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        let start = index
        for expected in UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount) {
            guard index < bytes.count, bytes[index] == expected else {
                throw fail("invalid literal; expected \(word)", at: start)
            }
            index += 1
        }
    }

    // MARK: Strings

    private mutating func string() throws(Failure) -> String {
        let start = index
        index += 1
        var segmentStart = index
        var decoded: [UInt8]? = nil
        while true {
            guard index < bytes.count else { throw fail("the string is not closed", at: start) }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") { break }
            if byte < 0x20 {
                throw fail("a control character (\(describe(byte))) must be escaped in a string")
            }
            if byte != UInt8(ascii: "\\") {
                index += 1
                continue
            }
            if decoded == nil { decoded = [] }
            decoded!.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[segmentStart..<index]))
            try escape(into: &decoded!)
            segmentStart = index
        }
        let tail = UnsafeBufferPointer(rebasing: bytes[segmentStart..<index])
        let text: String?
        if var decoded {
            decoded.append(contentsOf: tail)
            text = String(validating: decoded, as: UTF8.self)
        } else {
            text = String(validating: tail, as: UTF8.self)
        }
        guard let text else { throw fail("the string is not valid UTF-8", at: start) }
        index += 1
        return text
    }

    private mutating func escape(into output: inout [UInt8]) throws(Failure) {
        let start = index
        index += 1
        guard index < bytes.count else { throw fail("the string is not closed", at: start) }
        let letter = bytes[index]
        index += 1
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): output.append(letter)
        case UInt8(ascii: "b"): output.append(0x08)
        case UInt8(ascii: "f"): output.append(0x0C)
        case UInt8(ascii: "n"): output.append(0x0A)
        case UInt8(ascii: "r"): output.append(0x0D)
        case UInt8(ascii: "t"): output.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try hex4(start)
            if (0xD800...0xDBFF).contains(scalar) {
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                    bytes[index + 1] == UInt8(ascii: "u")
                else {
                    throw fail("a \\u escape holds a lone surrogate", at: start)
                }
                index += 2
                let low = try hex4(start)
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw fail("a \\u escape holds a lone surrogate", at: start)
                }
                scalar = 0x10000 + (scalar - 0xD800) << 10 + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw fail("a \\u escape holds a lone surrogate", at: start)
            }
            output.append(contentsOf: String(Unicode.Scalar(scalar)!).utf8)
        default:
            throw fail(
                "unknown escape \\\(describe(letter).trimmingCharacters(in: ["'"])) in a string", at: start)
        }
    }

    private mutating func hex4(_ start: Int) throws(Failure) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard index < bytes.count else {
                throw fail("a \\u escape needs four hexadecimal digits", at: start)
            }
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw fail("a \\u escape needs four hexadecimal digits", at: start)
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    // MARK: Text XML cannot carry

    /// A step on the way to a value: a key of an object or an index in an array.
    package enum PathComponent: Equatable, Sendable {
        case key(String)
        case index(Int)
    }

    /// Where a document that reads holds a character that an XML property list cannot
    /// carry (a control character other than tab and line feed, a carriage return, U+FFFE
    /// or U+FFFF, escaped or not), which the XML writer refuses without a place in the
    /// file: the position of that character (of its escape's backslash), with the writer's
    /// reason as the message.
    ///
    /// Only for reporting such a refusal: it reads the document again, and so costs
    /// nothing until then.
    ///
    /// - Parameters:
    ///   - data: A JSON document that ``read(_:itemLimit:)`` reads.
    ///   - path: The string to look in, as keys and indices from the top-level value, or
    ///     `nil` for the first such character of any string (keys too), in the order of
    ///     the file.
    /// - Returns: The place and the reason, or `nil` when there is no such character
    ///   (or no string at `path`).
    package static func unwritableCharacter(in data: Data, at path: [PathComponent]?) -> Failure? {
        data.withUnsafeBytes { raw in
            var reader = JSONReader(bytes: raw.bindMemory(to: UInt8.self), itemLimit: .max)
            if let path {
                if reader.bytes.count >= 3, reader.bytes[0] == 0xEF, reader.bytes[1] == 0xBB,
                    reader.bytes[2] == 0xBF
                {
                    reader.index = 3
                }
                guard (try? reader.seek(path[...])) == true, reader.index < reader.bytes.count,
                    reader.bytes[reader.index] == UInt8(ascii: "\"")
                else { return nil }
                return reader.firstUnwritableCharacter(inOneString: true)
            }
            return reader.firstUnwritableCharacter(inOneString: false)
        }
    }

    /// Moves to the value at `path` from the value that starts here; whether there is one.
    private mutating func seek(_ path: ArraySlice<PathComponent>) throws(Failure) -> Bool {
        skipWhitespace()
        guard let step = path.first else { return true }
        let wantedKey: String?
        let wantedIndex: Int
        switch step {
        case .key(let key): (wantedKey, wantedIndex) = (key, -1)
        case .index(let position): (wantedKey, wantedIndex) = (nil, position)
        }
        let (open, close) =
            wantedKey == nil ? (UInt8(ascii: "["), UInt8(ascii: "]")) : (UInt8(ascii: "{"), UInt8(ascii: "}"))
        guard index < bytes.count, bytes[index] == open else { return false }
        index += 1
        skipWhitespace()
        guard index < bytes.count, bytes[index] != close else { return false }
        var position = 0
        while true {
            skipWhitespace()
            var found = position == wantedIndex
            if let wantedKey {
                found = try string() == wantedKey
                skipWhitespace()
                index += 1  // the ':' after a key
                skipWhitespace()
            }
            if found { return try seek(path.dropFirst()) }
            // The document reads, so the depth is within the limit wherever this is.
            _ = try value(depth: 0, isItems: false)
            position += 1
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ",") else { return false }
            index += 1
        }
    }

    /// The first character XML cannot carry from here: in the string that starts here
    /// when `inOneString`, else in any string from here to the end of the document.
    private mutating func firstUnwritableCharacter(inOneString: Bool) -> Failure? {
        var inString = false
        while index < bytes.count {
            let byte = bytes[index]
            guard inString else {
                inString = byte == UInt8(ascii: "\"")
                index += 1
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                if inOneString { return nil }
                inString = false
                index += 1
            case UInt8(ascii: "\\"):
                let start = index
                guard index + 1 < bytes.count else { return nil }
                let scalar: UInt32
                switch bytes[index + 1] {
                case UInt8(ascii: "b"): scalar = 0x08
                case UInt8(ascii: "f"): scalar = 0x0C
                case UInt8(ascii: "r"): scalar = 0x0D
                case UInt8(ascii: "u"):
                    index += 2
                    guard let value = try? hex4(start) else { return nil }
                    scalar = value
                    index = start
                default: scalar = 0x20
                }
                if let reason = Self.unwritableReason(scalar) { return fail(reason, at: start) }
                index += bytes[index + 1] == UInt8(ascii: "u") ? 6 : 2
            case 0xEF where index + 2 < bytes.count && bytes[index + 1] == 0xBF && bytes[index + 2] >= 0xBE:
                // U+FFFE and U+FFFF are EF BF BE and EF BF BF.
                return fail(Self.unwritableReason(bytes[index + 2] == 0xBE ? 0xFFFE : 0xFFFF)!)
            default:
                index += 1
            }
        }
        return nil
    }

    /// Why the XML writer refuses a string holding `scalar`, or `nil` when it does not.
    private static func unwritableReason(_ scalar: UInt32) -> String? {
        guard (scalar < 0x20 && scalar != 0x09 && scalar != 0x0A) || scalar == 0xFFFE || scalar == 0xFFFF,
            let character = Unicode.Scalar(scalar)
        else { return nil }
        return XMLPlistWriter.unwritableReason(String(character))
    }

    // MARK: Numbers

    private mutating func number() throws(Failure) -> PropertyList {
        let start = index
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        let integerStart = index
        guard index < bytes.count, isDigit(bytes[index]) else {
            throw fail("a number needs digits", at: start)
        }
        if bytes[index] == UInt8(ascii: "0"), index + 1 < bytes.count, isDigit(bytes[index + 1]) {
            throw fail("a number does not start with 0 unless it is 0", at: start)
        }
        while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        let integerEnd = index
        var isReal = false
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isReal = true
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw fail("a number needs digits after '.'", at: start)
            }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isReal = true
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw fail("a number's exponent needs digits", at: start)
            }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if !isReal {
            var magnitude: UInt64 = 0
            var overflow = false
            for offset in integerStart..<integerEnd {
                let (product, o1) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, o2) = product.addingReportingOverflow(UInt64(bytes[offset] - UInt8(ascii: "0")))
                overflow = overflow || o1 || o2
                magnitude = sum
            }
            if !overflow, let integer = PropertyList.Integer(isNegative: negative, magnitude: magnitude) {
                return .integer(integer)
            }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let real = Double(text), real.isFinite else {
            throw fail("the number \(text) is too large for a double", at: start)
        }
        return .real(real)
    }

    // MARK: Helpers

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func expect(_ byte: UInt8, _ message: String) throws(Failure) {
        guard index < bytes.count, bytes[index] == byte else {
            throw fail(
                index < bytes.count
                    ? "\(message), not \(describe(bytes[index]))" : "\(message); the document ends")
        }
        index += 1
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private func describe(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "0x" + String(byte, radix: 16, uppercase: true)
    }

    /// A failure at `offset` (default: the current place), with its 1-based line and
    /// column (columns count Unicode scalars; a byte order mark is not one). LF, CR LF and
    /// a CR alone each end a line, as in the XML reader.
    private func fail(_ message: String, at offset: Int? = nil) -> Failure {
        let end = min(offset ?? index, bytes.count)
        var line = 1
        var column = 1
        let hasByteOrderMark = bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF
        let start = hasByteOrderMark ? min(3, end) : 0
        for position in start..<end {
            let byte = bytes[position]
            if byte == 0x0D || (byte == 0x0A && (position == start || bytes[position - 1] != 0x0D)) {
                line += 1
                column = 1
            } else if byte == 0x0A {
                // The LF of a CR LF: the CR ended the line.
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return Failure(message: message, line: line, column: column)
    }
}
