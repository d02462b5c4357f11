import CLibXML2
import Foundation

extension PropertyList {
    /// The deepest nesting of arrays and dictionaries that is read or written.
    ///
    /// Deeper documents are refused with a clean error rather than risking the stack;
    /// survey documents need fewer than ten levels.
    public static let maximumDepth = 128

    /// Reads an XML property list.
    ///
    /// The reader streams the document through libxml2's SAX2 interface without
    /// building a DOM. Network access, entity substitution and DTD loading are off, and
    /// the reader is strict: entity and other DTD declarations, references to undefined
    /// entities, unknown elements, attributes (other than `version` on `<plist>`), text
    /// between elements, a `<key>` without a value, a value without a `<key>`, duplicate
    /// keys, integers outside −2^63…2^64−1, reals too large for a double, malformed reals,
    /// dates and base64, invalid UTF-8 and nesting deeper than ``maximumDepth`` are all
    /// refused with the line and column where they occur (LF, CR LF and a CR alone each
    /// end a line; text between elements is placed at its first character). The Apple
    /// DOCTYPE, comments, processing instructions, CDATA sections, character references
    /// and `<true></true>` are accepted.
    ///
    /// - Parameters:
    ///   - xml: The document's bytes, in any encoding its XML declaration names.
    ///   - file: The file the bytes came from, used in error messages.
    /// - Throws: ``PropertyListError`` with the file, line and column.
    public init(xml: Data, file: String? = nil) throws {
        let map = try xml.withUnsafeBytes { try XMLPlistScanner.scan($0, file: file) }
        self = map.value(at: 0)
    }

    /// Reads an XML property list from raw bytes; see ``init(xml:file:)``.
    ///
    /// - Parameters:
    ///   - xmlBytes: The document's bytes.
    ///   - file: The file the bytes came from, used in error messages.
    /// - Throws: ``PropertyListError`` with the file, line and column.
    public init(xmlBytes: UnsafeRawBufferPointer, file: String? = nil) throws {
        self = try XMLPlistScanner.scan(xmlBytes, file: file).value(at: 0)
    }
}

/// The libxml2 parser is initialised once per process before first use.
private let libxml2Initialized: Bool = {
    xmlInitParser()
    return true
}()

/// A streaming reader of XML property lists on libxml2's SAX2 interface.
///
/// libxml2 calls back for each start tag, end tag and run of text; the scanner checks
/// the structure as the events arrive and appends each value to a ``PlistMap``. Its
/// state lives in a struct reached through the callbacks' context pointer.
struct XMLPlistScanner {
    fileprivate enum Element: UInt8, CustomStringConvertible {
        case plist, dict, array, key, string, integer, real, date, data, `true`, `false`

        var description: String {
            switch self {
            case .plist: "plist"
            case .dict: "dict"
            case .array: "array"
            case .key: "key"
            case .string: "string"
            case .integer: "integer"
            case .real: "real"
            case .date: "date"
            case .data: "data"
            case .true: "true"
            case .false: "false"
            }
        }
    }

    private enum FrameKind: String { case plist, array, dictionary = "dict" }

    /// An open container (or the `<plist>` element). A plain value: the hashes of a
    /// large dictionary's keys are kept apart, in ``largeKeyHashes``.
    private struct Frame {
        var kind: FrameKind
        var node: Int
        var count: UInt32 = 0
        /// In a dictionary: the node of the key that waits for its value.
        var pendingKey: Int?
        var keyLine = 0
        var keyColumn = 0
        /// One bit per key so far, chosen by its hash: a key whose bit is clear cannot
        /// be a duplicate, and the search for one is skipped.
        var keyBits: UInt64 = 0
        var hasNonASCIIKey = false
        /// Where the dictionary's first keys begin in ``recentKeys``.
        var firstRecentKey = 0
    }

    /// A key of an open dictionary, one of its first ``recentKeyLimit``.
    private struct RecentKey {
        var hash: UInt32
        var node: UInt32
    }

    /// Dictionaries keep their first keys' hashes in ``recentKeys``; from this many
    /// keys on, they keep a set of seeded `Hasher` values instead.
    private static var recentKeyLimit: Int { 16 }

    private let file: String?
    /// The document being read, for the places of errors (``LineEnds``).
    private let document: UnsafeRawBufferPointer
    private var context: xmlParserCtxtPtr?
    private var map = PlistMap()
    /// The open containers: at most ``PropertyList/maximumDepth`` and the `<plist>`
    /// element. Freed by `scan`.
    private var frames = FixedStack<Frame>(capacity: PropertyList.maximumDepth + 2)
    /// The hash and node of each of the first ``recentKeyLimit`` keys of every open
    /// dictionary, in document order: a dictionary's run starts at its frame's
    /// `firstRecentKey` and ends with the stack. Freed by `scan`.
    private var recentKeys = FixedStack<RecentKey>(
        capacity: recentKeyLimit * (PropertyList.maximumDepth + 2))
    /// The strong hashes of the keys of open dictionaries with ``recentKeyLimit`` keys
    /// or more, by frame index.
    private var largeKeyHashes: [Int: Set<UInt64>] = [:]
    /// Where each key of an open dictionary begins, from its first key beyond ASCII on (in
    /// document order, by node): a key that is another's text in another normal form is
    /// found when its dictionary closes, and is refused at its own place.
    private var keyPositions: [(node: Int, line: Int, column: Int)] = []
    private var sawRoot = false
    private var finished = false
    private var stopped = false
    private var failure: PropertyListError?

