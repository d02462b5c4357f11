import Foundation

/// A value as the encoder has rendered it so far: finished XML in the arena, or a
/// container whose entries are still arriving.
enum Rendered {
    /// `count` bytes of finished XML at `start` in the arena, indented for their depth.
    case bytes(start: Int, count: Int)
    case dictionary(DictionaryRender)
    case array(ArrayRender)
}

extension EncodingState {
    /// An empty dictionary at `depth`.
    @inline(__always)
    func dictionary(depth: Int) -> DictionaryRender {
        guard let dictionary = spareDictionaries.popLast() else {
            return DictionaryRender(depth: depth, level: level)
        }
        dictionary.depth = depth
        dictionary.level = level
        return dictionary
    }

    /// Notes a write into a container made at `containerLevel`.
    @inline(__always)
    func noteWrite(into containerLevel: Int) {
        if containerLevel < level { wroteOutward = true }
    }
}

/// The `<key>` lines rendered recently, by key and depth: values of one type encode
/// the same keys at the same depth over and over, and each line is rendered once and
/// then shared by every dictionary that has it.
struct KeyLineCache {
    private struct Slot {
        var key = ""
        var depth = -1
        var start = 0
        var count = 0
    }

    /// Two ways of 512 sets: a key whose set is taken by another goes to the second way.
    private var slots = [Slot](repeating: Slot(), count: 1024)

    @inline(__always)
    private static func set(_ key: String, depth: Int) -> Int {
        // Any hash of the string's representation will do (see note 1 in
        // `CodableUnsafe.swift`): a literal key has the same one every time, the slot's
        // key is compared before its line is used, and a miss renders the line again.
        let bits = StringRepresentation.key(of: key)
        let mixed = (bits.0 &* 0x9E37_79B9_7F4A_7C15) ^ (bits.1 &* 0xBF58_476D_1CE4_E5B9) ^ UInt64(depth)
        return Int(truncatingIfNeeded: (mixed &* 0x94D0_49BB_1331_11EB) >> 55) & ~1
    }

    /// The arena position of the line for `key` at `depth`, if it has been rendered.
    @inline(__always)
    func line(for key: String, depth: Int) -> (start: Int, count: Int)? {
        let set = Self.set(key, depth: depth)
        return slots.withUnsafeBufferPointer { slots in
            for way in set...(set + 1) where slots[way].depth == depth && slots[way].key == key {
                return (slots[way].start, slots[way].count)
            }
            return nil
        }
    }

    mutating func remember(_ key: String, depth: Int, start: Int, count: Int) {
        let set = Self.set(key, depth: depth)
        // The first way if it is free, else the second (whose line is then lost).
        let way = slots[set].depth < 0 ? set : set + 1
        slots[way] = Slot(key: key, depth: depth, start: start, count: count)
    }
}

/// The `Encoder` behind ``PlistEncoder``.
///
/// Scalars are rendered to XML the moment they are encoded, at the indentation their
/// depth calls for, into one shared arena; containers keep only the positions of their
/// pieces. A nested dictionary is sorted and assembled into the arena as soon as its
/// value has finished encoding (over the space its pieces took), and its encoder and
/// dictionary are used again for the next value. At the end the document is assembled
/// in the arena itself, the finished pieces moved to their places and the tags and keys
/// written between them, and the arena becomes the document's storage (note 6 in
/// `CodableUnsafe.swift`). No intermediate tree of values is built.
final class PlistXMLEncoder: EncoderPosition, Encoder {
    let state: EncodingState
    let userInfoStorage: [CodingUserInfoKey: any Sendable]
    var userInfo: [CodingUserInfoKey: Any] { userInfoStorage }
    /// Receives each new result (a super-encoder writes into its parent through it).
    private let sink: ((Rendered) -> Void)?

    var arena: ByteStorage { state.arena }

    init(
        state: EncodingState, depth: Int, codingPath: [any CodingKey],
        userInfo: [CodingUserInfoKey: any Sendable],
        sink: ((Rendered) -> Void)? = nil
    ) {
        self.state = state
        self.userInfoStorage = userInfo
        self.sink = sink
        super.init(depth: depth, codingPath: codingPath)
    }

