import Foundation
import PropertyList
import TestSupport
import Testing

@Suite("ISO8601Date: the one date format, proleptic Gregorian")
struct ISO8601DateTests {
    @Test(
        "Dates before 1582 print in the proleptic Gregorian calendar, as <date> writes them",
        arguments: [
            (-63_145_440_000.0, "0000-01-02T00:00:00Z"),
            (-62_839_238_400.0, "0009-09-15T00:00:00Z"),
            (-13_197_686_400.0, "1582-10-14T00:00:00Z"),
            (-63_177_062_400.0, "-001-01-01T00:00:00Z"),
            (0.0, "2001-01-01T00:00:00Z"),
            (-0.5, "2000-12-31T23:59:59Z"),
        ])
    func printsProlepticGregorian(interval: Double, text: String) throws {
        let date = Date(timeIntervalSinceReferenceDate: interval)
        #expect(ISO8601Date.string(from: date) == text)
        let xml = String(decoding: try PropertyList.date(date).xmlData(), as: UTF8.self)
        #expect(xml.contains("<date>\(text)</date>"))
        #expect(
            try ISO8601Date.date(from: text) == Date(timeIntervalSinceReferenceDate: interval.rounded(.down)))
    }

    @Test("Milliseconds are written when asked for, carrying into the second")
    func fractionDigits() {
        #expect(
            ISO8601Date.string(from: Date(timeIntervalSince1970: 1.123), fractionDigits: 3)
                == "1970-01-01T00:00:01.123Z")
        #expect(
            ISO8601Date.string(from: Date(timeIntervalSince1970: 59.9996), fractionDigits: 3)
                == "1970-01-01T00:01:00.000Z")
        #expect(
            ISO8601Date.string(from: Date(timeIntervalSince1970: -0.25), fractionDigits: 3)
                == "1969-12-31T23:59:59.750Z")
    }

    @Test(
        "Impossible dates are refused, not rolled over",
        arguments: [
            ("2026-02-30T00:00:00Z", "has day 30, which month 2 of 2026 does not have"),
            ("2026-02-29T00:00:00Z", "has day 29, which month 2 of 2026 does not have"),
            ("2026-13-01T00:00:00Z", "has month 13"),
            ("2026-01-01T24:00:00Z", "has a time of day out of range (hour 24)"),
            ("2026-01-01T10:60:00Z", "has a time of day out of range (minute 60)"),
            ("2026-01-01T10:00:60Z", "has a time of day out of range (second 60)"),
            ("2026-01-01T10:00:00+01:00", "is malformed"),
            ("2026-01-01", "is malformed"),
        ])
    func refusesImpossibleDates(text: String, reason: String) {
        let error = #expect(throws: ISO8601Date.Failure.self) { try ISO8601Date.date(from: text) }
        #expect(error?.reason == reason)
        #expect(error?.message.hasPrefix("date '\(text)' \(reason)") == true)
    }

    @Test("A fraction of a second is read, and a leap day of a leap year is possible")
    func fractions() throws {
        #expect(
            try ISO8601Date.date(from: "2001-01-01T00:00:00.75Z")
                == Date(timeIntervalSinceReferenceDate: 0.75))
        #expect(
            try ISO8601Date.date(from: "2024-02-29T00:00:00Z") == Date(timeIntervalSince1970: 1_709_164_800))
    }

    @Test("Every date the writer writes prints the same and reads back (seeded)")
    func agreesWithTheWriter() throws {
        let seed = SeededRandom.seed(fallback: 0x1582_1015)
        var random = SeededRandom(seed: seed)
        for _ in 0..<2000 {
            let interval = Double(Int64(bitPattern: random.next()) % 10_000_000_000_000)
            let date = Date(timeIntervalSinceReferenceDate: interval)
            let xml = String(decoding: try PropertyList.date(date).xmlData(), as: UTF8.self)
            let text = ISO8601Date.string(from: date)
            #expect(
                xml.contains("<date>\(text)</date>"),
                "seed \(seed); replay with SURVEYSTORE_SEED=\(seed): \(interval)")
            #expect(
                try ISO8601Date.date(from: text) == date,
                "seed \(seed); replay with SURVEYSTORE_SEED=\(seed): \(interval)")
        }
    }
}
