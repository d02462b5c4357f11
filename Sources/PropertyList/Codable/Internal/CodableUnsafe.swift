import Foundation

// The Codable layer's unsafe code, in one place.
//
// ``PlistMapDecoder`` and ``PlistXMLEncoder`` are called once per value and per key of
// every document, so eight tricks step outside what Swift checks. Each is here, with why
// it is sound; the decoder and encoder use them only through these types.
//
// 1. `StringRepresentation`: a `String`'s two words, read as two integers, as the key of
//    a small cache. The same coding keys are looked up in every dictionary of a type;
//    their `stringValue` is almost always a literal, whose two words are the same every
//    time, so a cache keyed by the words skips reading the string's UTF-8 again.
//    Sound because the words are only ever compared, never turned back into a string,
//    and because every cache that compares them also keeps the `String` it stored alive:
//    - a small string (up to 15 UTF-8 bytes on 64-bit platforms) keeps its bytes and
//      count in the two words, so equal words are equal contents;
//    - a large native string is a count and flags word and a pointer to its storage
//      object, which the cache keeps alive, so no other object can have that address,
//      and storage that is shared is never changed in place: equal words are the
//      same storage and the same count, hence equal contents;
//    - an immortal literal points at constant bytes in the binary.
//    Equal words therefore mean equal strings; unequal words merely miss the cache,
//    and the key is read the slow way. This depends on `String` being two 64-bit words,
//    which is checked at compile time (`#if _pointerBitWidth(_64)`; other platforms
//    use a hash of the contents and compare the strings) and again by a precondition on
//    `MemoryLayout<String>.size` in `StringRepresentation.key(of:)`, a constant that
//    the optimiser folds away.
//
// 2. `UnownedDecoder`: the key table of a keyed container refers to its decoder without
//    retaining it (`Unmanaged`), and calls it with `_withUnsafeGuaranteedRef`, which
//    skips the retain and release around each call. Sound because a decoder outlives
//    every container it makes that is used: the top-level decoder is held by
//    `PlistDecoder` for the whole decoding and those for superclasses by the decoder
//    that made them (`PlistMapDecoder.superDecoder`), and a container is used only
//    while the `init(from:)` it was handed to runs, as `Decodable` requires.
//
// 3. `identityCast(_:to:)`: the decoder's and encoder's fast paths for the types the
//    format carries natively (`String`, `Int`, `Double`, `Bool`, `Date`, `Data` and
//    arrays of some) return a value of the concrete type as the generic `T` the caller
//    asked for. Each has just checked `T.self == Value.self`, so the cast is the
//    identity and `as! T` would always succeed; but in the unspecialised generic code
//    the `Codable` containers call, `as! T` is a call to `swift_dynamicCast` (and a
//    copy) per value: with it, the decoding after the scan took 4% more instructions.
//    `identityCast` reinterprets the value instead, after a check of the same
//    metatypes that the optimiser folds where `T` is known and that costs a comparison
//    where it is not.
//
// 4. `@exclusivity(unchecked)`: the mutable state of the decoder and the encoder
//    (`DecoderPosition`, `EncoderPosition`, `DictionaryRender`, `ArrayRender`,
//    `EncodingState`) is declared here and nowhere else, without Swift's run-time
//    exclusivity checks: with them, encoding took about a fifth more instructions (a
//    call to `swift_beginAccess` per access of a class property). Sound because one
//    decoding or encoding uses its objects from one thread, call by call, and no
//    access to these properties is held across a call out to `init(from:)` or
//    `encode(to:)`: the methods that touch them evaluate their arguments (which may
//    encode or decode a nested value) before the access begins, as Swift orders inout
//    accesses (SE-0176), and return before calling out. Overlapping accesses, which
//    the checks would catch, cannot arise. (A `Decodable` or `Encodable` that hands
//    its decoder or encoder to another thread breaks the `Codable` contract; it would
//    race with or without the checks, which only see accesses on one thread.)
//
// 5. `KeyTablePool`: the key table of a keyed container lives in memory the decoder
//    owns, not in an object of its own, and the container holds a plain pointer to it.
//    The standard library's box copies the container on every call (once per field);
//    a pointer is copied without the atomic retain and release an object reference
//    costs, and no table is allocated and freed per dictionary. The tables form a
//    stack: a container's table is pushed when the container is made and popped when
//    the `init(from:)` it was made for returns (``PlistMapDecoder`` restores the
//    pool's `count` after each nested value), so a table is reused only once its
//    container can no longer be used, for the same reason note 2 gives: a container
//    is used only while the `init(from:)` it was handed to runs. The pool frees the
//    tables with its decoder, which outlives every container it made.
//
// 6. `ByteStorage.takeDocument(literals:pieces:)`: the encoder assembles the document
//    in the arena its values were rendered into, and hands that storage out as the
//    `Data`, so an encoding writes about one document's worth of fresh memory rather
//    than two (a separate output buffer and a copy of every byte into it cost a fifth of
//    the encoding's time in page faults). Walking the rendered tree writes the bytes
//    between the finished pieces (header, container tags, `<key>` lines, footer) apart,
//    in order, and notes each piece with its place among them. Then the heaviest chain
//    of pieces that lie in the arena in the document's order and do not overlap stays
//    (usually all of them; `heaviestChain` takes whole runs of such pieces); the others
//    (a dictionary's values encoded in another order than its sorted keys) are copied
//    aside first. The document's start in the arena is
//    chosen so that the heaviest run of staying pieces is already in place (the arena
//    begins with `documentPrefix` unused bytes so that the header usually fits before
//    it), and the arena grows to hold the whole document before anything moves. The
//    staying pieces then move with `memmove`, those that go down in the document's
//    order and each run of those that go up from its last piece back. Sound because
//    sources and destinations are each disjoint and in the same order, so a piece that
//    goes down lands below the source of every piece after it, and one that goes up
//    lands above the source of every piece before it, at or below where any piece
//    after its run lands: no piece's bytes are overwritten before they have moved.
//    Last, the bytes between and the pieces set aside are copied into the gaps, which
//    no staying piece occupies. Every piece is checked to lie within the arena's bytes
//    before anything moves, and the handed-out range within its capacity.
//
// 7. `ReusedKeyedContainer`: a `KeyedDecodingContainer` is a struct around one class
//    instance, the standard library's box, which holds the concrete container; making
//    one for every dictionary costs an allocation and three look-ups in the run-time's
//    generic caches (the metadata of `KeyedContainer<Key>`, its conformance, and the
//    box's metadata): with the benchmark's survey, a tenth of the time of the decoding
//    after the scan, 6% of its instructions. The key table of note 5 keeps the last
//    container made for it, as an `AnyObject`, with the `ObjectIdentifier` of its `Key`
//    type, and the next container asked of that table with the same `Key` type is that
//    one, read back with `unsafeBitCast`. Sound because the word is only ever read back
//    as the very type it was stored from (the key types are compared first), because
//    `KeyedDecodingContainer` holds exactly one strong reference, its box (checked by a
//    precondition on its size; the standard library is built for library evolution, so
//    the size and the copy go through the metadata of `KeyedDecodingContainer<Key>`,
//    the one look-up left), so storing it as `AnyObject` retains and releases that box
//    as the struct would, and because the box's container is nothing but the table's
//    address, which is the same for every container the table serves. The container is
//    handed out again only once the table is reused, when the `init(from:)` it was made
//    for has returned, for the reason note 5 gives.
//
// 8. `SmallASCIIString`: most strings in a survey (kinds, tags, short options) are up
//    to 15 bytes of ASCII, which a 64-bit `String` keeps inline in its two words: the
//    bytes in order, then a last byte holding flags and the count.
//    `String(decoding:as:)` validates the bytes as UTF-8 and copies them in through its
//    general path: making strings was a fifth of the decoding after the scan, and a
//    short string made in place costs about 80 instructions less. The reader has
//    already refused invalid UTF-8, and bytes below 0x80 are valid on their own, so
//    `SmallASCIIString.make` checks that every byte is ASCII, loads them into two words
//    and sets the last byte as the standard library does. Sound because the layout is
//    not assumed but checked, once per process, before it is used
//    (`SmallASCIIString.isAvailable`): for every length from 0 to 15, the words made
//    for a sample must equal, bit for bit, those of the `String` that
//    `String(decoding:as:)` makes for the same bytes (compared as integers, as in note
//    1, without making a `String` of them). Were the layout ever different, on another
//    platform or a later standard library, no string is made this way and every string
//    takes the ordinary path. A string made here is therefore bit-for-bit the value the
//    standard library would have made.

