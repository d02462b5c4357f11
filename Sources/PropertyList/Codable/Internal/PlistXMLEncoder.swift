import Foundation

/// A value as the encoder has rendered it so far: finished XML in the arena, or a
/// container whose entries are still arriving.
enum Rendered {
    /// `count` bytes of finished XML at `start` in the arena, indented for their depth.
    case bytes(start: Int, count: Int)
    case dictionary(DictionaryRender)
    case array(ArrayRender)
}

/// A dictionary being encoded: its keys, each key's rendered `<key>` line, and values.
/// Keys are sorted when the document is assembled; a key encoded twice keeps its last
/// value, as with Foundation's encoder.
final class DictionaryRender {
    let depth: Int
    // Only the encoder of this dictionary touches these, one call at a time: Swift's
    // dynamic exclusivity checks on each append are turned off.
    @exclusivity(unchecked) var keys: [String] = []
    @exclusivity(unchecked) var keyLines: [(start: Int, count: Int)] = []
    @exclusivity(unchecked) var values: [Rendered] = []

    init(depth: Int) {
        self.depth = depth
    }
}

/// An array being encoded.
final class ArrayRender {
    let depth: Int
    @exclusivity(unchecked) var elements: [Rendered] = []

    init(depth: Int) {
        self.depth = depth
    }
}

/// The `Encoder` behind ``PlistEncoder``.
///
/// Scalars are rendered to XML the moment they are encoded, at the indentation their
/// depth calls for, into one shared arena; containers keep only the positions of their
/// pieces. Assembling the document then sorts each dictionary's keys and copies the
/// pieces out in order. No intermediate tree of values is built.
final class PlistXMLEncoder: Encoder {
    let arena: ByteStorage
    let depth: Int
    let codingPath: [any CodingKey]
    let userInfoStorage: [CodingUserInfoKey: any Sendable]
    var userInfo: [CodingUserInfoKey: Any] { userInfoStorage }
    @exclusivity(unchecked) private(set) var result: Rendered?
    /// Receives each new result (a super-encoder writes into its parent through it).
    private let sink: ((Rendered) -> Void)?

