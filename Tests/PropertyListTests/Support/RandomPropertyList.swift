import Foundation
import PropertyList
import TestSupport

/// Random property lists covering the whole value space the XML format carries.
struct RandomPropertyList {
    var generator: SeededRandom
    /// Whether dates may have fractions of a second (which XML drops).
    var fractionalDates = false
    /// Seconds since 1970 that dates fall in: by default about 1200 BC to AD 5100, so
    /// before 1970, after 2100 and negative years are all covered.
    var dateRange: ClosedRange<Int64> = -100_000_000_000...100_000_000_000
    /// Whether to mix in the awkward values too (``awkwardValue(depth:)``): characters XML
    /// 1.0 cannot carry, dates at and past the edges of what each implementation takes,
    /// subnormals, large data, nesting near and past ``PropertyList/maximumDepth``. Some
    /// of them the writer refuses by a documented rule (see ``AwkwardRules``).
    var awkward = false

    init(seed: UInt64) { generator = SeededRandom(seed: seed) }

    mutating func value(depth: Int = 0) -> PropertyList {
        if awkward, depth == 0, Int.random(in: 0..<25, using: &generator) == 0 {
            return deepChain()
        }
        if awkward, Int.random(in: 0..<4, using: &generator) == 0 {
            return awkwardScalar()
        }
        let containers = depth < 4
        switch Int.random(in: 0..<(containers ? 10 : 7), using: &generator) {
        case 0: return .string(string())
        case 1: return .integer(integer())
        case 2: return .real(real())
        case 3: return .boolean(Bool.random(using: &generator))
        case 4: return .date(date())
        case 5: return .data(data())
        case 6: return .string(string())
        case 7, 8:
            return .array((0..<Int.random(in: 0...5, using: &generator)).map { _ in value(depth: depth + 1) })
        default:
            var entries: [String: PropertyList] = [:]
            for _ in 0..<Int.random(in: 0...5, using: &generator) {
                entries[string()] = value(depth: depth + 1)
            }
            return .dictionary(entries)
        }
    }

    mutating func string() -> String {
        if awkward, Int.random(in: 0..<3, using: &generator) == 0 { return awkwardString() }
        let length = Int.random(in: 0...12, using: &generator)
        var scalars = String.UnicodeScalarView()
        for _ in 0..<length {
            let range: ClosedRange<UInt32> =
                switch Int.random(in: 0..<8, using: &generator) {
                case 0, 1, 2: 0x20...0x7E  // ASCII, including & < > " '
                case 3: 0x09...0x0A  // tab, line feed
                case 4: 0xA0...0x24F  // Latin
                case 5: 0x4E00...0x4F00  // CJK
                case 6: 0xE000...0xFFFD  // private use to the end of the BMP
                default: 0x1F300...0x1F64F  // emoji, outside the BMP
                }
            scalars.append(Unicode.Scalar(UInt32.random(in: range, using: &generator))!)
        }
        return String(scalars)
    }

    mutating func integer() -> PropertyList.Integer {
        switch Int.random(in: 0..<6, using: &generator) {
        case 0: return PropertyList.Integer(Int64.random(in: -1000...1000, using: &generator))
        case 1: return PropertyList.Integer(Int64.random(in: .min ... .max, using: &generator))
        case 2:
            return PropertyList.Integer(UInt64.random(in: UInt64(Int64.max)...UInt64.max, using: &generator))
        case 3:
            return [PropertyList.Integer.min, .max, 0, -1, PropertyList.Integer(Int64.max)].randomElement(
                using: &generator)!
        default:
            return PropertyList.Integer(Int64.random(in: -1_000_000_000...1_000_000_000, using: &generator))
        }
    }

    mutating func real() -> Double {
        switch Int.random(in: 0..<8, using: &generator) {
        case 0:
            return [
                Double.nan, .infinity, -.infinity, 0, -0.0, .leastNonzeroMagnitude, .greatestFiniteMagnitude,
                .leastNormalMagnitude, Double("1e-324")!, 0.1,
            ].randomElement(using: &generator)!
        case 1, 2:
            // Any finite bit pattern.
            while true {
                let real = Double(bitPattern: generator.next())
                if real.isFinite { return real }
            }
        case 3: return Double(Int.random(in: -100_000...100_000, using: &generator))
        case 4: return Double(Int.random(in: -1000...1000, using: &generator)) / 8
        default: return Double.random(in: -1e6...1e6, using: &generator)
        }
    }

