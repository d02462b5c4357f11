import Foundation
import PropertyList

extension Survey {
    /// The largest survey file the readers take: 128 MiB, enough for
    /// ``maximumItemCount`` items in either form. A reader of a file or a pipe should
    /// stop reading one byte past it.
    public static let maximumFileSize = 128 << 20

    /// Reads a survey file in either interchange form, telling them apart by content.
    ///
    /// An XML property list is recognised by its first character, `<`, after an optional
    /// byte-order mark and whitespace, in UTF-8, UTF-16 or UTF-32 (the XML reader then
    /// refuses UTF-32, which libxml2 cannot read); a binary property list (`bplist`) is
    /// refused; anything else is read as JSON, which must be UTF-8.
    ///
    /// The envelope keys that `survey show --json` adds (`id`, `revision`,
    /// `formatVersion`, `conflicts`) are accepted, so that its output can be saved back.
    ///
    /// - Parameters:
    ///   - data: The file's bytes, at most ``maximumFileSize``.
    ///   - file: Where it came from, for messages.
    ///   - document: The document the survey is for, when it is saved to one: a file whose
    ///     `id` names another document is refused.
    /// - Throws: `PropertyListError` (with line and column) for a malformed property list,
    ///   XML or JSON (code `malformedJSON` for JSON, and for text that is neither XML nor
    ///   UTF-8); ``SurveyFileError`` for a file over ``maximumFileSize``; ``SurveyError``
    ///   for a survey that breaks a rule, more than ``maximumItemCount`` items included
    ///   (``SurveyError/Rule/tooManyItems``, in either form).
    public init(data: Data, file: String? = nil, document: UUID? = nil) throws {
        try self.init(data: data, file: file, document: document, inspecting: nil)
    }

    /// Reads a survey file as ``init(data:file:document:)`` does, and says which of its
    /// items came without an `id` (each got a new random one), for
    /// ``adoptingIDs(ofItemsAt:from:seed:)`` to match with the content it is saved on.
    ///
    /// - Returns: The survey, and the 1-based positions of its items that had no `id`, in
    ///   order.
    /// - Throws: What ``init(data:file:document:)`` throws.
    public static func reading(
        data: Data, file: String? = nil, document: UUID? = nil
    ) throws -> (survey: Survey, itemsWithoutID: [Int]) {
        var positions: [Int] = []
        let survey = try Survey(
            data: data, file: file, document: document,
            inspecting: { positions = Self.positionsWithoutID(in: $0) })
        return (survey, positions)
    }

    /// The 1-based positions of the items of `interchange` that have no `id` key.
    static func positionsWithoutID(in interchange: PropertyList) -> [Int] {
        guard case .dictionary(let root) = interchange, case .array(let elements) = root["items"] else {
            return []
        }
        return elements.indices.filter { index in
            guard case .dictionary(let item) = elements[index] else { return false }
            return item["id"] == nil
        }.map { $0 + 1 }
    }

    private init(
        data: Data, file: String?, document: UUID?, inspecting: ((PropertyList) -> Void)?
    ) throws {
        guard data.count <= Self.maximumFileSize else {
            throw SurveyFileError(
                file: file,
                message:
                    "the file is larger than \(Self.maximumFileSize >> 20) MiB, the most a survey file may be"
            )
        }
        switch InputFormat(of: data) {
        case .plist: try self.init(plist: data, file: file, document: document, inspecting: inspecting)
        case .json: try self.init(json: data, file: file, document: document, inspecting: inspecting)
        case .notUTF8(let encoding):
            throw PropertyListError(
                code: .malformedJSON,
                message: PropertyList.notMarkupMessage(encoding: encoding),
                file: file, line: 1, column: 1)
        }
    }

    /// Reads a survey from interchange JSON.
    ///
    /// The reader is the one `PropertyList(json:file:)` uses, and as strict: a key repeated
    /// in one object, `null`, invalid UTF-8 and more than ``maximumItemCount`` items are
    /// refused with the line and column (the items as an XML file with as many is refused,
    /// rule ``SurveyError/Rule/tooManyItems``, the reader stopping at the first one too many).
    ///
    /// - Parameters:
    ///   - json: The JSON document.
    ///   - file: Where it came from, for messages.
    ///   - document: The document the survey is for, when it is saved to one: a file whose
    ///     `id` names another document is refused.
    /// - Throws: `PropertyListError` with code `malformedJSON` for JSON that is malformed
    ///   or holds what a property list cannot (as `PropertyList(json:file:)` throws it);
    ///   ``SurveyError`` for a survey that breaks a rule, more than ``maximumItemCount``
    ///   items included (with the line and column of the first one too many), and a text
    ///   an XML property list cannot carry (``SurveyError/Rule/unwritableText``, with the
    ///   line and column of the character, as the JSON holds it).
    public init(json: Data, file: String? = nil, document: UUID? = nil) throws {
        try self.init(json: json, file: file, document: document, inspecting: nil)
    }

