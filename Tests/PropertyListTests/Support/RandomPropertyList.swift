import Foundation
import PropertyList
import TestSupport

/// The seeded generator the property-list tests use (SplitMix64, shared by every test target).
typealias SeededGenerator = SeededRandom

/// Random property lists covering the whole value space the XML format carries.
struct RandomPropertyList {
    var generator: SeededGenerator
    /// Whether dates may have fractions of a second (which XML drops).
    var fractionalDates = false
    /// Seconds since 1970 that dates fall in: by default about 1200 BC to AD 5100, so
    /// before 1970, after 2100 and negative years are all covered.
    var dateRange: ClosedRange<Int64> = -100_000_000_000...100_000_000_000

    init(seed: UInt64) { generator = SeededGenerator(seed: seed) }

    mutating func value(depth: Int = 0) -> PropertyList {
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
                .leastNormalMagnitude, 1e-324, 0.1,
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
