import Foundation

/// The `Decoder` behind ``PlistDecoder``: it walks a ``PlistMap`` by node index.
///
/// One decoder object serves a whole decoding: nested values move its `index` and push
/// their key onto `codingPath`, and restore both afterwards. Strings, numbers, dates and
/// data are read straight from the map without going through `init(from:)`.
final class PlistMapDecoder: DecoderPosition, Decoder {
    let view: MapView
    let userInfoStorage: [CodingUserInfoKey: any Sendable]
    /// The metatypes with fast paths that are not compared directly, read once per
    /// decoder rather than on every value (the arrays' each through a lazily
    /// initialised global, a `swift_once` call per access).
    let fastPathTypes = DecoderFastPathTypes()
    /// Key → value index for dictionaries too large to search linearly, built on demand.
    var largeDictionaryIndexes: [Int: [String: Int]] = [:]
    /// Decoders made for superclasses, kept for as long as this one: key tables refer
    /// to their decoder without retaining it.
    private var superDecoders: [PlistMapDecoder] = []

    /// A decoder for the value at `index` (a superclass's part), sharing this one's map
    /// and living as long as this one.
    func superDecoder(index: Int, codingPath: [any CodingKey]) -> PlistMapDecoder {
        let decoder = PlistMapDecoder(
            nodes: nodes, bytes: bytes, index: index, userInfo: userInfoStorage, codingPath: codingPath)
        superDecoders.append(decoder)
        return decoder
    }

    var userInfo: [CodingUserInfoKey: Any] { userInfoStorage }

    deinit {
        view.keyHashes.deinitialize(count: 1).deallocate()
        keyTables.free()
    }

    init(
        nodes: UnsafeBufferPointer<PlistMap.Node>, bytes: UnsafeBufferPointer<UInt8>, index: Int,
        userInfo: [CodingUserInfoKey: any Sendable], codingPath: [any CodingKey]
    ) {
        let keyHashes = UnsafeMutablePointer<KeyHashCache>.allocate(capacity: 1)
        keyHashes.initialize(to: KeyHashCache())
        self.view = MapView(
            nodes: nodes, bytes: bytes, keyHashes: keyHashes, makesSmallStrings: SmallASCIIString.isAvailable)
        self.userInfoStorage = userInfo
        super.init(index: index, codingPath: codingPath)
    }

    // MARK: Decoder

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        try requireKind(.dictionary, at: index, as: [String: Any].self, path: codingPath)
        let table = KeyTable.make(decoder: self, dictionary: index, codingPath: nil)
        return ReusedKeyedContainer.container(for: table, keyedBy: Key.self)
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try requireKind(.array, at: index, as: [Any].self, path: codingPath)
        return UnkeyedContainer(decoder: self, array: index, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValueContainer(decoder: self, node: index, codingPath: codingPath)
    }

    // MARK: Reading nodes

    var nodes: UnsafeBufferPointer<PlistMap.Node> { view.nodes }
    var bytes: UnsafeBufferPointer<UInt8> { view.bytes }

    @inline(__always) func end(of index: Int) -> Int { view.end(of: index) }
    func string(at index: Int) -> String { view.string(at: index) }
    @inline(__always) func textBytes(_ node: PlistMap.Node) -> UnsafeBufferPointer<UInt8> {
        view.textBytes(node)
    }
    func isNull(at index: Int) -> Bool { view.isNull(at: index) }

    @inline(__always)
    func requireKind(_ kind: PlistMap.Kind, at index: Int, as type: Any.Type, path: [any CodingKey]) throws {
        try view.requireKind(kind, at: index, as: type, path: path)
    }

    func mismatch(_ type: Any.Type, at index: Int, path: [any CodingKey]) -> DecodingError {
        view.mismatch(type, at: index, path: path)
    }

    func decodeString(at index: Int, path: @autoclosure () -> [any CodingKey]) throws -> String {
        try view.decodeString(at: index, path: path())
    }

    func decodeBool(at index: Int, path: @autoclosure () -> [any CodingKey]) throws -> Bool {
        try view.decodeBool(at: index, path: path())
    }

    func decodeInteger<T: FixedWidthInteger>(
        _ type: T.Type, at index: Int, path: @autoclosure () -> [any CodingKey]
    ) throws -> T {
        try view.decodeInteger(type, at: index, path: path())
    }

    func decodeDouble(at index: Int, path: @autoclosure () -> [any CodingKey]) throws -> Double {
        try view.decodeDouble(at: index, path: path())
    }

    func decodeFloat(at index: Int, path: @autoclosure () -> [any CodingKey]) throws -> Float {
        try view.decodeFloat(at: index, path: path())
    }

