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
        var writer = XMLPlistWriter()
        try writer.writeDocument { writer in try writer.write(self, depth: 0) }
        return writer.takeData()
    }
}

/// Writes property lists in CoreFoundation's XML format.
///
/// The writer emits scalars and container tags; walkers over a value tree (here, and in
/// the `Codable` encoder) decide the order. On failure the path of the offending value
/// is collected while the error travels up through the containers.
///
/// Other modules of the package write a value of a known shape through it directly
/// (`Survey.plistData()`), with ``writeEntry(_:depth:_:)`` and
/// ``writeElement(_:_:)`` as the tree walk does: the same bytes
/// ``PropertyList/xmlData()`` writes for the equal tree, provided each dictionary's keys
/// come in the order ``PropertyList/xmlData()`` sorts them (UTF-16 order: for ASCII keys,
/// byte order).
package struct XMLPlistWriter {
    let output: ByteStorage

    /// A writer appending to `output`.
    init(output: ByteStorage) {
        self.output = output
    }

    /// A writer appending to a new buffer of `capacity` bytes to start with.
    package init(capacity: Int = 4096) {
        self.init(output: ByteStorage(capacity: capacity))
    }

    /// A failure deep in a value, with the path to it collected on the way out.
    package struct Failure: Error {
        var code: PropertyListError.Code
        var message: String
        var path: [String] = []

        var error: PropertyListError {
            var joined = path.joined()
            if joined.hasPrefix(".") { joined.removeFirst() }
            let location = path.isEmpty ? "the top-level value" : "the value at " + joined
            return PropertyListError(code: code, message: "cannot write \(location): \(message)")
        }
    }

    static let header = Array(
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">

        """.utf8)
    static let footer = Array("</plist>\n".utf8)

    /// The largest magnitude of a date's `timeIntervalSinceReferenceDate` that is written.
    static let dateLimit: Double = 1e13

    /// Writes the header, the value that `body` writes at depth 0, and the footer.
    package mutating func writeDocument(_ body: (inout XMLPlistWriter) throws -> Void) throws {
        Self.header.withUnsafeBufferPointer { output.append($0) }
        do {
            try body(&self)
        } catch let failure as Failure {
            throw failure.error
        }
        Self.footer.withUnsafeBufferPointer { output.append($0) }
    }

    package func takeData() -> Data {
        output.takeData()
    }

    @inline(__always)
    private func byte(_ value: UInt8) {
        output.append(value)
    }

    @inline(__always)
    private func indent(_ depth: Int) {
        output.append(repeating: UInt8(ascii: "\t"), count: depth)
    }

    @inline(__always)
    private func append(_ literal: StaticString) {
        output.append(literal.utf8Start, count: literal.utf8CodeUnitCount)
    }

    /// Adds `component` to the path of a failure passing through a container.
    @usableFromInline
    static func rethrow(_ error: any Error, at component: @autoclosure () -> String) -> any Error {
        guard var failure = error as? Failure else { return error }
        failure.path.insert(component(), at: 0)
        return failure
    }

    @usableFromInline static func keyComponent(_ key: String) -> String { "." + key }
    @usableFromInline static func indexComponent(_ index: Int) -> String { "[\(index)]" }

    // MARK: Values

    /// Writes a whole value tree.
    mutating func write(_ value: PropertyList, depth: Int) throws {
        switch value {
        case .array(let elements):
            guard try beginArray(isEmpty: elements.isEmpty, depth: depth) else { return }
            for (index, element) in elements.enumerated() {
                try writeElement(index) { writer in try writer.write(element, depth: depth + 1) }
            }
            endContainer("</array>\n", depth: depth)
        case .dictionary(let entries):
            guard try beginDictionary(isEmpty: entries.isEmpty, depth: depth) else { return }
            for (_, index) in Self.sortedIndices(entries) {
                let (key, element) = entries[index]
                try writeEntry(key, depth: depth + 1) { writer in try writer.write(element, depth: depth + 1)
                }
            }
            endContainer("</dict>\n", depth: depth)
        default:
            try writeScalar(value, depth: depth)
        }
    }

    /// Writes a dictionary's entry at `depth`: `key`, then its value with `value`; a
    /// failure of either names `key` in its path.
    @inlinable
    package mutating func writeEntry(
        _ key: String, depth: Int, _ value: (inout XMLPlistWriter) throws -> Void
    ) throws {
        do {
            try writeKey(key, depth: depth)
            try value(&self)
        } catch {
            throw Self.rethrow(error, at: Self.keyComponent(key))
        }
    }

    /// Writes an array's element at `index` with `element`; a failure names `index` in
    /// its path. (The array's tags are ``beginArray(isEmpty:depth:)`` and
    /// ``endContainer(_:depth:)``.)
    @inlinable
    package mutating func writeElement(_ index: Int, _ element: (inout XMLPlistWriter) throws -> Void) throws
    {
        do {
            try element(&self)
        } catch {
            throw Self.rethrow(error, at: Self.indexComponent(index))
        }
    }

    /// Writes `<array>` (or `<array/>`); returns whether elements should follow.
    package mutating func beginArray(isEmpty: Bool, depth: Int) throws(Failure) -> Bool {
        // An empty one is a level too: the reader refuses it past the limit.
        try checkDepth(depth)
        indent(depth)
        if isEmpty {
            append("<array/>\n")
            return false
        }
        append("<array>\n")
        return true
    }

    /// Writes `<dict>` (or `<dict/>`); returns whether entries should follow.
    package mutating func beginDictionary(isEmpty: Bool, depth: Int) throws(Failure) -> Bool {
        // An empty one is a level too: the reader refuses it past the limit.
        try checkDepth(depth)
        indent(depth)
        if isEmpty {
            append("<dict/>\n")
            return false
        }
        append("<dict>\n")
        return true
    }

    package mutating func endContainer(_ tag: StaticString, depth: Int) {
        indent(depth)
        append(tag)
    }

    package mutating func writeKey(_ key: String, depth: Int) throws(Failure) {
        indent(depth)
        append("<key>")
        try appendEscaped(key)
        append("</key>\n")
    }

    /// Writes a value that is not a container.
    mutating func writeScalar(_ value: PropertyList, depth: Int) throws {
        switch value {
        case .string(let string):
            try writeString(string, depth: depth)
        case .integer(let integer):
            writeInteger(isNegative: integer.isNegative, magnitude: integer.magnitude, depth: depth)
        case .real(let real):
            writeReal(real, depth: depth)
        case .boolean(let flag):
            writeBoolean(flag, depth: depth)
        case .date(let date):
            try writeDate(date, depth: depth)
        case .data(let data):
            writeData(data, depth: depth)
        case .array, .dictionary:
            try write(value, depth: depth)
        }
    }

    @inline(__always)
    package mutating func writeString(_ string: String, depth: Int) throws(Failure) {
        indent(depth)
        append("<string>")
        try appendEscaped(string)
        append("</string>\n")
    }

    @inline(__always)
    package mutating func writeInteger(isNegative: Bool, magnitude: UInt64, depth: Int) {
        indent(depth)
        append("<integer>")
        if isNegative { byte(UInt8(ascii: "-")) }
        appendDecimal(magnitude)
        append("</integer>\n")
    }

    package mutating func writeReal(_ real: Double, depth: Int) {
        indent(depth)
        append("<real>")
        appendReal(real)
        append("</real>\n")
    }

    @inline(__always)
    package mutating func writeBoolean(_ flag: Bool, depth: Int) {
        indent(depth)
        if flag { append("<true/>\n") } else { append("<false/>\n") }
    }

    package mutating func writeDate(_ date: Date, depth: Int) throws(Failure) {
        indent(depth)
        append("<date>")
        try appendDate(date)
        append("</date>\n")
    }

    mutating func writeData(_ data: Data, depth: Int) {
        indent(depth)
        append("<data>\n")
        appendBase64(data, depth: depth)
        indent(depth)
        append("</data>\n")
    }

    private func checkDepth(_ depth: Int) throws(Failure) {
        if depth >= PropertyList.maximumDepth {
            throw Failure(
                code: .nestingTooDeep,
                message: "containers are nested deeper than \(PropertyList.maximumDepth) levels")
        }
    }

    private func error(_ code: PropertyListError.Code, _ message: String) -> Failure {
        Failure(code: code, message: message)
    }

    // MARK: Strings

    private mutating func appendEscaped(_ string: String) throws(Failure) {
        var string = string
        // `withUTF8` rethrows untyped errors; carry the failure out by hand.
        var failure: Failure?
        string.withUTF8 { bytes in
            do throws(Failure) { try appendEscaped(bytes) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Whether any of the eight bytes of `word` needs a look when escaping. It is exact
    /// for ASCII bytes and answers yes for any byte of 0x80 or more (0xEF among them).
    @inline(__always)
    static func needsAttention(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        @inline(__always) func hasZero(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & highs }
        let control = (word &- ones &* 0x20) & ~word & highs
        let special =
            hasZero(word ^ (ones &* 0x26)) | hasZero(word ^ (ones &* 0x3C)) | hasZero(word ^ (ones &* 0x3E))
        return (control | special | (word & highs)) != 0
    }

    /// Appends UTF-8 `bytes` with `&`, `<` and `>` escaped, refusing what XML 1.0 cannot
    /// carry. Runs of plain ASCII are checked eight bytes at a time.
    mutating func appendEscaped(_ bytes: UnsafeBufferPointer<UInt8>) throws(Failure) {
        let count = bytes.count
        guard let base = bytes.baseAddress, count > 0 else { return }
        let raw = UnsafeRawPointer(base)
        // The common case, nothing to escape, checked a word at a time (the last word
        // overlapping the one before) and copied in one go.
        if count >= 8 {
            var offset = 0
            while offset + 8 <= count
                && !Self.needsAttention(raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            {
                offset += 8
            }
            if offset == count
                || (offset + 8 > count
                    && !Self.needsAttention(raw.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)))
            {
                output.append(base, count: count)
                return
            }
        }
        var runStart = 0
        var index = 0
        while index < count {
            if index + 8 <= count
                && !Self.needsAttention(raw.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            {
                index += 8
                continue
            }
            let stop = min(index + 8, count)
            while index < stop {
                let byte = base[index]
                if byte >= 0x3F || (byte >= 0x20 && byte != 0x26 && byte != 0x3C && byte != 0x3E)
                    || byte == 0x09 || byte == 0x0A
                {
                    if byte == 0xEF, index + 2 < count, base[index + 1] == 0xBF, base[index + 2] >= 0xBE {
                        // U+FFFE and U+FFFF are EF BF BE and EF BF BF.
                        let scalar = base[index + 2] == 0xBE ? "U+FFFE" : "U+FFFF"
                        throw error(
                            .unrepresentableValue, "the string contains \(scalar), which XML 1.0 cannot carry"
                        )
                    }
                    index += 1
                    continue
                }
                let replacement: StaticString
                switch byte {
                case UInt8(ascii: "&"): replacement = "&amp;"
                case UInt8(ascii: "<"): replacement = "&lt;"
                case UInt8(ascii: ">"): replacement = "&gt;"
                default: throw error(.unrepresentableValue, Self.controlCharacterMessage(byte))
                }
                output.append(UnsafeBufferPointer(start: base + runStart, count: index - runStart))
                output.append(
                    UnsafeBufferPointer(start: replacement.utf8Start, count: replacement.utf8CodeUnitCount))
                index += 1
                runStart = index
            }
        }
        output.append(UnsafeBufferPointer(start: base + runStart, count: count - runStart))
    }

    /// Why `text` cannot be written as an XML string (the message the writer refuses it
    /// with), or `nil` when it can: for checking text before it is written. It is the
    /// writer's own escaping, into a scratch buffer.
    package static func unwritableReason(_ text: String) -> String? {
        var scratch = XMLPlistWriter(capacity: text.utf8.count + 16)
        do throws(Failure) {
            try scratch.appendEscaped(text)
        } catch {
            return error.message
        }
        return nil
    }

    private static func controlCharacterMessage(_ byte: UInt8) -> String {
        let code = "U+" + String(byte, radix: 16, uppercase: true).leftPadded(to: 4)
        if byte == 0x0D {
            return "the string contains a carriage return (U+000D), which XML readers turn into a line feed"
        }
        return "the string contains the control character \(code), which XML 1.0 cannot carry"
    }

    /// The positions of a dictionary's entries in the order CoreFoundation writes them:
    /// their keys by UTF-16 code units (``utf16Precedes(_:_:)``).
    ///
    /// Each key's first eight bytes are read once into an integer that orders as the keys
    /// do (``utf16OrderPrefix(_:)``), so that most comparisons are of two integers; keys
    /// whose prefixes are equal are compared whole. Positions rather than entries are
    /// sorted, so no key or value is copied.
    static func sortedIndices(
        _ entries: [String: PropertyList]
    ) -> [(prefix: UInt64, index: [String: PropertyList].Index)] {
        var order: [(prefix: UInt64, index: [String: PropertyList].Index)] = []
        order.reserveCapacity(entries.count)
        var index = entries.startIndex
        while index != entries.endIndex {
            order.append((utf16OrderPrefix(entries[index].key), index))
            entries.formIndex(after: &index)
        }
        order.sort { a, b in
            a.prefix != b.prefix
                ? a.prefix < b.prefix : utf16Precedes(entries[a.index].key, entries[b.index].key)
        }
        return order
    }

    /// The first eight bytes of `key`'s UTF-8, most significant first and zero after its
    /// end, each lead byte of a character from U+E000 to U+FFFF (`EE`, `EF`) placed above
    /// those of supplementary characters (`F0`…`F4`), as UTF-16 orders them (see
    /// ``utf16Precedes(_:_:)``).
    ///
    /// When one key's prefix is below another's, that key comes first: the keys differ
    /// first within these bytes, where the mapped byte orders them, or the first key ends
    /// there. Equal prefixes say nothing (a key may end where another has a zero byte, or
    /// the keys may differ later).
    static func utf16OrderPrefix(_ key: String) -> UInt64 {
        var key = key
        return key.withUTF8 { bytes in
            var prefix: UInt64 = 0
            for index in 0..<8 {
                var byte = index < bytes.count ? bytes[index] : 0
                switch byte {
                case 0xEE, 0xEF: byte &+= 5  // to F3, F4
                case 0xF0...0xF4: byte &-= 2  // to EE…F2
                default: break
                }
                prefix = prefix << 8 | UInt64(byte)
            }
            return prefix
        }
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

    private mutating func appendDecimal(_ value: UInt64) {
        output.appendDecimal(value)
    }

    private mutating func appendReal(_ real: Double) {
        if real.isNaN {
            append("nan")
        } else if real.isInfinite {
            if real < 0 { append("-infinity") } else { append("+infinity") }
        } else if real == 0 {
            // CoreFoundation writes both zeros as "0.0".
            append("0.0")
        } else if !appendShortReal(real) {
            var buffer: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
            withUnsafeMutableBytes(of: &buffer) { raw in
                let base = raw.baseAddress!.assumingMemoryBound(to: CChar.self)
                let length = withVaList([real]) { vsnprintf(base, raw.count, "%.17g", $0) }
                output.append(UnsafeBufferPointer(rebasing: raw.bindMemory(to: UInt8.self)[0..<Int(length)]))
            }
        }
    }

    /// Appends `real` as `%.17g` writes it, if its exact decimal value has at most 17
    /// significant digits and lies in 10^-4 ≤ |real| < 10^17 (where `%g` uses no
    /// exponent), and returns `true`; otherwise appends nothing and returns `false`.
    ///
    /// Such a value is `m × 2^e` with an odd integer `m`; when `e < 0` it is exactly
    /// `m × 5^-e / 10^-e`, so its digits are those of the integer `m × 5^-e`, with the
    /// decimal point `-e` places from the right. `%.17g` prints the exact value
    /// then (it has no more digits than the precision), with trailing zeros removed,
    /// and these digits have none: the last is odd. Integers and the multiples of a
    /// small power of two (halves, sixteenths: what sliders and counts produce) are
    /// written without formatting through C's `vsnprintf`.
    @inline(__always)
    private func appendShortReal(_ real: Double) -> Bool {
        guard real.isNormal else { return false }
        var significand = real.significandBitPattern | (1 << 52)
        var exponent = Int(real.exponentBitPattern) - 1075
        let zeros = significand.trailingZeroBitCount
        significand >>= UInt64(zeros)
        exponent += zeros
        var digits: UInt64
        var fractionDigits = 0
        if exponent >= 0 {
            // An integer: below 10^17 it has at most 17 digits.
            guard exponent < 64 - 53, significand << UInt64(exponent) < 100_000_000_000_000_000 else {
                return false
            }
            digits = significand << UInt64(exponent)
        } else {
            fractionDigits = -exponent
            // 5^24 < 10^17 < 5^25, so longer fractions never fit.
            guard fractionDigits <= 24 else { return false }
            var power: UInt64 = 1
            for _ in 0..<fractionDigits { power &*= 5 }
            let (product, overflow) = significand.multipliedReportingOverflow(by: power)
            guard !overflow, product < 100_000_000_000_000_000 else { return false }
            digits = product
            if fractionDigits > 4 {
                // Below 10^-4 `%g` switches to an exponent.
                var scaled = digits
                for _ in 0..<(fractionDigits - 4) { scaled /= 10 }
                if scaled == 0 { return false }
            }
        }
        // At most 17 digits, a sign, a point and up to four leading zeros: 24 bytes.
        var buffer: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &buffer) { raw in
            let text = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
            var cursor = raw.count
            var written = 0
            // Digits from the right, the point after `fractionDigits` of them, and at
            // least one digit before the point.
            while digits != 0 || written <= fractionDigits {
                if written == fractionDigits && fractionDigits > 0 {
                    cursor -= 1
                    text[cursor] = UInt8(ascii: ".")
                }
                cursor -= 1
                text[cursor] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: digits % 10)
                digits /= 10
                written += 1
            }
            if real < 0 {
                cursor -= 1
                text[cursor] = UInt8(ascii: "-")
            }
            output.append(text + cursor, count: raw.count - cursor)
        }
        return true
    }

    // MARK: Dates

    private mutating func appendDate(_ date: Date) throws(Failure) {
        let interval = date.timeIntervalSinceReferenceDate
        guard interval.isFinite, abs(interval) <= Self.dateLimit else {
            throw error(
                .unrepresentableValue,
                "the date \(interval) seconds from 2001-01-01 is outside the supported range of ±1e13 seconds"
            )
        }
        let seconds = Int64(interval.rounded(.down)) + 978_307_200
        let time = CivilTime(secondsSince1970: seconds)
        if time.year >= 1000 && time.year <= 9999 {
            // The usual case, all 20 bytes at fixed places: two digits at a time.
            var text: (UInt64, UInt64, UInt32) = (0, 0, 0)
            withUnsafeMutableBytes(of: &text) { raw in
                let bytes = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
                @inline(__always) func pair(_ value: Int, at offset: Int) {
                    bytes[offset] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value / 10)
                    bytes[offset + 1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value % 10)
                }
                let year = Int(time.year)
                pair(year / 100, at: 0)
                pair(year % 100, at: 2)
                bytes[4] = UInt8(ascii: "-")
                pair(time.month, at: 5)
                bytes[7] = UInt8(ascii: "-")
                pair(time.day, at: 8)
                bytes[10] = UInt8(ascii: "T")
                pair(time.hour, at: 11)
                bytes[13] = UInt8(ascii: ":")
                pair(time.minute, at: 14)
                bytes[16] = UInt8(ascii: ":")
                pair(time.second, at: 17)
                bytes[19] = UInt8(ascii: "Z")
                output.append(bytes, count: 20)
            }
            return
        }
        if time.year < 0 {
            byte(UInt8(ascii: "-"))
            appendPadded(UInt64(-time.year), width: 3)
        } else {
            appendPadded(UInt64(time.year), width: 4)
        }
        byte(UInt8(ascii: "-"))
        appendPadded(UInt64(time.month), width: 2)
        byte(UInt8(ascii: "-"))
        appendPadded(UInt64(time.day), width: 2)
        byte(UInt8(ascii: "T"))
        appendPadded(UInt64(time.hour), width: 2)
        byte(UInt8(ascii: ":"))
        appendPadded(UInt64(time.minute), width: 2)
        byte(UInt8(ascii: ":"))
        appendPadded(UInt64(time.second), width: 2)
        byte(UInt8(ascii: "Z"))
    }

    private mutating func appendPadded(_ value: UInt64, width: Int) {
        output.appendDecimal(value, width: width)
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
                byte(table[Int(b0 >> 2)])
                byte(table[Int((b0 & 0x03) << 4 | b1 >> 4)])
                byte(index + 1 < count ? table[Int((b1 & 0x0F) << 2 | b2 >> 6)] : UInt8(ascii: "="))
                byte(index + 2 < count ? table[Int(b2 & 0x3F)] : UInt8(ascii: "="))
                index += 3
                column += 4
                if column >= lineWidth {
                    byte(UInt8(ascii: "\n"))
                    column = 0
                }
            }
            if column != 0 { byte(UInt8(ascii: "\n")) }
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
