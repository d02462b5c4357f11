import Foundation

/// A value being encoded: a finished property list, or a container that nested
/// encoders may still add to.
enum EncodedSlot {
    case value(PropertyList)
    case container(EncodedContainer)

    var propertyList: PropertyList {
        switch self {
        case .value(let value): value
        case .container(let container): container.propertyList
        }
    }
}

/// A dictionary or array under construction, shared by the containers that write to it.
///
/// Entries are kept in the order they were encoded; a key encoded twice keeps its last
/// value, as with Foundation's encoder.
final class EncodedContainer {
    var entries: [(key: String, slot: EncodedSlot)] = []
    var elements: [EncodedSlot] = []
    let isDictionary: Bool

    init(dictionary: Bool) {
        isDictionary = dictionary
    }

    subscript(key key: String) -> EncodedSlot? {
        get { entries.last(where: { $0.key == key })?.slot }
        set {
            guard let newValue else { return }
            if entries.isEmpty { entries.reserveCapacity(16) }
            entries.append((key, newValue))
        }
    }

    /// The positions of `entries` in the order XML writes them, leaving out values that
    /// a later encoding of the same key replaced.
    ///
    /// Values of one type encode the same keys in the same order, so the order is
    /// remembered in `cache` for the key sequences seen last.
    func sortedPositions(cache: inout KeyOrderCache) -> [Int] {
        if let known = cache.order(for: entries) { return known }
        let ordered = entries.indices.sorted { a, b in
            let keyA = entries[a].key
            let keyB = entries[b].key
            if XMLPlistWriter.utf16Precedes(keyA, keyB) { return true }
            if XMLPlistWriter.utf16Precedes(keyB, keyA) { return false }
            return a < b
        }
        var result: [Int] = []
        result.reserveCapacity(ordered.count)
        for (position, entry) in ordered.enumerated() {
            if position + 1 < ordered.count && entries[ordered[position + 1]].key == entries[entry].key { continue }
            result.append(entry)
        }
        cache.remember(result, for: entries)
        return result
    }

    var propertyList: PropertyList {
        if isDictionary {
            return .dictionary(Dictionary(entries.map { ($0.key, $0.slot.propertyList) }, uniquingKeysWith: { _, last in last }))
        }
        return .array(elements.map(\.propertyList))
    }
}

/// Sorted key orders of recently written dictionaries, by their key sequence.
struct KeyOrderCache {
    private var keys: [[String]] = []
    private var orders: [[Int]] = []
    private var next = 0
    private static let size = 16

    func order(for entries: [(key: String, slot: EncodedSlot)]) -> [Int]? {
        search: for (slot, candidate) in keys.enumerated() where candidate.count == entries.count {
            for index in candidate.indices where candidate[index] != entries[index].key { continue search }
            return orders[slot]
        }
        return nil
    }

    mutating func remember(_ order: [Int], for entries: [(key: String, slot: EncodedSlot)]) {
        let sequence = entries.map(\.key)
        if keys.count < Self.size {
            keys.append(sequence)
            orders.append(order)
        } else {
            keys[next] = sequence
            orders[next] = order
            next = (next + 1) % Self.size
        }
    }
}

extension XMLPlistWriter {
    /// Writes an encoded value tree.
    mutating func write(_ slot: EncodedSlot, depth: Int, cache: inout KeyOrderCache) throws {
        switch slot {
        case .value(let value):
            try write(value, depth: depth)
        case .container(let container) where container.isDictionary:
            guard try beginDictionary(isEmpty: container.entries.isEmpty, depth: depth) else { return }
            for position in container.sortedPositions(cache: &cache) {
                let (key, element) = container.entries[position]
                do {
                    try writeKey(key, depth: depth + 1)
                    try write(element, depth: depth + 1, cache: &cache)
                } catch {
                    throw Self.rethrow(error, at: Self.keyComponent(key))
                }
            }
            endContainer("</dict>\n", depth: depth)
        case .container(let container):
            guard try beginArray(isEmpty: container.elements.isEmpty, depth: depth) else { return }
            for (index, element) in container.elements.enumerated() {
                do {
                    try write(element, depth: depth + 1, cache: &cache)
                } catch {
                    throw Self.rethrow(error, at: Self.indexComponent(index))
                }
            }
            endContainer("</array>\n", depth: depth)
        }
    }
}

/// The `Encoder` behind ``PlistEncoder``. Each nested value gets its own encoder, which
/// hands what it encodes to `sink`.
final class PlistTreeEncoder: Encoder {
    let codingPath: [any CodingKey]
    let userInfoStorage: [CodingUserInfoKey: any Sendable]
    var userInfo: [CodingUserInfoKey: Any] { userInfoStorage }
    /// What was encoded so far, if anything.
    private(set) var slot: EncodedSlot?
    /// Receives each new slot (superEncoder writes into its parent through it).
    private let sink: ((EncodedSlot) -> Void)?

