import Foundation

/// Encodes `Encodable` values as XML property lists, in the manner of Foundation's
/// `PropertyListEncoder` with the `.xml` output format.
///
/// The output is byte-identical to `PropertyListSerialization`'s for the same values.
/// `Date` and `Data` become `<date>` and `<data>`, every integer type `<integer>`,
/// `Float` and `Double` `<real>`, and an explicit `nil` the string `$null`, as
/// Foundation writes it. Errors are Foundation's `EncodingError` with the coding path.
public struct PlistEncoder: Sendable {
    /// Values passed to every `encode(to:)` through `Encoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    /// Creates an encoder.
    public init() {}

    /// Encodes `value` as an XML property list.
    ///
    /// - Parameter value: The value to encode.
    /// - Returns: The XML document.
    /// - Throws: `EncodingError.invalidValue` when the value encodes nothing or
    ///   something XML cannot carry (the underlying ``PropertyListError`` says what).
    public func encode<T: Encodable>(_ value: T) throws -> Data {
        let arena = ByteStorage(capacity: 1 << 16)
        arena.append(repeating: 0, count: ByteStorage.documentPrefix)
        let state = EncodingState(arena: arena)
        let encoder = PlistXMLEncoder(state: state, depth: 0, codingPath: [], userInfo: userInfo)
        guard let rendered = try encoder.encodeValue(value) else {
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: [], debugDescription: "Top-level \(T.self) did not encode any values."))
        }
        // The bytes around the finished pieces of the arena, in order; the document is
        // then assembled in the arena itself, which becomes the `Data`.
        var writer = XMLPlistWriter(output: ByteStorage(capacity: 4096))
        var pieces: [ArenaPiece] = []
        do {
            try writer.writeDocument { writer in
                try writer.assemble(
                    rendered, keyLines: state.keyLineBytes, pieces: &pieces, cache: &state.keyOrders)
            }
        } catch let error as PropertyListError {
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(codingPath: [], debugDescription: error.message, underlyingError: error)
            )
        }
        return arena.takeDocument(literals: writer.output, pieces: pieces)
    }

    /// Encodes `value` as a property-list value.
    ///
    /// - Parameter value: The value to encode.
    /// - Returns: The property list.
    /// - Throws: `EncodingError.invalidValue` when the value encodes nothing or cannot
    ///   be written.
    public func encodeToPropertyList<T: Encodable>(_ value: T) throws -> PropertyList {
        try PropertyList(xml: encode(value))
    }
}
