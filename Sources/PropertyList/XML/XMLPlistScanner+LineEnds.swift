import CLibXML2
import Foundation

extension XMLPlistScanner {
    /// The places the reader reports, counted as XML 1.0 counts lines, in a document
    /// whose lines end in a carriage return alone (old Mac line ends).
    ///
    /// XML 1.0 takes CR, CR LF and LF alike for one line end. libxml2 counts lines by line
    /// feeds alone and columns from the last line feed, so in a document with a CR that no
    /// LF follows every place after it is wrong (all of a CR-only file is "line 1"). CR LF
    /// and LF documents need nothing: libxml2's count is right for them, and their places
    /// are left as they are.
    ///
    /// Nothing of this runs while a document is read: the reader keeps libxml2's places, and
    /// only when it reports an error does it convert the one it reports, reading the
    /// document again (``init(document:context:)`` and ``position(line:column:)``). The same
    /// reading places text found between elements at its first character
    /// (``startOfText(endingAt:)``), where libxml2's place depends on the line ends.
    struct LineEnds {
        /// The document as libxml2 reads it: UTF-8, without a byte order mark.
        private enum Text {
            case original(UnsafeRawBufferPointer)
            case converted([UInt8])
        }

        private let text: Text
        /// Whether a line ends in a carriage return alone: libxml2's places are wrong only
        /// then.
        let hasCarriageReturnAlone: Bool

        /// The document as libxml2 reads it; `nil` when its encoding cannot be converted
        /// again.
        ///
        /// - Parameters:
        ///   - document: The bytes being read.
        ///   - context: The parser reading them: when it converts the document from another
        ///     encoding to UTF-8, it names the encoding.
        init?(document: UnsafeRawBufferPointer, context: xmlParserCtxtPtr?) {
            if let encoder = context?.pointee.input?.pointee.buf?.pointee.encoder {
                // Another encoding (UTF-16, say): converted to UTF-8 as libxml2 converts it,
                // with an encoding handler of the same name. The handler's name is the first
                // field of its struct, whatever options libxml2 was built with.
                guard let name = encoder.pointee.name,
                    let converted = Self.converted(document, encoding: name)
                else { return nil }
                text = .converted(converted)
            } else {
                let hasByteOrderMark = document.starts(with: [0xEF, 0xBB, 0xBF])
                text = .original(UnsafeRawBufferPointer(rebasing: document[(hasByteOrderMark ? 3 : 0)...]))
            }
            hasCarriageReturnAlone = Self.withText(text) { Self.hasCarriageReturnAlone($0) }
        }

        /// The place libxml2 reports as `line` and `column`, counting CR, CR LF and LF each
        /// as one line end and columns (in Unicode scalars) from the start of the line: the
        /// same place when no line ends in CR alone.
        func position(line: Int, column: Int) -> (line: Int, column: Int) {
            guard hasCarriageReturnAlone else { return (line, column) }
            return position(at: offset(line: line, column: column))
        }

        /// The offset in the text of libxml2's place: the start of its `line` (counted by
        /// line feeds alone), and `column - 1` characters on, not past the next line feed.
        func offset(line: Int, column: Int) -> Int {
            withText { text in
                let count = text.count
                var offset = 0
                var lineFeeds = 1
                while lineFeeds < line, offset < count {
                    if text[offset] == 0x0A { lineFeeds += 1 }
                    offset += 1
                }
                var characters = 1
                while characters < column, offset < count, text[offset] != 0x0A {
                    offset += 1
                    while offset < count, text[offset] & 0xC0 == 0x80 { offset += 1 }
                    characters += 1
                }
                return offset
            }
        }

        /// The line and column of `offset` in the text, counting CR, CR LF and LF each as
        /// one line end and columns (in Unicode scalars) from the start of the line.
        func position(at offset: Int) -> (line: Int, column: Int) {
            withText { text in
                var result = (line: 1, column: 1)
                for index in 0..<min(offset, text.count) {
                    switch text[index] {
                    case 0x0A:
                        result = (result.line + 1, 1)
                    case 0x0D:
                        // A CR LF ends its line at the LF.
                        if index + 1 < text.count, text[index + 1] == 0x0A { continue }
                        result = (result.line + 1, 1)
                    case let byte where byte & 0xC0 != 0x80:
                        result.column += 1
                    default:
                        continue
                    }
                }
                return result
            }
        }