    init(codingPath: [any CodingKey], userInfo: [CodingUserInfoKey: any Sendable], sink: ((EncodedSlot) -> Void)? = nil) {
        self.codingPath = codingPath
        self.userInfoStorage = userInfo
        self.sink = sink
    }

    private func set(_ slot: EncodedSlot) {
        self.slot = slot
        sink?(slot)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let container: EncodedContainer
        if case .container(let existing) = slot, existing.isDictionary {
            container = existing
        } else {
            container = EncodedContainer(dictionary: true)
            set(.container(container))
        }
        return KeyedEncodingContainer(KeyedContainer<Key>(encoder: self, container: container, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let container: EncodedContainer
        if case .container(let existing) = slot, !existing.isDictionary {
            container = existing
        } else {
            container = EncodedContainer(dictionary: false)
            set(.container(container))
        }
        return UnkeyedContainer(encoder: self, container: container, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueContainer(encoder: self)
    }

    /// Encodes `value` as this encoder's content; returns what it encoded.
    func encodeValue<T: Encodable>(_ value: T) throws -> EncodedSlot? {
        if let scalar = Self.scalar(value) {
            set(.value(scalar))
            return slot
        }
        try value.encode(to: self)
        return slot
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

    /// Encodes a nested value found under `key`.
    func encodeNested<T: Encodable>(_ value: T, key: any CodingKey) throws -> EncodedSlot {
        if let scalar = Self.scalar(value) { return .value(scalar) }
        let encoder = PlistTreeEncoder(codingPath: codingPath + [key], userInfo: userInfoStorage)
        try value.encode(to: encoder)
        // A value that encodes nothing is an empty dictionary, as in Foundation.
        return encoder.slot ?? .container(EncodedContainer(dictionary: true))
    }

    static func integer<T: BinaryInteger>(_ value: T) -> PropertyList {
        .integer(PropertyList.Integer(exactly: value)!)
    }

    // MARK: Containers

    struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let encoder: PlistTreeEncoder
        let container: EncodedContainer
        let codingPath: [any CodingKey]

        private func put(_ value: PropertyList, _ key: Key) { container[key: key.stringValue] = .value(value) }

        mutating func encodeNil(forKey key: Key) throws { put(.string("$null"), key) }
        mutating func encode(_ value: Bool, forKey key: Key) throws { put(.boolean(value), key) }
        mutating func encode(_ value: String, forKey key: Key) throws { put(.string(value), key) }
        mutating func encode(_ value: Double, forKey key: Key) throws { put(.real(value), key) }
        mutating func encode(_ value: Float, forKey key: Key) throws { put(.real(Double(value)), key) }
        mutating func encode(_ value: Int, forKey key: Key) throws { put(PlistTreeEncoder.integer(value), key) }
        mutating func encode(_ value: Int8, forKey key: Key) throws { put(PlistTreeEncoder.integer(value), key) }
        mutating func encode(_ value: Int16, forKey key: Key) throws { put(PlistTreeEncoder.integer(value), key) }
        mutating func encode(_ value: Int32, forKey key: Key) throws { put(PlistTreeEncoder.integer(value), key) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { put(PlistTreeEncoder.integer(value), key) }
        mutating func encode(_ value: UInt, forKey key: Key) throws { put(PlistTreeEncoder.integer(value), key) }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { put(PlistTreeEncoder.integer(value), key) }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { put(PlistTreeEncoder.integer(value), key) }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { put(PlistTreeEncoder.integer(value), key) }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { put(PlistTreeEncoder.integer(value), key) }

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            container[key: key.stringValue] = try encoder.encodeNested(value, key: key)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
            -> KeyedEncodingContainer<NestedKey>
        {
            let nested = EncodedContainer(dictionary: true)
            container[key: key.stringValue] = .container(nested)
            return KeyedEncodingContainer(
                KeyedContainer<NestedKey>(encoder: encoder, container: nested, codingPath: codingPath + [key]))
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            let nested = EncodedContainer(dictionary: false)
            container[key: key.stringValue] = .container(nested)
            return UnkeyedContainer(encoder: encoder, container: nested, codingPath: codingPath + [key])
        }

        mutating func superEncoder() -> any Encoder { superEncoder(key: PlistCodingKey.super) }
        mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder(key: key) }

        private func superEncoder(key: any CodingKey) -> any Encoder {
            let container = self.container
            let name = key.stringValue
            return PlistTreeEncoder(codingPath: codingPath + [key], userInfo: encoder.userInfoStorage) {
                container[key: name] = $0
            }
        }
    }

    struct UnkeyedContainer: UnkeyedEncodingContainer {
        let encoder: PlistTreeEncoder
        let container: EncodedContainer
        let codingPath: [any CodingKey]
        var count: Int { container.elements.count }

        private func put(_ value: PropertyList) { container.elements.append(.value(value)) }

        mutating func encodeNil() throws { put(.string("$null")) }
        mutating func encode(_ value: Bool) throws { put(.boolean(value)) }
        mutating func encode(_ value: String) throws { put(.string(value)) }
        mutating func encode(_ value: Double) throws { put(.real(value)) }
        mutating func encode(_ value: Float) throws { put(.real(Double(value))) }
        mutating func encode(_ value: Int) throws { put(PlistTreeEncoder.integer(value)) }
        mutating func encode(_ value: Int8) throws { put(PlistTreeEncoder.integer(value)) }
        mutating func encode(_ value: Int16) throws { put(PlistTreeEncoder.integer(value)) }
        mutating func encode(_ value: Int32) throws { put(PlistTreeEncoder.integer(value)) }
        mutating func encode(_ value: Int64) throws { put(PlistTreeEncoder.integer(value)) }
        mutating func encode(_ value: UInt) throws { put(PlistTreeEncoder.integer(value)) }
        mutating func encode(_ value: UInt8) throws { put(PlistTreeEncoder.integer(value)) }
        mutating func encode(_ value: UInt16) throws { put(PlistTreeEncoder.integer(value)) }
        mutating func encode(_ value: UInt32) throws { put(PlistTreeEncoder.integer(value)) }
        mutating func encode(_ value: UInt64) throws { put(PlistTreeEncoder.integer(value)) }

        mutating func encode<T: Encodable>(_ value: T) throws {
            container.elements.append(try encoder.encodeNested(value, key: PlistCodingKey(index: count)))
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
            -> KeyedEncodingContainer<NestedKey>
        {
            let nested = EncodedContainer(dictionary: true)
            let path = codingPath + [PlistCodingKey(index: count)]
            container.elements.append(.container(nested))
            return KeyedEncodingContainer(KeyedContainer<NestedKey>(encoder: encoder, container: nested, codingPath: path))
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            let nested = EncodedContainer(dictionary: false)
            let path = codingPath + [PlistCodingKey(index: count)]
            container.elements.append(.container(nested))
            return UnkeyedContainer(encoder: encoder, container: nested, codingPath: path)
        }

        mutating func superEncoder() -> any Encoder {
            let container = self.container
            let index = container.elements.count
            container.elements.append(.container(EncodedContainer(dictionary: true)))
            return PlistTreeEncoder(codingPath: codingPath + [PlistCodingKey(index: index)], userInfo: encoder.userInfoStorage) {
                container.elements[index] = $0
            }
        }
    }

    struct SingleValueContainer: SingleValueEncodingContainer {
        let encoder: PlistTreeEncoder
        var codingPath: [any CodingKey] { encoder.codingPath }

        private func put(_ value: PropertyList) { encoder.set(.value(value)) }

        mutating func encodeNil() throws { put(.string("$null")) }
        mutating func encode(_ value: Bool) throws { put(.boolean(value)) }
        mutating func encode(_ value: String) throws { put(.string(value)) }
        mutating func encode(_ value: Double) throws { put(.real(value)) }
        mutating func encode(_ value: Float) throws { put(.real(Double(value))) }
        mutating func encode(_ value: Int) throws { put(PlistTreeEncoder.integer(value)) }
        mutating func encode(_ value: Int8) throws { put(PlistTreeEncoder.integer(value)) }
        mutating func encode(_ value: Int16) throws { put(PlistTreeEncoder.integer(value)) }
        mutating func encode(_ value: Int32) throws { put(PlistTreeEncoder.integer(value)) }
        mutating func encode(_ value: Int64) throws { put(PlistTreeEncoder.integer(value)) }
        mutating func encode(_ value: UInt) throws { put(PlistTreeEncoder.integer(value)) }
        mutating func encode(_ value: UInt8) throws { put(PlistTreeEncoder.integer(value)) }
        mutating func encode(_ value: UInt16) throws { put(PlistTreeEncoder.integer(value)) }
        mutating func encode(_ value: UInt32) throws { put(PlistTreeEncoder.integer(value)) }
        mutating func encode(_ value: UInt64) throws { put(PlistTreeEncoder.integer(value)) }

        mutating func encode<T: Encodable>(_ value: T) throws {
            if let scalar = PlistTreeEncoder.scalar(value) {
                put(scalar)
            } else {
                try value.encode(to: encoder)
            }
        }
    }
}