    /// ``init(json:file:document:)``, handing the interchange form read to `inspecting`
    /// once the survey is built from it.
    private init(
        json: Data, file: String?, document: UUID?, inspecting: ((PropertyList) -> Void)?
    ) throws {
        let value: PropertyList
        do {
            value = try JSONReader.read(json, itemLimit: Self.maximumItemCount)
        } catch  where error.isItemLimit {
            // The rule an XML file with as many items breaks, said the same way, but where
            // the reader stopped: at the first item too many.
            var tooMany = SurveyError(
                position: nil, title: nil, rule: .tooManyItems,
                message:
                    "it has more than \(Self.maximumItemCount) items; a survey has at most \(Self.maximumItemCount)"
            )
            tooMany.file = file
            tooMany.line = error.line
            tooMany.column = error.column
            throw tooMany
        } catch {
            throw PropertyListError(
                code: .malformedJSON, message: error.message, file: file, line: error.line,
                column: error.column)
        }
        do {
            self = try SurveyError.reading(from: file) { try Survey(interchange: value, document: document) }
            inspecting?(value)
        } catch var error as SurveyError where error.rule == .unwritableText && error.line == nil {
            // The text is named by its item and field; the place of the character in the
            // file is found now, reading the document again.
            if let path = Self.unwritableTextPath(of: error, in: value),
                let place = JSONReader.unwritableCharacter(in: json, at: path)
            {
                (error.line, error.column) = (place.line, place.column)
            }
            throw error
        }
    }

    /// Where, in the interchange form, is the text an ``SurveyError/Rule/unwritableText``
    /// error is about: the survey's title, or the first text of the item at its position
    /// that XML cannot carry (the one ``Item/textProblems(position:)`` names first).
    static func unwritableTextPath(
        of error: SurveyError, in interchange: PropertyList
    ) -> [JSONReader.PathComponent]? {
        guard let position = error.position else { return [.key("title")] }
        guard case .dictionary(let root) = interchange, case .array(let elements) = root["items"],
            elements.indices.contains(position - 1),
            let item = try? Self.item(from: elements[position - 1], position: position),
            let text = item.texts().first(where: { XMLPlistWriter.unwritableReason($0.text) != nil })
        else { return nil }
        return [.key("items"), .index(position - 1), .key(text.key)] + (text.index.map { [.index($0)] } ?? [])
    }

    /// Reads a survey from an interchange XML property list.
    ///
    /// - Parameters:
    ///   - plist: The XML document.
    ///   - file: Where it came from, for messages.
    ///   - document: The document the survey is for, when it is saved to one: a file whose
    ///     `id` names another document is refused.
    /// - Throws: `PropertyListError` (with line and column) for malformed XML,
    ///   ``SurveyError`` for a survey that breaks a rule.
    public init(plist: Data, file: String? = nil, document: UUID? = nil) throws {
        try self.init(plist: plist, file: file, document: document, inspecting: nil)
    }

    /// ``init(plist:file:document:)``, handing the interchange form read to `inspecting`
    /// once the survey is built from it.
    private init(
        plist: Data, file: String?, document: UUID?, inspecting: ((PropertyList) -> Void)?
    ) throws {
        let value = try PropertyList(xml: plist, file: file)
        self = try SurveyError.reading(from: file) { try Survey(interchange: value, document: document) }
        inspecting?(value)
    }

    /// The survey as interchange JSON: sorted keys, dates as PropertyList's `ISO8601Date`
    /// writes them, an empty array as `[]`.
    ///
    /// - Returns: The JSON document.
    public func jsonData() throws -> Data {
        var data = CompactEmptyJSON.compacting(
            try JSONSerialization.data(
                withJSONObject: JSONBridge.object(interchange),
                options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]))
        data.append(UInt8(ascii: "\n"))
        return data
    }

    /// The survey as an interchange XML property list, in CoreFoundation's format: the
    /// bytes `interchange.xmlData()` writes, written without building that tree.
    ///
    /// - Returns: The XML document.
    /// - Throws: `PropertyListError` when a text holds characters XML cannot carry.
    public func plistData() throws -> Data {
        var writer = XMLPlistWriter()
        try writer.writeDocument { writer in try self.writeInterchange(to: &writer) }
        return writer.takeData()
    }
}