/// A `String`'s representation, as a cache key; see note 1 at the top of this file.
enum StringRepresentation {
    #if _pointerBitWidth(_64)
        /// Two integers that are equal for two strings only if the strings are equal,
        /// as long as one of the strings is kept alive (see note 1 above).
        @inline(__always)
        static func key(of string: String) -> (UInt64, UInt64) {
            // A constant the optimiser folds away; were `String` ever another size here,
            // the first use stops the program instead of misreading it.
            precondition(MemoryLayout<String>.size == 16, "String is not two 64-bit words")
            return unsafeBitCast(string, to: (UInt64, UInt64).self)
        }

        /// Whether equal keys are enough to know two strings are equal.
        static var equalKeysMeanEqualStrings: Bool { true }
    #else
        /// A hash of the contents and the length, on platforms whose `String` is not
        /// two 64-bit words: equal strings give equal keys, and the caches compare the
        /// strings before using an entry.
        static func key(of string: String) -> (UInt64, UInt64) {
            (UInt64(truncatingIfNeeded: string.hashValue), UInt64(string.utf8.count))
        }

        static var equalKeysMeanEqualStrings: Bool { false }
    #endif
}

/// A reference to a ``PlistMapDecoder`` that does not retain it; see note 2 at the top of
/// this file.
struct UnownedDecoder {
    private let reference: Unmanaged<PlistMapDecoder>