    /// The scalar element whose text is being collected, if any.
    private var scalar: Element?
    private var textStart = 0
    private var scalarLine = 0
    private var scalarColumn = 0

    private init(file: String?, document: UnsafeRawBufferPointer) {
        self.file = file
        self.document = document
    }

    /// The elements of names seen so far, by the address of the name (libxml2 hands
    /// over each name from its dictionary). Freed by `scan`.
    private let elementNames = NameCache<Element?>()

    /// Reads `bytes` into a map whose node 0 is the document's value.
    static func scan(_ bytes: UnsafeRawBufferPointer, file: String?) throws -> PlistMap {
        _ = libxml2Initialized
        guard !bytes.isEmpty else {
            throw PropertyListError(
                code: .malformedXML, message: "the document is empty", file: file, line: 1, column: 1)
        }
        guard bytes.count <= Int(Int32.max) else {
            throw PropertyListError(
                code: .malformedXML, message: "the document is larger than 2 GiB", file: file)
        }
        if let unsupported = unsupportedForm(bytes) {
            throw PropertyListError(code: .malformedXML, message: unsupported, file: file, line: 1, column: 1)
        }
        let state = UnsafeMutablePointer<XMLPlistScanner>.allocate(capacity: 1)
        state.initialize(to: XMLPlistScanner(file: file, document: bytes))
        defer {
            state.pointee.frames.free()
            state.pointee.recentKeys.free()
            state.pointee.elementNames.free()
            state.deinitialize(count: 1).deallocate()
        }
        // The shortest value, `<true/>`, takes 7 bytes, so the nodes never outnumber a
        // seventh of the input: reserving that much means the array never grows and is
        // never copied, and the pages reserved beyond the real need are never touched.
        // Text grows as needed.
        state.pointee.map.nodes.reserveCapacity(bytes.count / 7 + 1)
        state.pointee.map.bytes.reserveCapacity(bytes.count / 4)
        // Errors libxml2 raises outside the parser (an encoding that fails to convert)
        // would go to its generic handler, which prints to standard error; route them to
        // the scanner like the parser's own, for this thread and this parse only.
        xmlSetStructuredErrorFunc(
            state,
            { context, error in
                guard let error else { return }
                scanner(context).pointee.libxml2Failed(error)
            })
        defer { xmlSetStructuredErrorFunc(nil, nil) }
        guard let context = makePushParser(bytes, handler: handler, userData: state) else {
            throw PropertyListError(
                code: .malformedXML, message: "libxml2 could not create a parser", file: file)
        }
        state.pointee.context = context
        defer { freeParser(context) }
        parseInChunks(bytes, context: context)
        state.pointee.context = nil
        if let failure = state.pointee.failure { throw failure }
        guard context.pointee.wellFormed != 0 else {
            throw PropertyListError(
                code: .malformedXML, message: "the document is not well-formed XML", file: file)
        }
        guard state.pointee.finished else {
            throw PropertyListError(
                code: .invalidStructure, message: "the document has no <plist> element", file: file, line: 1,
                column: 1)
        }
        return state.pointee.map
    }

