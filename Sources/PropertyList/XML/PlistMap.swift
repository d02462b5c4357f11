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

    var nodes: [Node] = []
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

    /// A cheap hash of a key's length and its first and last eight bytes, to tell keys
    /// apart before comparing their bytes. It is not collision-resistant: code that
    /// could be made slow by crafted collisions (large dictionaries) uses `Hasher`.
    @inline(__always)
    static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        let count = bytes.count
        var hash = UInt64(count) &* 0x9E37_79B9_7F4A_7C15
        if count >= 8 {
            let raw = UnsafeRawPointer(bytes.baseAddress!)
            hash = (hash ^ raw.loadUnaligned(as: UInt64.self)) &* 0xBF58_476D_1CE4_E5B9
            hash = (hash ^ raw.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)) &* 0x94D0_49BB_1331_11EB
        } else {
            var packed: UInt64 = 0
            for byte in bytes { packed = packed << 8 | UInt64(byte) }
            hash = (hash ^ packed) &* 0xBF58_476D_1CE4_E5B9
        }
        return (hash ^ (hash >> 31)) & 0xFFFF_FFFF
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
        nodes.append(Node(kind: kind, flag: false, count: UInt32(bytes.count - offset), payload: UInt64(offset), hash: hash))
    }

    private mutating func append(_ value: PropertyList) {
        switch value {
        case .string(let string): appendBytes(string, kind: .string)
        case .integer(let integer):
            nodes.append(Node(kind: .integer, flag: integer.isNegative, count: 0, payload: integer.magnitude, hash: 0))
        case .real(let real): nodes.append(Node(kind: .real, flag: false, count: 0, payload: real.bitPattern, hash: 0))
        case .boolean(let flag): nodes.append(Node(kind: .boolean, flag: flag, count: 0, payload: 0, hash: 0))
        case .date(let date):
            nodes.append(Node(kind: .date, flag: false, count: 0,
                              payload: date.timeIntervalSinceReferenceDate.bitPattern, hash: 0))
        case .data(let data):
            let offset = bytes.count
            data.withUnsafeBytes { bytes.append($0.bindMemory(to: UInt8.self)) }
            nodes.append(Node(kind: .data, flag: false, count: UInt32(data.count), payload: UInt64(offset), hash: 0))
        case .array(let elements):
            let index = nodes.count
            nodes.append(Node(kind: .array, flag: false, count: UInt32(elements.count), payload: 0, hash: 0))
            for element in elements { append(element) }
            nodes[index].payload = UInt64(nodes.count)
        case .dictionary(let entries):
            let index = nodes.count
            nodes.append(Node(kind: .dictionary, flag: false, count: UInt32(entries.count), payload: 0, hash: 0))
            for (key, element) in entries {
                appendBytes(key, kind: .key)
                append(element)
            }
            nodes[index].payload = UInt64(nodes.count)
        }
    }
}

