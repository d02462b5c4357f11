import Foundation
import PropertyList

extension Survey {
    /// Reads a survey from interchange JSON.
    ///
    /// - Parameters:
    ///   - json: The JSON document.
    ///   - file: Where it came from, for messages.
    /// - Throws: ``SurveyFileError`` for malformed JSON, ``SurveyError`` for a survey
    ///   that breaks a rule.
    public init(json: Data, file: String? = nil) throws {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: json, options: [])
        } catch {
            let reason = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "it is not valid JSON"
            throw SurveyFileError(file: file, message: reason)
        }
        try self.init(interchange: try JSONBridge.propertyList(object, path: ""))
    }

    /// Reads a survey from an interchange XML property list.
    ///
    /// - Parameters:
    ///   - plist: The XML document.
    ///   - file: Where it came from, for messages.
    /// - Throws: ``PropertyListError`` (with line and column) for malformed XML,
    ///   ``SurveyError`` for a survey that breaks a rule.
    public init(plist: Data, file: String? = nil) throws {
        try self.init(interchange: try PropertyList(xml: plist, file: file))
    }

    /// The survey as interchange JSON: sorted keys, dates as ISO 8601 in UTC.
    ///
    /// - Returns: The JSON document.
    public func jsonData() throws -> Data {
        var data = try JSONSerialization.data(
            withJSONObject: JSONBridge.object(interchange), options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        data.append(UInt8(ascii: "\n"))
        return data
    }

    /// The survey as an interchange XML property list, in CoreFoundation's format.
    ///
    /// - Returns: The XML document.
    /// - Throws: ``PropertyListError`` when a text holds characters XML cannot carry.
    public func plistData() throws -> Data {
        try interchange.xmlData()
    }
}

/// A survey file that could not be read at all (malformed JSON).
public struct SurveyFileError: Error, Sendable, Equatable, CustomStringConvertible {
    public var file: String?
    public var message: String

    public var description: String { file.map { "\($0): \(message)" } ?? message }
}

/// Conversions between JSON objects (from `JSONSerialization`) and property lists.
enum JSONBridge {
    static func propertyList(_ object: Any, path: String) throws -> PropertyList {
        let here = path.isEmpty ? "the top level" : path
        switch object {
        case let string as String:
            return .string(string)
        case let number as NSNumber:
            switch String(cString: number.objCType) {
            case "c", "B": return .boolean(number.boolValue)
            case "d", "f": return .real(number.doubleValue)
            case "Q": return .integer(PropertyList.Integer(number.uint64Value))
            default: return .integer(PropertyList.Integer(number.int64Value))
            }
        case let array as [Any]:
            return .array(try array.enumerated().map { try propertyList($1, path: "\(path)[\($0)]") })
        case let dictionary as [String: Any]:
            var entries: [String: PropertyList] = [:]
            for (key, value) in dictionary {
                entries[key] = try propertyList(value, path: path.isEmpty ? key : "\(path).\(key)")
            }
            return .dictionary(entries)
        case is NSNull:
            throw SurveyFileError(file: nil, message: "null at \(here) is not allowed; leave the key out instead")
        default:
            throw SurveyFileError(file: nil, message: "unexpected value at \(here)")
        }
    }

    static func object(_ value: PropertyList) -> Any {
        switch value {
        case .string(let string): return string
        case .integer(let integer): return integer.int64Value.map { NSNumber(value: $0) } ?? NSNumber(value: integer.magnitude)
        case .real(let real): return NSNumber(value: real)
        case .boolean(let flag): return flag
        case .date(let date):
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime]
            return formatter.string(from: date)
        case .data(let data): return data.base64EncodedString()
        case .array(let elements): return elements.map(object)
        case .dictionary(let entries): return entries.mapValues(object)
        }
    }
}
