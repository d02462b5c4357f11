import Foundation

/// A property-list value: the data model of Apple's XML property lists.
///
/// A property list is a tree of dictionaries (with string keys), arrays, and the
/// scalar values string, integer, real, boolean, date and data. `PropertyList` can hold
/// every value the XML format can carry, including integers in the full range
/// −2^63…2^64−1.
///
/// Read one from XML with ``init(xml:file:)`` and write one with
/// ``xmlData()``; the output is byte-identical to CoreFoundation's XML writer.
public enum PropertyList: Sendable {
    /// A Unicode string (`<string>`).
    case string(String)
    /// An integer in −2^63…2^64−1 (`<integer>`).
    case integer(Integer)
    /// A double-precision floating-point number (`<real>`).
    case real(Double)
    /// A boolean (`<true/>` or `<false/>`).
    case boolean(Bool)
    /// A point in time, stored to the whole second in XML (`<date>`).
    case date(Date)
    /// Raw bytes (`<data>`, base64-encoded in XML).
    case data(Data)
    /// An ordered list of values (`<array>`).
    case array([PropertyList])
    /// String keys mapped to values (`<dict>`); XML output sorts the keys.
    case dictionary([String: PropertyList])
}

extension PropertyList {
    /// The name of the value's type as it appears in XML, for messages.
    public var typeName: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .real: "real"
        case .boolean: "boolean"
        case .date: "date"
        case .data: "data"
        case .array: "array"
        case .dictionary: "dictionary"
        }
    }

    /// The value's type with its article, for messages: "a string", "an integer", ….
    public var typeDescription: String {
        switch self {
        case .string: "a string"
        case .integer: "an integer"
        case .real: "a real number"
        case .boolean: "a boolean"
        case .date: "a date"
        case .data: "data"
        case .array: "an array"
        case .dictionary: "a dictionary"
        }
    }

    /// The string, if this value is a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The integer, if this value is an integer.
    public var integerValue: Integer? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The real, if this value is a real.
    public var realValue: Double? {
        if case .real(let value) = self { return value }
        return nil
    }

    /// The boolean, if this value is a boolean.
    public var booleanValue: Bool? {
        if case .boolean(let value) = self { return value }
        return nil
    }

    /// The date, if this value is a date.
    public var dateValue: Date? {
        if case .date(let value) = self { return value }
        return nil
    }

    /// The bytes, if this value is data.
    public var dataValue: Data? {
        if case .data(let value) = self { return value }
        return nil
    }

    /// The elements, if this value is an array.
    public var arrayValue: [PropertyList]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The entries, if this value is a dictionary.
    public var dictionaryValue: [String: PropertyList]? {
        if case .dictionary(let value) = self { return value }
        return nil
    }

    /// The value for `key`, if this value is a dictionary that has it.
    public subscript(key: String) -> PropertyList? {
        dictionaryValue?[key]
    }
}

extension PropertyList: Equatable {
    /// Two property lists are equal when they have the same structure and values.
    ///
    /// Reals compare numerically, except that NaN equals NaN, so that a value read back
    /// from its own XML always equals the original.
    public static func == (lhs: PropertyList, rhs: PropertyList) -> Bool {
        switch (lhs, rhs) {
        case (.string(let a), .string(let b)): a == b
        case (.integer(let a), .integer(let b)): a == b
        case (.real(let a), .real(let b)): a == b || (a.isNaN && b.isNaN)
        case (.boolean(let a), .boolean(let b)): a == b
        case (.date(let a), .date(let b)): a == b
        case (.data(let a), .data(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.dictionary(let a), .dictionary(let b)): a == b
        default: false
        }
    }
}

extension PropertyList: Hashable {
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .string(let value): hasher.combine(0); hasher.combine(value)
        case .integer(let value): hasher.combine(1); hasher.combine(value)
        case .real(let value):
            hasher.combine(2)
            // NaNs are equal to each other and 0.0 == -0.0, so hash them alike.
            hasher.combine(value.isNaN ? Double.nan.bitPattern : (value == 0 ? 0 : value.bitPattern))
        case .boolean(let value): hasher.combine(3); hasher.combine(value)
        case .date(let value): hasher.combine(4); hasher.combine(value)
        case .data(let value): hasher.combine(5); hasher.combine(value)
        case .array(let value): hasher.combine(6); hasher.combine(value)
        case .dictionary(let value): hasher.combine(7); hasher.combine(value)
        }
    }
}

extension PropertyList: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(Integer(value)) }
    public init(floatLiteral value: Double) { self = .real(value) }
    public init(booleanLiteral value: Bool) { self = .boolean(value) }
    public init(arrayLiteral elements: PropertyList...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, PropertyList)...) {
        self = .dictionary(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
