import Foundation
import PropertyList

/// Conversions between `PropertyList` and the object trees of Foundation's
/// `PropertyListSerialization`, an independent implementation to compare against.
enum FoundationBridge {
    struct Unsupported: Error, CustomStringConvertible {
        var description: String
    }

    /// The Foundation object tree for `value`.
    static func object(_ value: PropertyList) -> Any {
        switch value {
        case .string(let string): return string
        case .integer(let integer):
            if let signed = integer.int64Value { return NSNumber(value: signed) }
            return NSNumber(value: integer.magnitude)
        case .real(let real): return NSNumber(value: real)
        case .boolean(let flag): return flag
        case .date(let date): return date
        case .data(let data): return data
        case .array(let elements): return elements.map(object)
        case .dictionary(let entries): return entries.mapValues(object)
        }
    }

    /// The `PropertyList` for a Foundation object tree.
    static func value(_ object: Any) throws -> PropertyList {
        // On Linux an NSNumber also casts to Bool, so ask for the exact type first.
        if type(of: object) == Bool.self { return .boolean(object as! Bool) }
        switch object {
        case let string as String: return .string(string)
        case let number as NSNumber:
            switch String(cString: number.objCType) {
            case "d", "f": return .real(number.doubleValue)
            case "Q": return .integer(PropertyList.Integer(number.uint64Value))
            case "c", "B": return .boolean(number.boolValue)
            default: return .integer(PropertyList.Integer(number.int64Value))
            }
        case let date as Date: return .date(date)
        case let data as Data: return .data(data)
        case let array as [Any]: return .array(try array.map(value))
        case let dictionary as [String: Any]: return .dictionary(try dictionary.mapValues(value))
        default:
            throw Unsupported(description: "unexpected \(type(of: object)) in a Foundation property list")
        }
    }

    /// Foundation's XML for `value`.
    static func xml(_ value: PropertyList) throws -> Data {
        try PropertyListSerialization.data(fromPropertyList: object(value), format: .xml, options: 0)
    }

    /// Foundation's reading of `data`, as a `PropertyList`.
    static func read(_ data: Data) throws -> PropertyList {
        try value(PropertyListSerialization.propertyList(from: data, options: [], format: nil))
    }
}