/// Which interchange form a file holds, told by its first bytes.
enum InputFormat: Equatable {
    case plist
    case json
    case notUTF8(String)

    init(of data: Data) {
        let bytes = [UInt8](data.prefix(4096))
        func at(_ index: Int) -> UInt8? { index < bytes.count ? bytes[index] : nil }
        if bytes.starts(with: Array("bplist".utf8)) {
            self = .plist  // the XML reader refuses it with a clear message
            return
        }
        // (encoding name, code unit width, big endian, bytes to skip)
        let encoding: (name: String, width: Int, bigEndian: Bool, skip: Int)
        switch (at(0), at(1), at(2), at(3)) {
        case (0x00, 0x00, 0xFE, 0xFF): encoding = ("UTF-32", 4, true, 4)
        case (0xFF, 0xFE, 0x00, 0x00): encoding = ("UTF-32", 4, false, 4)
        case (0x00, 0x00, 0x00, _?) where at(3) != 0: encoding = ("UTF-32", 4, true, 0)
        case (_?, 0x00, 0x00, 0x00) where at(0) != 0: encoding = ("UTF-32", 4, false, 0)
        case (0xFE, 0xFF, _, _): encoding = ("UTF-16", 2, true, 2)
        case (0xFF, 0xFE, _, _): encoding = ("UTF-16", 2, false, 2)
        case (0x00, _?, _, _): encoding = ("UTF-16", 2, true, 0)
        case (_?, 0x00, _, _): encoding = ("UTF-16", 2, false, 0)
        case (0xEF, 0xBB, 0xBF, _): encoding = ("UTF-8", 1, false, 3)
        default: encoding = ("UTF-8", 1, false, 0)
        }
        var index = encoding.skip
        while index + encoding.width <= bytes.count {
            var unit: UInt32 = 0
            for offset in 0..<encoding.width {
                let byte = UInt32(bytes[index + (encoding.bigEndian ? offset : encoding.width - 1 - offset)])
                unit = unit << 8 | byte
            }
            index += encoding.width
            switch unit {
            case 0x20, 0x09, 0x0A, 0x0D: continue
            case UInt32(UInt8(ascii: "<")): self = .plist
            default: self = encoding.width == 1 ? .json : .notUTF8(encoding.name)
            }
            return
        }
        self = encoding.width == 1 ? .json : .notUTF8(encoding.name)
    }
}

/// A survey file refused whole for its size: larger than ``Survey/maximumFileSize``. A
/// file that is not a property list, XML or JSON, is refused with a `PropertyListError`,
/// and one with more than ``Survey/maximumItemCount`` items with a ``SurveyError`` (rule
/// ``SurveyError/Rule/tooManyItems``), in either form.
public struct SurveyFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file, when known.
    public var file: String?
    /// What is wrong, in words.
    public var message: String
    /// The 1-based line of the problem, when known.
    public var line: Int?
    /// The 1-based column of the problem (in Unicode scalars), when known.
    public var column: Int?

    /// Creates an error.
    public init(file: String?, message: String, line: Int? = nil, column: Int? = nil) {
        self.file = file
        self.message = message
        self.line = line
        self.column = column
    }

    /// `FILE:LINE:COLUMN: message`, leaving out the parts that are unknown.
    public var description: String {
        guard let line else { return file.map { "\($0): \(message)" } ?? message }
        return "\(file ?? "<input>"):\(line):\(column ?? 1): \(message)"
    }
}

/// Conversion of property lists to JSON objects for `JSONSerialization`.
enum JSONBridge {
    static func object(_ value: PropertyList) -> Any {
        switch value {
        case .string(let string): return string
        case .integer(let integer):
            return integer.int64Value.map { NSNumber(value: $0) } ?? NSNumber(value: integer.magnitude)
        case .real(let real): return NSNumber(value: real)
        case .boolean(let flag): return flag
        case .date(let date): return ISO8601Date.string(from: date)
        case .data(let data): return data.base64EncodedString()
        case .array(let elements): return elements.map(object)
        case .dictionary(let entries): return entries.mapValues(object)
        }
    }
}