    /// Why the document cannot be read at all, told by its first bytes: a binary
    /// property list, JSON, or UTF-32 text (which libxml2 2.9 cannot decode; it would fail
    /// without a position).
    private static func unsupportedForm(_ bytes: UnsafeRawBufferPointer) -> String? {
        if bytes.count >= 6, bytes.prefix(6).elementsEqual("bplist".utf8) {
            return "binary property lists are not supported; convert it to XML first "
                + "(plutil -convert xml1 FILE on macOS, plistutil -i FILE -o OUT -f xml on Linux)"
        }
        // JSON (an object or an array after white space, a UTF-8 byte order mark allowed),
        // which libxml2 would call "no root element".
        if PropertyList.looksLikeJSON(bytes) {
            return "the document is JSON, not an XML property list"
        }
        guard bytes.count >= 4 else { return nil }
        let (b0, b1, b2, b3) = (bytes[0], bytes[1], bytes[2], bytes[3])
        let bigEndian = b0 == 0 && b1 == 0 && (b2 == 0xFE && b3 == 0xFF || b2 == 0 && b3 != 0)
        let littleEndian = b2 == 0 && b3 == 0 && (b0 == 0xFF && b1 == 0xFE || b1 == 0 && b0 != 0)
        if bigEndian || littleEndian {
            return "the document is UTF-32 text, which is not supported; convert it to UTF-8 or UTF-16"
        }
        // UTF-16 text (a byte order mark, or a zero byte in its first code unit) that does
        // not begin with markup: JSON, say, which libxml2 would call "no root element".
        let utf16BigEndian = b0 == 0xFE && b1 == 0xFF || b0 == 0 && b1 != 0
        let utf16LittleEndian = b0 == 0xFF && b1 == 0xFE || b1 == 0 && b0 != 0
        if utf16BigEndian || utf16LittleEndian {
            var index = b0 == 0xFE || b0 == 0xFF ? 2 : 0
            while index + 1 < bytes.count {
                let unit =
                    utf16BigEndian
                    ? UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1])
                    : UInt16(bytes[index + 1]) << 8 | UInt16(bytes[index])
                index += 2
                if [0x20, 0x09, 0x0A, 0x0D].contains(unit) { continue }
                if unit == UInt16(UInt8(ascii: "<")) { return nil }
                return PropertyList.notMarkupMessage(encoding: "UTF-16")
            }
        }
        return nil
    }

    // MARK: Errors

    /// The parser's current line and column (what `xmlSAX2GetLineNumber` and
    /// `xmlSAX2GetColumnNumber` return, read directly on this hot path).
    @inline(__always)
    private var position: (line: Int, column: Int) {
        guard let input = context?.pointee.input else { return (0, 0) }
        return (Int(input.pointee.line), Int(input.pointee.col))
    }

    /// Stops the reading with an error at `line` and `column` (default: the parser's
    /// place), both as libxml2 counts them; the error gives them as XML counts them
    /// (``LineEnds``).
    /// With `atTextStart`, the place is that of the first character of the text that
    /// ends at the parser's place. Never inlined: errors are the cold path.
    @inline(never)
    private mutating func fail(
        _ code: PropertyListError.Code, _ message: String, line: Int? = nil, column: Int? = nil,
        atTextStart: Bool = false, stopParser: Bool = true
    ) {
        guard !stopped else { return }
        stopped = true
        let here = position
        var place = (line: line ?? here.line, column: column ?? here.column)
        if place.line > 0, let lineEnds = LineEnds(document: document, context: context) {
            place =
                atTextStart
                ? lineEnds.position(
                    at: lineEnds.startOfText(
                        endingAt: lineEnds.offset(line: place.line, column: place.column)))
                : lineEnds.position(line: place.line, column: place.column)
        }
        failure = PropertyListError(
            code: code, message: message, file: file, line: place.line, column: place.column)
        if stopParser, let context { xmlStopParser(context) }
    }

    /// libxml2's message with the line it names inside (of the start tag of the element it
    /// is about: "Opening and ending tag mismatch: string line 5 and dict") counted as
    /// XML counts lines, when the document has lines that end in CR alone; without that
    /// line when the element is not the innermost one open. The place of a value's start
    /// tag is known; a container's is found in the document, before the parser's place.
    private func countingEveryLineEnd(_ message: String, _ error: xmlError) -> String {
        let named = " line \(error.int1)"
        guard
            [XML_ERR_TAG_NAME_MISMATCH, XML_ERR_TAG_NOT_FINISHED, XML_ERR_GT_REQUIRED].contains(
                xmlParserErrors(UInt32(error.code))),
            message.contains(named), let lineEnds = LineEnds(document: document, context: context),
            lineEnds.hasCarriageReturnAlone
        else { return message }
        let element = error.str1.map { String(cString: $0) }
        var line: Int?
        if let scalar, element == scalar.description {
            line = lineEnds.position(line: scalarLine, column: scalarColumn - 1).line
        } else if let frame = frames.last, element == frame.kind.rawValue {
            let here = position
            line = lineEnds.startTag(
                of: frame.kind.rawValue, before: lineEnds.offset(line: here.line, column: here.column)
            )
            .map { lineEnds.position(at: $0).line }
        }
        return message.replacingOccurrences(of: named, with: line.map { " line \($0)" } ?? "")
    }

    fileprivate mutating func libxml2Failed(_ error: UnsafePointer<xmlError>) {
        guard !stopped else { return }
        let raw = error.pointee
        var message = raw.message.map { String(cString: $0) } ?? "malformed XML"
        // libxml2's messages can span lines ("…\nBytes: 0xFF …"); keep one line.
        message = message.split(whereSeparator: \.isNewline).joined(separator: "; ")
        message = countingEveryLineEnd(message, raw)
        let code: PropertyListError.Code =
            switch Int(raw.code) {
            case Int(XML_ERR_UNDECLARED_ENTITY.rawValue), Int(XML_WAR_UNDECLARED_ENTITY.rawValue),
                Int(XML_ERR_ENTITY_LOOP.rawValue):
                .forbiddenDeclaration
            default: .malformedXML
            }
        if Int(raw.code) == Int(XML_ERR_DOCUMENT_END.rawValue)
            || Int(raw.code) == Int(XML_ERR_DOCUMENT_EMPTY.rawValue)
        {
            // The push parser reports a document cut short as "extra content"; say what it is.
            if let open = scalar.map({ "<\($0)>" }) ?? frames.last.map({ "<\($0.kind.rawValue)>" }) {
                message = "the document ends before \(open) is closed (is the file truncated?)"
            } else if !sawRoot {
                message = "the document has no root element"
            }
        }
        // Errors from outside the parser (input conversion) carry no position, and arrive
        // while libxml2 is in the middle of reading input: it stops by itself then, and
        // stopping it from here would pull the input out from under it.
        let fromParser = raw.domain == Int32(XML_FROM_PARSER.rawValue)
        fail(
            code, message, line: raw.line > 0 ? Int(raw.line) : nil,
            column: raw.line > 0 ? Int(raw.int2) : nil,
            stopParser: fromParser)
    }

    // MARK: Elements

    fileprivate static func element(_ name: UnsafePointer<xmlChar>) -> Element? {
        // Names are short ASCII; compare bytes without building strings.
        @inline(__always) func equals(_ literal: StaticString) -> Bool {
            let count = literal.utf8CodeUnitCount
            let bytes = literal.utf8Start
            var i = 1
            while i < count {
                if name[i] != bytes[i] { return false }
                i += 1
            }
            return name[count] == 0
        }
        switch name[0] {
        case UInt8(ascii: "k"): return equals("key") ? .key : nil
        case UInt8(ascii: "s"): return equals("string") ? .string : nil
        case UInt8(ascii: "i"): return equals("integer") ? .integer : nil
        case UInt8(ascii: "r"): return equals("real") ? .real : nil
        case UInt8(ascii: "d"):
            if equals("dict") { return .dict }
            if equals("date") { return .date }
            return equals("data") ? .data : nil
        case UInt8(ascii: "a"): return equals("array") ? .array : nil
        case UInt8(ascii: "t"): return equals("true") ? .true : nil
        case UInt8(ascii: "f"): return equals("false") ? .false : nil
        case UInt8(ascii: "p"): return equals("plist") ? .plist : nil
        default: return nil
        }
    }

    private static func name(_ name: UnsafePointer<xmlChar>?, prefix: UnsafePointer<xmlChar>? = nil) -> String
    {
        let local = name.map { String(cString: $0) } ?? "?"
        let shown = prefix.map { String(cString: $0) + ":" + local } ?? local
        return shown.count > 40 ? String(shown.prefix(40)) + "…" : shown
    }

    /// A start tag. The common case, a known element without attributes where the
    /// structure allows it, is handled inline; everything else, errors included, by
    /// ``startElementChecked(_:_:_:attributeCount:attributes:)``.
    @inline(__always)
    fileprivate mutating func startElement(
        _ localName: UnsafePointer<xmlChar>?, _ prefix: UnsafePointer<xmlChar>?,
        _ uri: UnsafePointer<xmlChar>?, attributeCount: Int,
        attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
    ) {
        if !stopped, let localName, uri == nil, prefix == nil, attributeCount == 0, scalar == nil,
            frames.count > 0,
            let element = elementNames.value(localName, Self.element), element != .plist
        {
            let top = frames.count - 1
            let allowed: Bool
            switch frames[top].kind {
            case .dictionary: allowed = (element == .key) == (frames[top].pendingKey == nil)
            case .array: allowed = element != .key
            case .plist: allowed = false
            }
            if allowed, open(element) { return }
        }
        startElementChecked(localName, prefix, uri, attributeCount: attributeCount, attributes: attributes)
    }

    @inline(never)
    private mutating func startElementChecked(
        _ localName: UnsafePointer<xmlChar>?, _ prefix: UnsafePointer<xmlChar>?,
        _ uri: UnsafePointer<xmlChar>?, attributeCount: Int,
        attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
    ) {
        guard !stopped, let localName else { return }
        guard uri == nil, prefix == nil, let element = Self.element(localName) else {
            fail(.invalidStructure, "unknown element <\(Self.name(localName, prefix: prefix))>")
            return
        }
        if let scalar {
            fail(.invalidStructure, "element <\(Self.name(localName))> is not allowed inside <\(scalar)>")
            return
        }
        if attributeCount > 0 {
            // Attributes come as five pointers each: localname, prefix, URI, value start, value end.
            for index in 0..<attributeCount {
                let attributeName = attributes?[index * 5]
                let isVersion =
                    element == .plist && attributes?[index * 5 + 1] == nil
                    && attributeName.map { String(cString: $0) == "version" } == true
                if !isVersion {
                    fail(
                        .invalidStructure,
                        "element <\(element)> has an unexpected attribute '\(Self.name(attributeName))'")
                    return
                }
            }
        }
        if element == .plist {
            guard frames.isEmpty, !sawRoot else {
                fail(.invalidStructure, "<plist> may only be the root element")
                return
            }
            sawRoot = true
            frames.append(Frame(kind: .plist, node: 0))
            return
        }
        let top = frames.count - 1
        guard top >= 0 else {
            fail(.invalidStructure, "the root element must be <plist>, not <\(element)>")
            return
        }
        switch frames[top].kind {
        case .dictionary:
            if element == .key {
                if let pending = frames[top].pendingKey {
                    fail(
                        .invalidStructure,
                        "<key> follows the key '\(map.string(at: pending))', which has no value")
                    return
                }
            } else if frames[top].pendingKey == nil {
                fail(.invalidStructure, "<\(element)> in a <dict> has no <key> before it")
                return
            }
        case .array:
            if element == .key {
                fail(.invalidStructure, "<key> is only allowed directly inside <dict>")
                return
            }
        case .plist:
            if element == .key {
                fail(.invalidStructure, "<key> is only allowed directly inside <dict>")
                return
            }
            if frames[top].count > 0 {
                fail(.invalidStructure, "<plist> contains more than one value")
                return
            }
        }
        if !open(element) {
            fail(
                .nestingTooDeep,
                "arrays and dictionaries are nested deeper than \(PropertyList.maximumDepth) levels")
        }
    }

    /// Opens `element` where the structure allows it: an array or dictionary is pushed
    /// as a new frame, any other element starts collecting its text. `false`, and
    /// nothing done, when a container would be nested deeper than
    /// ``PropertyList/maximumDepth``.
    @inline(__always)
    private mutating func open(_ element: Element) -> Bool {
        switch element {
        case .array, .dict:
            // The <plist> frame does not count towards the depth of containers.
            guard frames.count <= PropertyList.maximumDepth else { return false }
            let isArray = element == .array
            frames.append(
                Frame(
                    kind: isArray ? .array : .dictionary, node: map.nodes.count,
                    firstRecentKey: recentKeys.count))
            let kind: PlistMap.Kind = isArray ? .array : .dictionary
            map.nodes.append(PlistMap.Node(kind: kind, flag: false, count: 0, payload: 0, hash: 0))
        default:
            scalar = element
            textStart = map.bytes.count
            // libxml2 reports the column of the start tag's '>'; the text begins after it.
            (scalarLine, scalarColumn) = position
            scalarColumn += 1
        }
        return true
    }

    @inline(__always)
    fileprivate mutating func endElement() {
        guard !stopped else { return }
        if let element = scalar {
            scalar = nil
            finishScalar(element)
            return
        }
        closeContainer()
    }

    @inline(never)
    private mutating func closeContainer() {
        guard let frame = frames.popLast() else { return }
        switch frame.kind {
        case .plist:
            guard frame.count > 0 else {
                fail(.invalidStructure, "<plist> contains no value")
                return
            }
            finished = true
        case .array:
            map.nodes[frame.node].count = frame.count
            map.nodes[frame.node].payload = UInt64(map.nodes.count)
            added()
        case .dictionary:
            if let key = frame.pendingKey {
                fail(
                    .invalidStructure, "the key '\(map.string(at: key))' has no value",
                    line: frame.keyLine, column: frame.keyColumn)
                return
            }
            map.nodes[frame.node].count = frame.count
            map.nodes[frame.node].payload = UInt64(map.nodes.count)
            recentKeys.truncate(to: frame.firstRecentKey)
            if frame.count >= Self.recentKeyLimit { largeKeyHashes[frames.count] = nil }
            if frame.hasNonASCIIKey {
                checkCanonicalDuplicates(frame)
                // Its keys are the last positions noted (those of dictionaries inside it
                // went when each closed).
                while let last = keyPositions.last, last.node > frame.node { keyPositions.removeLast() }
            }
            added()
        }
    }

    /// Counts a finished value in its container.
    @inline(__always)
    private mutating func added() {
        let top = frames.count - 1
        frames[top].count += 1
        frames[top].pendingKey = nil
    }

    @inline(__always)
    private mutating func finishScalar(_ element: Element) {
        let length = map.bytes.count - textStart
        var node = PlistMap.Node(
            kind: .string, flag: false, count: UInt32(length), payload: UInt64(textStart), hash: 0)
        do throws(ScalarParsing.Failure) {
            switch element {
            case .key:
                try finishKey(&node)
                return
            case .string:
                node.kind = .string
            case .integer:
                let value = try withText { text throws(ScalarParsing.Failure) in
                    try ScalarParsing.integer(text)
                }
                node = PlistMap.Node(
                    kind: .integer, flag: value.isNegative, count: 0, payload: value.magnitude, hash: 0)
                map.bytes.truncate(to: textStart)
            case .real:
                let value = try withText { text throws(ScalarParsing.Failure) in try ScalarParsing.real(text)
                }
                node = PlistMap.Node(kind: .real, flag: false, count: 0, payload: value.bitPattern, hash: 0)
                map.bytes.truncate(to: textStart)
            case .date:
                let value = try withText { text throws(ScalarParsing.Failure) in try ScalarParsing.date(text)
                }
                node = PlistMap.Node(
                    kind: .date, flag: false, count: 0,
                    payload: value.timeIntervalSinceReferenceDate.bitPattern, hash: 0)
                map.bytes.truncate(to: textStart)
            case .data:
                let start = textStart
                let text = map.bytes.mutableBuffer(from: start)
                let written = try ScalarParsing.base64(UnsafeBufferPointer(text), into: text.baseAddress!)
                map.bytes.truncate(to: start + written)
                node = PlistMap.Node(
                    kind: .data, flag: false, count: UInt32(written), payload: UInt64(start), hash: 0)
            case .true, .false:
                let blank = withText { isWhitespace($0) }
                guard blank else {
                    fail(
                        .invalidStructure, "<\(element)> must be empty", line: scalarLine,
                        column: scalarColumn)
                    return
                }
                map.bytes.truncate(to: textStart)
                node = PlistMap.Node(kind: .boolean, flag: element == .true, count: 0, payload: 0, hash: 0)
            case .plist, .dict, .array:
                return
            }
        } catch {
            fail(.invalidValue, error.message, line: scalarLine, column: scalarColumn)
            return
        }
        map.nodes.append(node)
        added()
    }

    @inline(__always)
    private func withText<R, E: Error>(_ body: (UnsafeBufferPointer<UInt8>) throws(E) -> R) throws(E) -> R {
        try body(map.bytes.buffer(from: textStart, count: map.bytes.count - textStart))
    }

    @inline(__always)
    private mutating func finishKey(_ node: inout PlistMap.Node) throws(ScalarParsing.Failure) {
        let top = frames.count - 1
        let (hash, isASCII) = withText { text in (PlistMap.hash(text), Self.isASCII(text)) }
        node.kind = .key
        node.hash = hash
        let index = map.nodes.count
        let isDuplicate: Bool
        if Int(frames[top].count) < Self.recentKeyLimit {
            // A key whose hash bit is new in its dictionary cannot be a duplicate; the
            // others are compared with the earlier keys of the same hash.
            let bit: UInt64 = 1 << (hash & 63)
            let seen = frames[top].keyBits
            frames[top].keyBits = seen | bit
            isDuplicate = seen & bit != 0 && isRecentDuplicate(hash: hash, in: top)
            recentKeys.append(RecentKey(hash: UInt32(truncatingIfNeeded: hash), node: UInt32(index)))
        } else {
            isDuplicate = isDuplicateKeyInLargeDictionary(hash: hash, in: top)
        }
        if isDuplicate {
            fail(
                .invalidStructure, "duplicate key '\(withText { String(decoding: $0, as: UTF8.self) })'",
                line: scalarLine, column: scalarColumn)
            return
        }
        map.nodes.append(node)
        frames[top].pendingKey = index
        frames[top].keyLine = scalarLine
        frames[top].keyColumn = scalarColumn
        if !isASCII || frames[top].hasNonASCIIKey {
            frames[top].hasNonASCIIKey = true
            keyPositions.append((index, scalarLine, scalarColumn))
        }
    }

    /// Whether one of the keys so far of the dictionary of frame `top`, which has fewer
    /// than ``recentKeyLimit``, has the bytes of the key being read, whose hash is `hash`.
    private func isRecentDuplicate(hash: UInt64, in top: Int) -> Bool {
        let key = map.bytes.buffer(from: textStart, count: map.bytes.count - textStart)
        let wanted = UInt32(truncatingIfNeeded: hash)
        var cursor = frames[top].firstRecentKey
        while cursor < recentKeys.count {
            if recentKeys[cursor].hash == wanted, hasBytes(of: Int(recentKeys[cursor].node), key) {
                return true
            }
            cursor += 1
        }
        return false
    }

    /// Whether the key at node `index` holds exactly `key`'s bytes.
    private func hasBytes(of index: Int, _ key: UnsafeBufferPointer<UInt8>) -> Bool {
        let other = map.nodes[index]
        return Int(other.count) == key.count
            && (key.isEmpty || memcmp(map.bytes.base + Int(other.payload), key.baseAddress!, key.count) == 0)
    }

    /// Whether the dictionary of frame `top`, which has ``recentKeyLimit`` keys or more,
    /// already has a key with the bytes of the key being read, whose hash is `hash`. A
    /// set of seeded `Hasher` values keeps crafted collisions from making this
    /// quadratic.
    private mutating func isDuplicateKeyInLargeDictionary(hash: UInt64, in top: Int) -> Bool {
        let dictionary = frames[top].node
        if largeKeyHashes[top] == nil {
            var hashes = Set<UInt64>(minimumCapacity: 32)
            var cursor = dictionary + 1
            while cursor < map.nodes.count {
                hashes.insert(map.withBytes(of: map.nodes[cursor]) { Self.strongHash($0) })
                cursor = map.end(of: cursor + 1)
            }
            largeKeyHashes[top] = hashes
        }
        let strong = withText { Self.strongHash($0) }
        if largeKeyHashes[top]!.insert(strong).inserted { return false }
        let key = map.bytes.buffer(from: textStart, count: map.bytes.count - textStart)
        var cursor = dictionary + 1
        let nodeCount = map.nodes.count
        while cursor < nodeCount {
            if map.nodes[cursor].hash == hash, hasBytes(of: cursor, key) { return true }
            cursor = map.end(of: cursor + 1)
        }
        return false
    }

    private static func strongHash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hasher = Hasher()
        hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
        return UInt64(UInt(bitPattern: hasher.finalize()))
    }

    /// Keys that differ in bytes but are the same Swift string (canonically equivalent
    /// Unicode) would collapse into one dictionary entry; they are refused as duplicates.
    private mutating func checkCanonicalDuplicates(_ frame: Frame) {
        var seen = Set<String>(minimumCapacity: Int(frame.count))
        var cursor = frame.node + 1
        while cursor < map.nodes.count {
            let key = map.string(at: cursor)
            if !seen.insert(key).inserted {
                // The second of the two: noted, as every key from the first beyond ASCII on
                // is, and one of the two is beyond ASCII.
                let position = keyPositions.last { $0.node == cursor }
                fail(
                    .invalidStructure,
                    "duplicate key '\(key)' (two keys are the same text in different Unicode normal forms)",
                    line: position?.line, column: position?.column)
                return
            }
            cursor = map.end(of: cursor + 1)
        }
    }

    // MARK: Text

    @inline(__always)
    fileprivate mutating func characters(_ bytes: UnsafePointer<xmlChar>?, _ count: Int, isCDATA: Bool) {
        guard !stopped, let bytes, count > 0 else { return }
        let chunk = UnsafeBufferPointer(start: bytes, count: count)
        if scalar == nil {
            if !isWhitespace(chunk) { textOutsideValue(chunk, isCDATA: isCDATA) }
            return
        }
        if map.bytes.count + count > Int(UInt32.max) {
            textTooLong()
            return
        }
        map.bytes.append(chunk)
    }

    @inline(never)
    private mutating func textOutsideValue(_ chunk: UnsafeBufferPointer<UInt8>, isCDATA: Bool) {
        let what = isCDATA ? "a CDATA section" : "text"
        let preview = ScalarParsing.quoted(chunk, trimmed: true)
        // At the text's first character: libxml2 hands text over at its end, or at a
        // carriage return within it.
        if frames.isEmpty {
            fail(.invalidStructure, "\(what) \(preview) outside the <plist> element", atTextStart: !isCDATA)
        } else {
            fail(.invalidStructure, "\(what) \(preview) between elements", atTextStart: !isCDATA)
        }
    }

    @inline(never)
    private mutating func textTooLong() {
        fail(.malformedXML, "the document's text exceeds 4 GiB")
    }

    /// Whether `bytes` are all ASCII, checked a word at a time (four to seven bytes as
    /// two overlapping four-byte loads).
    @inline(__always)
    private static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        let count = bytes.count
        var high: UInt64 = 0
        var offset = 0
        while offset + 8 <= count {
            high |= raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            offset += 8
        }
        if count - offset >= 4 {
            high |= UInt64(raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
            high |= UInt64(raw.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self))
            offset = count
        }
        while offset < count {
            high |= UInt64(base[offset])
            offset += 1
        }
        return high & 0x8080_8080_8080_8080 == 0
    }

    /// Whether text that libxml2 handed over is all whitespace.
    ///
    /// libxml2 hands over only characters that XML allows: it refuses any other as a
    /// fatal error before the callback, in text, in CDATA and in character references
    /// alike, and delivers nothing after it. The only such characters at or below the
    /// space are the space, tab, line feed and carriage return, so text whose bytes are
    /// all at most 0x20 is whitespace; that is checked eight bytes at a time (two
    /// overlapping loads cover four to sixteen bytes) rather than byte by byte against
    /// four values, since every run of indentation between elements comes through here.
    @inline(__always)
    private func isWhitespace(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let count = bytes.count
        let raw = UnsafeRawPointer(base)
        // A byte is above 0x20 when adding 0x5F to it carries into its top bit, or when
        // its top bit is set already (a byte that carries out of itself has that bit set).
        @inline(__always) func allBlank(_ word: UInt64) -> Bool {
            (word | (word &+ 0x5F5F_5F5F_5F5F_5F5F)) & 0x8080_8080_8080_8080 == 0
        }
        if count >= 4 && count <= 8 {
            let word =
                UInt64(raw.loadUnaligned(as: UInt32.self))
                | UInt64(raw.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)) << 32
            return allBlank(word)
        }
        if count < 4 {
            for offset in 0..<count where base[offset] > 0x20 { return false }
            return true
        }
        var offset = 0
        while offset + 8 < count {
            guard allBlank(raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) else { return false }
            offset += 8
        }
        return allBlank(raw.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self))
    }

    // MARK: DTD content

    fileprivate mutating func internalSubset(_ name: UnsafePointer<xmlChar>?) {
        guard !stopped else { return }
        if let name, String(cString: name) != "plist" {
            fail(.invalidStructure, "the DOCTYPE names <\(Self.name(name))>, not <plist>")
        }
    }

    fileprivate mutating func declaration(_ what: String, _ name: UnsafePointer<xmlChar>?) {
        fail(
            .forbiddenDeclaration,
            "\(what) declaration '\(Self.name(name))' is not allowed in a property list")
    }

    fileprivate mutating func undefinedReference(_ name: UnsafePointer<xmlChar>?) {
        fail(.forbiddenDeclaration, "reference to the undefined entity '&\(Self.name(name));'")
    }

    // MARK: The SAX2 handler

    // Only function pointers and a magic number: immutable and safe to share.
    nonisolated(unsafe) private static let handler: xmlSAXHandler = {
        var handler = xmlSAXHandler()
        handler.initialized = UInt32(XML_SAX2_MAGIC)
        handler.startElementNs = scannerStartElement
        handler.endElementNs = scannerEndElement
        handler.characters = scannerCharacters
        handler.cdataBlock = { context, bytes, count in
            scanner(context).pointee.characters(bytes, Int(count), isCDATA: true)
        }
        handler.internalSubset = { context, name, _, _ in
            scanner(context).pointee.internalSubset(name)
        }
        handler.entityDecl = { context, name, _, _, _, _ in
            scanner(context).pointee.declaration("entity", name)
        }
        handler.elementDecl = { context, name, _, _ in
            scanner(context).pointee.declaration("element", name)
        }
        handler.attributeDecl = { context, element, _, _, _, _, tree in
            xmlFreeEnumeration(tree)
            scanner(context).pointee.declaration("attribute list", element)
        }
        handler.notationDecl = { context, name, _, _ in
            scanner(context).pointee.declaration("notation", name)
        }
        handler.unparsedEntityDecl = { context, name, _, _, _ in
            scanner(context).pointee.declaration("entity", name)
        }
        handler.reference = { context, name in
            scanner(context).pointee.undefinedReference(name)
        }
        handler.serror = { context, error in
            guard let error else { return }
            scanner(context).pointee.libxml2Failed(error)
        }
        return handler
    }()
}

