import Foundation

/// The one date format of the project: ISO 8601 in UTC and the proleptic Gregorian
/// calendar (the year before 1 is year 0), read and written exactly as `<date>` is.
///
/// Foundation's `ISO8601DateFormatter` and `Date.ISO8601FormatStyle` switch to the
/// Julian calendar before 1582-10-15 and roll impossible dates over (30 February becomes
/// 2 March); this type does neither, so a date reads and prints the same in an XML
/// property list, in JSON and on the command line.
///
/// Accepted text: `[-]YYYY-MM-DDTHH:MM:SS[.fraction]Z`, a year of one to nine digits,
/// within ±10^13 seconds of 2001. Impossible dates (month 13, 30 February, hour 24) are
/// refused.
public enum ISO8601Date {
    /// Text that is not a possible date.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// Why the text was refused, without quoting it (for example "has day 30, which
        /// month 2 of 2026 does not have"), so that it can be shown without the text.
        public var reason: String
        /// The full message, quoting the text.
        public var message: String

        /// The full message, quoting the text.
        public var description: String { message }
    }

    /// Reads a date.
    ///
    /// - Parameter text: `[-]YYYY-MM-DDTHH:MM:SS[.fraction]Z`.
    /// - Returns: The date, with its fraction of a second.
    /// - Throws: ``Failure`` when the text has another form or names an impossible date.
    public static func date(from text: some StringProtocol) throws(Failure) -> Date {
        var utf8 = String(text)
        let result = utf8.withUTF8 { bytes in
            Result { () throws(ScalarParsing.Failure) in try ScalarParsing.date(bytes) }
        }
        switch result {
        case .success(let date): return date
        case .failure(let error): throw Failure(reason: error.reason ?? error.message, message: error.message)
        }
    }

    /// Writes a date as `YYYY-MM-DDTHH:MM:SSZ` (years below zero as `-001`), the form of
    /// `<date>`, optionally with a fraction of a second.
    ///
    /// - Parameters:
    ///   - date: The date; it should lie within ±10^13 seconds of 2001 (the property-list
    ///     range). A date that is not finite is written as its `description`.
    ///   - fractionDigits: 0 (the default) drops the fraction of a second, as the XML
    ///     writer does; 1 to 9 write that many digits, rounded to the nearest.
    /// - Returns: The text.
    public static func string(from date: Date, fractionDigits: Int = 0) -> String {
        let interval = date.timeIntervalSince1970
        guard interval.isFinite, abs(date.timeIntervalSinceReferenceDate) <= 1e15 else {
            return date.description
        }
        let digits = min(max(fractionDigits, 0), 9)
        var scale: Int64 = 1
        for _ in 0..<digits { scale *= 10 }
        let scaled = digits == 0 ? interval.rounded(.down) : (interval * Double(scale)).rounded()
        let ticks = Int64(scaled)
        var seconds = ticks / scale
        var fraction = ticks % scale
        if fraction < 0 {
            seconds -= 1
            fraction += scale
        }
        let time = CivilTime(secondsSince1970: seconds)
        var text = time.year < 0 ? "-" + padded(-time.year, 3) : padded(time.year, 4)
        text += "-" + padded(Int64(time.month), 2) + "-" + padded(Int64(time.day), 2)
        text +=
            "T" + padded(Int64(time.hour), 2) + ":" + padded(Int64(time.minute), 2) + ":"
            + padded(Int64(time.second), 2)
        if digits > 0 { text += "." + padded(fraction, digits) }
        return text + "Z"
    }

    private static func padded(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
