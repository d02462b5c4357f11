import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension PropertyList {
    /// The XML property-list encoding of this value, byte for byte what
    /// CoreFoundation's XML writer (`PropertyListSerialization` with `.xml`) produces.
    ///
    /// Tab indentation, keys sorted by UTF-16 code units, `<dict/>` and `<array/>` for
    /// empty containers, reals as `%.17g` (zero as `0.0`, `nan`, `+infinity`,
    /// `-infinity`), dates to the whole second (rounded down) as
    /// `YYYY-MM-DDTHH:MM:SSZ`, base64 data in lines of CoreFoundation's width, and only
    /// `&`, `<` and `>` escaped.
    ///
    /// Values that this format cannot carry faithfully are refused instead of being
    /// written broken: strings (and keys) with characters XML 1.0 cannot carry (the C0
    /// controls other than tab and line feed, carriage return — which XML readers turn
    /// into a line feed —, U+FFFE and U+FFFF), dates that are not finite or lie more
    /// than 10^13 seconds from 2001, and nesting deeper than ``maximumDepth``.
    ///
    /// - Returns: The UTF-8 XML document.
    /// - Throws: ``PropertyListError`` with code `unrepresentableValue` or
    ///   `nestingTooDeep`, naming the offending value's path.
    public func xmlData() throws -> Data {
        Data(try xmlBytes())
    }

    /// The XML property-list encoding of this value as bytes; see ``xmlData()``.
    ///
    /// - Returns: The UTF-8 XML document.
    /// - Throws: ``PropertyListError`` when a value cannot be written faithfully.
    public func xmlBytes() throws -> [UInt8] {
        var writer = XMLPlistWriter()
        try writer.writeDocument(self)
        return writer.output
    }
}

/// Writes property lists in CoreFoundation's XML format.
struct XMLPlistWriter {
    private(set) var output: [UInt8] = []
    /// Keys and indices leading to the value being written, for error messages.
    private var path: [String] = []