@inline(__always)
private func scanner(_ context: UnsafeMutableRawPointer?) -> UnsafeMutablePointer<XMLPlistScanner> {
    context!.assumingMemoryBound(to: XMLPlistScanner.self)
}

// The three callbacks of nearly every event, as functions rather than closures, so that
// the C entry point libxml2 calls holds their code instead of calling on to it.

@inline(__always)
private func scannerStartElement(
    _ context: UnsafeMutableRawPointer?, _ localName: UnsafePointer<xmlChar>?,
    _ prefix: UnsafePointer<xmlChar>?, _ uri: UnsafePointer<xmlChar>?, _ namespaceCount: Int32,
    _ namespaces: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?, _ attributeCount: Int32,
    _ defaultedCount: Int32, _ attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
) {
    scanner(context).pointee.startElement(
        localName, prefix, uri, attributeCount: Int(attributeCount), attributes: attributes)
}

@inline(__always)
private func scannerEndElement(
    _ context: UnsafeMutableRawPointer?, _ localName: UnsafePointer<xmlChar>?,
    _ prefix: UnsafePointer<xmlChar>?, _ uri: UnsafePointer<xmlChar>?
) {
    scanner(context).pointee.endElement()
}

@inline(__always)
private func scannerCharacters(
    _ context: UnsafeMutableRawPointer?, _ bytes: UnsafePointer<xmlChar>?, _ count: Int32
) {
    scanner(context).pointee.characters(bytes, Int(count), isCDATA: false)
}

