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
    /// keys, integers outside −2^63…2^64−1, malformed reals, dates and base64, invalid
    /// UTF-8 and nesting deeper than ``maximumDepth`` are all refused with the line and
    /// column where they occur. The Apple DOCTYPE, comments, processing instructions,
    /// CDATA sections, character references and `<true></true>` are accepted.
    ///
    /// - Parameters:
    ///   - xml: The document's bytes, in any encoding its XML declaration names.
    ///   - file: The file the bytes came from, used in error messages.
    /// - Throws: ``PropertyListError`` with the file, line and column.
    public init(xml: Data, file: String? = nil) throws {
        self = try xml.withUnsafeBytes { try PropertyList(xmlBytes: $0, file: file) }
    }

    /// Reads an XML property list from raw bytes; see ``init(xml:file:)``.
    ///
    /// - Parameters:
    ///   - xmlBytes: The document's bytes.
    ///   - file: The file the bytes came from, used in error messages.
    /// - Throws: ``PropertyListError`` with the file, line and column.
    public init(xmlBytes: UnsafeRawBufferPointer, file: String? = nil) throws {
        let scanner = XMLPlistScanner(file: file)
        self = try scanner.scan(xmlBytes)
    }
}

/// The libxml2 parser is initialised once per process before first use.
private let libxml2Initialized: Bool = {
    xmlInitParser()
    return true
}()

/// A streaming reader of XML property lists on libxml2's SAX2 push interface.
///
/// The scanner keeps a stack of open containers and a byte buffer for the text of the
/// scalar being read; values are built as their end tags arrive.
final class XMLPlistScanner {
    private enum Element: UInt8 {
        case plist, dict, array, key, string, integer, real, date, data, `true`, `false`

        var isScalar: Bool {
            switch self {
            case .plist, .dict, .array: false
            default: true
            }
        }
    }

    private enum FrameKind { case plist, array, dict }

    private struct Frame {
        var kind: FrameKind
        var array: [PropertyList] = []
        var dict: [String: PropertyList] = [:]
        var pendingKey: String?
        var hasValue = false
        var keyLine = 0
        var keyColumn = 0
    }

    private let file: String?
    private var context: xmlParserCtxtPtr?
    private var frames: [Frame] = []
    private var result: PropertyList?
    private var failure: PropertyListError?
    private var sawRoot = false

    /// The scalar element whose text is being collected, if any.
    private var scalar: Element?
    private var scalarLine = 0
    private var scalarColumn = 0
    private var text: UnsafeMutablePointer<UInt8>
    private var textCount = 0
    private var textCapacity = 256

    init(file: String?) {
        self.file = file
        text = .allocate(capacity: textCapacity)
        frames.reserveCapacity(16)
    }

    deinit {
        text.deallocate()
    }

    func scan(_ bytes: UnsafeRawBufferPointer) throws -> PropertyList {
        _ = libxml2Initialized
        guard bytes.count <= Int(Int32.max) else {
            throw PropertyListError(
                code: .malformedXML, message: "the document is larger than 2 GiB", file: file)
        }
        var handler = Self.makeHandler()
        let me = Unmanaged.passUnretained(self).toOpaque()
        guard let context = xmlCreatePushParserCtxt(&handler, me, nil, 0, file) else {
            throw PropertyListError(code: .malformedXML, message: "libxml2 could not create a parser", file: file)
        }
        self.context = context
        defer {
            xmlFreeParserCtxt(context)
            self.context = nil
        }
        xmlCtxtUseOptions(context, Int32(XML_PARSE_NONET.rawValue))
        let base = bytes.baseAddress?.assumingMemoryBound(to: CChar.self)
        xmlParseChunk(context, base, Int32(bytes.count), 1)
        if let failure { throw failure }
        if context.pointee.wellFormed == 0 {
            throw PropertyListError(code: .malformedXML, message: "the document is not well-formed XML", file: file)
        }
        guard let result else {
            throw PropertyListError(
                code: .invalidStructure, message: "the document has no <plist> element", file: file, line: 1, column: 1)
        }
        return result
    }