    mutating func date() -> Date {
        let seconds = Double(Int64.random(in: dateRange, using: &generator))
        let fraction = fractionalDates ? Double.random(in: 0..<1, using: &generator) : 0
        return Date(timeIntervalSince1970: seconds + fraction)
    }

    mutating func data() -> Data {
        let length = [0, 1, 2, 3, Int.random(in: 0...200, using: &generator)].randomElement(
            using: &generator)!
        return Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }
}

// MARK: Awkward values

extension RandomPropertyList {
    /// A chain of arrays and dictionaries (with keys XML carries, one of them empty) from 120 to 130 levels deep,
    /// around ``PropertyList/maximumDepth``, with data (whose base64 lines stop being
    /// indented past eight tabs), a string or an empty container at the bottom.
    mutating func deepChain() -> PropertyList {
        let levels = Int.random(
            in: PropertyList.maximumDepth - 8...PropertyList.maximumDepth + 2, using: &generator)
        var value: PropertyList =
            switch Int.random(in: 0..<4, using: &generator) {
            case 0: .data(data())
            case 1: .string(string())
            case 2: .array([])
            default: .dictionary([:])
            }
        // An empty container at the bottom is a level of its own.
        let bottomIsContainer = value.arrayValue != nil || value.dictionaryValue != nil
        for _ in 0..<(bottomIsContainer ? levels - 1 : levels) {
            value =
                Bool.random(using: &generator)
                ? .array([value])
                : .dictionary([["", "k", "é", "😀"].randomElement(using: &generator)!: value])
        }
        return value
    }

    mutating func awkwardScalar() -> PropertyList {
        switch Int.random(in: 0..<5, using: &generator) {
        case 0: return .string(awkwardString())
        case 1: return .integer(awkwardInteger())
        case 2: return .real(awkwardReal())
        case 3: return .date(awkwardDate())
        default: return .data(awkwardData())
        }
    }

    /// Characters of every class XML 1.0 can and cannot carry: C0 controls, carriage
    /// return, DEL and the C1 controls, U+FFFE and U+FFFF, the byte order mark,
    /// noncharacters, the ends of the planes, line and paragraph separators, combining
    /// marks (so that normal forms differ), and markup that must be escaped.
    mutating func awkwardString() -> String {
        let specials: [Unicode.Scalar] = [
            "\u{7F}", "\u{80}", "\u{85}", "\u{9F}", "\u{A0}", "\u{D7FF}", "\u{E000}",
            Unicode.Scalar(0xFDD0 as UInt32)!, Unicode.Scalar(0xFDEF as UInt32)!,
            "\u{FEFF}", "\u{FFFD}", Unicode.Scalar(0x1FFFE as UInt32)!, Unicode.Scalar(0x1FFFF as UInt32)!,
            "\u{10FFFF}", "\u{2028}", "\u{2029}", "e", "\u{301}",
            "\u{E9}", "\u{1E9B}", "\u{323}", "\u{212B}", "]", ">", "<", "&", "\t", "\n", " ",
        ]
        let pieces = ["]]>", "&amp;", "&#0;", "<!--", "-->", "<?x?>", "\r\n", "e\u{301}", "\u{E9}"]
        let length = Int.random(in: 0...10, using: &generator)
        var text = ""
        for _ in 0..<length {
            switch Int.random(in: 0..<40, using: &generator) {
            case 0:
                // A C0 control other than tab and line feed (carriage return included).
                let controls = Array(0x00...0x08) + [0x0B, 0x0C, 0x0D] + Array(0x0E...0x1F)
                text.unicodeScalars.append(Unicode.Scalar(UInt8(controls.randomElement(using: &generator)!)))
            case 1:
                text.unicodeScalars.append(["\u{FFFE}", "\u{FFFF}"].randomElement(using: &generator)!)
            case 2...9: text += pieces.randomElement(using: &generator)!
            case 10...24: text.unicodeScalars.append(specials.randomElement(using: &generator)!)
            default: text += string()
            }
        }
        return text
    }