    /// The index of the value for `key` in the dictionary at `dictionary`, or `nil`.
    func valueIndex(forKey key: String, inDictionary dictionary: Int) -> Int? {
        let node = nodes[dictionary]
        if node.count > 32 {
            if largeDictionaryIndexes[dictionary] == nil {
                var index: [String: Int] = Dictionary(minimumCapacity: Int(node.count))
                var cursor = dictionary + 1
                while cursor < Int(node.payload) {
                    index[string(at: cursor)] = cursor + 1
                    cursor = end(of: cursor + 1)
                }
                largeDictionaryIndexes[dictionary] = index
            }
            return largeDictionaryIndexes[dictionary]![key]
        }
        var key = key
        return key.withUTF8 { key in
            let hash = PlistMap.hash(key)
            let end = Int(node.payload)
            var cursor = dictionary + 1
            while cursor < end {
                let candidate = nodes[cursor]
                if candidate.hash == hash && Int(candidate.count) == key.count
                    && (key.count == 0
                        || memcmp(bytes.baseAddress! + Int(candidate.payload), key.baseAddress!, key.count)
                            == 0)
                {
                    return cursor + 1
                }
                cursor = self.end(of: cursor + 1)
            }
            // Keys that are the same Swift string in another Unicode normal form; only
            // a key with non-ASCII characters can have such a twin.
            var hasNonASCII = false
            for byte in key where byte >= 0x80 { hasNonASCII = true; break }
            guard hasNonASCII else { return nil }
            cursor = dictionary + 1
            let wanted = String(decoding: key, as: UTF8.self)
            while cursor < end {
                if string(at: cursor) == wanted { return cursor + 1 }
                cursor = self.end(of: cursor + 1)
            }
            return nil
        }
    }

    /// Decodes any `Decodable` from the node at `index`, with fast paths for the types
    /// the property-list format carries natively and arrays of them. (Each fast path
    /// has checked that `T` is exactly the type it returns: see note 3 in
    /// `CodableUnsafe.swift`.)
    func decode<T: Decodable>(
        _ type: T.Type, at index: Int, path: @autoclosure () -> [any CodingKey],
        key: @autoclosure () -> (any CodingKey)?
    ) throws -> T {
        if T.self == String.self {
            return identityCast(try decodeString(at: index, path: path()), to: T.self)
        }
        if T.self == Int.self {
            return identityCast(try decodeInteger(Int.self, at: index, path: path()), to: T.self)
        }
        if T.self == Double.self {
            return identityCast(try decodeDouble(at: index, path: path()), to: T.self)
        }
        if T.self == Bool.self {
            return identityCast(try decodeBool(at: index, path: path()), to: T.self)
        }
        let type = ObjectIdentifier(T.self)
        if type == fastPathTypes.date {
            let node = nodes[index]
            guard node.kind == .date else { throw mismatch(Date.self, at: index, path: path()) }
            let value = Date(timeIntervalSinceReferenceDate: Double(bitPattern: node.payload))
            return identityCast(value, to: T.self)
        }
        if type == fastPathTypes.data {
            let node = nodes[index]
            guard node.kind == .data else { throw mismatch(Data.self, at: index, path: path()) }
            return identityCast(Data(textBytes(node)), to: T.self)
        }
        // Generic metatypes like [String].self are looked up at run time; compare
        // against ones looked up once.
        if type == fastPathTypes.stringArray {
            let value = try decodeArray(at: index, path: path()) { try decodeString(at: $0, path: []) }
            return identityCast(value, to: T.self)
        }
        if type == fastPathTypes.boolArray {
            let value = try decodeArray(at: index, path: path()) { try decodeBool(at: $0, path: []) }
            return identityCast(value, to: T.self)
        }
        if type == fastPathTypes.intArray {
            let value = try decodeArray(at: index, path: path()) {
                try decodeInteger(Int.self, at: $0, path: [])
            }
            return identityCast(value, to: T.self)
        }
        if type == fastPathTypes.doubleArray {
            let value = try decodeArray(at: index, path: path()) { try decodeDouble(at: $0, path: []) }
            return identityCast(value, to: T.self)
        }
        let savedIndex = self.index
        let savedTables = keyTables.count
        self.index = index
        // The key is made only here, for values that are decoded by their own
        // `init(from:)`, and not for the scalars above.
        let key = key()
        if let key { codingPath.append(key) }
        defer {
            self.index = savedIndex
            // The containers the value made are done with (note 5 in `CodableUnsafe.swift`).
            keyTables.count = savedTables
            if key != nil { codingPath.removeLast() }
        }
        // Arrays of other types are read here, into an array of the right capacity,
        // without an unkeyed container. (Only for array nodes: the conformance check is
        // not free.)
        if nodes[index].kind == .array, let arrayType = T.self as? any PlistDecodableArray.Type {
            return try arrayType.init(decoder: self, array: index) as! T
        }
        return try T(from: self)
    }

    /// The elements of the array at `array`, each decoded as `Element`.
    func decodeElements<Element: Decodable>(_ type: Element.Type, array: Int) throws -> [Element] {
        let end = Int(nodes[array].payload)
        var result: [Element] = []
        result.reserveCapacity(Int(nodes[array].count))
        var cursor = array + 1
        while cursor < end {
            let key = PlistCodingKey(index: result.count)
            result.append(try decode(Element.self, at: cursor, path: codingPath + [key], key: key))
            cursor = self.end(of: cursor)
        }
        return result
    }