    // MARK: Errors

    private var position: (line: Int, column: Int) {
        guard let context else { return (0, 0) }
        let raw = UnsafeMutableRawPointer(context)
        return (Int(xmlSAX2GetLineNumber(raw)), Int(xmlSAX2GetColumnNumber(raw)))
    }

    private func fail(_ code: PropertyListError.Code, _ message: String, line: Int? = nil, column: Int? = nil) {
        guard failure == nil else { return }
        let here = position
        failure = PropertyListError(
            code: code, message: message, file: file, line: line ?? here.line, column: column ?? here.column)
        if let context { xmlStopParser(context) }
    }

    fileprivate func libxml2Failed(_ error: UnsafePointer<xmlError>) {
        guard failure == nil else { return }
        let raw = error.pointee
        var message = raw.message.map { String(cString: $0) } ?? "malformed XML"
        // libxml2's messages can span lines ("…\nBytes: 0xFF …"); keep one line.
        message = message.split(whereSeparator: \.isNewline).joined(separator: "; ")
        let code: PropertyListError.Code =
            switch Int(raw.code) {
            case Int(XML_ERR_UNDECLARED_ENTITY.rawValue), Int(XML_WAR_UNDECLARED_ENTITY.rawValue),
                Int(XML_ERR_ENTITY_LOOP.rawValue):
                .forbiddenDeclaration
            default: .malformedXML
            }
        failure = PropertyListError(
            code: code, message: message, file: file, line: Int(raw.line), column: Int(raw.int2))
        if let context { xmlStopParser(context) }
    }

    // MARK: Elements

