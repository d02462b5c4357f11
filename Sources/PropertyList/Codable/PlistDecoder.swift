import Foundation

/// Decodes `Decodable` values from XML property lists, in the manner of Foundation's
/// `PropertyListDecoder`.
///
/// The decoder reads the XML with SurveyStore's strict streaming reader into a flat
/// layout and decodes straight from it, so no intermediate tree of values is built.
/// Errors are Foundation's `DecodingError` cases with the coding path of the value; a
/// document the reader refuses is reported as `DecodingError.dataCorrupted` whose
/// underlying error is the ``PropertyListError`` with its line and column.
///
/// Integers decode into any integer type that can hold them exactly; reals and
/// integers decode into `Double` and `Float`; `Date` and `Data` come from `<date>` and
/// `<data>`; `nil` is the string `$null`, as Foundation writes it.
public struct PlistDecoder: Sendable {
    /// Values passed to every `init(from:)` through `Decoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    /// Creates a decoder.
    public init() {}

    /// Decodes a value of `type` from an XML property list.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - data: The XML document.
    /// - Returns: The decoded value.
    /// - Throws: `DecodingError`; for XML that the reader refuses, `dataCorrupted` with
    ///   the ``PropertyListError`` as its underlying error.
    public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try decode(type, from: data, file: nil)
    }

    /// Decodes a value of `type` from an XML property list read from `file`.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - data: The XML document.
    ///   - file: The file the document came from, for error messages.
    /// - Returns: The decoded value.
    /// - Throws: `DecodingError`, as ``decode(_:from:)-(_,Data)``.
    public func decode<T: Decodable>(_ type: T.Type, from data: Data, file: String?) throws -> T {
        let map: PlistMap
        do {
            map = try data.withUnsafeBytes { try XMLPlistScanner.scan($0, file: file) }
        } catch let error as PropertyListError {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: [], debugDescription: "The given data was not a valid property list.",
                    underlyingError: error))
        }
        return try decode(type, from: map)
    }

    /// Decodes a value of `type` from a property-list value.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - value: The property list.
    /// - Returns: The decoded value.
    /// - Throws: `DecodingError` when the value does not match the type.
    public func decode<T: Decodable>(_ type: T.Type, from value: PropertyList) throws -> T {
        try decode(type, from: PlistMap(flattening: value))
    }

    private func decode<T: Decodable>(_ type: T.Type, from map: PlistMap) throws -> T {
        try withExtendedLifetime(map) {
            let bytes = map.bytes.buffer(from: 0, count: map.bytes.count)
            let decoder = PlistMapDecoder(
                nodes: map.nodes.buffer, bytes: bytes, index: 0, userInfo: userInfo, codingPath: [])
            return try decoder.decodeValue(type)
        }
    }
}