    init(_ decoder: PlistMapDecoder) {
        reference = Unmanaged.passUnretained(decoder)
    }

    /// The decoder, retained for as long as the caller holds it.
    var decoder: PlistMapDecoder { reference.takeUnretainedValue() }

    /// Calls `body` with the decoder, without retaining it for the call.
    @inline(__always)
    func call<R>(_ body: (PlistMapDecoder) throws -> R) rethrows -> R {
        try reference._withUnsafeGuaranteedRef(body)
    }
}

/// `value` as `T`, where `T` is `Value`: see note 3 at the top of this file.
@inline(__always)
func identityCast<Value, T>(_ value: Value, to type: T.Type) -> T {
    precondition(Value.self == T.self, "identityCast between different types")
    return unsafeBitCast(value, to: T.self)
}

// MARK: - State without run-time exclusivity checks (note 4)

/// Where a ``PlistMapDecoder`` is: the node it decodes and its coding path. Nested
/// values move the index and push their key, and restore both afterwards.
class DecoderPosition {
    @exclusivity(unchecked) var index: Int
    @exclusivity(unchecked) var codingPath: [any CodingKey]
    /// The key tables of the keyed containers in use (note 5).
    @exclusivity(unchecked) var keyTables = KeyTablePool()

    init(index: Int, codingPath: [any CodingKey]) {
        self.index = index
        self.codingPath = codingPath
    }
}

/// Where a ``PlistXMLEncoder`` is: its depth, coding path and what it has rendered. An
/// encoder is used again for another value once the last one is finished (see
/// ``PlistXMLEncoder/encodeNested(_:parentDepth:key:path:)``), hence the variables.
class EncoderPosition {
    @exclusivity(unchecked) var depth: Int
    @exclusivity(unchecked) var codingPath: [any CodingKey]
    @exclusivity(unchecked) var result: Rendered?

    init(depth: Int, codingPath: [any CodingKey]) {
        self.depth = depth
        self.codingPath = codingPath
    }
}

/// A dictionary being encoded: one entry per key, with the position of the key's
/// rendered `<key>` line among the key lines and the value. Keys are sorted when the document
/// is assembled; a key encoded twice keeps its last value, as with Foundation's encoder.
final class DictionaryRender {
    struct Entry {
        var key: String
        var lineStart: Int
        var lineCount: Int
        var value: Rendered
    }

    @exclusivity(unchecked) var depth: Int
    @exclusivity(unchecked) var entries: [Entry] = []
    /// A hash of the entries' `<key>` line positions in order (see ``KeyOrderCache``).
    @exclusivity(unchecked) var signature: UInt64 = 0
    /// How many values deep the encoding was when the dictionary was made (see
    /// ``EncodingState/level``).
    @exclusivity(unchecked) var level: Int

    init(depth: Int, level: Int) {
        self.depth = depth
        self.level = level
    }
}

/// An array being encoded.
final class ArrayRender {
    let depth: Int
    /// As ``DictionaryRender/level``.
    let level: Int
    @exclusivity(unchecked) var elements: [Rendered] = []

    init(depth: Int, level: Int) {
        self.depth = depth
        self.level = level
    }
}