    /// An array of scalars, read element by element with `element`.
    @inline(__always)
    private func decodeArray<Element>(
        at index: Int, path: @autoclosure () -> [any CodingKey],
        _ element: (Int) throws -> Element
    ) throws -> [Element] {
        let node = nodes[index]
        guard node.kind == .array else {
            if isNull(at: index) {
                throw DecodingError.valueNotFound(
                    [Element].self,
                    DecodingError.Context(
                        codingPath: path(),
                        debugDescription: "Expected \([Element].self) but found a null value instead."))
            }
            throw mismatch([Element].self, at: index, path: path())
        }
        var result: [Element] = []
        result.reserveCapacity(Int(node.count))
        var cursor = index + 1
        let end = Int(node.payload)
        while cursor < end {
            do {
                result.append(try element(cursor))
            } catch let error as DecodingError {
                throw Self.relocate(error, to: path() + [PlistCodingKey(index: result.count)])
            }
            cursor = self.end(of: cursor)
        }
        return result
    }

    /// `error` with its coding path replaced by `path`.
    static func relocate(_ error: DecodingError, to path: [any CodingKey]) -> DecodingError {
        func moved(_ context: DecodingError.Context) -> DecodingError.Context {
            DecodingError.Context(
                codingPath: path, debugDescription: context.debugDescription,
                underlyingError: context.underlyingError)
        }
        switch error {
        case .typeMismatch(let type, let context): return .typeMismatch(type, moved(context))
        case .valueNotFound(let type, let context): return .valueNotFound(type, moved(context))
        case .keyNotFound(let key, let context): return .keyNotFound(key, moved(context))
        case .dataCorrupted(let context): return .dataCorrupted(moved(context))
        @unknown default: return error
        }
    }

    /// Decodes the top-level value.
    func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        try decode(type, at: index, path: codingPath, key: nil)
    }
}

/// The map a decoding reads, as plain pointers: containers copy it freely, with no
/// reference counting, and read scalars through it.
struct MapView {
    let nodes: UnsafeBufferPointer<PlistMap.Node>
    let bytes: UnsafeBufferPointer<UInt8>
    /// Owned by the decoder that made the view.
    let keyHashes: UnsafeMutablePointer<KeyHashCache>
    /// Whether strings of up to 15 ASCII bytes are made by ``SmallASCIIString``.
    let makesSmallStrings: Bool

    // MARK: Reading nodes

    @inline(__always)
    func end(of index: Int) -> Int {
        let node = nodes[index]
        return node.kind == .array || node.kind == .dictionary ? Int(node.payload) : index + 1
    }

    @inline(__always)
    func textBytes(_ node: PlistMap.Node) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: bytes.baseAddress.map { $0 + Int(node.payload) }, count: Int(node.count))
    }

    func string(at index: Int) -> String {
        String(decoding: textBytes(nodes[index]), as: UTF8.self)
    }

    /// Whether the node is the string `$null`, Foundation's encoding of `nil`.
    @inline(__always)
    func isNull(at index: Int) -> Bool {
        let node = nodes[index]
        guard node.kind == .string, node.count == 5 else { return false }
        return textBytes(node).elementsEqual("$null".utf8)
    }

    // MARK: Errors

    static func describe(_ node: PlistMap.Node) -> String {
        switch node.kind {
        case .string, .key: "a string"
        case .integer: "an integer"
        case .real: "a real number"
        case .boolean: "a boolean"
        case .date: "a date"
        case .data: "data"
        case .array: "an array"
        case .dictionary: "a dictionary"
        }
    }

    func mismatch(_ type: Any.Type, at index: Int, path: [any CodingKey]) -> DecodingError {
        let found = isNull(at: index) ? "a null value" : Self.describe(nodes[index])
        return DecodingError.typeMismatch(
            type,
            DecodingError.Context(
                codingPath: path, debugDescription: "Expected to decode \(type) but found \(found) instead."))
    }

    @inline(__always)
    func requireKind(_ kind: PlistMap.Kind, at index: Int, as type: Any.Type, path: [any CodingKey]) throws {
        guard nodes[index].kind == kind else {
            if isNull(at: index) {
                throw DecodingError.valueNotFound(
                    type,
                    DecodingError.Context(
                        codingPath: path, debugDescription: "Expected \(type) but found a null value instead."
                    ))
            }
            throw mismatch(type, at: index, path: path)
        }
    }

    // MARK: Scalars

    @inline(__always)
    func decodeString(at index: Int, path: @autoclosure () -> [any CodingKey]) throws -> String {
        let node = nodes[index]
        guard node.kind == .string else { throw mismatch(String.self, at: index, path: path()) }
        let text = textBytes(node)
        if makesSmallStrings,
            let string = SmallASCIIString.make(text, readableUpTo: bytes.baseAddress.map { $0 + bytes.count })
        {
            return string
        }
        return String(decoding: text, as: UTF8.self)
    }

    @inline(__always)
    func decodeBool(at index: Int, path: @autoclosure () -> [any CodingKey]) throws -> Bool {
        let node = nodes[index]
        guard node.kind == .boolean else { throw mismatch(Bool.self, at: index, path: path()) }
        return node.flag
    }

    func decodeInteger<T: FixedWidthInteger>(
        _ type: T.Type, at index: Int, path: @autoclosure () -> [any CodingKey]
    ) throws -> T {
        let node = nodes[index]
        if node.kind == .real {
            // As Foundation does, a real that is a whole number in range decodes as an integer.
            let real = Double(bitPattern: node.payload)
            guard let value = T(exactly: real) else {
                throw DecodingError.dataCorrupted(
                    DecodingError.Context(
                        codingPath: path(),
                        debugDescription: "Parsed property list number <\(real)> does not fit in \(type)."))
            }
            return value
        }
        guard node.kind == .integer else { throw mismatch(type, at: index, path: path()) }
        let value: T?
        if node.flag {
            value = node.payload == UInt64(1) << 63 ? T(exactly: Int64.min) : T(exactly: -Int64(node.payload))
        } else {
            value = T(exactly: node.payload)
        }
        guard let value else {
            let text = (node.flag ? "-" : "") + String(node.payload)
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: path(),
                    debugDescription: "Parsed property list number <\(text)> does not fit in \(type)."))
        }
        return value
    }

    @inline(__always)
    func decodeDouble(at index: Int, path: @autoclosure () -> [any CodingKey]) throws -> Double {
        let node = nodes[index]
        switch node.kind {
        case .real: return Double(bitPattern: node.payload)
        case .integer: return node.flag ? -Double(node.payload) : Double(node.payload)
        default: throw mismatch(Double.self, at: index, path: path())
        }
    }

    func decodeFloat(at index: Int, path: @autoclosure () -> [any CodingKey]) throws -> Float {
        let double = try decodeDouble(at: index, path: path())
        guard !double.isFinite || abs(double) <= Double(Float.greatestFiniteMagnitude) else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: path(),
                    debugDescription: "Parsed property list number <\(double)> does not fit in Float."))
        }
        return Float(double)
    }

}

