import Foundation
import PropertyList
import Testing

/// Seeded random values compared with Foundation's `PropertyListSerialization`, the
/// reference implementation of CoreFoundation's XML format on this platform.
@Suite("Conformance with PropertyListSerialization over random values")
struct ConformanceTests {
    static let valueCount = 10_000

    @Test("Our bytes equal Foundation's, and both readers read them back exactly")
    func randomValues() throws {
        var random = RandomPropertyList(seed: 0x5EED_2026)
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
                failures.append("value \(index): our reader read back \(readBack), expected \(expected)")
            }
            let readByFoundation = try FoundationBridge.read(ours)
            if readByFoundation != expected {
                failures.append(
                    "value \(index): Foundation read back \(readByFoundation), expected \(expected)")
            }
            if failures.count >= 3 { break }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n\n"))")
    }

    @Test("Our reader reads what Foundation writes, wrapped in any container")
    func foundationWritten() throws {
        var random = RandomPropertyList(seed: 42)
        for _ in 0..<1000 {
            let value = PropertyList.dictionary(["root": random.value()])
            let theirs = try FoundationBridge.xml(value)
            #expect(try PropertyList(xml: theirs) == value.truncatingDates)
        }
    }
}
