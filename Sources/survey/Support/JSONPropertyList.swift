import Foundation
import SurveyStore

/// A property list as JSON: dates become ISO 8601 strings and data base64 strings.
struct JSONPropertyList: Encodable {
    var value: PropertyList
    var path: String

    static func encode(_ value: PropertyList) throws -> Data {
        do {
            return try Console.jsonData(JSONPropertyList(value: value, path: ""))
        } catch let EncodingError.invalidValue(_, context) {
            throw PropertyListError(code: .unrepresentableValue, message: context.debugDescription)
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch value {
        case .string(let string): try container.encode(string)
        case .integer(let integer):
            if let signed = integer.int64Value {
                try container.encode(signed)
            } else {
                try container.encode(integer.magnitude)
            }
        case .real(let real):
            guard real.isFinite else {
                throw EncodingError.invalidValue(
                    real,
                    .init(
                        codingPath: [],
                        debugDescription:
                            "the real \(real) at \(path.isEmpty ? "the top level" : path) cannot be written as JSON"
                    ))
            }
            try container.encode(real)
        case .boolean(let flag): try container.encode(flag)
        case .date(let date): try container.encode(ISO8601Date.string(from: date))
        case .data(let data): try container.encode(data.base64EncodedString())
        case .array(let elements):
            try container.encode(
                elements.enumerated().map { JSONPropertyList(value: $1, path: "\(path)[\($0)]") })
        case .dictionary(let entries):
            try container.encode(
                entries.reduce(into: [String: JSONPropertyList]()) {
                    $0[$1.key] = JSONPropertyList(
                        value: $1.value, path: path.isEmpty ? $1.key : "\(path).\($1.key)")
                })
        }
    }
}