/// A growable byte buffer that the scanner appends text to and the decoder reads from
/// without copying or bounds checks on each access.
///
/// It lives on `malloc` and grows with `realloc`, which for large buffers remaps pages
/// instead of copying them, so a 20 MB document is not copied and faulted in twice.
final class ByteStorage {
    // One owner appends at a time, so the dynamic exclusivity checks Swift would make on
    // every access to these class properties are turned off.
    @exclusivity(unchecked) private(set) var base: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) private(set) var count = 0
    @exclusivity(unchecked) private var capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 16)
        base = Self.allocate(self.capacity)
    }

    deinit {
        free(base)
    }

    private static func allocate(_ capacity: Int) -> UnsafeMutablePointer<UInt8> {
        guard let memory = malloc(capacity) else { fatalError("out of memory allocating \(capacity) bytes") }
        return memory.assumingMemoryBound(to: UInt8.self)
    }

    @inline(__always)
    func append(_ source: UnsafeBufferPointer<UInt8>) {
        guard let start = source.baseAddress else { return }
        append(start, count: source.count)
    }

    /// Appends `length` bytes from `start`. Up to 16 bytes are copied with two
    /// overlapping loads and stores of the widest size that fits, not a call to memcpy.
    @inline(__always)
    func append(_ start: UnsafePointer<UInt8>, count length: Int) {
        if count + length > capacity { grow(to: count + length) }
        let target = UnsafeMutableRawPointer(base + count)
        let source = UnsafeRawPointer(start)
        if length >= 8 && length <= 16 {
            let head = source.loadUnaligned(as: UInt64.self)
            let tail = source.loadUnaligned(fromByteOffset: length - 8, as: UInt64.self)
            target.storeBytes(of: head, as: UInt64.self)
            target.storeBytes(of: tail, toByteOffset: length - 8, as: UInt64.self)
        } else if length >= 4 && length < 8 {
            let head = source.loadUnaligned(as: UInt32.self)
            let tail = source.loadUnaligned(fromByteOffset: length - 4, as: UInt32.self)
            target.storeBytes(of: head, as: UInt32.self)
            target.storeBytes(of: tail, toByteOffset: length - 4, as: UInt32.self)
        } else if length < 4 {
            for offset in 0..<length { target.storeBytes(of: start[offset], toByteOffset: offset, as: UInt8.self) }
        } else {
            target.copyMemory(from: source, byteCount: length)
        }
        count += length
    }

    @inline(__always)
    func append(_ byte: UInt8) {
        if count == capacity { grow(to: count + 1) }
        base[count] = byte
        count += 1
    }

    @inline(__always)
    func append(repeating byte: UInt8, count repeats: Int) {
        guard repeats > 0 else { return }
        if count + repeats + 8 > capacity { grow(to: count + repeats + 8) }
        if repeats <= 8 {
            // Indentation is short: one store of eight, of which `repeats` are kept.
            UnsafeMutableRawPointer(base + count).storeBytes(of: UInt64(byte) &* 0x0101_0101_0101_0101, as: UInt64.self)
        } else {
            for offset in 0..<repeats { base[count + offset] = byte }
        }
        count += repeats
    }

    /// The bytes as `Data`, handing over the buffer without copying; the storage is
    /// empty afterwards.
    func takeData() -> Data {
        let data = Data(bytesNoCopy: base, count: count, deallocator: .free)
        capacity = 16
        count = 0
        base = Self.allocate(capacity)
        return data
    }

    func reserveCapacity(_ minimum: Int) {
        if minimum > capacity { grow(to: minimum) }
    }

    /// Appends `value` in decimal, with leading zeros to at least `width` digits.
    @inline(__always)
    func appendDecimal(_ value: UInt64, width: Int = 1) {
        var digits = 1
        var probe = value / 10
        while probe != 0 {
            digits += 1
            probe /= 10
        }
        let length = Swift.max(digits, width)
        if count + length > capacity { grow(to: count + length) }
        var cursor = count + length
        var rest = value
        repeat {
            cursor -= 1
            base[cursor] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
        } while rest != 0
        while cursor > count {
            cursor -= 1
            base[cursor] = UInt8(ascii: "0")
        }
        count += length
    }

    /// Appends a copy of `length` bytes from `offset` of this same storage (which may
    /// move as it grows, so the source is located afterwards).
    @inline(__always)
    func appendCopy(from offset: Int, count length: Int) {
        if count + length > capacity { grow(to: count + length) }
        (base + count).update(from: base + offset, count: length)
        count += length
    }

    /// Drops the bytes from `offset` on.
    @inline(__always)
    func truncate(to offset: Int) {
        count = offset
    }

    @inline(__always)
    func buffer(from offset: Int, count length: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: base + offset, count: length)
    }

    @inline(__always)
    func mutableBuffer(from offset: Int) -> UnsafeMutableBufferPointer<UInt8> {
        UnsafeMutableBufferPointer(start: base + offset, count: count - offset)
    }

    private func grow(to minimum: Int) {
        var newCapacity = capacity * 2
        while newCapacity < minimum { newCapacity *= 2 }
        guard let grown = realloc(base, newCapacity) else { fatalError("out of memory allocating \(newCapacity) bytes") }
        base = grown.assumingMemoryBound(to: UInt8.self)
        capacity = newCapacity
    }
}