// MARK: - Keyed

extension PlistMapDecoder {
    struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        /// Everything the container needs, in a table the decoder owns, so that the
        /// copies the standard library's container box makes on each call are copies
        /// of a pointer (note 5 in `CodableUnsafe.swift`).
        let table: UnsafeMutablePointer<KeyTable>

        /// A container for the dictionary of `table`. Containers are made through
        /// ``ReusedKeyedContainer``, which keeps one per table.
        init(table: UnsafeMutablePointer<KeyTable>) {
            self.table = table
        }

        var decoder: PlistMapDecoder { table.pointee.decoder.decoder }
        /// The map, read without retaining the decoder.
        var view: MapView { table.pointee.view }
        var dictionary: Int { table.pointee.dictionary }
        var codingPath: [any CodingKey] { table.pointee.codingPath }

        var allKeys: [Key] {
            var keys: [Key] = []
            let end = Int(decoder.nodes[dictionary].payload)
            var cursor = dictionary + 1
            while cursor < end {
                if let key = Key(stringValue: decoder.string(at: cursor)) { keys.append(key) }
                cursor = decoder.end(of: cursor + 1)
            }
            return keys
        }

        func contains(_ key: Key) -> Bool {
            KeyTable.valueIndex(in: table, forKey: key.stringValue) != nil
        }

        @inline(__always)
        private func value(_ key: Key) throws -> Int {
            guard let index = KeyTable.valueIndex(in: table, forKey: key.stringValue) else {
                throw DecodingError.keyNotFound(
                    key,
                    DecodingError.Context(
                        codingPath: codingPath,
                        debugDescription: "No value associated with key \(key) (\"\(key.stringValue)\")."))
            }
            return index
        }

        private func path(_ key: Key) -> [any CodingKey] { codingPath + [key] }