/// What one encoding shares between its encoders: the arena that values are rendered
/// into, and the `<key>` lines rendered so far (kept apart, so that the arena space of
/// a finished value can be reused).
final class EncodingState {
    let arena: ByteStorage
    let keyLineBytes = ByteStorage(capacity: 4096)
    @exclusivity(unchecked) var keyLines = KeyLineCache()
    @exclusivity(unchecked) var keyOrders = KeyOrderCache()
    /// Encoders and dictionaries of finished values, to be used again rather than
    /// allocated anew for every value.
    @exclusivity(unchecked) var spareEncoders: [PlistXMLEncoder] = []
    @exclusivity(unchecked) var spareDictionaries: [DictionaryRender] = []

    /// How many values deep the encoding is: ``PlistXMLEncoder/encodeNested(_:parentDepth:key:path:)``
    /// counts one more while a nested value encodes.
    @exclusivity(unchecked) var level = 0
    /// Whether a value wrote into a container of an enclosing value (one it was handed
    /// by other means than its encoder) while it encoded: the arena space of finished
    /// values is then no longer reused, since such a write may live in it.
    @exclusivity(unchecked) var wroteOutward = false

    init(arena: ByteStorage) {
        self.arena = arena
    }
}

// MARK: - Small strings made from their bytes (note 8)

/// Strings of up to 15 ASCII bytes made directly in a `String`'s two words; see note 8
/// at the top of this file.
enum SmallASCIIString {
    /// The most bytes a string made here holds.
    static var capacity: Int { 15 }

    /// Whether this process's `String` lays out small ASCII strings as ``make(_:)``
    /// does, checked once by comparing with strings the standard library made.
    static let isAvailable: Bool = {
        #if _pointerBitWidth(_64) && _endian(little)
            guard MemoryLayout<String>.size == 16 else { return false }
            let sample = Array("Az09 ~!Qp_-.,:;m".utf8)
            return sample.withUnsafeBufferPointer { sample in
                // Both ways of loading: copied, and a word at a time.
                [nil, sample.baseAddress! + sample.count].allSatisfy { limit in
                    (0...capacity).allSatisfy { count in
                        let prefix = UnsafeBufferPointer(rebasing: sample[..<count])
                        let made = String(decoding: prefix, as: UTF8.self)
                        guard let words = words(of: prefix, limit: limit) else { return false }
                        let expected = StringRepresentation.key(of: made)
                        return words.0 == expected.0 && words.1 == expected.1
                    }
                }
            }
        #else
            return false
        #endif
    }()

    /// The two words of a small string holding `bytes`, or `nil` when a byte is not
    /// ASCII or there are too many. The bytes are loaded a word at a time when 16 bytes
    /// from their start lie before `limit`, else copied.
    @inline(__always)
    private static func words(of bytes: UnsafeBufferPointer<UInt8>, limit: UnsafePointer<UInt8>?) -> (
        UInt64, UInt64
    )? {
        let count = bytes.count
        guard count <= capacity else { return nil }
        var words: (UInt64, UInt64) = (0, 0)
        if count > 0 {
            let start = bytes.baseAddress!
            if let limit, limit - start >= 16 {
                let raw = UnsafeRawPointer(start)
                let first = raw.loadUnaligned(as: UInt64.self)
                let second = raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
                if count < 8 {
                    words.0 = first & ((1 << (8 * UInt64(count))) &- 1)
                } else {
                    words.0 = first
                    words.1 = second & ((1 << (8 * UInt64(count - 8))) &- 1)
                }
            } else {
                withUnsafeMutableBytes(of: &words) { words in
                    words.baseAddress!.copyMemory(from: start, byteCount: count)
                }
            }
        }
        guard (words.0 | words.1) & 0x8080_8080_8080_8080 == 0 else { return nil }
        words.1 |= UInt64(0xE0 | count) << 56
        return words
    }

    /// `bytes` as a `String`, or `nil` when they are not up to 15 bytes of ASCII. Only
    /// to be called when ``isAvailable``; the bytes up to `limit` must be readable.
    @inline(__always)
    static func make(_ bytes: UnsafeBufferPointer<UInt8>, readableUpTo limit: UnsafePointer<UInt8>?)
        -> String?
    {
        guard let words = words(of: bytes, limit: limit) else { return nil }
        return unsafeBitCast(words, to: String.self)
    }
}

// MARK: - Keyed containers reused (note 7)