    private static func element(_ name: UnsafePointer<xmlChar>) -> Element? {
        // Names are short ASCII; compare bytes without building strings.
        func equals(_ literal: StaticString) -> Bool {
            let count = literal.utf8CodeUnitCount
            let bytes = literal.utf8Start
            for i in 0..<count where name[i] != bytes[i] { return false }
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

    private static func name(_ name: UnsafePointer<xmlChar>?, prefix: UnsafePointer<xmlChar>? = nil) -> String {
        let local = name.map { String(cString: $0) } ?? "?"
        let shown = prefix.map { String(cString: $0) + ":" + local } ?? local
        return shown.count > 40 ? String(shown.prefix(40)) + "…" : shown
    }

    fileprivate func startElement(
        _ localName: UnsafePointer<xmlChar>?, _ prefix: UnsafePointer<xmlChar>?,
        _ uri: UnsafePointer<xmlChar>?, attributeCount: Int, attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
    ) {
        guard failure == nil, let localName else { return }
        guard uri == nil, prefix == nil, let element = Self.element(localName) else {
            fail(.invalidStructure, "unknown element <\(Self.name(localName, prefix: prefix))>")
            return
        }
        if let scalar {
            fail(.invalidStructure, "element <\(Self.name(localName))> is not allowed inside <\(scalar)>")
            return
        }
        // Attributes come as five pointers each: localname, prefix, URI, value start, value end.
        for index in 0..<attributeCount {
            let attributeName = attributes?[index * 5]
            let isVersion =
                element == .plist && attributes?[index * 5 + 1] == nil
                && attributeName.map { String(cString: $0) == "version" } == true
            if !isVersion {
                fail(.invalidStructure, "element <\(element)> has an unexpected attribute '\(Self.name(attributeName))'")
                return
            }
        }
        if element == .plist {
            guard frames.isEmpty, !sawRoot else {
                fail(.invalidStructure, "<plist> may only be the root element")
                return
            }
            sawRoot = true
            frames.append(Frame(kind: .plist))
            return
        }
        guard let top = frames.last else {
            fail(.invalidStructure, "the root element must be <plist>, not <\(element)>")
            return
        }
        if element == .key {
            guard top.kind == .dict else {
                fail(.invalidStructure, "<key> is only allowed directly inside <dict>")
                return
            }
            guard top.pendingKey == nil else {
                fail(.invalidStructure, "<key> follows <key> '\(top.pendingKey!)' which has no value")
                return
            }
        } else if top.kind == .dict && top.pendingKey == nil {
            fail(.invalidStructure, "<\(element)> in a <dict> has no <key> before it")
            return
        } else if top.kind == .plist && top.hasValue {
            fail(.invalidStructure, "<plist> contains more than one value")
            return
        }
        switch element {
        case .array:
            try? checkDepth()
            frames.append(Frame(kind: .array))
        case .dict:
            try? checkDepth()
            frames.append(Frame(kind: .dict))
        default:
            scalar = element
            textCount = 0
            (scalarLine, scalarColumn) = position
        }
    }

    private func checkDepth() throws {
        // The <plist> frame does not count towards the depth of containers.
        if frames.count > PropertyList.maximumDepth {
            fail(.nestingTooDeep, "arrays and dictionaries are nested deeper than \(PropertyList.maximumDepth) levels")
        }
    }

    fileprivate func endElement() {
        guard failure == nil else { return }
        if let element = scalar {
            scalar = nil
            finishScalar(element)
            return
        }
        guard let frame = frames.popLast() else { return }
        switch frame.kind {
        case .plist:
            guard frame.hasValue else {
                fail(.invalidStructure, "<plist> contains no value")
                return
            }
        case .array:
            add(.array(frame.array))
        case .dict:
            if let key = frame.pendingKey {
                fail(.invalidStructure, "<key> '\(key)' has no value", line: frame.keyLine, column: frame.keyColumn)
                return
            }
            add(.dictionary(frame.dict))
        }
    }

    private func finishScalar(_ element: Element) {
        let buffer = UnsafeBufferPointer(start: text, count: textCount)
        let value: PropertyList
        do throws(ScalarParsing.Failure) {
            switch element {
            case .key:
                let key = String(decoding: buffer, as: UTF8.self)
                let index = frames.count - 1
                if frames[index].dict.index(forKey: key) != nil {
                    fail(.invalidStructure, "duplicate key '\(key)'", line: scalarLine, column: scalarColumn)
                    return
                }
                frames[index].pendingKey = key
                frames[index].keyLine = scalarLine
                frames[index].keyColumn = scalarColumn
                return
            case .string: value = .string(String(decoding: buffer, as: UTF8.self))
            case .integer: value = .integer(try ScalarParsing.integer(buffer))
            case .real: value = .real(try ScalarParsing.real(buffer))
            case .date: value = .date(try ScalarParsing.date(buffer))
            case .data: value = .data(try ScalarParsing.base64(buffer))
            case .true, .false:
                guard isWhitespace(buffer) else {
                    fail(.invalidStructure, "<\(element)> must be empty", line: scalarLine, column: scalarColumn)
                    return
                }
                value = .boolean(element == .true)
            case .plist, .dict, .array:
                return
            }
        } catch {
            fail(.invalidValue, error.message, line: scalarLine, column: scalarColumn)
            return
        }
        add(value)
    }

    private func add(_ value: PropertyList) {
        let index = frames.count - 1
        guard index >= 0 else { return }
        switch frames[index].kind {
        case .array:
            frames[index].array.append(value)
        case .dict:
            let key = frames[index].pendingKey!
            frames[index].pendingKey = nil
            frames[index].dict[key] = value
        case .plist:
            frames[index].hasValue = true
            result = value
        }
    }

    // MARK: Text

    fileprivate func characters(_ bytes: UnsafePointer<xmlChar>?, _ count: Int, isCDATA: Bool) {
        guard failure == nil, let bytes, count > 0 else { return }
        if scalar == nil {
            let chunk = UnsafeBufferPointer(start: bytes, count: count)
            if !isWhitespace(chunk) {
                let what = isCDATA ? "a CDATA section" : "text"
                let preview = ScalarParsing.quoted(chunk)
                if frames.isEmpty {
                    fail(.invalidStructure, "\(what) \(preview) outside the <plist> element")
                } else {
                    fail(.invalidStructure, "\(what) \(preview) between elements")
                }
            }
            return
        }
        if textCount + count > textCapacity {
            var capacity = textCapacity * 2
            while capacity < textCount + count { capacity *= 2 }
            let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
            grown.update(from: text, count: textCount)
            text.deallocate()
            text = grown
            textCapacity = capacity
        }
        (text + textCount).update(from: bytes, count: count)
        textCount += count
    }

    private func isWhitespace(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        for byte in bytes where !(byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D) {
            return false
        }
        return true
    }

    // MARK: DTD content

    fileprivate func internalSubset(_ name: UnsafePointer<xmlChar>?) {
        guard failure == nil else { return }
        if let name, String(cString: name) != "plist" {
            fail(.invalidStructure, "the DOCTYPE names <\(Self.name(name))>, not <plist>")
        }
    }

    fileprivate func declaration(_ what: String, _ name: UnsafePointer<xmlChar>?) {
        fail(.forbiddenDeclaration, "\(what) declaration '\(Self.name(name))' is not allowed in a property list")
    }

    fileprivate func undefinedReference(_ name: UnsafePointer<xmlChar>?) {
        fail(.forbiddenDeclaration, "reference to the undefined entity '&\(Self.name(name));'")
    }

    // MARK: The SAX2 handler

    private static func makeHandler() -> xmlSAXHandler {
        var handler = xmlSAXHandler()
        handler.initialized = UInt32(XML_SAX2_MAGIC)
        handler.startElementNs = { context, localName, prefix, uri, _, _, attributeCount, _, attributes in
            scanner(context).startElement(
                localName, prefix, uri, attributeCount: Int(attributeCount), attributes: attributes)
        }
        handler.endElementNs = { context, _, _, _ in
            scanner(context).endElement()
        }
        handler.characters = { context, bytes, count in
            scanner(context).characters(bytes, Int(count), isCDATA: false)
        }
        handler.cdataBlock = { context, bytes, count in
            scanner(context).characters(bytes, Int(count), isCDATA: true)
        }
        handler.internalSubset = { context, name, _, _ in
            scanner(context).internalSubset(name)
        }
        handler.entityDecl = { context, name, _, _, _, _ in
            scanner(context).declaration("entity", name)
        }
        handler.elementDecl = { context, name, _, _ in
            scanner(context).declaration("element", name)
        }
        handler.attributeDecl = { context, element, _, _, _, _, tree in
            xmlFreeEnumeration(tree)
            scanner(context).declaration("attribute list", element)
        }
        handler.notationDecl = { context, name, _, _ in
            scanner(context).declaration("notation", name)
        }
        handler.unparsedEntityDecl = { context, name, _, _, _ in
            scanner(context).declaration("entity", name)
        }
        handler.reference = { context, name in
            scanner(context).undefinedReference(name)
        }
        handler.serror = { context, error in
            guard let error else { return }
            scanner(context).libxml2Failed(error)
        }
        return handler
    }
}

private func scanner(_ context: UnsafeMutableRawPointer?) -> XMLPlistScanner {
    Unmanaged<XMLPlistScanner>.fromOpaque(context!).takeUnretainedValue()
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
        final class Counter { var elements = 0 }
        let counter = Counter()
        var handler = xmlSAXHandler()
        handler.initialized = UInt32(XML_SAX2_MAGIC)
        handler.startElementNs = { context, _, _, _, _, _, _, _, _ in
            Unmanaged<Counter>.fromOpaque(context!).takeUnretainedValue().elements += 1
        }
        handler.endElementNs = { _, _, _, _ in }
        handler.characters = { _, _, _ in }
        handler.serror = { _, _ in }
        let me = Unmanaged.passUnretained(counter).toOpaque()
        guard let context = xmlCreatePushParserCtxt(&handler, me, nil, 0, nil) else { return -1 }
        defer { xmlFreeParserCtxt(context) }
        xmlCtxtUseOptions(context, Int32(XML_PARSE_NONET.rawValue))
        xmlParseChunk(context, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count), 1)
        return counter.elements
    }
}