        func decodeNil(forKey key: Key) throws -> Bool { view.isNull(at: try value(key)) }
        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
            try view.decodeBool(at: value(key), path: path(key))
        }
        func decode(_ type: String.Type, forKey key: Key) throws -> String {
            try view.decodeString(at: value(key), path: path(key))
        }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
            try view.decodeDouble(at: value(key), path: path(key))
        }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
            try view.decodeFloat(at: value(key), path: path(key))
        }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
            try view.decodeInteger(type, at: value(key), path: path(key))
        }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 {
            try view.decodeInteger(type, at: value(key), path: path(key))
        }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
            try view.decodeInteger(type, at: value(key), path: path(key))
        }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
            try view.decodeInteger(type, at: value(key), path: path(key))
        }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
            try view.decodeInteger(type, at: value(key), path: path(key))
        }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt {
            try view.decodeInteger(type, at: value(key), path: path(key))
        }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
            try view.decodeInteger(type, at: value(key), path: path(key))
        }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
            try view.decodeInteger(type, at: value(key), path: path(key))
        }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
            try view.decodeInteger(type, at: value(key), path: path(key))
        }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
            try view.decodeInteger(type, at: value(key), path: path(key))
        }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            let index = try value(key)
            return try unownedDecoder.call { try $0.decode(type, at: index, path: path(key), key: key) }
        }

        /// The decoder, to call without retaining it.
        private var unownedDecoder: UnownedDecoder { table.pointee.decoder }

        /// The value's index, or `nil` when the key is absent or its value is `$null`.
        @inline(__always)
        private func present(_ key: Key) -> Int? {
            guard let index = KeyTable.valueIndex(in: table, forKey: key.stringValue),
                !view.isNull(at: index)
            else { return nil }
            return index
        }

        func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
            try present(key).map { try view.decodeBool(at: $0, path: path(key)) }
        }
        func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
            try present(key).map { try view.decodeString(at: $0, path: path(key)) }
        }
        func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
            try present(key).map { try view.decodeDouble(at: $0, path: path(key)) }
        }
        func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
            try present(key).map { try view.decodeFloat(at: $0, path: path(key)) }
        }
        func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
            try present(key).map { try view.decodeInteger(type, at: $0, path: path(key)) }
        }
        func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? {
            try present(key).map { try view.decodeInteger(type, at: $0, path: path(key)) }
        }
        func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? {
            try present(key).map { try view.decodeInteger(type, at: $0, path: path(key)) }
        }
        func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? {
            try present(key).map { try view.decodeInteger(type, at: $0, path: path(key)) }
        }
        func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
            try present(key).map { try view.decodeInteger(type, at: $0, path: path(key)) }
        }
        func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? {
            try present(key).map { try view.decodeInteger(type, at: $0, path: path(key)) }
        }
        func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? {
            try present(key).map { try view.decodeInteger(type, at: $0, path: path(key)) }
        }
        func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? {
            try present(key).map { try view.decodeInteger(type, at: $0, path: path(key)) }
        }
        func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? {
            try present(key).map { try view.decodeInteger(type, at: $0, path: path(key)) }
        }
        func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? {
            try present(key).map { try view.decodeInteger(type, at: $0, path: path(key)) }
        }

        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            guard let index = present(key) else { return nil }
            return try unownedDecoder.call { try $0.decode(type, at: index, path: path(key), key: key) }
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            let index = try value(key)
            try decoder.requireKind(.dictionary, at: index, as: [String: Any].self, path: path(key))
            let table = KeyTable.make(decoder: decoder, dictionary: index, codingPath: path(key))
            return ReusedKeyedContainer.container(for: table, keyedBy: NestedKey.self)
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            let index = try value(key)
            try decoder.requireKind(.array, at: index, as: [Any].self, path: path(key))
            return UnkeyedContainer(decoder: decoder, array: index, codingPath: path(key))
        }

        func superDecoder() throws -> any Decoder {
            try superDecoder(key: PlistCodingKey.super)
        }

        func superDecoder(forKey key: Key) throws -> any Decoder {
            try superDecoder(key: key)
        }

        private func superDecoder(key: any CodingKey) throws -> any Decoder {
            guard let index = decoder.valueIndex(forKey: key.stringValue, inDictionary: dictionary) else {
                throw DecodingError.keyNotFound(
                    key,
                    DecodingError.Context(
                        codingPath: codingPath,
                        debugDescription: "No value associated with key \(key) (\"\(key.stringValue)\")."))
            }
            return decoder.superDecoder(index: index, codingPath: codingPath + [key])
        }
    }
}

// MARK: - Unkeyed

extension PlistMapDecoder {
    struct UnkeyedContainer: UnkeyedDecodingContainer {
        let decoder: PlistMapDecoder
        let array: Int
        let codingPath: [any CodingKey]
        private(set) var currentIndex = 0
        private var cursor: Int
        private let endIndex: Int

        init(decoder: PlistMapDecoder, array: Int, codingPath: [any CodingKey]) {
            self.decoder = decoder
            self.array = array
            self.codingPath = codingPath
            cursor = array + 1
            endIndex = Int(decoder.nodes[array].payload)
        }

        var count: Int? { Int(decoder.nodes[array].count) }
        var isAtEnd: Bool { cursor >= endIndex }

        private var path: [any CodingKey] { codingPath + [PlistCodingKey(index: currentIndex)] }

        @inline(__always)
        private mutating func next(_ type: Any.Type) throws -> Int {
            guard cursor < endIndex else {
                throw DecodingError.valueNotFound(
                    type,
                    DecodingError.Context(codingPath: path, debugDescription: "Unkeyed container is at end."))
            }
            let index = cursor
            cursor = decoder.end(of: cursor)
            currentIndex += 1
            return index
        }

        mutating func decodeNil() throws -> Bool {
            guard cursor < endIndex else {
                throw DecodingError.valueNotFound(
                    Any?.self,
                    DecodingError.Context(codingPath: path, debugDescription: "Unkeyed container is at end."))
            }
            if decoder.isNull(at: cursor) {
                cursor += 1
                currentIndex += 1
                return true
            }
            return false
        }