/// The keyed container of a key table, made once per table and type of keys; see
/// note 7 at the top of this file.
enum ReusedKeyedContainer {
    @inline(__always)
    static func container<Key: CodingKey>(
        for table: UnsafeMutablePointer<KeyTable>, keyedBy type: Key.Type
    ) -> KeyedDecodingContainer<Key> {
        precondition(
            MemoryLayout<KeyedDecodingContainer<Key>>.size == MemoryLayout<AnyObject>.size,
            "KeyedDecodingContainer is not one reference")
        if table.pointee.containerKeyType == ObjectIdentifier(Key.self),
            let container = table.pointee.container
        {
            return unsafeBitCast(container, to: KeyedDecodingContainer<Key>.self)
        }
        let container = KeyedDecodingContainer(PlistMapDecoder.KeyedContainer<Key>(table: table))
        table.pointee.container = unsafeBitCast(container, to: AnyObject.self)
        table.pointee.containerKeyType = ObjectIdentifier(Key.self)
        return container
    }
}

// MARK: - Key tables in a stack (note 5)

/// The key tables of the keyed containers a ``PlistMapDecoder`` made, reused in stack
/// order; see note 5 at the top of this file.
struct KeyTablePool {
    private var tables: [UnsafeMutablePointer<KeyTable>] = []
    /// How many tables are in use; the decoder restores it when a nested value's
    /// `init(from:)` returns.
    var count = 0

    /// A table for a new container of `decoder` (the pool's owner), at a stable
    /// address until ``free()``.
    mutating func push(for decoder: PlistMapDecoder) -> UnsafeMutablePointer<KeyTable> {
        if count == tables.count {
            let table = UnsafeMutablePointer<KeyTable>.allocate(capacity: 1)
            table.initialize(to: KeyTable(decoder: UnownedDecoder(decoder), view: decoder.view))
            tables.append(table)
        }
        count += 1
        return tables[count - 1]
    }

    mutating func free() {
        for table in tables {
            table.pointee.entries?.deallocate()
            table.deinitialize(count: 1).deallocate()
        }
        tables = []
        count = 0
    }
}

// MARK: - The document assembled in the arena (note 6)

/// A piece of the document that lies finished in the arena: `count` bytes at `start`,
/// which the document has right after the first `mark` bytes of its other bytes (the
/// header, container tags, `<key>` lines and footer, kept apart in order).
struct ArenaPiece {
    var start: Int
    var count: Int
    var mark: Int
}

extension ByteStorage {
    /// Room left at the start of an encoder's arena, so that the document's header and
    /// the tags and keys before its largest piece usually fit in front of that piece
    /// and it need not move (note 6).
    static var documentPrefix: Int { 1024 }

    /// Assembles the document in this arena, which becomes the document's storage,
    /// and hands it over as `Data`; see note 6 at the top of this file. `literals`
    /// holds the document's bytes other than `pieces`, in order; `pieces` are in the
    /// document's order and lie within `0..<count`.
    func takeDocument(literals: ByteStorage, pieces: [ArenaPiece]) -> Data {
        // Where each piece goes, counted from the document's start.
        var offsets = [Int](repeating: 0, count: pieces.count)
        var pieceBytes = 0
        for index in pieces.indices {
            let piece = pieces[index]
            precondition(
                piece.start >= 0 && piece.count >= 0 && piece.start + piece.count <= count
                    && piece.mark <= literals.count, "a piece outside the arena")
            offsets[index] = piece.mark + pieceBytes
            pieceBytes += piece.count
        }
        let length = literals.count + pieceBytes

        // The pieces that stay in the arena: all of them when they lie in the arena in
        // the document's order, else the heaviest chain that does; the others are
        // copied aside before anything moves.
        let stays = Self.heaviestChain(pieces)
        let aside = ByteStorage(capacity: 64)
        var asideStarts = [Int](repeating: 0, count: pieces.count)
        for index in pieces.indices where !stays[index] {
            asideStarts[index] = aside.count
            aside.append(buffer(from: pieces[index].start, count: pieces[index].count))
        }

        // Where the document starts in the arena: where the heaviest run of staying
        // pieces that sit at the same distance from their places need not move.
        var origin = 0
        var best = -1
        var index = 0
        while index < pieces.count {
            guard stays[index], pieces[index].start >= offsets[index] else {
                index += 1
                continue
            }
            let shift = pieces[index].start - offsets[index]
            var weight = 0
            while index < pieces.count, stays[index], pieces[index].start - offsets[index] == shift {
                weight += pieces[index].count
                index += 1
            }
            if weight > best { (best, origin) = (weight, shift) }
        }
        reserveCapacity(origin + length)

        // Move the staying pieces: those going down in order, each run of those going
        // up from its last piece back.
        index = 0
        while index < pieces.count {
            guard stays[index] else {
                index += 1
                continue
            }
            let target = origin + offsets[index]
            if target <= pieces[index].start {
                if target < pieces[index].start {
                    memmove(base + target, base + pieces[index].start, pieces[index].count)
                }
                index += 1
                continue
            }
            var end = index + 1
            while end < pieces.count, !stays[end] || origin + offsets[end] > pieces[end].start { end += 1 }
            for back in (index..<end).reversed() where stays[back] {
                memmove(base + origin + offsets[back], base + pieces[back].start, pieces[back].count)
            }
            index = end
        }

        // Then the bytes between them, and the pieces that were copied aside.
        var mark = 0
        for index in pieces.indices {
            let piece = pieces[index]
            let target = origin + offsets[index]
            if piece.mark > mark {
                (base + target - (piece.mark - mark)).update(
                    from: literals.base + mark, count: piece.mark - mark)
                mark = piece.mark
            }
            if !stays[index] {
                (base + target).update(from: aside.base + asideStarts[index], count: piece.count)
            }
        }
        (base + origin + length - (literals.count - mark)).update(
            from: literals.base + mark, count: literals.count - mark)
        return takeData(from: origin, count: length)
    }

