import Foundation
import PropertyList
import TestSupport
import Testing

/// Seeded random values compared with Foundation's `PropertyListSerialization`, the
/// reference implementation of CoreFoundation's XML format on this platform.
@Suite("Conformance with PropertyListSerialization over random values")
struct ConformanceTests {
    static let valueCount = 10_000

    @Test("Our bytes equal Foundation's, and both readers read them back exactly")
    func randomValues() throws {
        let seed = SeededRandom.seed(fallback: 0x5EED_2026)
        var random = RandomPropertyList(seed: seed)
        random.fractionalDates = true
        var failures: [String] = []
        for index in 0..<Self.valueCount {
            let value = random.value()
            let expected = value.truncatingDates
            let ours = try value.xmlData()
            let theirs = try FoundationBridge.xml(value)
            if ours != theirs {
                failures.append(
                    "value \(index): bytes differ\n--- ours\n\(String(decoding: ours, as: UTF8.self))\n--- Foundation\n\(String(decoding: theirs, as: UTF8.self))"
                )
            }
            let readBack = try PropertyList(xml: ours)
            if readBack != expected {
                failures.append(
                    "value \(index): our reader read back \(readBack.shown), expected \(expected.shown)")
            }
            // Foundation's reader drops a U+FEFF that begins a string or key (a documented
            // rule, checked as in awkwardValues(); the plain generator makes one rarely).
            let readByFoundation = try FoundationBridge.read(ours)
            if let foundationExpected = expected.droppingLeadingByteOrderMarks,
                readByFoundation != foundationExpected
            {
                failures.append(
                    "value \(index): Foundation read back \(readByFoundation.shown), expected \(expected.shown)"
                )
            }
            if failures.count >= 3 { break }
        }
        #expect(
            failures.isEmpty,
            "seed \(seed); replay with SURVEYSTORE_SEED=\(seed)\n\(failures.joined(separator: "\n\n"))")
    }

    @Test("Our reader reads what Foundation writes, wrapped in any container")
    func foundationWritten() throws {
        let seed = SeededRandom.seed(fallback: 42)
        var random = RandomPropertyList(seed: seed)
        for index in 0..<1000 {
            let value = PropertyList.dictionary(["root": random.value()])
            let theirs = try FoundationBridge.xml(value)
            #expect(
                try PropertyList(xml: theirs) == value.truncatingDates,
                "value \(index), seed \(seed); replay with SURVEYSTORE_SEED=\(seed)")
        }
    }

    static let awkwardCount = 2_000

    /// Awkward values (``RandomPropertyList/awkward``): our bytes equal Foundation's and
    /// each reader reads the other's bytes to the value they carry, except where a
    /// documented rule parts the implementations, which is then what is checked: our
    /// writer refuses what XML 1.0 cannot carry, dates beyond ±10^13 s and nesting deeper
    /// than 128 levels (Foundation writes them; our reader refuses those bytes with a
    /// position, and reads a carriage return Foundation wrote as a line feed, as every
    /// XML reader does).
    @Test("Awkward values: our bytes equal Foundation's, each reads the other's, or a documented rule holds")
    func awkwardValues() throws {
        let seed = SeededRandom.seed(fallback: 0xA3C_2026)
        var random = RandomPropertyList(seed: seed)
        random.awkward = true
        random.fractionalDates = true
        var failures: [String] = []
        var refused = 0
        for index in 0..<Self.awkwardCount {
            let value = random.value()
            let expected = value.writtenForm
            let refusals = AwkwardRules.writerRefusals(value)
            let theirs = try FoundationBridge.xml(value)
            let readTheirs = Result { try PropertyList(xml: theirs, file: "foundation.plist") }
            let written = Result { try value.xmlData() }
            guard case .success(let ours) = written else {
                refused += 1
                if case .failure(let error as PropertyListError) = written, refusals.contains(error.code) {
                } else {
                    failures.append(
                        "value \(index): refused with \(written), which no rule explains: \(value.shown)")
                }
                // Foundation wrote it all the same; what we make of its bytes.
                if let problem = Self.checkReading(readTheirs, of: value) {
                    failures.append("value \(index): Foundation's bytes: \(problem)")
                }
                if failures.count >= 3 { break }
                continue
            }
            if !refusals.isEmpty {
                failures.append(
                    "value \(index): written, but the rules refuse it (\(refusals)): \(value.shown)")
            }
            if ours != theirs {
                failures.append(
                    "value \(index): bytes differ\n--- ours\n\(String(decoding: ours, as: UTF8.self))\n--- Foundation\n\(String(decoding: theirs, as: UTF8.self))"
                )
            }
            switch Result(catching: { try PropertyList(xml: ours) }) {
            case .success(let readBack) where readBack.isIdentical(to: expected): break
            case .success(let readBack):
                failures.append(
                    "value \(index): our reader read back \(readBack.shown), expected \(expected.shown)")
            case .failure(let error):
                failures.append("value \(index): our reader refuses our own bytes: \(error)")
            }
            // Foundation's reader drops a U+FEFF that begins a string or key (it takes it
            // for a byte order mark); ours keeps it, as libxml2 and plistlib do.
            let readByFoundation = try FoundationBridge.read(ours)
            if let foundationExpected = expected.droppingLeadingByteOrderMarks,
                !readByFoundation.isIdentical(to: foundationExpected)
            {
                failures.append(
                    "value \(index): Foundation read back \(readByFoundation.shown), expected \(expected.shown)"
                )
            }
            switch readTheirs {
            case .success(let read) where read.isIdentical(to: expected): break
            case .success(let read):
                failures.append(
                    "value \(index): we read Foundation's bytes as \(read.shown), expected \(expected.shown)")
            case .failure(let error):
                failures.append("value \(index): we refuse Foundation's bytes: \(error)")
            }
            if failures.count >= 3 { break }
        }
        #expect(refused > 0 && refused < Self.awkwardCount / 2, "\(refused) refused: the generator is off")
        #expect(
            failures.isEmpty,
            "seed \(seed); replay with SURVEYSTORE_SEED=\(seed)\n\(failures.joined(separator: "\n\n"))")
    }

    /// What our reader must make of Foundation's XML for a value our writer refuses:
    /// refuse it with a position (nesting too deep, a character XML 1.0 cannot carry, a
    /// date out of range), or, when only carriage returns were in the way, read it with
    /// each carriage return (or CR LF) as a line feed. `nil` when it does.
    static func checkReading(_ outcome: Result<PropertyList, any Error>, of value: PropertyList) -> String? {
        let texts = AwkwardRules.texts(value)
        var codes = Set<PropertyListError.Code>()
        if AwkwardRules.levels(value) > PropertyList.maximumDepth { codes.insert(.nestingTooDeep) }
        if texts.contains(where: AwkwardRules.hasForbiddenCharacter) { codes.insert(.malformedXML) }
        // Foundation writes a date rounded down to the second, and that is what is read:
        // 10^13 s and a fraction is refused by our writer but read as 10^13 s.
        if AwkwardRules.dates(value).contains(where: {
            AwkwardRules.isOutOfRange(
                Date(timeIntervalSinceReferenceDate: $0.timeIntervalSinceReferenceDate.rounded(.down)))
        }) {
            codes.insert(.invalidValue)
        }
        let normalized = codes.isEmpty ? value.writtenForm.lineEndsNormalized : nil
        if codes.isEmpty && normalized == nil {
            // Two keys that become one once their line ends are normalized.
            codes.insert(.invalidStructure)
        }
        switch outcome {
        case .success(let read):
            guard let normalized else { return "read as \(read.shown), but one of \(codes) was expected" }
            return read.isIdentical(to: normalized)
                ? nil : "read as \(read.shown), expected \(normalized.shown)"
        case .failure(let error as PropertyListError):
            if normalized != nil { return "refused (\(error)), expected it read" }
            if !codes.contains(error.code) { return "refused with \(error), expected one of \(codes)" }
            return error.line == nil ? "refused without a position: \(error)" : nil
        case .failure(let error):
            return "refused with \(error)"
        }
    }
}