        private mutating func scalar<T>(
            _ type: T.Type, _ read: (PlistMapDecoder, Int, @autoclosure () -> [any CodingKey]) throws -> T
        ) throws -> T {
            let position = currentIndex
            let index = try next(type)
            return try read(decoder, index, codingPath + [PlistCodingKey(index: position)])
        }

        mutating func decode(_ type: Bool.Type) throws -> Bool {
            try scalar(type) { try $0.decodeBool(at: $1, path: $2()) }
        }
        mutating func decode(_ type: String.Type) throws -> String {
            try scalar(type) { try $0.decodeString(at: $1, path: $2()) }
        }
        mutating func decode(_ type: Double.Type) throws -> Double {
            try scalar(type) { try $0.decodeDouble(at: $1, path: $2()) }
        }
        mutating func decode(_ type: Float.Type) throws -> Float {
            try scalar(type) { try $0.decodeFloat(at: $1, path: $2()) }
        }
        mutating func decode(_ type: Int.Type) throws -> Int {
            try scalar(type) { try $0.decodeInteger(type, at: $1, path: $2()) }
        }
        mutating func decode(_ type: Int8.Type) throws -> Int8 {
            try scalar(type) { try $0.decodeInteger(type, at: $1, path: $2()) }
        }
        mutating func decode(_ type: Int16.Type) throws -> Int16 {
            try scalar(type) { try $0.decodeInteger(type, at: $1, path: $2()) }
        }
        mutating func decode(_ type: Int32.Type) throws -> Int32 {
            try scalar(type) { try $0.decodeInteger(type, at: $1, path: $2()) }
        }
        mutating func decode(_ type: Int64.Type) throws -> Int64 {
            try scalar(type) { try $0.decodeInteger(type, at: $1, path: $2()) }
        }
        mutating func decode(_ type: UInt.Type) throws -> UInt {
            try scalar(type) { try $0.decodeInteger(type, at: $1, path: $2()) }
        }
        mutating func decode(_ type: UInt8.Type) throws -> UInt8 {
            try scalar(type) { try $0.decodeInteger(type, at: $1, path: $2()) }
        }
        mutating func decode(_ type: UInt16.Type) throws -> UInt16 {
            try scalar(type) { try $0.decodeInteger(type, at: $1, path: $2()) }
        }
        mutating func decode(_ type: UInt32.Type) throws -> UInt32 {
            try scalar(type) { try $0.decodeInteger(type, at: $1, path: $2()) }
        }
        mutating func decode(_ type: UInt64.Type) throws -> UInt64 {
            try scalar(type) { try $0.decodeInteger(type, at: $1, path: $2()) }
        }

        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
            let key = PlistCodingKey(index: currentIndex)
            let index = try next(type)
            return try decoder.decode(type, at: index, path: codingPath + [key], key: key)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            let elementPath = path
            let index = try next(KeyedDecodingContainer<NestedKey>.self)
            try decoder.requireKind(.dictionary, at: index, as: [String: Any].self, path: elementPath)
            let table = KeyTable.make(decoder: decoder, dictionary: index, codingPath: elementPath)
            return ReusedKeyedContainer.container(for: table, keyedBy: NestedKey.self)
        }

        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            let elementPath = path
            let index = try next((any UnkeyedDecodingContainer).self)
            try decoder.requireKind(.array, at: index, as: [Any].self, path: elementPath)
            return UnkeyedContainer(decoder: decoder, array: index, codingPath: elementPath)
        }

        mutating func superDecoder() throws -> any Decoder {
            let elementPath = path
            let index = try next((any Decoder).self)
            return decoder.superDecoder(index: index, codingPath: elementPath)
        }
    }
}

// MARK: - Single value

extension PlistMapDecoder {
    struct SingleValueContainer: SingleValueDecodingContainer {
        let decoder: PlistMapDecoder
        let node: Int
        let codingPath: [any CodingKey]

        func decodeNil() -> Bool { decoder.isNull(at: node) }
        func decode(_ type: Bool.Type) throws -> Bool { try decoder.decodeBool(at: node, path: codingPath) }
        func decode(_ type: String.Type) throws -> String {
            try decoder.decodeString(at: node, path: codingPath)
        }
        func decode(_ type: Double.Type) throws -> Double {
            try decoder.decodeDouble(at: node, path: codingPath)
        }
        func decode(_ type: Float.Type) throws -> Float {
            try decoder.decodeFloat(at: node, path: codingPath)
        }
        func decode(_ type: Int.Type) throws -> Int {
            try decoder.decodeInteger(type, at: node, path: codingPath)
        }
        func decode(_ type: Int8.Type) throws -> Int8 {
            try decoder.decodeInteger(type, at: node, path: codingPath)
        }
        func decode(_ type: Int16.Type) throws -> Int16 {
            try decoder.decodeInteger(type, at: node, path: codingPath)
        }
        func decode(_ type: Int32.Type) throws -> Int32 {
            try decoder.decodeInteger(type, at: node, path: codingPath)
        }
        func decode(_ type: Int64.Type) throws -> Int64 {
            try decoder.decodeInteger(type, at: node, path: codingPath)
        }
        func decode(_ type: UInt.Type) throws -> UInt {
            try decoder.decodeInteger(type, at: node, path: codingPath)
        }
        func decode(_ type: UInt8.Type) throws -> UInt8 {
            try decoder.decodeInteger(type, at: node, path: codingPath)
        }
        func decode(_ type: UInt16.Type) throws -> UInt16 {
            try decoder.decodeInteger(type, at: node, path: codingPath)
        }
        func decode(_ type: UInt32.Type) throws -> UInt32 {
            try decoder.decodeInteger(type, at: node, path: codingPath)
        }
        func decode(_ type: UInt64.Type) throws -> UInt64 {
            try decoder.decodeInteger(type, at: node, path: codingPath)
        }

        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            try decoder.decode(type, at: node, path: codingPath, key: nil)
        }
    }
}

