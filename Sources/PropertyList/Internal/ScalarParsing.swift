import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Strict parsers for the text of `<integer>`, `<real>`, `<date>` and `<data>`.
/// Each returns the value, or a message saying why the text is refused.
enum ScalarParsing {
    struct Failure: Error {
        var message: String
        /// Why the text is refused, without quoting it (set for dates).
        var reason: String? = nil
    }

    /// The text in quotes for a message, control characters escaped, and cut after 40
    /// characters. A scalar's text is quoted as it is, whitespace included (that is what
    /// is wrong with `<real>1.5  </real>`); stray text between elements is `trimmed`.
    static func quoted(_ text: UnsafeBufferPointer<UInt8>, trimmed: Bool = false) -> String {
        let limit = 40
        let raw = String(decoding: text, as: UTF8.self)
        let string = trimmed ? raw.trimmingCharacters(in: .whitespacesAndNewlines) : raw
        var shown = ""
        for scalar in string.unicodeScalars.prefix(limit) {
            shown += scalar.value < 0x20 ? scalar.escaped(asASCII: true) : String(scalar)
        }
        return "'" + shown + (string.unicodeScalars.count > limit ? "…" : "") + "'"
    }

    // MARK: Integers

    /// `[+-]?` then decimal digits or `0x` and hex digits; −2^63…2^64−1.
    static func integer(_ text: UnsafeBufferPointer<UInt8>) throws(Failure) -> PropertyList.Integer {
        var index = 0
        var negative = false
        if index < text.count, text[index] == UInt8(ascii: "-") || text[index] == UInt8(ascii: "+") {
            negative = text[index] == UInt8(ascii: "-")
            index += 1
        }
        var radix: UInt64 = 10
        if index + 1 < text.count, text[index] == UInt8(ascii: "0"),
            text[index + 1] == UInt8(ascii: "x") || text[index + 1] == UInt8(ascii: "X")
        {
            radix = 16
            index += 2
        }
        guard index < text.count else {
            throw Failure(message: text.isEmpty ? "empty <integer>" : "integer \(quoted(text)) has no digits")
        }
        var magnitude: UInt64 = 0
        var overflow = false
        while index < text.count {
            let byte = text[index]
            let digit: UInt64
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt64(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f") where radix == 16:
                digit = UInt64(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F") where radix == 16:
                digit = UInt64(byte - UInt8(ascii: "A") + 10)
            default:
                throw Failure(message: "integer \(quoted(text)) contains an invalid character")
            }
            let (product, o1) = magnitude.multipliedReportingOverflow(by: radix)
            let (sum, o2) = product.addingReportingOverflow(digit)
            overflow = overflow || o1 || o2
            magnitude = sum
            index += 1
        }
        guard !overflow, let value = PropertyList.Integer(isNegative: negative, magnitude: magnitude) else {
            throw Failure(message: "integer \(quoted(text)) is outside the range -2^63...2^64-1")
        }
        return value
    }

    // MARK: Reals

    /// Decimal notation (`1`, `-1.5`, `.5`, `2.`, `1e-5`) or, in any letter case, `nan`,
    /// `inf`, `infinity`, each optionally signed. No hex floats, no surrounding spaces, and
    /// no decimal number whose magnitude is too large for a double (it would read as
    /// infinity); one too small reads as zero.
    static func real(_ text: UnsafeBufferPointer<UInt8>) throws(Failure) -> Double {
        guard !text.isEmpty else { throw Failure(message: "empty <real>") }
        var index = 0
        var sign: Double = 1
        if text[0] == UInt8(ascii: "-") || text[0] == UInt8(ascii: "+") {
            sign = text[0] == UInt8(ascii: "-") ? -1 : 1
            index = 1
        }
        if index < text.count, isLetter(text[index]) {
            var word = ""
            for byte in text[index...] {
                guard isLetter(byte) else { throw Failure(message: "real \(quoted(text)) is not a number") }
                word.unicodeScalars.append(Unicode.Scalar(byte | 0x20))
            }
            switch word {
            case "nan": return .nan
            case "inf", "infinity": return sign * .infinity
            default: throw Failure(message: "real \(quoted(text)) is not a number")
            }
        }
        // Check the shape before handing the text to strtod, which accepts more. The
        // digits are gathered on the way for the exact fast path below.
        var digits = 0
        var mantissa: UInt64 = 0
        var fractionDigits = 0
        while index < text.count, isDigit(text[index]) {
            mantissa = mantissa &* 10 &+ UInt64(text[index] &- UInt8(ascii: "0"))
            index += 1
            digits += 1
        }
        if index < text.count, text[index] == UInt8(ascii: ".") {
            index += 1
            while index < text.count, isDigit(text[index]) {
                mantissa = mantissa &* 10 &+ UInt64(text[index] &- UInt8(ascii: "0"))
                index += 1
                digits += 1
                fractionDigits += 1
            }
        }
        guard digits > 0 else { throw Failure(message: "real \(quoted(text)) is not a number") }
        var hasExponent = false
        if index < text.count, text[index] == UInt8(ascii: "e") || text[index] == UInt8(ascii: "E") {
            hasExponent = true
            index += 1
            if index < text.count, text[index] == UInt8(ascii: "-") || text[index] == UInt8(ascii: "+") {
                index += 1
            }
            var exponentDigits = 0
            while index < text.count, isDigit(text[index]) { index += 1; exponentDigits += 1 }
            guard exponentDigits > 0 else {
                throw Failure(message: "real \(quoted(text)) has an exponent without digits")
            }
        }
        guard index == text.count else { throw Failure(message: "real \(quoted(text)) is not a number") }
        // Without an exponent, at most 19 digits (so `mantissa` has not wrapped) whose
        // value is at most 2^53 and at most 22 of them after the point: the mantissa and
        // the power of ten are then both exact doubles, and one division rounds their
        // quotient correctly, which is what strtod returns (Clinger's fast path).
        if !hasExponent, digits <= 19, mantissa <= 1 << 53, fractionDigits <= 22 {
            return sign * (Double(mantissa) / exactPowersOfTen[fractionDigits])
        }
        let value = withTerminatedCopy(text) { strtod($0, nil) }
        // The spellings of infinity were read above, so an infinite value here is a number
        // too large for a double, which strtod rounds to ±HUGE_VAL. One below the smallest
        // subnormal is read as zero, as it rounds.
        guard value.isFinite else {
            throw Failure(
                message:
                    "real \(quoted(text)) is too large for a double (the largest is 1.7976931348623157e+308)")
        }
        return value
    }

    /// 10^0 through 10^22, the powers of ten that a double holds exactly.
    private static let exactPowersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17,
        1e18, 1e19, 1e20, 1e21, 1e22,
    ]

