import Foundation

/// A property list read from XML, kept flat: one array of nodes in document order and
/// one byte buffer for the text of strings and keys and the bytes of data.
///
/// Containers record where their subtree ends, so a reader can skip a value without
/// visiting it. Keys carry a hash of their bytes so that dictionary look-ups and the
/// duplicate-key check compare integers first. Strings are materialised only when
/// asked for; the `Codable` decoder reads straight from the map.
struct PlistMap {
    enum Kind: UInt8 {
        case string, key, integer, real, boolean, date, data, array, dictionary
    }

    /// One value, in 16 bytes.
    struct Node {
        var kind: Kind
        /// Integer: negative. Boolean: the value.
        var flag: Bool
        /// String, key, data: byte length. Array: elements. Dictionary: entries.
        var count: UInt32
        /// Keys keep their offset in the low and their hash in the high 32 bits.
        private var storage: UInt64

        init(kind: Kind, flag: Bool, count: UInt32, payload: UInt64, hash: UInt64) {
            self.kind = kind
            self.flag = flag
            self.count = count
            storage = kind == .key ? (payload & 0xFFFF_FFFF) | (hash << 32) : payload
        }

        /// String, key, data: offset in `bytes`. Integer: magnitude. Real, date: the
        /// `Double` bit pattern. Container: the index after its last descendant.
        var payload: UInt64 {
            get { kind == .key ? storage & 0xFFFF_FFFF : storage }
            set { storage = kind == .key ? (storage & ~0xFFFF_FFFF) | (newValue & 0xFFFF_FFFF) : newValue }
        }

        /// Key: a 32-bit hash of its bytes (see ``PlistMap/hash(_:)``).
        var hash: UInt64 {
            get { kind == .key ? storage >> 32 : 0 }
            set { if kind == .key { storage = (storage & 0xFFFF_FFFF) | (newValue << 32) } }
        }
    }

    var nodes = NodeStorage()
    var bytes = ByteStorage(capacity: 256)

    /// The index after the value at `index` and all of its descendants.
    @inline(__always)
    func end(of index: Int) -> Int {
        let node = nodes[index]
        return node.kind == .array || node.kind == .dictionary ? Int(node.payload) : index + 1
    }

    @inline(__always)
    func withBytes<R>(of node: Node, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try body(bytes.buffer(from: Int(node.payload), count: Int(node.count)))
    }

    func string(at index: Int) -> String {
        withBytes(of: nodes[index]) { String(decoding: $0, as: UTF8.self) }
    }

    func data(at index: Int) -> Data {
        withBytes(of: nodes[index]) { Data($0) }
    }

    func integer(at index: Int) -> PropertyList.Integer {
        let node = nodes[index]
        return PropertyList.Integer(isNegative: node.flag, magnitude: node.payload)!
    }