/// The keys of one dictionary, gathered when a keyed container is made: each entry is
/// a key's hash and node, so that a look-up compares a handful of integers. Tables live
/// in the decoder's ``KeyTablePool`` (note 5 in `CodableUnsafe.swift`).
struct KeyTable {
    struct Entry {
        var hash: UInt64
        var key: Int
    }

    /// The decoder, not retained (see note 2 in `CodableUnsafe.swift`).
    let decoder: UnownedDecoder
    /// The decoder's view.
    let view: MapView
    var dictionary = 0
    /// The coding path of a nested container; `nil` for one made by the decoder,
    /// whose path is the first `pathCount` keys of the decoder's.
    var explicitPath: [any CodingKey]?
    var pathCount = 0
    var count = 0
    /// Dictionaries with many keys are searched through the decoder's hash index.
    var isLarge = false
    /// One bit per key, chosen by its hash: a key whose bit is clear is not there.
    var keyBits: UInt64 = 0
    var entries: UnsafeMutablePointer<Entry>?
    var capacity = 0
    /// The last container made for this table, and the type of its keys: a container is
    /// used again by the next value whose keys are of the same type (note 7 in
    /// `CodableUnsafe.swift`).
    var container: AnyObject?
    var containerKeyType: ObjectIdentifier?

    /// The coding path of the table's container.
    var codingPath: [any CodingKey] {
        explicitPath ?? Array(decoder.decoder.codingPath.prefix(pathCount))
    }

    /// A table, from the decoder's pool, for the dictionary at `dictionary`.
    static func make(decoder: PlistMapDecoder, dictionary: Int, codingPath: [any CodingKey]?)
        -> UnsafeMutablePointer<KeyTable>
    {
        let node = decoder.nodes[dictionary]
        let isLarge = node.count > 32
        let table = decoder.keyTables.push(for: decoder)
        table.pointee.dictionary = dictionary
        table.pointee.explicitPath = codingPath
        table.pointee.pathCount = decoder.codingPath.count
        table.pointee.isLarge = isLarge
        table.pointee.count = 0
        table.pointee.keyBits = 0
        guard !isLarge else { return table }
        if table.pointee.entries == nil || table.pointee.capacity < Int(node.count) {
            table.pointee.entries?.deallocate()
            table.pointee.capacity = max(Int(node.count), 16)
            table.pointee.entries = .allocate(capacity: table.pointee.capacity)
        }
        let entries = table.pointee.entries!
        let nodes = decoder.nodes
        let end = Int(node.payload)
        var cursor = dictionary + 1
        var count = 0
        var keyBits: UInt64 = 0
        while cursor < end {
            let hash = nodes[cursor].hash
            (entries + count).initialize(to: Entry(hash: hash, key: cursor))
            keyBits |= 1 << (hash & 63)
            count += 1
            let value = nodes[cursor + 1]
            cursor = value.kind == .array || value.kind == .dictionary ? Int(value.payload) : cursor + 2
        }
        table.pointee.count = count
        table.pointee.keyBits = keyBits
        return table
    }

    /// The index of the value for `key` in the dictionary of `table`, or `nil`.
    @inline(__always)
    static func valueIndex(in table: UnsafeMutablePointer<KeyTable>, forKey key: String) -> Int? {
        if !table.pointee.isLarge {
            let view = table.pointee.view
            let wanted = view.keyHashes.pointee.entry(for: key)
            // Unless a key with the hash's bit is there, or one with the same hash and
            // bytes, the key is absent; only a key with non-ASCII characters could still
            // match another normal form.
            if table.pointee.keyBits & (1 << (wanted.hash & 63)) != 0 {
                let entries = table.pointee.entries!
                let count = table.pointee.count
                var index = 0
                while index < count {
                    if entries[index].hash == wanted.hash {
                        let keyNode = entries[index].key
                        let node = view.nodes[keyNode]
                        if Int(node.count) == wanted.count {
                            if wanted.count > 16 { return slowValueIndex(in: table, forKey: key) }
                            if wanted.count == 0 { return keyNode + 1 }
                            let words = PlistMap.words(
                                view.bytes.baseAddress! + Int(node.payload), count: wanted.count)
                            if words.0 == wanted.head && words.1 == wanted.tail { return keyNode + 1 }
                        }
                    }
                    index += 1
                }
            }
            if wanted.isASCII { return nil }
        }
        return slowValueIndex(in: table, forKey: key)
    }