        /// Where the text that ends at `offset` begins, after the markup before it and the
        /// white space at its start: the first character of text found between elements,
        /// wherever libxml2 was when it handed the text over (at its end, or at a carriage
        /// return within it).
        func startOfText(endingAt offset: Int) -> Int {
            withText { text in
                let end = min(offset, text.count)
                var start = end
                while start > 0, text[start - 1] != UInt8(ascii: ">") { start -= 1 }
                while start < end, [0x20, 0x09, 0x0A, 0x0D].contains(text[start]) { start += 1 }
                return start
            }
        }

        /// Where the start tag of the innermost element `name` still open at `offset`
        /// begins (its `<`), found by reading back: end tags of the same name and their
        /// start tags pair off, empty-element tags and markup inside comments, CDATA
        /// sections and processing instructions are passed over.
        func startTag(of name: String, before offset: Int) -> Int? {
            withText { text in
                let name = Array(name.utf8)
                func endsWith(_ suffix: String, at end: Int) -> Bool {
                    let suffix = Array(suffix.utf8)
                    return end >= suffix.count && text[(end - suffix.count)..<end].elementsEqual(suffix)
                }
                func back(to opening: String, from end: Int) -> Int {
                    var start = end
                    while start > 0, !text[start...].starts(with: opening.utf8) { start -= 1 }
                    return start
                }
                func isName(at start: Int) -> Bool {
                    let end = start + name.count
                    return end < text.count && text[start..<end].elementsEqual(name)
                        && [0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: ">"), UInt8(ascii: "/")].contains(text[end])
                }
                var depth = 0
                var index = min(offset, text.count)
                while index > 0 {
                    index -= 1
                    if text[index] == UInt8(ascii: ">") {
                        if endsWith("-->", at: index + 1) {
                            index = back(to: "<!--", from: index)
                        } else if endsWith("]]>", at: index + 1) {
                            index = back(to: "<![CDATA[", from: index)
                        } else if endsWith("?>", at: index + 1) {
                            index = back(to: "<?", from: index)
                        }
                        continue
                    }
                    guard text[index] == UInt8(ascii: "<") else { continue }
                    if index + 1 < text.count, text[index + 1] == UInt8(ascii: "/") {
                        if isName(at: index + 2) { depth += 1 }
                    } else if isName(at: index + 1) {
                        var close = index + 1 + name.count
                        while close < text.count, text[close] != UInt8(ascii: ">") { close += 1 }
                        if close < text.count, text[close - 1] == UInt8(ascii: "/") { continue }
                        if depth == 0 { return index }
                        depth -= 1
                    }
                }
                return nil
            }
        }

        private func withText<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
            Self.withText(text, body)
        }

        private static func withText<R>(_ text: Text, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
            switch text {
            case .original(let bytes): body(bytes.bindMemory(to: UInt8.self))
            case .converted(let bytes): bytes.withUnsafeBufferPointer(body)
            }
        }

        /// Whether `text` has a carriage return that no line feed follows.
        private static func hasCarriageReturnAlone(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
            guard let base = text.baseAddress else { return false }
            var offset = 0
            while offset < text.count, let found = memchr(base + offset, 0x0D, text.count - offset) {
                let index = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                if index + 1 == text.count || text[index + 1] != 0x0A { return true }
                offset = index + 2
            }
            return false
        }

        /// `document` converted to UTF-8 from `encoding` by libxml2, without a byte order
        /// mark; `nil` when libxml2 has no such encoding or the conversion fails.
        private static func converted(_ document: UnsafeRawBufferPointer, encoding: UnsafePointer<CChar>)
            -> [UInt8]?
        {
            guard let handler = xmlFindCharEncodingHandler(encoding) else { return nil }
            defer { xmlCharEncCloseFunc(handler) }
            guard let input = xmlBufferCreate(), let output = xmlBufferCreate() else { return nil }
            defer {
                xmlBufferFree(input)
                xmlBufferFree(output)
            }
            guard let base = document.baseAddress?.assumingMemoryBound(to: xmlChar.self), document.count > 0,
                xmlBufferAdd(input, base, Int32(document.count)) == 0
            else { return nil }
            // Each call converts what fits; it grows the output as it goes.
            while xmlBufferLength(input) > 0 {
                let before = xmlBufferLength(input)
                if xmlCharEncInFunc(handler, output, input) < 0 || xmlBufferLength(input) == before {
                    return nil
                }
            }
            guard let content = xmlBufferContent(output) else { return nil }
            var bytes = Array(UnsafeBufferPointer(start: content, count: Int(xmlBufferLength(output))))
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
            return bytes
        }
    }
}
