import Foundation

// The reader's unsafe code, in one place.
//
// The XML reader (``XMLPlistScanner``) and the flat layout it fills (``PlistMap``) run
// once per start tag, end tag and run of text, so a few of their data structures step
// outside what Swift checks. Each is here, with why it is sound; the rest of the reader
// uses them through their safe-looking interfaces and holds no unsafe tricks itself.
// (Pointers handed over by libxml2's callbacks are the C interface, not a trick, and
// stay where they are read.)
//
// 1. `ByteStorage`: a byte buffer on `malloc`/`realloc` whose three properties are
//    `@exclusivity(unchecked)`. Swift checks every access to a class's stored `var` at
//    run time for overlapping access (a call into the runtime per access). A buffer is
//    only ever used by one owner on one thread, call by call: the scanner while it
//    reads, then the decoder that reads it, or one encoding. None of its methods calls
//    out while it accesses a property, so no access can overlap another and the check
//    can never fire. It grows with `realloc`, which for large buffers remaps pages
//    instead of copying them. Its `buffer(from:count:)` pointers are valid until the
//    next append (which may move the storage); callers read them before appending.
//    Copies of up to 16 bytes use unaligned 4- and 8-byte loads and stores
//    (`loadUnaligned`, defined for any alignment). The writer and the `Codable`
//    encoder append their output to the same kind of buffer, on the same terms.
//    `takeData(from:count:)` hands the whole allocation to the `Data` it returns, whose
//    deallocator frees it from the start of the allocation (the range may begin
//    later); the encoder writes that range in place first (note 6 in
//    `CodableUnsafe.swift`), and the range is checked to lie within the capacity.
//
// 2. `FixedStack`: the scanner's open containers, and the first keys of its open
//    dictionaries, each in one allocation of a fixed capacity, indexed without the
//    uniqueness and bounds checks `Array` makes on each change. Sound because the
//    scanner pushes at most `PropertyList.maximumDepth` containers and the `<plist>`
//    frame (a deeper document is refused before the push), and at most 16 keys for
//    each open dictionary, dropping a dictionary's keys (`truncate(to:)`) when it
//    closes, for a capacity of 16 per frame (`append` also checks the capacity with a
//    precondition, and `truncate(to:)` its argument); and because it only ever indexes
//    `0..<count` (the last frame's index is `count - 1` after a check that
//    `count > 0`; a dictionary's keys run from the count when it opened to `count`).
//
// 3. `NameCache`: element names by the address of the name. libxml2 hands over element
//    names from its dictionary, which holds one copy of each name for the whole parse
//    (the parser context owns the dictionary; the cache lives no longer than one
//    parse), so an address seen before is that same name again, and what was worked
//    out from its bytes holds. A name not seen before is looked at byte by byte.
//
// 4. `NodeStorage`: the map's nodes in one `malloc`/`realloc` allocation, on the terms
//    of note 1 (one owner at a time, no access overlapping another, so its properties
//    are `@exclusivity(unchecked)`). An `Array` checks on every append that its buffer
//    is not shared (a call into the runtime) and on every subscript that the index is
//    in bounds; the scanner appends a node for every value and key. Sound because a
//    node is a plain value (`PlistMap.Node` holds no references, which
//    `_isPOD` checks when the storage is made), so moving nodes with `realloc` and
//    freeing them without deinitialising is what `Array` itself would do, and
//    because every index read or written lies in `0..<count`: the scanner writes
//    only the node it appended last or a container's own node, which it appended when
//    the container opened, and reads only nodes it appended; readers of a finished map
//    follow indices the map itself holds (each within the map, as the scanner wrote
//    them). Each subscript also checks the index against `count` with a precondition,
//    which costs a comparison.
//
// Nothing here depends on the memory layout of a Swift type.

/// A stack of at most `capacity` values in one fixed allocation; see the notes at the
/// top of this file. Freed by ``free()``.
struct FixedStack<Element> {
    private let base: UnsafeMutablePointer<Element>
    private let capacity: Int
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = capacity
        base = UnsafeMutablePointer<Element>.allocate(capacity: capacity)
    }

    var isEmpty: Bool { count == 0 }
    var last: Element? { count > 0 ? base[count - 1] : nil }

    /// The element at `index`, which must lie in `0..<count`.
    subscript(index: Int) -> Element {
        unsafeAddress { UnsafePointer(base + index) }
        nonmutating unsafeMutableAddress { base + index }
    }

    mutating func append(_ element: Element) {
        precondition(count < capacity)
        (base + count).initialize(to: element)
        count += 1
    }

    mutating func popLast() -> Element? {
        guard count > 0 else { return nil }
        count -= 1
        return (base + count).move()
    }

    /// Drops the elements from `newCount` on.
    mutating func truncate(to newCount: Int) {
        precondition(newCount >= 0 && newCount <= count)
        (base + newCount).deinitialize(count: count - newCount)
        count = newCount
    }

    mutating func free() {
        base.deinitialize(count: count)
        base.deallocate()
        count = 0
    }
}

/// What was worked out from a name, by the name's address: 16 slots, each remembering
/// the last address that fell into it; see the notes at the top of this file. Freed by
/// ``free()``.
struct NameCache<Value> {
    private static var size: Int { 16 }
    private let addresses = UnsafeMutablePointer<UnsafePointer<UInt8>?>.allocate(capacity: size)
    private let values = UnsafeMutablePointer<Value?>.allocate(capacity: size)

    init() {
        addresses.initialize(repeating: nil, count: Self.size)
        values.initialize(repeating: nil, count: Self.size)
    }