extension PropertyList {
    /// The value described for a failure message, cut after 600 characters.
    var shown: String {
        let text = String(describing: self)
        return text.count > 600 ? text.prefix(600) + "…" : text
    }

    /// The value as Foundation's reader reads it: each string and key that begins with
    /// U+FEFF without it. `nil` when two keys of a dictionary become one.
    var droppingLeadingByteOrderMarks: PropertyList? {
        func drop(_ text: String) -> String {
            text.unicodeScalars.first == "\u{FEFF}" ? String(text.unicodeScalars.dropFirst()) : text
        }
        switch self {
        case .string(let text): return .string(drop(text))
        case .array(let elements):
            var result: [PropertyList] = []
            for element in elements {
                guard let dropped = element.droppingLeadingByteOrderMarks else { return nil }
                result.append(dropped)
            }
            return .array(result)
        case .dictionary(let entries):
            var result: [String: PropertyList] = [:]
            for (key, element) in entries {
                guard let dropped = element.droppingLeadingByteOrderMarks,
                    result.updateValue(dropped, forKey: drop(key)) == nil
                else { return nil }
            }
            return .dictionary(result)
        default: return self
        }
    }

    /// The value with each CR LF and each lone CR in its strings and keys made a line
    /// feed, as an XML reader reads them; `nil` when two keys of a dictionary become one.
    var lineEndsNormalized: PropertyList? {
        // Scalar by scalar: Foundation's replacingOccurrences(of: "\r\n", …) passes over
        // a CR LF followed by a combining mark.
        func normalize(_ text: String) -> String {
            var result = String.UnicodeScalarView()
            var afterCR = false
            for scalar in text.unicodeScalars {
                defer { afterCR = scalar == "\r" }
                if scalar == "\n" && afterCR { continue }
                result.append(scalar == "\r" ? "\n" : scalar)
            }
            return String(result)
        }
        switch self {
        case .string(let text): return .string(normalize(text))
        case .array(let elements):
            var result: [PropertyList] = []
            for element in elements {
                guard let normalized = element.lineEndsNormalized else { return nil }
                result.append(normalized)
            }
            return .array(result)
        case .dictionary(let entries):
            var result: [String: PropertyList] = [:]
            for (key, element) in entries {
                guard let normalized = element.lineEndsNormalized,
                    result.updateValue(normalized, forKey: normalize(key)) == nil
                else { return nil }
            }
            return .dictionary(result)
        default: return self
        }
    }
}