    /// Which of `pieces` stay where they are: a chain of them, in the document's order,
    /// each lying in the arena after the one before it, with the most bytes. The chain
    /// is made of runs, each a stretch of pieces in the document that already lie in
    /// that order (usually one run holds almost everything), so that its cost grows with
    /// the number of runs rather than of pieces.
    static func heaviestChain(_ pieces: [ArenaPiece]) -> [Bool] {
        // Each run: its first piece, the arena range it spans, and its bytes.
        var firsts: [Int] = []
        var starts: [Int] = []
        var ends: [Int] = []
        var weights: [Int] = []
        for index in pieces.indices {
            let piece = pieces[index]
            if let end = ends.last, piece.start >= end {
                ends[ends.count - 1] = piece.start + piece.count
                weights[weights.count - 1] += piece.count
            } else {
                firsts.append(index)
                starts.append(piece.start)
                ends.append(piece.start + piece.count)
                weights.append(piece.count)
            }
        }
        let runs = firsts.count
        if runs == 1 { return [Bool](repeating: true, count: pieces.count) }

        // The heaviest chain of runs ending at each run, found with a tree of prefix
        // maxima over the runs ordered by where they end in the arena.
        let byEnd = (0..<runs).sorted { (ends[$0], $0) < (ends[$1], $1) }
        let sortedEnds = byEnd.map { ends[$0] }
        var rank = [Int](repeating: 0, count: runs)
        for (position, run) in byEnd.enumerated() { rank[run] = position }
        var tree = [(weight: Int, run: Int)](repeating: (0, -1), count: runs + 1)
        var previous = [Int](repeating: -1, count: runs)
        var chainWeights = [Int](repeating: 0, count: runs)
        for run in 0..<runs {
            // The runs ending at or before this one's start: the first `low` ranks.
            var low = 0
            var high = runs
            while low < high {
                let middle = (low + high) / 2
                if sortedEnds[middle] <= starts[run] { low = middle + 1 } else { high = middle }
            }
            var best: (weight: Int, run: Int) = (0, -1)
            var position = low
            while position > 0 {
                if tree[position].weight > best.weight { best = tree[position] }
                position -= position & -position
            }
            chainWeights[run] = best.weight + weights[run]
            previous[run] = best.run
            position = rank[run] + 1
            while position <= runs {
                if chainWeights[run] > tree[position].weight { tree[position] = (chainWeights[run], run) }
                position += position & -position
            }
        }
        var stays = [Bool](repeating: false, count: pieces.count)
        var run = chainWeights.indices.max { chainWeights[$0] < chainWeights[$1] } ?? -1
        while run >= 0 {
            let end = run + 1 < runs ? firsts[run + 1] : pieces.count
            for index in firsts[run]..<end { stays[index] = true }
            run = previous[run]
        }
        return stays
    }
}