    /// A cheap hash of a key's length and its two words (``words(_:count:)``: its first
    /// and last eight bytes, or for a shorter key all of its bytes), to tell keys apart
    /// before comparing their bytes. It is not collision-resistant: code that could be
    /// made slow by crafted collisions (large dictionaries) uses `Hasher`.
    @inline(__always)
    static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        let count = bytes.count
        var hash = UInt64(count) &* 0x9E37_79B9_7F4A_7C15
        guard count > 0, let base = bytes.baseAddress else { return (hash ^ (hash >> 31)) & 0xFFFF_FFFF }
        let (head, tail) = words(base, count: count)
        if count >= 8 {
            hash = (hash ^ head) &* 0xBF58_476D_1CE4_E5B9
            hash = (hash ^ tail) &* 0x94D0_49BB_1331_11EB
        } else {
            hash = (hash ^ (head | tail << 32)) &* 0xBF58_476D_1CE4_E5B9
        }
        return (hash ^ (hash >> 31)) & 0xFFFF_FFFF
    }

    /// Two words that together hold every one of the `count` bytes at `start`, for a
    /// `count` of 1 to 16, read without touching a byte outside them: the first and
    /// last eight bytes (which overlap below 16), the first and last four below eight,
    /// and the first, middle and last byte below four. Two runs of bytes of the same
    /// length are equal exactly when their words are.
    @inline(__always)
    static func words(_ start: UnsafePointer<UInt8>, count: Int) -> (UInt64, UInt64) {
        let raw = UnsafeRawPointer(start)
        if count >= 8 {
            return (
                raw.loadUnaligned(as: UInt64.self),
                raw.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
            )
        }
        if count >= 4 {
            return (
                UInt64(raw.loadUnaligned(as: UInt32.self)),
                UInt64(raw.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self))
            )
        }
        return (UInt64(start[0]) | UInt64(start[count >> 1]) << 8 | UInt64(start[count - 1]) << 16, 0)
    }

    static func hash(_ string: String) -> UInt64 {
        var string = string
        return string.withUTF8 { hash($0) }
    }

    // MARK: Building values

    /// The value at `index` as a `PropertyList`.
    func value(at index: Int) -> PropertyList {
        let node = nodes[index]
        switch node.kind {
        case .string, .key: return .string(string(at: index))
        case .integer: return .integer(integer(at: index))
        case .real: return .real(Double(bitPattern: node.payload))
        case .boolean: return .boolean(node.flag)
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: node.payload)))
        case .data: return .data(data(at: index))
        case .array:
            var elements: [PropertyList] = []
            elements.reserveCapacity(Int(node.count))
            var cursor = index + 1
            let end = Int(node.payload)
            while cursor < end {
                elements.append(value(at: cursor))
                cursor = self.end(of: cursor)
            }
            return .array(elements)
        case .dictionary:
            var entries: [String: PropertyList] = Dictionary(minimumCapacity: Int(node.count))
            var cursor = index + 1
            let end = Int(node.payload)
            while cursor < end {
                entries[string(at: cursor)] = value(at: cursor + 1)
                cursor = self.end(of: cursor + 1)
            }
            return .dictionary(entries)
        }
    }
}

extension PlistMap {
    /// Lays out an existing value flat, as the reader would have.
    init(flattening value: PropertyList) {
        append(value)
    }

    private mutating func appendBytes(_ string: String, kind: Kind) {
        var string = string
        let offset = bytes.count
        let hash = string.withUTF8 { utf8 in
            bytes.append(utf8)
            return kind == .key ? Self.hash(utf8) : 0
        }
        nodes.append(
            Node(
                kind: kind, flag: false, count: UInt32(bytes.count - offset), payload: UInt64(offset),
                hash: hash))
    }

    private mutating func append(_ value: PropertyList) {
        switch value {
        case .string(let string): appendBytes(string, kind: .string)
        case .integer(let integer):
            nodes.append(
                Node(kind: .integer, flag: integer.isNegative, count: 0, payload: integer.magnitude, hash: 0))
        case .real(let real):
            nodes.append(Node(kind: .real, flag: false, count: 0, payload: real.bitPattern, hash: 0))
        case .boolean(let flag): nodes.append(Node(kind: .boolean, flag: flag, count: 0, payload: 0, hash: 0))
        case .date(let date):
            nodes.append(
                Node(
                    kind: .date, flag: false, count: 0,
                    payload: date.timeIntervalSinceReferenceDate.bitPattern, hash: 0))
        case .data(let data):
            let offset = bytes.count
            data.withUnsafeBytes { bytes.append($0.bindMemory(to: UInt8.self)) }
            nodes.append(
                Node(kind: .data, flag: false, count: UInt32(data.count), payload: UInt64(offset), hash: 0))
        case .array(let elements):
            let index = nodes.count
            nodes.append(Node(kind: .array, flag: false, count: UInt32(elements.count), payload: 0, hash: 0))
            for element in elements { append(element) }
            nodes[index].payload = UInt64(nodes.count)
        case .dictionary(let entries):
            let index = nodes.count
            nodes.append(
                Node(kind: .dictionary, flag: false, count: UInt32(entries.count), payload: 0, hash: 0))
            for (key, element) in entries {
                appendBytes(key, kind: .key)
                append(element)
            }
            nodes[index].payload = UInt64(nodes.count)
        }
    }
}