    func set(_ rendered: Rendered) {
        result = rendered
        sink?(rendered)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let dictionary: DictionaryRender
        if case .dictionary(let existing) = result {
            dictionary = existing
        } else {
            dictionary = state.dictionary(depth: depth)
            set(.dictionary(dictionary))
        }
        return KeyedEncodingContainer(
            KeyedContainer<Key>(encoder: self, dictionary: dictionary, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let array: ArrayRender
        if case .array(let existing) = result {
            array = existing
        } else {
            array = ArrayRender(depth: depth, level: state.level)
            set(.array(array))
        }
        return UnkeyedContainer(encoder: self, array: array, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueContainer(encoder: self)
    }

    // MARK: Rendering

    typealias Failure = XMLPlistWriter.Failure

    /// The error for a value that could not be written.
    @inline(never)
    static func invalidValue(_ value: Any, _ failure: Failure, path: [any CodingKey]) -> EncodingError {
        EncodingError.invalidValue(
            value,
            EncodingError.Context(
                codingPath: path, debugDescription: failure.message, underlyingError: failure.error))
    }

    /// The error for a key that could not be written.
    @inline(never)
    static func invalidKey(_ key: String, _ failure: Failure, path: [any CodingKey]) -> EncodingError {
        EncodingError.invalidValue(
            key,
            EncodingError.Context(
                codingPath: path, debugDescription: "the key " + failure.message,
                underlyingError: failure.error))
    }

    /// Renders a value that is not a container (or an array of scalars) at `depth`.
    func render(_ value: PropertyList, depth: Int, path: @autoclosure () -> [any CodingKey]) throws
        -> Rendered
    {
        let arena = self.arena
        let start = arena.count
        var writer = XMLPlistWriter(output: arena)
        do {
            try writer.writeScalar(value, depth: depth)
        } catch let failure as Failure {
            arena.truncate(to: start)
            throw Self.invalidValue(value, failure, path: path())
        }
        return .bytes(start: start, count: arena.count - start)
    }

    /// Renders what `body` writes into the arena; after a failure the arena is as it was.
    @inline(__always)
    func render(_ body: (inout XMLPlistWriter) throws(Failure) -> Void) throws(Failure) -> Rendered {
        let arena = self.arena
        let start = arena.count
        var writer = XMLPlistWriter(output: arena)
        do {
            try body(&writer)
        } catch {
            arena.truncate(to: start)
            throw error
        }
        return .bytes(start: start, count: arena.count - start)
    }

    @inline(__always)
    func renderString(_ string: String, depth: Int) throws(Failure) -> Rendered {
        try render { writer throws(Failure) in try writer.writeString(string, depth: depth) }
    }

    @inline(__always)
    func renderInteger<T: BinaryInteger>(_ value: T, depth: Int) -> Rendered {
        let start = arena.count
        var writer = XMLPlistWriter(output: arena)
        if value < 0 {
            writer.writeInteger(isNegative: true, magnitude: Int64(value).magnitude, depth: depth)
        } else {
            writer.writeInteger(isNegative: false, magnitude: UInt64(value), depth: depth)
        }
        return .bytes(start: start, count: arena.count - start)
    }

    @inline(__always)
    func renderReal(_ value: Double, depth: Int) -> Rendered {
        let start = arena.count
        var writer = XMLPlistWriter(output: arena)
        writer.writeReal(value, depth: depth)
        return .bytes(start: start, count: arena.count - start)
    }

    @inline(__always)
    func renderBoolean(_ value: Bool, depth: Int) -> Rendered {
        let start = arena.count
        var writer = XMLPlistWriter(output: arena)
        writer.writeBoolean(value, depth: depth)
        return .bytes(start: start, count: arena.count - start)
    }

    /// Renders values the format carries natively, and arrays of strings and booleans,
    /// at `depth`; `nil` for any other type. (Each branch has checked that `T` is
    /// exactly the type it reads: see note 3 in `CodableUnsafe.swift`.)
    @inline(__always)
    func renderNative<T: Encodable>(_ value: T, depth: Int) throws(Failure) -> Rendered? {
        if T.self == String.self {
            return try renderString(identityCast(value, to: String.self), depth: depth)
        }
        if T.self == Int.self { return renderInteger(identityCast(value, to: Int.self), depth: depth) }
        if T.self == Double.self { return renderReal(identityCast(value, to: Double.self), depth: depth) }
        if T.self == Bool.self { return renderBoolean(identityCast(value, to: Bool.self), depth: depth) }
        if T.self == Date.self {
            let date = identityCast(value, to: Date.self)
            return try render { writer throws(Failure) in try writer.writeDate(date, depth: depth) }
        }
        if T.self == Data.self {
            let data = identityCast(value, to: Data.self)
            return try render { writer throws(Failure) in writer.writeData(data, depth: depth) }
        }
        let type = ObjectIdentifier(T.self)
        if type == FastPathTypes.stringArray {
            let strings = identityCast(value, to: [String].self)
            return try render { writer throws(Failure) in
                guard try writer.beginArray(isEmpty: strings.isEmpty, depth: depth) else { return }
                for index in strings.indices {
                    do throws(Failure) {
                        try writer.writeString(strings[index], depth: depth + 1)
                    } catch {
                        var failure = error
                        failure.path.insert(XMLPlistWriter.indexComponent(index), at: 0)
                        throw failure
                    }
                }
                writer.endContainer("</array>\n", depth: depth)
            }
        }
        if type == FastPathTypes.boolArray {
            let flags = identityCast(value, to: [Bool].self)
            return try render { writer throws(Failure) in
                guard try writer.beginArray(isEmpty: flags.isEmpty, depth: depth) else { return }
                for flag in flags { writer.writeBoolean(flag, depth: depth + 1) }
                writer.endContainer("</array>\n", depth: depth)
            }
        }
        return nil
    }

    static func integer<T: BinaryInteger>(_ value: T) -> PropertyList {
        .integer(PropertyList.Integer(exactly: value)!)
    }

    /// Encodes `value` as this encoder's own result.
    func encodeValue<T: Encodable>(_ value: T) throws -> Rendered? {
        let native: Rendered?
        do throws(Failure) {
            native = try renderNative(value, depth: depth)
        } catch {
            throw Self.invalidValue(value, error, path: codingPath)
        }
        if let native {
            set(native)
            return result
        }
        try value.encode(to: self)
        return result
    }

    /// Encodes a value nested one level below `parentDepth` under `key`.
    func encodeNested<T: Encodable>(_ value: T, parentDepth: Int, key: any CodingKey, path: [any CodingKey])
        throws -> Rendered
    {
        let native: Rendered?
        do throws(Failure) {
            native = try renderNative(value, depth: parentDepth + 1)
        } catch {
            throw Self.invalidValue(value, error, path: path + [key])
        }
        if let native { return native }
        var encoder: PlistXMLEncoder
        if let spare = state.spareEncoders.popLast() {
            encoder = spare
            encoder.depth = parentDepth + 1
            encoder.codingPath.append(contentsOf: path)
            encoder.codingPath.append(key)
        } else {
            encoder = PlistXMLEncoder(
                state: state, depth: parentDepth + 1, codingPath: path + [key], userInfo: userInfoStorage)
        }
        let valueStart = arena.count
        state.level += 1
        defer { state.level -= 1 }
        try value.encode(to: encoder)
        var result = encoder.result
        // Unless a container of the value is still held somewhere, the encoder is free.
        encoder.result = nil
        if isKnownUniquelyReferenced(&encoder) {
            encoder.codingPath.removeAll(keepingCapacity: true)
            state.spareEncoders.append(encoder)
        }
        guard case .dictionary(var dictionary)? = result else {
            // A value that encodes nothing is an empty dictionary, as in Foundation.
            return result ?? .dictionary(state.dictionary(depth: parentDepth + 1))
        }
        result = nil
        // A dictionary whose container is still held somewhere may yet change, so it
        // stays in pieces until the end, as do the hand-made containers in it.
        guard isKnownUniquelyReferenced(&dictionary), case .bytes(let start, let count)? = flatten(dictionary)
        else {
            return .dictionary(dictionary)
        }
        dictionary.entries.removeAll(keepingCapacity: true)
        dictionary.signature = 0
        state.spareDictionaries.append(dictionary)
        // Everything the value rendered lies between `valueStart` and its assembled
        // copy, and nothing refers to it any more (unless the value wrote outward):
        // move the copy down over it.
        guard start > valueStart, !state.wroteOutward else { return .bytes(start: start, count: count) }
        let arena = self.arena
        memmove(arena.base + valueStart, arena.base + start, count)
        arena.truncate(to: valueStart + count)
        return .bytes(start: valueStart, count: count)
    }

    /// Assembles a finished dictionary into the arena at once, while its pieces are
    /// still in the processor's caches, rather than with the whole document at the end;
    /// `nil` if it cannot be written (too deep), which the final assembly then reports
    /// with its path.
    func flatten(_ dictionary: DictionaryRender) -> Rendered? {
        guard dictionary.depth < PropertyList.maximumDepth else { return nil }
        let arena = self.arena
        let keyLines = state.keyLineBytes
        let start = arena.count
        var writer = XMLPlistWriter(output: arena)
        guard
            (try? writer.beginDictionary(isEmpty: dictionary.entries.isEmpty, depth: dictionary.depth))
                == true
        else {
            return .bytes(start: start, count: arena.count - start)
        }
        let order = state.keyOrders.order(for: dictionary)
        let complete: Bool = dictionary.entries.withUnsafeBufferPointer { entries in
            for index in order {
                guard case .bytes(let valueStart, let valueCount) = entries[index].value else { return false }
                arena.append(keyLines.buffer(from: entries[index].lineStart, count: entries[index].lineCount))
                arena.appendCopy(from: valueStart, count: valueCount)
            }
            return true
        }
        guard complete else {
            // A value still in pieces (a nested container made by hand): leave it all
            // to the final assembly.
            arena.truncate(to: start)
            return nil
        }
        writer.endContainer("</dict>\n", depth: dictionary.depth)
        return .bytes(start: start, count: arena.count - start)
    }

    /// Records the entry for `key` in `dictionary`, rendering its `<key>` line unless
    /// the same line has been rendered before.
    func add(_ value: Rendered, forKey key: String, to dictionary: DictionaryRender) throws(Failure) {
        let depth = dictionary.depth + 1
        let start: Int
        let count: Int
        if let line = state.keyLines.line(for: key, depth: depth) {
            (start, count) = line
        } else {
            let lines = state.keyLineBytes
            start = lines.count
            var writer = XMLPlistWriter(output: lines)
            do {
                try writer.writeKey(key, depth: depth)
            } catch {
                lines.truncate(to: start)
                throw error
            }
            count = lines.count - start
            state.keyLines.remember(key, depth: depth, start: start, count: count)
        }
        state.noteWrite(into: dictionary.level)
        if dictionary.entries.isEmpty { dictionary.entries.reserveCapacity(16) }
        dictionary.entries.append(
            DictionaryRender.Entry(key: key, lineStart: start, lineCount: count, value: value))
        dictionary.signature = (dictionary.signature ^ UInt64(start)) &* 0x9E37_79B9_7F4A_7C15
    }
}

// MARK: - Assembling the document

/// Sorted key orders of recently written dictionaries, by their sequence of `<key>`
/// lines: values of one type encode the same keys in the same order and share the
/// rendered lines (see ``KeyLineCache``), so each order is computed once. Equal line
/// positions mean equal keys.
struct KeyOrderCache {
    private var signatures: [UInt64] = []
    private var lines: [[Int]] = []
    private var orders: [[Int]] = []
    private var next = 0
    private static let size = 16

    /// The positions of the entries of `dictionary` in the order XML writes them,
    /// leaving out keys that a later entry with the same key replaced.
    mutating func order(for dictionary: DictionaryRender) -> [Int] {
        let signature = dictionary.signature
        let found: Int? = dictionary.entries.withUnsafeBufferPointer { entries in
            for slot in signatures.indices where signatures[slot] == signature {
                let matches = lines[slot].withUnsafeBufferPointer { candidate in
                    guard candidate.count == entries.count else { return false }
                    for index in candidate.indices where candidate[index] != entries[index].lineStart {
                        return false
                    }
                    return true
                }
                if matches { return slot }
            }
            return nil
        }
        if let found { return orders[found] }
        let entries = dictionary.entries
        let sorted = entries.indices.sorted { a, b in
            if XMLPlistWriter.utf16Precedes(entries[a].key, entries[b].key) { return true }
            if XMLPlistWriter.utf16Precedes(entries[b].key, entries[a].key) { return false }
            return a < b
        }
        var order: [Int] = []
        order.reserveCapacity(sorted.count)
        for (position, entry) in sorted.enumerated() {
            if position + 1 < sorted.count && entries[sorted[position + 1]].key == entries[entry].key {
                continue
            }
            order.append(entry)
        }
        let keyLines = entries.map(\.lineStart)
        if lines.count < Self.size {
            signatures.append(signature)
            lines.append(keyLines)
            orders.append(order)
        } else {
            signatures[next] = signature
            lines[next] = keyLines
            orders[next] = order
            next = (next + 1) % Self.size
        }
        return order
    }
}

extension XMLPlistWriter {
    /// Writes the bytes of the document around the finished pieces of `rendered` (tags and
    /// `<key>` lines), sorting dictionaries as it goes, and notes in `pieces` where each
    /// piece of the arena goes among them.
    mutating func assemble(
        _ rendered: Rendered, keyLines: ByteStorage, pieces: inout [ArenaPiece], cache: inout KeyOrderCache
    ) throws {
        switch rendered {
        case .bytes(let start, let count):
            pieces.append(ArenaPiece(start: start, count: count, mark: output.count))
        case .dictionary(let dictionary):
            guard try beginDictionary(isEmpty: dictionary.entries.isEmpty, depth: dictionary.depth) else {
                return
            }
            let order = cache.order(for: dictionary)
            try dictionary.entries.withUnsafeBufferPointer { entries in
                for index in order {
                    output.append(
                        keyLines.buffer(from: entries[index].lineStart, count: entries[index].lineCount))
                    if case .bytes(let start, let count) = entries[index].value {
                        pieces.append(ArenaPiece(start: start, count: count, mark: output.count))
                        continue
                    }
                    do {
                        try assemble(entries[index].value, keyLines: keyLines, pieces: &pieces, cache: &cache)
                    } catch {
                        throw Self.rethrow(error, at: Self.keyComponent(entries[index].key))
                    }
                }
            }
            endContainer("</dict>\n", depth: dictionary.depth)
        case .array(let array):
            guard try beginArray(isEmpty: array.elements.isEmpty, depth: array.depth) else { return }
            try array.elements.withUnsafeBufferPointer { elements in
                for index in elements.indices {
                    if case .bytes(let start, let count) = elements[index] {
                        pieces.append(ArenaPiece(start: start, count: count, mark: output.count))
                        continue
                    }
                    do {
                        try assemble(elements[index], keyLines: keyLines, pieces: &pieces, cache: &cache)
                    } catch {
                        throw Self.rethrow(error, at: Self.indexComponent(index))
                    }
                }
            }
            endContainer("</array>\n", depth: array.depth)
        }
    }
}

// MARK: - Containers

/// Calls `body` with the value inside `value`, if there is one. A function apart, so
/// that the versions of ``PlistXMLEncoder/KeyedContainer/encodePresent(_:forKey:)`` for
/// known types get a version of it for their type.
@inline(never)
private func withPresentValue<T>(_ value: T?, _ body: (T) throws -> Void) rethrows {
    if let value { try body(value) }
}

extension PlistXMLEncoder {
    struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        typealias Failure = XMLPlistWriter.Failure
        let encoder: PlistXMLEncoder
        let dictionary: DictionaryRender
        let codingPath: [any CodingKey]

        private func put(_ value: PropertyList, _ key: Key) throws {
            try put(encoder.render(value, depth: dictionary.depth + 1, path: codingPath + [key]), key)
        }

        @inline(__always)
        private func put(_ rendered: Rendered, _ key: Key) throws {
            let name = key.stringValue
            do throws(Failure) {
                try encoder.add(rendered, forKey: name, to: dictionary)
            } catch {
                throw PlistXMLEncoder.invalidKey(name, error, path: codingPath + [key])
            }
        }

        private var valueDepth: Int { dictionary.depth + 1 }

        mutating func encodeNil(forKey key: Key) throws { try put(.string("$null"), key) }
        mutating func encode(_ value: Bool, forKey key: Key) throws {
            try put(encoder.renderBoolean(value, depth: valueDepth), key)
        }
        mutating func encode(_ value: String, forKey key: Key) throws {
            let rendered: Rendered
            do throws(Failure) {
                rendered = try encoder.renderString(value, depth: valueDepth)
            } catch {
                throw PlistXMLEncoder.invalidValue(value, error, path: codingPath + [key])
            }
            try put(rendered, key)
        }
        mutating func encode(_ value: Double, forKey key: Key) throws {
            try put(encoder.renderReal(value, depth: valueDepth), key)
        }
        mutating func encode(_ value: Float, forKey key: Key) throws {
            try put(encoder.renderReal(Double(value), depth: valueDepth), key)
        }
        mutating func encode(_ value: Int, forKey key: Key) throws {
            try put(encoder.renderInteger(value, depth: valueDepth), key)
        }
        mutating func encode(_ value: Int8, forKey key: Key) throws {
            try put(encoder.renderInteger(value, depth: valueDepth), key)
        }
        mutating func encode(_ value: Int16, forKey key: Key) throws {
            try put(encoder.renderInteger(value, depth: valueDepth), key)
        }
        mutating func encode(_ value: Int32, forKey key: Key) throws {
            try put(encoder.renderInteger(value, depth: valueDepth), key)
        }
        mutating func encode(_ value: Int64, forKey key: Key) throws {
            try put(encoder.renderInteger(value, depth: valueDepth), key)
        }
        mutating func encode(_ value: UInt, forKey key: Key) throws {
            try put(encoder.renderInteger(value, depth: valueDepth), key)
        }
        mutating func encode(_ value: UInt8, forKey key: Key) throws {
            try put(encoder.renderInteger(value, depth: valueDepth), key)
        }
        mutating func encode(_ value: UInt16, forKey key: Key) throws {
            try put(encoder.renderInteger(value, depth: valueDepth), key)
        }
        mutating func encode(_ value: UInt32, forKey key: Key) throws {
            try put(encoder.renderInteger(value, depth: valueDepth), key)
        }
        mutating func encode(_ value: UInt64, forKey key: Key) throws {
            try put(encoder.renderInteger(value, depth: valueDepth), key)
        }

        mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws {
            if let value { try encode(value, forKey: key) }
        }
        mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws {
            if let value { try encode(value, forKey: key) }
        }
        mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws {
            if let value { try encode(value, forKey: key) }
        }
        mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws {
            if let value { try encode(value, forKey: key) }
        }
        /// Encodes a present optional of any other type.
        ///
        /// Binding `value` in generic code copies the optional, which needs the metadata
        /// of `Optional<T>`, looked up in the runtime's tables on every call (it was a
        /// tenth of all the encoding's instructions). Testing for `nil` needs only
        /// `T`'s; the binding happens in ``encodePresent(_:forKey:)``, which has
        /// versions for the types the format carries natively, where `Optional<T>` is
        /// known when compiling.
        mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
            guard value != nil else { return }
            try encodePresent(value, forKey: key)
        }

        @inline(never)
        @_specialize(exported:false,kind:partial,where T == Date)
        @_specialize(exported:false,kind:partial,where T == Data)
        @_specialize(exported:false,kind:partial,where T == [String])
        @_specialize(exported:false,kind:partial,where T == [Bool])
        @_specialize(exported:false,kind:partial,where T == [Int])
        @_specialize(exported:false,kind:partial,where T == [Double])
        private mutating func encodePresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
            try withPresentValue(value) { try encode($0, forKey: key) }
        }

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            try put(
                encoder.encodeNested(value, parentDepth: dictionary.depth, key: key, path: codingPath), key)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
            -> KeyedEncodingContainer<NestedKey>
        {
            let nested = DictionaryRender(depth: dictionary.depth + 1, level: encoder.state.level)
            try? encoder.add(.dictionary(nested), forKey: key.stringValue, to: dictionary)
            return KeyedEncodingContainer(
                KeyedContainer<NestedKey>(
                    encoder: encoder, dictionary: nested, codingPath: codingPath + [key]))
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            let nested = ArrayRender(depth: dictionary.depth + 1, level: encoder.state.level)
            try? encoder.add(.array(nested), forKey: key.stringValue, to: dictionary)
            return UnkeyedContainer(encoder: encoder, array: nested, codingPath: codingPath + [key])
        }

        mutating func superEncoder() -> any Encoder { superEncoder(key: PlistCodingKey.super) }
        mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder(key: key) }