    /// What `read` makes of the name at `name`, read from its bytes the first time the
    /// address is seen (or after another name took its slot).
    @inline(__always)
    func value(_ name: UnsafePointer<UInt8>, _ read: (UnsafePointer<UInt8>) -> Value) -> Value {
        let slot = Int(truncatingIfNeeded: UInt(bitPattern: name) >> 3) & (Self.size - 1)
        if addresses[slot] == name, let value = values[slot] { return value }
        let value = read(name)
        addresses[slot] = name
        values[slot] = value
        return value
    }

    func free() {
        values.deinitialize(count: Self.size)
        addresses.deallocate()
        values.deallocate()
    }
}

/// A growable byte buffer that the scanner appends text to and the decoder reads from
/// without copying or bounds checks on each access.
///
/// It lives on `malloc` and grows with `realloc`, which for large buffers remaps pages
/// instead of copying them, so a 20 MB document is not copied and faulted in twice.
/// See note 1 at the top of this file.
final class ByteStorage {
    // Unchecked: one owner at a time, and no access overlaps another (note 1 at the
    // top of this file).
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
            for offset in 0..<length {
                target.storeBytes(of: start[offset], toByteOffset: offset, as: UInt8.self)
            }
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
            let eight = UInt64(byte) &* 0x0101_0101_0101_0101
            UnsafeMutableRawPointer(base + count).storeBytes(of: eight, as: UInt64.self)
        } else {
            (base + count).update(repeating: byte, count: repeats)
        }
        count += repeats
    }

    /// The bytes as `Data`, handing over the buffer without copying; the storage is
    /// empty afterwards.
    func takeData() -> Data {
        takeData(from: 0, count: count)
    }

    /// The `length` bytes at `offset` as `Data`, handing over the buffer without
    /// copying (the whole allocation is freed with the `Data`); the storage is empty
    /// afterwards. The range may reach past ``count`` into bytes the caller has written
    /// in place, but not past the capacity. Spare capacity of a page or more beyond the
    /// range is given back first.
    func takeData(from offset: Int, count length: Int) -> Data {
        precondition(offset >= 0 && length >= 0 && offset + length <= capacity, "a range outside the storage")
        var storage = base
        let end = offset + length
        if end > 0, capacity - end >= 4096, let shrunk = realloc(base, end) {
            storage = shrunk.assumingMemoryBound(to: UInt8.self)
        }
        let data =
            offset == 0
            ? Data(bytesNoCopy: storage, count: length, deallocator: .free)
            : Data(
                bytesNoCopy: storage + offset, count: length,
                deallocator: .custom { start, _ in free(start - offset) })
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
        guard let grown = realloc(base, newCapacity) else {
            fatalError("out of memory allocating \(newCapacity) bytes")
        }
        base = grown.assumingMemoryBound(to: UInt8.self)
        capacity = newCapacity
    }
}

/// The map's nodes, in one growable allocation; see note 4 at the top of this file.
final class NodeStorage {
    // Unchecked: one owner at a time, and no access overlaps another (note 1 at the
    // top of this file).
    @exclusivity(unchecked) private var base: UnsafeMutablePointer<PlistMap.Node>
    @exclusivity(unchecked) private(set) var count = 0
    @exclusivity(unchecked) private var capacity: Int

    init(capacity: Int = 16) {
        precondition(_isPOD(PlistMap.Node.self), "a node holds references")
        self.capacity = max(capacity, 16)
        base = Self.allocate(self.capacity)
    }

    deinit {
        free(base)
    }

    private static func allocate(_ capacity: Int) -> UnsafeMutablePointer<PlistMap.Node> {
        let bytes = capacity * MemoryLayout<PlistMap.Node>.stride
        guard let memory = malloc(bytes) else { fatalError("out of memory allocating \(bytes) bytes") }
        return memory.bindMemory(to: PlistMap.Node.self, capacity: capacity)
    }

    /// The node at `index`, which must lie in `0..<count`.
    subscript(index: Int) -> PlistMap.Node {
        @inline(__always) get {
            precondition(index >= 0 && index < count, "a node index outside the map")
            return base[index]
        }
        @inline(__always) set {
            precondition(index >= 0 && index < count, "a node index outside the map")
            base[index] = newValue
        }
    }

    @inline(__always)
    func append(_ node: PlistMap.Node) {
        if count == capacity { grow(to: count + 1) }
        (base + count).initialize(to: node)
        count += 1
    }

    /// Makes room for `minimum` nodes. An empty storage takes a fresh allocation of
    /// that size rather than growing its small one: glibc then serves a large request
    /// the way it serves `Array`'s, from memory that earlier maps of the same size gave
    /// back, where growing with `realloc` mapped fresh pages for every map, each
    /// faulted in anew.
    func reserveCapacity(_ minimum: Int) {
        guard minimum > capacity else { return }
        if count == 0 {
            free(base)
            capacity = minimum
            base = Self.allocate(minimum)
        } else {
            grow(to: minimum)
        }
    }

    /// The nodes, valid until the next append (which may move them).
    var buffer: UnsafeBufferPointer<PlistMap.Node> {
        UnsafeBufferPointer(start: base, count: count)
    }

    private func grow(to minimum: Int) {
        var newCapacity = capacity * 2
        while newCapacity < minimum { newCapacity *= 2 }
        let bytes = newCapacity * MemoryLayout<PlistMap.Node>.stride
        guard let grown = realloc(base, bytes) else { fatalError("out of memory allocating \(bytes) bytes") }
        base = grown.bindMemory(to: PlistMap.Node.self, capacity: newCapacity)
        capacity = newCapacity
    }
}