    private static func withTerminatedCopy<R>(
        _ text: UnsafeBufferPointer<UInt8>, _ body: (UnsafePointer<CChar>) -> R
    ) -> R {
        if text.count < 63 {
            var storage: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (
                0, 0, 0, 0, 0, 0, 0, 0
            )
            return withUnsafeMutableBytes(of: &storage) { raw in
                raw.copyMemory(from: UnsafeRawBufferPointer(text))
                raw[text.count] = 0
                return body(raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
        }
        var copy = [CChar](repeating: 0, count: text.count + 1)
        return copy.withUnsafeMutableBytes { raw in
            raw.copyMemory(from: UnsafeRawBufferPointer(text))
            return body(raw.baseAddress!.assumingMemoryBound(to: CChar.self))
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
    }

    // MARK: Dates

    /// `[-]YYYY-MM-DDTHH:MM:SS[.fraction]Z`, proleptic Gregorian, UTC.
    static func date(_ text: UnsafeBufferPointer<UInt8>) throws(Failure) -> Date {
        // The form every writer uses, YYYY-MM-DDTHH:MM:SSZ, read field by field at
        // fixed places; anything else goes the general way below.
        if text.count == 20, text[4] == UInt8(ascii: "-"), text[7] == UInt8(ascii: "-"),
            text[10] == UInt8(ascii: "T"),
            text[13] == UInt8(ascii: ":"), text[16] == UInt8(ascii: ":"), text[19] == UInt8(ascii: "Z")
        {
            @inline(__always) func digits(_ start: Int, _ count: Int) -> Int? {
                var value = 0
                for offset in start..<start + count {
                    let digit = text[offset] &- UInt8(ascii: "0")
                    guard digit < 10 else { return nil }
                    value = value * 10 + Int(digit)
                }
                return value
            }
            if let year = digits(0, 4), let month = digits(5, 2), let day = digits(8, 2),
                let hour = digits(11, 2),
                let minute = digits(14, 2), let second = digits(17, 2)
            {
                return try date(
                    year: Int64(year), month: month, day: day, hour: hour, minute: minute, second: second,
                    fraction: 0,
                    text: text)
            }
        }
        var index = 0
        func fail(_ why: String) -> Failure {
            Failure(message: "date \(quoted(text)) \(why); expected YYYY-MM-DDTHH:MM:SSZ", reason: why)
        }
        func number(maxDigits: Int, exactDigits: Int?) throws(Failure) -> Int64 {
            var value: Int64 = 0
            var count = 0
            while index < text.count, isDigit(text[index]), count < maxDigits {
                value = value * 10 + Int64(text[index] - UInt8(ascii: "0"))
                index += 1
                count += 1
            }
            if count == 0 || (exactDigits != nil && count != exactDigits) { throw fail("is malformed") }
            return value
        }
        func expect(_ byte: UInt8) throws(Failure) {
            guard index < text.count, text[index] == byte else { throw fail("is malformed") }
            index += 1
        }
        var negativeYear = false
        if index < text.count, text[index] == UInt8(ascii: "-") {
            negativeYear = true
            index += 1
        }
        // CoreFoundation pads years to four digits; libplist writes year 1 as "1".
        var year = try number(maxDigits: 9, exactDigits: nil)
        if negativeYear { year = -year }
        try expect(UInt8(ascii: "-"))
        let month = Int(try number(maxDigits: 2, exactDigits: 2))
        try expect(UInt8(ascii: "-"))
        let day = Int(try number(maxDigits: 2, exactDigits: 2))
        try expect(UInt8(ascii: "T"))
        let hour = Int(try number(maxDigits: 2, exactDigits: 2))
        try expect(UInt8(ascii: ":"))
        let minute = Int(try number(maxDigits: 2, exactDigits: 2))
        try expect(UInt8(ascii: ":"))
        let second = Int(try number(maxDigits: 2, exactDigits: 2))
        var fraction = 0.0
        if index < text.count, text[index] == UInt8(ascii: ".") {
            index += 1
            // Digits as an integer over a power of ten (beyond the 15th they cannot
            // change a double's fraction of a second), so that .75 is exactly 0.75.
            var numerator: Int64 = 0
            var scale: Int64 = 1
            var digits = 0
            while index < text.count, isDigit(text[index]) {
                if digits < 15 {
                    numerator = numerator * 10 + Int64(text[index] - UInt8(ascii: "0"))
                    scale *= 10
                }
                index += 1
                digits += 1
            }
            if digits == 0 { throw fail("has an empty fraction of a second") }
            fraction = Double(numerator) / Double(scale)
        }
        try expect(UInt8(ascii: "Z"))
        guard index == text.count else { throw fail("has trailing characters") }
        return try date(
            year: year, month: month, day: day, hour: hour, minute: minute, second: second,
            fraction: fraction, text: text)
    }

    /// The date of checked fields, after checking their ranges.
    private static func date(
        year: Int64, month: Int, day: Int, hour: Int, minute: Int, second: Int, fraction: Double,
        text: UnsafeBufferPointer<UInt8>
    ) throws(Failure) -> Date {
        func fail(_ why: String) -> Failure {
            Failure(message: "date \(quoted(text)) \(why); expected YYYY-MM-DDTHH:MM:SSZ", reason: why)
        }
        guard (1...12).contains(month) else { throw fail("has month \(month)") }
        guard day >= 1, day <= CivilTime.daysInMonth(month, year: year) else {
            throw fail("has day \(day), which month \(month) of \(year) does not have")
        }
        guard hour < 24, minute < 60, second < 60 else {
            let field = hour >= 24 ? "hour \(hour)" : minute >= 60 ? "minute \(minute)" : "second \(second)"
            throw fail("has a time of day out of range (\(field))")
        }
        let seconds = CivilTime(
            year: year, month: month, day: day, hour: hour, minute: minute, second: second
        )
        .secondsSince1970
        let interval = Double(seconds - 978_307_200) + fraction
        guard abs(interval) <= XMLPlistWriter.dateLimit else {
            throw fail("is outside the supported range of ±1e13 seconds from 2001")
        }
        return Date(timeIntervalSinceReferenceDate: interval)
    }

    // MARK: Base64

    private static let base64Values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, byte) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8
            .enumerated()
        {
            table[Int(byte)] = UInt8(value)
        }
        for space in [0x20, 0x09, 0x0A, 0x0D] { table[space] = 0xFE }
        table[Int(UInt8(ascii: "="))] = 0xFD
        return table
    }()

    /// Standard base64 with `=` padding; whitespace anywhere is ignored.
    static func base64(_ text: UnsafeBufferPointer<UInt8>) throws(Failure) -> Data {
        var output = [UInt8](repeating: 0, count: text.count / 4 * 3 + 3)
        let count = try output.withUnsafeMutableBufferPointer { out throws(Failure) in
            try base64(text, into: out.baseAddress!)
        }
        return Data(output[..<count])
    }

    /// Decodes base64 `text` into `output`, which may be `text`'s own memory: the output
    /// never overtakes the input. Returns the number of bytes written.
    static func base64(_ text: UnsafeBufferPointer<UInt8>, into output: UnsafeMutablePointer<UInt8>)
        throws(Failure) -> Int
    {
        let table = base64Values
        var written = 0
        var group: UInt32 = 0
        var inGroup = 0
        var padding = 0
        var finished = false
        for offset in 0..<text.count {
            let byte = text[offset]
            let value = table[Int(byte)]
            switch value {
            case 0xFE:
                continue
            case 0xFD:
                // Padding is allowed only as the last one or two characters of a group.
                guard !finished, inGroup >= 2 else {
                    throw Failure(message: "base64 padding '=' at offset \(offset) is misplaced")
                }
                padding += 1
                inGroup += 1
            case 0xFF:
                throw Failure(
                    message:
                        "base64 data contains the invalid character \(describe(byte)) at offset \(offset)")
            default:
                guard padding == 0, !finished else {
                    throw Failure(message: "base64 data continues after '=' padding at offset \(offset)")
                }
                group = group << 6 | UInt32(value)
                inGroup += 1
            }
            guard inGroup == 4 else { continue }
            switch padding {
            case 0:
                output[written] = UInt8(truncatingIfNeeded: group >> 16)
                output[written + 1] = UInt8(truncatingIfNeeded: group >> 8)
                output[written + 2] = UInt8(truncatingIfNeeded: group)
                written += 3
            case 1:
                // Three characters carry 18 bits: two bytes and two bits that must be zero.
                guard group & 0x03 == 0 else {
                    throw Failure(message: "base64 data has non-zero bits in its final padded group")
                }
                output[written] = UInt8(truncatingIfNeeded: group >> 10)
                output[written + 1] = UInt8(truncatingIfNeeded: group >> 2)
                written += 2
                finished = true
            default:
                // Two characters carry 12 bits: one byte and four bits that must be zero.
                guard group & 0x0F == 0 else {
                    throw Failure(message: "base64 data has non-zero bits in its final padded group")
                }
                output[written] = UInt8(truncatingIfNeeded: group >> 4)
                written += 1
                finished = true
            }
            group = 0
            inGroup = 0
        }
        guard inGroup == 0 else {
            throw Failure(message: "base64 data ends in an incomplete group of \(inGroup) characters")
        }
        return written
    }

    private static func describe(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "0x" + String(byte, radix: 16, uppercase: true)
    }
}
