/// Conversions between seconds since 1970-01-01T00:00:00Z and proleptic Gregorian
/// calendar fields (astronomical year numbering: the year before 1 is 0), as
/// CoreFoundation uses for property-list dates.
struct CivilTime: Equatable {
    var year: Int64
    var month: Int  // 1…12
    var day: Int  // 1…31
    var hour: Int
    var minute: Int
    var second: Int

    /// Breaks whole seconds since 1970 into calendar fields.
    init(secondsSince1970 seconds: Int64) {
        let days = Self.floorDivide(seconds, 86_400)
        let secondOfDay = Int(seconds - days * 86_400)
        hour = secondOfDay / 3600
        minute = secondOfDay % 3600 / 60
        second = secondOfDay % 60
        // Days-to-civil over 400-year eras.
        let shifted = days + 719_468
        let era = Self.floorDivide(shifted, 146_097)
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        day = Int(dayOfYear - (153 * monthIndex + 2) / 5 + 1)
        month = Int(monthIndex < 10 ? monthIndex + 3 : monthIndex - 9)
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }

    init(year: Int64, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
    }

    /// Whole seconds since 1970 of these fields (which must be in range).
    var secondsSince1970: Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = Self.floorDivide(y, 400)
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return days * 86_400 + Int64(hour * 3600 + minute * 60 + second)
    }

    static func isLeapYear(_ year: Int64) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    static func daysInMonth(_ month: Int, year: Int64) -> Int {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }
}