/// Measurements for the benchmark command.
@_spi(Benchmarking)
public enum XMLBaseline {
    /// A bare libxml2 SAX2 pass over `bytes` with empty element and text callbacks and
    /// the reader's options: the floor any SAX-based reader stands on.
    ///
    /// - Parameter bytes: An XML document.
    /// - Returns: The number of elements seen.
    public static func saxPass(_ bytes: UnsafeRawBufferPointer) -> Int {
        _ = libxml2Initialized
        guard !bytes.isEmpty else { return 0 }
        let counter = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        counter.initialize(to: 0)
        defer { counter.deallocate() }
        var handler = xmlSAXHandler()
        handler.initialized = UInt32(XML_SAX2_MAGIC)
        handler.startElementNs = { context, _, _, _, _, _, _, _, _ in
            context!.assumingMemoryBound(to: Int.self).pointee += 1
        }
        handler.endElementNs = { _, _, _, _ in }
        handler.characters = { _, _, _ in }
        handler.serror = { _, _ in }
        xmlSetStructuredErrorFunc(nil, { _, _ in })
        defer { xmlSetStructuredErrorFunc(nil, nil) }
        guard let context = makePushParser(bytes, handler: handler, userData: counter) else { return -1 }
        defer { freeParser(context) }
        parseInChunks(bytes, context: context)
        return counter.pointee
    }