    mutating func awkwardInteger() -> PropertyList.Integer {
        let edges: [PropertyList.Integer] = [
            .min, .max, PropertyList.Integer(Int64.min + 1), PropertyList.Integer(Int64.max),
            PropertyList.Integer(UInt64(Int64.max) + 1), PropertyList.Integer(UInt64.max - 1),
            PropertyList.Integer(Int64(1) << 53), PropertyList.Integer(Int64(1) << 53 + 1),
            PropertyList.Integer(-(Int64(1) << 53) - 1), PropertyList.Integer(Int64(Int32.max) + 1),
            PropertyList.Integer(Int64(Int32.min) - 1), 0, -1, 1,
        ]
        return edges.randomElement(using: &generator)!
    }

    /// Subnormals, the ends of the double range, both zeros, NaN and the infinities, and
    /// the magnitudes where `%.17g` switches to an exponent.
    mutating func awkwardReal() -> Double {
        switch Int.random(in: 0..<4, using: &generator) {
        case 0:
            // A subnormal of any significand, either sign.
            let bits = UInt64.random(in: 1..<(1 << 52), using: &generator)
            return Double(
                sign: Bool.random(using: &generator) ? .minus : .plus, exponentBitPattern: 0,
                significandBitPattern: bits)
        case 1:
            // Huge or tiny: any significand with an extreme exponent.
            let exponent =
                Bool.random(using: &generator)
                ? UInt.random(in: 1...40, using: &generator) : UInt.random(in: 2000...2046, using: &generator)
            return Double(
                sign: Bool.random(using: &generator) ? .minus : .plus, exponentBitPattern: exponent,
                significandBitPattern: UInt64.random(in: 0..<(1 << 52), using: &generator))
        case 2:
            // Written as text where a literal would be rounded with a warning.
            let inexact = ["123456789012345678", "9007199254740993"].map { Double($0)! }
            let values: [Double] = [
                0.0, -0.0, .nan, -.nan, .infinity, -.infinity, .leastNonzeroMagnitude,
                -.leastNonzeroMagnitude,
                .leastNormalMagnitude, Double.leastNormalMagnitude.nextDown, .greatestFiniteMagnitude,
                -.greatestFiniteMagnitude, 1e-4, Double(1e-4).nextDown, 1e-5, 1e16, 1e17,
                Double(1e17).nextDown,
                0.1, 1.0 / 3,
            ]
            return (values + inexact).randomElement(using: &generator)!
        default:
            // A power of ten, exact or not, up and down the range.
            let power = Int.random(in: -330...310, using: &generator)
            return Double("1e\(power)")! * (Bool.random(using: &generator) ? 1 : -1)
        }
    }

    /// Dates at the edges: the first and last seconds of years 0, 1, 999, 1000, 9999 and
    /// 10000, the calendar reform of 1582, leap days, ±10^13 seconds from 2001 (the limit)
    /// and just past it, fractions of a second on either side of zero.
    mutating func awkwardDate() -> Date {
        let edges: [Double] = [
            -62_167_219_200, -62_167_219_201, -62_135_596_800, -62_135_596_801, -30_610_224_000,
            -30_610_224_001, 253_402_300_799, 253_402_300_800, -12_219_292_800, -12_219_292_801,
            -2_203_891_200, 951_782_400, 0, -1,
        ]
        let limit = 1e13
        switch Int.random(in: 0..<4, using: &generator) {
        case 0:
            return Date(timeIntervalSince1970: edges.randomElement(using: &generator)!)
        case 1:
            let interval = [
                limit, -limit, limit - 1, -limit + 1, limit + 1, -limit - 1, limit.nextUp, -limit.nextUp,
            ]
            .randomElement(using: &generator)!
            return Date(timeIntervalSinceReferenceDate: interval)
        case 2:
            let fraction = Double.random(in: -1...1, using: &generator)
            return Date(timeIntervalSince1970: (edges.randomElement(using: &generator)! + fraction))
        default:
            return Date(timeIntervalSinceReferenceDate: Double.random(in: -limit...limit, using: &generator))
        }
    }