    /// The index of the value for `key` found by the decoder's general search.
    @inline(never)
    private static func slowValueIndex(in table: UnsafeMutablePointer<KeyTable>, forKey key: String) -> Int? {
        table.pointee.decoder.decoder.valueIndex(forKey: key, inDictionary: table.pointee.dictionary)
    }
}

/// Coding keys looked up recently, with their hash (``PlistMap/hash(_:)``) and, for
/// keys of up to 16 bytes, two words that hold their bytes: the same few keys are looked
/// up in every dictionary of a type, so each is read out of its `String` once.
struct KeyHashCache {
    struct Entry {
        var hash: UInt64 = 0
        var count = 0
        /// For keys of up to 16 UTF-8 bytes, what ``PlistMap/words(_:count:)`` reads
        /// from them: a key of the same length holds the same bytes exactly when it
        /// gives the same two words.
        var head: UInt64 = 0
        var tail: UInt64 = 0
        var isASCII = false
    }

    private struct Slot {
        /// Held so that its representation, compared below, stays its own.
        var key: String?
        var bits: (UInt64, UInt64) = (0, 0)
        var entry = Entry()
    }

    private var slots = [Slot](repeating: Slot(), count: 256)

    /// What is known about `key`.
    @inline(__always)
    mutating func entry(for key: String) -> Entry {
        // The slot keeps its key alive, so equal representations are equal keys (see
        // note 1 in `CodableUnsafe.swift`); any other key at worst misses, and is read again.
        let bits = StringRepresentation.key(of: key)
        let slot = Int(
            truncatingIfNeeded: ((bits.0 &* 0x9E37_79B9_7F4A_7C15) ^ (bits.1 &* 0xBF58_476D_1CE4_E5B9)) >> 56)
        let hit: Entry? = slots.withUnsafeBufferPointer { slots in
            let stored = slots[slot].bits
            guard stored.0 == bits.0, stored.1 == bits.1, let stored = slots[slot].key,
                StringRepresentation.equalKeysMeanEqualStrings || stored == key
            else { return nil }
            return slots[slot].entry
        }
        if let hit { return hit }
        var utf8 = key
        let entry = utf8.withUTF8 { bytes in
            var high: UInt8 = 0
            for byte in bytes { high |= byte }
            var entry = Entry(hash: PlistMap.hash(bytes), count: bytes.count, isASCII: high < 0x80)
            if bytes.count > 0 && bytes.count <= 16 {
                (entry.head, entry.tail) = PlistMap.words(bytes.baseAddress!, count: bytes.count)
            }
            return entry
        }
        slots[slot] = Slot(key: key, bits: bits, entry: entry)
        return entry
    }
}

/// Arrays that ``PlistMapDecoder`` decodes element by element itself.
protocol PlistDecodableArray {
    init(decoder: PlistMapDecoder, array: Int) throws
}

extension Array: PlistDecodableArray where Element: Decodable {
    init(decoder: PlistMapDecoder, array: Int) throws {
        self = try decoder.decodeElements(Element.self, array: array)
    }
}

/// The metatypes of a ``PlistMapDecoder``'s fast paths that are not compared directly,
/// read once when the decoder is made.
struct DecoderFastPathTypes {
    let date = ObjectIdentifier(Date.self)
    let data = ObjectIdentifier(Data.self)
    let stringArray = FastPathTypes.stringArray
    let boolArray = FastPathTypes.boolArray
    let intArray = FastPathTypes.intArray
    let doubleArray = FastPathTypes.doubleArray
}

/// Metatypes of the generic types with fast paths, looked up once.
enum FastPathTypes {
    static let stringArray = ObjectIdentifier([String].self)
    static let boolArray = ObjectIdentifier([Bool].self)
    static let intArray = ObjectIdentifier([Int].self)
    static let doubleArray = ObjectIdentifier([Double].self)
}

/// Coding keys the containers make themselves: array indices and `super`.
///
/// Three words, so that an `any CodingKey` holding one keeps it in its inline buffer:
/// a key pushed onto a coding path for every array element costs no allocation.
struct PlistCodingKey: CodingKey {
    private let name: String?
    /// The index, for a key without a name.
    private let index: Int

    var intValue: Int? { name == nil ? index : nil }

    /// Index keys spell themselves "Index N" only when asked, as Foundation's do.
    var stringValue: String { name ?? "Index \(index)" }

    init(stringValue: String) {
        name = stringValue
        index = 0
    }

    init(intValue: Int) {
        name = nil
        index = intValue
    }

    init(index: Int) { self.init(intValue: index) }

    static let `super` = PlistCodingKey(stringValue: "super")
}