    /// The reader's first stage alone: checks `bytes` and lays them out flat, without
    /// building `PropertyList` values.
    ///
    /// - Parameter bytes: An XML property list.
    /// - Returns: The number of values read.
    /// - Throws: ``PropertyListError`` when the document is refused.
    public static func scanPass(_ bytes: UnsafeRawBufferPointer) throws -> Int {
        try XMLPlistScanner.scan(bytes, file: nil).nodes.count
    }
}

/// A libxml2 push parser with `handler` as its SAX2 callbacks and the reader's options:
/// no network access, no entity substitution, no DTD loading.
///
/// The document is fed in chunks (``parseInChunks(_:context:)``) rather than handed over
/// whole: libxml2 then never holds a copy of more than a chunk or so of the input, where
/// `xmlCreateMemoryParserCtxt` copies the entire document first.
private func makePushParser(
    _ bytes: UnsafeRawBufferPointer, handler: xmlSAXHandler, userData: UnsafeMutableRawPointer
) -> xmlParserCtxtPtr? {
    var handler = handler
    // The first four bytes let libxml2 detect the encoding before the declaration.
    let head = min(4, bytes.count)
    guard let base = bytes.baseAddress?.assumingMemoryBound(to: CChar.self),
        let context = xmlCreatePushParserCtxt(&handler, userData, base, Int32(head), nil)
    else { return nil }
    xmlCtxtUseOptions(context, Int32(XML_PARSE_NONET.rawValue))
    return context
}