    /// Empty data, lengths at the ends of a base64 line, and now and then a large block.
    mutating func awkwardData() -> Data {
        let length =
            Int.random(in: 0..<20, using: &generator) == 0
            ? Int.random(in: 50_000...300_000, using: &generator)
            : [0, 1, 2, 3, 42, 43, 44, 45, 54, 55, 56, 57, 58, 59, 60].randomElement(using: &generator)!
        return Data((0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
    }
}

extension PropertyList {
    /// The value as XML keeps it: dates rounded down to the whole second.
    var truncatingDates: PropertyList {
        switch self {
        case .date(let date):
            return .date(
                Date(timeIntervalSinceReferenceDate: date.timeIntervalSinceReferenceDate.rounded(.down)))
        case .array(let elements): return .array(elements.map(\.truncatingDates))
        case .dictionary(let entries): return .dictionary(entries.mapValues(\.truncatingDates))
        default: return self
        }
    }
}

/// The documented rules by which the implementations part ways on a value, worked out
/// from the value alone (README, "What the writer writes" and "What the reader accepts
/// and refuses").
enum AwkwardRules {
    /// How many levels of arrays and dictionaries `value` has (an empty one counts).
    static func levels(_ value: PropertyList) -> Int {
        switch value {
        case .array(let elements): 1 + (elements.map(levels).max() ?? 0)
        case .dictionary(let entries): 1 + (entries.values.map(levels).max() ?? 0)
        default: 0
        }
    }

    /// Every string and key in `value`.
    static func texts(_ value: PropertyList) -> [String] {
        switch value {
        case .string(let string): [string]
        case .array(let elements): elements.flatMap(texts)
        case .dictionary(let entries): entries.flatMap { [$0.key] + texts($0.value) }
        default: []
        }
    }

    /// Every date in `value`.
    static func dates(_ value: PropertyList) -> [Date] {
        switch value {
        case .date(let date): [date]
        case .array(let elements): elements.flatMap(dates)
        case .dictionary(let entries): entries.values.flatMap(dates)
        default: []
        }
    }

    /// Whether `text` holds a character XML 1.0 cannot carry at all: a C0 control other
    /// than tab, line feed and carriage return, U+FFFE or U+FFFF.
    static func hasForbiddenCharacter(_ text: String) -> Bool {
        text.unicodeScalars.contains {
            ($0.value < 0x20 && $0.value != 0x09 && $0.value != 0x0A && $0.value != 0x0D)
                || $0.value == 0xFFFE || $0.value == 0xFFFF
        }
    }

    /// Whether a date lies beyond the ±10^13 seconds from 2001 that are read and written.
    static func isOutOfRange(_ date: Date) -> Bool {
        !(abs(date.timeIntervalSinceReferenceDate) <= 1e13)
    }

    /// The codes our writer may refuse `value` with (empty: it must write it): nesting
    /// deeper than ``PropertyList/maximumDepth``, a string or key with a character XML
    /// 1.0 cannot carry or a carriage return, a date out of range.
    static func writerRefusals(_ value: PropertyList) -> Set<PropertyListError.Code> {
        var codes = Set<PropertyListError.Code>()
        if levels(value) > PropertyList.maximumDepth { codes.insert(.nestingTooDeep) }
        if texts(value).contains(where: { hasForbiddenCharacter($0) || $0.unicodeScalars.contains("\r") })
            || dates(value).contains(where: isOutOfRange)
        {
            codes.insert(.unrepresentableValue)
        }
        return codes
    }

    /// Years 1 to 9999: the dates Python's `plistlib` reads (README: a survey's dates
    /// keep to them for that reason).
    static func plistlibReads(_ date: Date) -> Bool {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        return seconds >= -62_135_596_800 && seconds < 253_402_300_800
    }
}

extension PropertyList {
    /// The value the XML writer's bytes carry: dates rounded down to the whole second,
    /// and `-0.0` written `0.0`, so read back as `+0.0` (both as CoreFoundation does).
    var writtenForm: PropertyList {
        switch self {
        case .real(let real) where real == 0: return .real(0)
        case .date, .array, .dictionary:
            switch truncatingDates {
            case .array(let elements): return .array(elements.map(\.writtenForm))
            case .dictionary(let entries): return .dictionary(entries.mapValues(\.writtenForm))
            case let other: return other
            }
        default: return self
        }
    }

    /// Whether two values are the same down to the bits of their reals (the sign of zero
    /// counts; any NaN equals any NaN), which `==` does not look at.
    func isIdentical(to other: PropertyList) -> Bool {
        switch (self, other) {
        case (.real(let a), .real(let b)): return a.bitPattern == b.bitPattern || (a.isNaN && b.isNaN)
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.isIdentical(to: $1) }
        case (.dictionary(let a), .dictionary(let b)):
            return a.count == b.count
                && a.allSatisfy { key, value in b[key].map { value.isIdentical(to: $0) } ?? false }
        default: return self == other
        }
    }
}