    init(
        arena: ByteStorage, depth: Int, codingPath: [any CodingKey], userInfo: [CodingUserInfoKey: any Sendable],
        sink: ((Rendered) -> Void)? = nil
    ) {
        self.arena = arena
        self.depth = depth
        self.codingPath = codingPath
        self.userInfoStorage = userInfo
        self.sink = sink
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
            dictionary = DictionaryRender(depth: depth)
            set(.dictionary(dictionary))
        }
        return KeyedEncodingContainer(KeyedContainer<Key>(encoder: self, dictionary: dictionary, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let array: ArrayRender
        if case .array(let existing) = result {
            array = existing
        } else {
            array = ArrayRender(depth: depth)
            set(.array(array))
        }
        return UnkeyedContainer(encoder: self, array: array, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueContainer(encoder: self)
    }

    // MARK: Rendering

    /// Renders a value that is not a container (or an array of scalars) at `depth`.
    func render(_ value: PropertyList, depth: Int, path: @autoclosure () -> [any CodingKey]) throws -> Rendered {
        let start = arena.count
        var writer = XMLPlistWriter(output: arena)
        do {
            try writer.write(value, depth: depth)
        } catch let failure as XMLPlistWriter.Failure {
            arena.truncate(to: start)
            throw EncodingError.invalidValue(
                value, EncodingError.Context(codingPath: path(), debugDescription: failure.message, underlyingError: failure.error))
        }
        return .bytes(start: start, count: arena.count - start)
    }

    /// The property list for values the format carries natively. (Each branch has
    /// checked that `T` is exactly the type it reads, so the casts are identities.)
    @inline(__always)
    static func scalar<T: Encodable>(_ value: T) -> PropertyList? {
        if T.self == String.self { return .string(unsafeBitCast(value, to: String.self)) }
        if T.self == Int.self { return integer(unsafeBitCast(value, to: Int.self)) }
        if T.self == Double.self { return .real(unsafeBitCast(value, to: Double.self)) }
        if T.self == Bool.self { return .boolean(unsafeBitCast(value, to: Bool.self)) }
        if T.self == Date.self { return .date(unsafeBitCast(value, to: Date.self)) }
        if T.self == Data.self { return .data(unsafeBitCast(value, to: Data.self)) }
        let type = ObjectIdentifier(T.self)
        if type == FastPathTypes.stringArray { return .array(unsafeBitCast(value, to: [String].self).map { .string($0) }) }
        if type == FastPathTypes.boolArray { return .array(unsafeBitCast(value, to: [Bool].self).map { .boolean($0) }) }
        return nil
    }

    static func integer<T: BinaryInteger>(_ value: T) -> PropertyList {
        .integer(PropertyList.Integer(exactly: value)!)
    }

    /// Encodes `value` as this encoder's own result.
    func encodeValue<T: Encodable>(_ value: T) throws -> Rendered? {
        if let scalar = Self.scalar(value) {
            set(try render(scalar, depth: depth, path: codingPath))
            return result
        }
        try value.encode(to: self)
        return result
    }

    /// Encodes a value nested one level below `parentDepth` under `key`.
    func encodeNested<T: Encodable>(_ value: T, parentDepth: Int, key: any CodingKey, path: [any CodingKey]) throws -> Rendered {
        if let scalar = Self.scalar(value) {
            return try render(scalar, depth: parentDepth + 1, path: path + [key])
        }
        let encoder = PlistXMLEncoder(arena: arena, depth: parentDepth + 1, codingPath: path + [key], userInfo: userInfoStorage)
        try value.encode(to: encoder)
        // A value that encodes nothing is an empty dictionary, as in Foundation.
        return encoder.result ?? .dictionary(DictionaryRender(depth: parentDepth + 1))
    }

    /// Renders the `<key>` line of `key` in `dictionary` and records the entry.
    func add(_ value: Rendered, forKey key: String, to dictionary: DictionaryRender, path: @autoclosure () -> [any CodingKey]) throws {
        let start = arena.count
        var writer = XMLPlistWriter(output: arena)
        do {
            try writer.writeKey(key, depth: dictionary.depth + 1)
        } catch let failure as XMLPlistWriter.Failure {
            arena.truncate(to: start)
            throw EncodingError.invalidValue(
                key, EncodingError.Context(codingPath: path(), debugDescription: "the key " + failure.message, underlyingError: failure.error))
        }
        if dictionary.keys.isEmpty {
            dictionary.keys.reserveCapacity(16)
            dictionary.keyLines.reserveCapacity(16)
            dictionary.values.reserveCapacity(16)
        }
        dictionary.keys.append(key)
        dictionary.keyLines.append((start, arena.count - start))
        dictionary.values.append(value)
    }
}

// MARK: - Assembling the document

/// Sorted key orders of recently written dictionaries, by their key sequence: values of
/// one type encode the same keys in the same order, so each order is computed once.
struct KeyOrderCache {
    private var keys: [[String]] = []
    private var orders: [[Int]] = []
    private var next = 0
    private static let size = 16

    /// The positions of `keys` in the order XML writes them, leaving out keys that a
    /// later entry with the same key replaced.
    mutating func order(for keys: [String]) -> [Int] {
        search: for (slot, candidate) in self.keys.enumerated() where candidate.count == keys.count {
            for index in candidate.indices where candidate[index] != keys[index] { continue search }
            return orders[slot]
        }
        let sorted = keys.indices.sorted { a, b in
            if XMLPlistWriter.utf16Precedes(keys[a], keys[b]) { return true }
            if XMLPlistWriter.utf16Precedes(keys[b], keys[a]) { return false }
            return a < b
        }
        var order: [Int] = []
        order.reserveCapacity(sorted.count)
        for (position, entry) in sorted.enumerated() {
            if position + 1 < sorted.count && keys[sorted[position + 1]] == keys[entry] { continue }
            order.append(entry)
        }
        if self.keys.count < Self.size {
            self.keys.append(keys)
            orders.append(order)
        } else {
            self.keys[next] = keys
            orders[next] = order
            next = (next + 1) % Self.size
        }
        return order
    }
}

extension XMLPlistWriter {
    /// Copies a rendered value out of `arena`, sorting dictionaries as it goes.
    mutating func assemble(_ rendered: Rendered, from arena: ByteStorage, cache: inout KeyOrderCache) throws {
        switch rendered {
        case .bytes(let start, let count):
            output.append(arena.buffer(from: start, count: count))
        case .dictionary(let dictionary):
            guard try beginDictionary(isEmpty: dictionary.keys.isEmpty, depth: dictionary.depth) else { return }
            for index in cache.order(for: dictionary.keys) {
                let line = dictionary.keyLines[index]
                output.append(arena.buffer(from: line.start, count: line.count))
                do {
                    try assemble(dictionary.values[index], from: arena, cache: &cache)
                } catch {
                    throw Self.rethrow(error, at: Self.keyComponent(dictionary.keys[index]))
                }
            }
            endContainer("</dict>\n", depth: dictionary.depth)
        case .array(let array):
            guard try beginArray(isEmpty: array.elements.isEmpty, depth: array.depth) else { return }
            for (index, element) in array.elements.enumerated() {
                do {
                    try assemble(element, from: arena, cache: &cache)
                } catch {
                    throw Self.rethrow(error, at: Self.indexComponent(index))
                }
            }
            endContainer("</array>\n", depth: array.depth)
        }
    }
}

// MARK: - Containers

extension PlistXMLEncoder {
    struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let encoder: PlistXMLEncoder
        let dictionary: DictionaryRender
        let codingPath: [any CodingKey]

        private func put(_ value: PropertyList, _ key: Key) throws {
            let rendered = try encoder.render(value, depth: dictionary.depth + 1, path: codingPath + [key])
            try encoder.add(rendered, forKey: key.stringValue, to: dictionary, path: codingPath + [key])
        }

        mutating func encodeNil(forKey key: Key) throws { try put(.string("$null"), key) }
        mutating func encode(_ value: Bool, forKey key: Key) throws { try put(.boolean(value), key) }
        mutating func encode(_ value: String, forKey key: Key) throws { try put(.string(value), key) }
        mutating func encode(_ value: Double, forKey key: Key) throws { try put(.real(value), key) }
        mutating func encode(_ value: Float, forKey key: Key) throws { try put(.real(Double(value)), key) }
        mutating func encode(_ value: Int, forKey key: Key) throws { try put(PlistXMLEncoder.integer(value), key) }
        mutating func encode(_ value: Int8, forKey key: Key) throws { try put(PlistXMLEncoder.integer(value), key) }
        mutating func encode(_ value: Int16, forKey key: Key) throws { try put(PlistXMLEncoder.integer(value), key) }
        mutating func encode(_ value: Int32, forKey key: Key) throws { try put(PlistXMLEncoder.integer(value), key) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { try put(PlistXMLEncoder.integer(value), key) }
        mutating func encode(_ value: UInt, forKey key: Key) throws { try put(PlistXMLEncoder.integer(value), key) }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { try put(PlistXMLEncoder.integer(value), key) }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { try put(PlistXMLEncoder.integer(value), key) }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { try put(PlistXMLEncoder.integer(value), key) }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { try put(PlistXMLEncoder.integer(value), key) }

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            let rendered = try encoder.encodeNested(value, parentDepth: dictionary.depth, key: key, path: codingPath)
            try encoder.add(rendered, forKey: key.stringValue, to: dictionary, path: codingPath + [key])
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
            -> KeyedEncodingContainer<NestedKey>
        {
            let nested = DictionaryRender(depth: dictionary.depth + 1)
            try? encoder.add(.dictionary(nested), forKey: key.stringValue, to: dictionary, path: codingPath + [key])
            return KeyedEncodingContainer(KeyedContainer<NestedKey>(encoder: encoder, dictionary: nested, codingPath: codingPath + [key]))
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            let nested = ArrayRender(depth: dictionary.depth + 1)
            try? encoder.add(.array(nested), forKey: key.stringValue, to: dictionary, path: codingPath + [key])
            return UnkeyedContainer(encoder: encoder, array: nested, codingPath: codingPath + [key])
        }

        mutating func superEncoder() -> any Encoder { superEncoder(key: PlistCodingKey.super) }
        mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder(key: key) }

        private func superEncoder(key: any CodingKey) -> any Encoder {
            let (encoder, dictionary, path) = (self.encoder, self.dictionary, codingPath + [key])
            // Until the superclass encodes something, the entry is an empty dictionary.
            let index = dictionary.values.count
            try? encoder.add(.dictionary(DictionaryRender(depth: dictionary.depth + 1)), forKey: key.stringValue, to: dictionary, path: path)
            return PlistXMLEncoder(arena: encoder.arena, depth: dictionary.depth + 1, codingPath: path, userInfo: encoder.userInfoStorage) {
                if index < dictionary.values.count { dictionary.values[index] = $0 }
            }
        }
    }

    struct UnkeyedContainer: UnkeyedEncodingContainer {
        let encoder: PlistXMLEncoder
        let array: ArrayRender
        let codingPath: [any CodingKey]
        var count: Int { array.elements.count }

        private func put(_ value: PropertyList) throws {
            array.elements.append(try encoder.render(value, depth: array.depth + 1, path: codingPath + [PlistCodingKey(index: count)]))
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
            array.elements.append(
                try encoder.encodeNested(value, parentDepth: array.depth, key: PlistCodingKey(index: count), path: codingPath))
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
            -> KeyedEncodingContainer<NestedKey>
        {
            let nested = DictionaryRender(depth: array.depth + 1)
            let path = codingPath + [PlistCodingKey(index: count)]
            array.elements.append(.dictionary(nested))
            return KeyedEncodingContainer(KeyedContainer<NestedKey>(encoder: encoder, dictionary: nested, codingPath: path))
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            let nested = ArrayRender(depth: array.depth + 1)
            let path = codingPath + [PlistCodingKey(index: count)]
            array.elements.append(.array(nested))
            return UnkeyedContainer(encoder: encoder, array: nested, codingPath: path)
        }

        mutating func superEncoder() -> any Encoder {
            let array = self.array
            let index = array.elements.count
            array.elements.append(.dictionary(DictionaryRender(depth: array.depth + 1)))
            return PlistXMLEncoder(
                arena: encoder.arena, depth: array.depth + 1, codingPath: codingPath + [PlistCodingKey(index: index)],
                userInfo: encoder.userInfoStorage
            ) {
                array.elements[index] = $0
            }
        }
    }

    struct SingleValueContainer: SingleValueEncodingContainer {
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
            if let scalar = PlistXMLEncoder.scalar(value) {
                try put(scalar)
            } else {
                try value.encode(to: encoder)
            }
        }
    }
}