/// Frees a parser and the document libxml2 may have started on its own: a DOCTYPE with
/// an internal subset makes it create `myDoc` to hold the DTD even for a SAX parser, and
/// `xmlFreeParserCtxt` leaves that to the caller.
private func freeParser(_ context: xmlParserCtxtPtr) {
    if let document = context.pointee.myDoc {
        xmlFreeDoc(document)
        context.pointee.myDoc = nil
    }
    xmlFreeParserCtxt(context)
}

/// Feeds the rest of `bytes` (after the four that created the parser) in 256 KiB chunks,
/// stopping early once a callback has stopped the parser.
private func parseInChunks(_ bytes: UnsafeRawBufferPointer, context: xmlParserCtxtPtr) {
    guard let base = bytes.baseAddress?.assumingMemoryBound(to: CChar.self) else { return }
    let chunk = 256 * 1024
    var offset = min(4, bytes.count)
    while offset < bytes.count {
        let length = min(chunk, bytes.count - offset)
        let last = offset + length == bytes.count
        if xmlParseChunk(context, base + offset, Int32(length), last ? 1 : 0) != 0
            && context.pointee.disableSAX != 0
        {
            return
        }
        if context.pointee.instate == XML_PARSER_EOF { return }
        offset += length
    }
    if bytes.count <= 4 { xmlParseChunk(context, nil, 0, 1) }
}