        private func superEncoder(key: any CodingKey) -> any Encoder {
            let (encoder, dictionary, path) = (self.encoder, self.dictionary, codingPath + [key])
            // Until the superclass encodes something, the entry is an empty dictionary.
            let index = dictionary.entries.count
            try? encoder.add(
                .dictionary(DictionaryRender(depth: dictionary.depth + 1, level: encoder.state.level)),
                forKey: key.stringValue,
                to: dictionary)
            return PlistXMLEncoder(
                state: encoder.state, depth: dictionary.depth + 1, codingPath: path,
                userInfo: encoder.userInfoStorage
            ) {
                encoder.state.noteWrite(into: dictionary.level)
                if index < dictionary.entries.count { dictionary.entries[index].value = $0 }
            }
        }
    }

    struct UnkeyedContainer: UnkeyedEncodingContainer {
        let encoder: PlistXMLEncoder
        let array: ArrayRender
        let codingPath: [any CodingKey]
        var count: Int { array.elements.count }

        private func put(_ value: PropertyList) throws {
            encoder.state.noteWrite(into: array.level)
            array.elements.append(
                try encoder.render(
                    value, depth: array.depth + 1, path: codingPath + [PlistCodingKey(index: count)]))
        }

        mutating func encodeNil() throws { try put(.string("$null")) }
        mutating func encode(_ value: Bool) throws { try put(.boolean(value)) }
        mutating func encode(_ value: String) throws { try put(.string(value)) }
        mutating func encode(_ value: Double) throws { try put(.real(value)) }
        mutating func encode(_ value: Float) throws { try put(.real(Double(value))) }
        mutating func encode(_ value: Int) throws { try put(PlistXMLEncoder.integer(value)) }
        mutating func encode(_ value: Int8) throws { try put(PlistXMLEncoder.integer(value)) }
        mutating func encode(_ value: Int16) throws { try put(PlistXMLEncoder.integer(value)) }
        mutating func encode(_ value: Int32) throws { try put(PlistXMLEncoder.integer(value)) }
        mutating func encode(_ value: Int64) throws { try put(PlistXMLEncoder.integer(value)) }
        mutating func encode(_ value: UInt) throws { try put(PlistXMLEncoder.integer(value)) }
        mutating func encode(_ value: UInt8) throws { try put(PlistXMLEncoder.integer(value)) }
        mutating func encode(_ value: UInt16) throws { try put(PlistXMLEncoder.integer(value)) }
        mutating func encode(_ value: UInt32) throws { try put(PlistXMLEncoder.integer(value)) }
        mutating func encode(_ value: UInt64) throws { try put(PlistXMLEncoder.integer(value)) }

        mutating func encode<T: Encodable>(_ value: T) throws {
            encoder.state.noteWrite(into: array.level)
            array.elements.append(
                try encoder.encodeNested(
                    value, parentDepth: array.depth, key: PlistCodingKey(index: count), path: codingPath))
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
            -> KeyedEncodingContainer<NestedKey>
        {
            let nested = DictionaryRender(depth: array.depth + 1, level: encoder.state.level)
            let path = codingPath + [PlistCodingKey(index: count)]
            encoder.state.noteWrite(into: array.level)
            array.elements.append(.dictionary(nested))
            return KeyedEncodingContainer(
                KeyedContainer<NestedKey>(encoder: encoder, dictionary: nested, codingPath: path))
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            let nested = ArrayRender(depth: array.depth + 1, level: encoder.state.level)
            let path = codingPath + [PlistCodingKey(index: count)]
            encoder.state.noteWrite(into: array.level)
            array.elements.append(.array(nested))
            return UnkeyedContainer(encoder: encoder, array: nested, codingPath: path)
        }

        mutating func superEncoder() -> any Encoder {
            let array = self.array
            let state = encoder.state
            let index = array.elements.count
            encoder.state.noteWrite(into: array.level)
            array.elements.append(
                .dictionary(DictionaryRender(depth: array.depth + 1, level: encoder.state.level)))
            return PlistXMLEncoder(
                state: encoder.state, depth: array.depth + 1,
                codingPath: codingPath + [PlistCodingKey(index: index)],
                userInfo: encoder.userInfoStorage
            ) {
                state.noteWrite(into: array.level)
                array.elements[index] = $0
            }
        }
    }

    struct SingleValueContainer: SingleValueEncodingContainer {
        typealias Failure = XMLPlistWriter.Failure
        let encoder: PlistXMLEncoder
        var codingPath: [any CodingKey] { encoder.codingPath }

        private func put(_ value: PropertyList) throws {
            encoder.set(try encoder.render(value, depth: encoder.depth, path: encoder.codingPath))
        }

        mutating func encodeNil() throws { try put(.string("$null")) }
        mutating func encode(_ value: Bool) throws { try put(.boolean(value)) }
        mutating func encode(_ value: String) throws { try put(.string(value)) }
        mutating func encode(_ value: Double) throws { try put(.real(value)) }
        mutating func encode(_ value: Float) throws { try put(.real(Double(value))) }
        mutating func encode(_ value: Int) throws { try put(PlistXMLEncoder.integer(value)) }
        mutating func encode(_ value: Int8) throws { try put(PlistXMLEncoder.integer(value)) }
        mutating func encode(_ value: Int16) throws { try put(PlistXMLEncoder.integer(value)) }
        mutating func encode(_ value: Int32) throws { try put(PlistXMLEncoder.integer(value)) }
        mutating func encode(_ value: Int64) throws { try put(PlistXMLEncoder.integer(value)) }
        mutating func encode(_ value: UInt) throws { try put(PlistXMLEncoder.integer(value)) }
        mutating func encode(_ value: UInt8) throws { try put(PlistXMLEncoder.integer(value)) }
        mutating func encode(_ value: UInt16) throws { try put(PlistXMLEncoder.integer(value)) }
        mutating func encode(_ value: UInt32) throws { try put(PlistXMLEncoder.integer(value)) }
        mutating func encode(_ value: UInt64) throws { try put(PlistXMLEncoder.integer(value)) }

        mutating func encode<T: Encodable>(_ value: T) throws {
            let native: Rendered?
            do throws(Failure) {
                native = try encoder.renderNative(value, depth: encoder.depth)
            } catch {
                throw PlistXMLEncoder.invalidValue(value, error, path: encoder.codingPath)
            }
            if let native {
                encoder.set(native)
            } else {
                try value.encode(to: encoder)
            }
        }
    }
}