    static let header = Array(
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">

        """.utf8)
    static let footer = Array("</plist>\n".utf8)

    /// The largest magnitude of a date's `timeIntervalSinceReferenceDate` that is written.
    static let dateLimit: Double = 1e13

    mutating func writeDocument(_ value: PropertyList) throws {
        output.reserveCapacity(4096)
        output.append(contentsOf: Self.header)
        try write(value, depth: 0)
        output.append(contentsOf: Self.footer)
    }

    private mutating func indent(_ depth: Int) {
        for _ in 0..<depth { output.append(UInt8(ascii: "\t")) }
    }

    private mutating func append(_ literal: StaticString) {
        literal.withUTF8Buffer { output.append(contentsOf: $0) }
    }

    private mutating func write(_ value: PropertyList, depth: Int) throws {
        indent(depth)
        switch value {
        case .string(let string):
            append("<string>")
            try appendEscaped(string)
            append("</string>\n")
        case .integer(let integer):
            append("<integer>")
            appendInteger(integer)
            append("</integer>\n")
        case .real(let real):
            append("<real>")
            appendReal(real)
            append("</real>\n")
        case .boolean(let flag):
            if flag { append("<true/>\n") } else { append("<false/>\n") }
        case .date(let date):
            append("<date>")
            try appendDate(date)
            append("</date>\n")
        case .data(let data):
            append("<data>\n")
            appendBase64(data, depth: depth)
            indent(depth)
            append("</data>\n")
        case .array(let elements):
            if elements.isEmpty {
                append("<array/>\n")
                return
            }
            try checkDepth(depth)
            append("<array>\n")
            for (index, element) in elements.enumerated() {
                path.append("[\(index)]")
                try write(element, depth: depth + 1)
                path.removeLast()
            }
            indent(depth)
            append("</array>\n")
        case .dictionary(let entries):
            if entries.isEmpty {
                append("<dict/>\n")
                return
            }
            try checkDepth(depth)
            append("<dict>\n")
            let keys = entries.keys.sorted(by: Self.utf16Precedes)
            for key in keys {
                path.append(key)
                indent(depth + 1)
                append("<key>")
                try appendEscaped(key)
                append("</key>\n")
                try write(entries[key]!, depth: depth + 1)
                path.removeLast()
            }
            indent(depth)
            append("</dict>\n")
        }
    }

    private func checkDepth(_ depth: Int) throws {
        if depth >= PropertyList.maximumDepth {
            throw error(
                .nestingTooDeep,
                "containers are nested deeper than \(PropertyList.maximumDepth) levels")
        }
    }

    private func error(_ code: PropertyListError.Code, _ message: String) -> PropertyListError {
        let location = path.isEmpty ? "the top-level value" : "the value at " + pathDescription
        return PropertyListError(code: code, message: "cannot write \(location): \(message)")
    }

    private var pathDescription: String {
        var result = ""
        for component in path {
            if component.hasPrefix("[") || result.isEmpty { result += component } else { result += "." + component }
        }
        return result
    }

    // MARK: Strings

    private mutating func appendEscaped(_ string: String) throws {
        var string = string
        try string.withUTF8 { bytes in
            var runStart = 0
            var index = 0
            let count = bytes.count
            while index < count {
                let byte = bytes[index]
                var replacement: StaticString?
                switch byte {
                case UInt8(ascii: "&"): replacement = "&amp;"
                case UInt8(ascii: "<"): replacement = "&lt;"
                case UInt8(ascii: ">"): replacement = "&gt;"
                case 0x09, 0x0A: break
                case 0x00..<0x20:
                    throw error(.unrepresentableValue, Self.controlCharacterMessage(byte))
                case 0xEF:
                    // U+FFFE and U+FFFF are EF BF BE and EF BF BF.
                    if index + 2 < count, bytes[index + 1] == 0xBF, bytes[index + 2] >= 0xBE {
                        let scalar = bytes[index + 2] == 0xBE ? "U+FFFE" : "U+FFFF"
                        throw error(
                            .unrepresentableValue,
                            "the string contains \(scalar), which XML 1.0 cannot carry")
                    }
                default: break
                }
                if let replacement {
                    output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                    replacement.withUTF8Buffer { output.append(contentsOf: $0) }
                    runStart = index + 1
                }
                index += 1
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<count]))
        }
    }

    private static func controlCharacterMessage(_ byte: UInt8) -> String {
        let code = "U+" + String(byte, radix: 16, uppercase: true).leftPadded(to: 4)
        if byte == 0x0D {
            return "the string contains a carriage return (U+000D), which XML readers turn into a line feed"
        }
        return "the string contains the control character \(code), which XML 1.0 cannot carry"
    }

    /// Orders strings by their UTF-16 code units, as CoreFoundation sorts dictionary keys.
    static func utf16Precedes(_ lhs: String, _ rhs: String) -> Bool {
        var lhs = lhs
        var rhs = rhs
        return lhs.withUTF8 { a in
            rhs.withUTF8 { b in
                let common = min(a.count, b.count)
                var i = 0
                while i < common {
                    let x = a[i]
                    let y = b[i]
                    if x != y {
                        // UTF-8 byte order is scalar order. UTF-16 differs only between
                        // U+E000…U+FFFF (lead bytes EE, EF) and supplementary scalars
                        // (lead bytes F0…F4), whose surrogates sort before U+E000.
                        if x >= 0xF0 && (y == 0xEE || y == 0xEF) { return true }
                        if y >= 0xF0 && (x == 0xEE || x == 0xEF) { return false }
                        return x < y
                    }
                    i += 1
                }
                return a.count < b.count
            }
        }
    }

    // MARK: Numbers

    private mutating func appendInteger(_ integer: PropertyList.Integer) {
        if integer.isNegative { output.append(UInt8(ascii: "-")) }
        appendDecimal(integer.magnitude)
    }

    private mutating func appendDecimal(_ value: UInt64) {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes of scratch, enough for 20 digits
        withUnsafeMutableBytes(of: &digits) { scratch in
            var cursor = scratch.count
            var rest = value
            repeat {
                cursor -= 1
                scratch[cursor] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while rest != 0
            output.append(contentsOf: scratch[cursor...])
        }
    }

    private mutating func appendReal(_ real: Double) {
        if real.isNaN {
            append("nan")
        } else if real.isInfinite {
            if real < 0 { append("-infinity") } else { append("+infinity") }
        } else if real == 0 {
            // CoreFoundation writes both zeros as "0.0".
            append("0.0")
        } else {
            var buffer: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
            withUnsafeMutableBytes(of: &buffer) { raw in
                let base = raw.baseAddress!.assumingMemoryBound(to: CChar.self)
                let length = withVaList([real]) { vsnprintf(base, raw.count, "%.17g", $0) }
                output.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[0..<Int(length)]))
            }
        }
    }

    // MARK: Dates

    private mutating func appendDate(_ date: Date) throws {
        let interval = date.timeIntervalSinceReferenceDate
        guard interval.isFinite, abs(interval) <= Self.dateLimit else {
            throw error(
                .unrepresentableValue,
                "the date \(interval) seconds from 2001-01-01 is outside the supported range of ±1e13 seconds")
        }
        let seconds = Int64(interval.rounded(.down)) + 978_307_200
        let time = CivilTime(secondsSince1970: seconds)
        if time.year < 0 {
            output.append(UInt8(ascii: "-"))
            appendPadded(UInt64(-time.year), width: 3)
        } else {
            appendPadded(UInt64(time.year), width: 4)
        }
        output.append(UInt8(ascii: "-"))
        appendPadded(UInt64(time.month), width: 2)
        output.append(UInt8(ascii: "-"))
        appendPadded(UInt64(time.day), width: 2)
        output.append(UInt8(ascii: "T"))
        appendPadded(UInt64(time.hour), width: 2)
        output.append(UInt8(ascii: ":"))
        appendPadded(UInt64(time.minute), width: 2)
        output.append(UInt8(ascii: ":"))
        appendPadded(UInt64(time.second), width: 2)
        output.append(UInt8(ascii: "Z"))
    }

    private mutating func appendPadded(_ value: UInt64, width: Int) {
        var digitCount = 1
        var probe = value / 10
        while probe != 0 {
            digitCount += 1
            probe /= 10
        }
        for _ in digitCount..<max(width, digitCount) { output.append(UInt8(ascii: "0")) }
        appendDecimal(value)
    }

    // MARK: Data

    private static let base64Alphabet = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Base64 in lines of `76 − 8 × indent` characters, each indented with up to eight
    /// tabs, as CoreFoundation writes `<data>`.
    private mutating func appendBase64(_ data: Data, depth: Int) {
        let lineIndent = min(depth, 8)
        let lineWidth = 76 - 8 * lineIndent
        data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            let count = bytes.count
            guard count > 0 else { return }
            let table = Self.base64Alphabet
            var column = 0
            var index = 0
            while index < count {
                let b0 = bytes[index]
                let b1: UInt8 = index + 1 < count ? bytes[index + 1] : 0
                let b2: UInt8 = index + 2 < count ? bytes[index + 2] : 0
                if column == 0 { indent(lineIndent) }
                output.append(table[Int(b0 >> 2)])
                output.append(table[Int((b0 & 0x03) << 4 | b1 >> 4)])
                output.append(index + 1 < count ? table[Int((b1 & 0x0F) << 2 | b2 >> 6)] : UInt8(ascii: "="))
                output.append(index + 2 < count ? table[Int(b2 & 0x3F)] : UInt8(ascii: "="))
                index += 3
                column += 4
                if column >= lineWidth {
                    output.append(UInt8(ascii: "\n"))
                    column = 0
                }
            }
            if column != 0 { output.append(UInt8(ascii: "\n")) }
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
