import Foundation
import PropertyList
import Testing

/// The decoder and encoder remember coding keys by their `String` representation
/// (`Sources/PropertyList/Codable/Internal/CodableUnsafe.swift`, note 1). Keys that are
/// built anew for every look-up, short and long, must behave exactly like literals.
@Suite("Coding keys made at run time")
struct CodingKeyCacheTests {
    /// A record whose keys are made afresh on every use: short ones fit in a small
    /// string, long ones are a new heap string each time.
    struct Record: Codable, Equatable {
        var values: [Int]

        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }

            static func field(_ index: Int) -> Key {
                Key(stringValue: index % 2 == 0 ? "f\(index)" : "field number \(index) of this record")
            }
        }

        init(values: [Int]) { self.values = values }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            for (index, value) in values.enumerated() { try container.encode(value, forKey: .field(index)) }
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            var values: [Int] = []
            while container.contains(.field(values.count)) {
                values.append(try container.decode(Int.self, forKey: .field(values.count)))
            }
            #expect(container.allKeys.count == values.count)
            self.values = values
        }
    }

    /// Records of 0 to 40 fields (past 32 keys the decoder indexes a dictionary by
    /// hash instead of searching it), with values that tell the fields apart.
    static let records: [Record] = (0..<600).map { record in
        Record(values: (0..<(record % 41)).map { record * 100 + $0 })
    }

    @Test("Fresh keys decode every field to its own value, and a key never written is absent")
    func decodesFreshKeys() throws {
        let xml = try PlistEncoder().encode(Self.records)
        #expect(try PlistDecoder().decode([Record].self, from: xml) == Self.records)
        #expect(try PropertyListDecoder().decode([Record].self, from: xml) == Self.records)
    }

    @Test("Fresh keys are written as PropertyListSerialization writes Foundation's encoding")
    func encodesFreshKeys() throws {
        let foundation = PropertyListEncoder()
        foundation.outputFormat = .xml
        let theirTree = try FoundationBridge.read(try foundation.encode(Self.records))
        #expect(try PlistEncoder().encode(Self.records) == FoundationBridge.xml(theirTree))
    }

    @Test("String is two 64-bit words on 64-bit platforms, as the key caches assume")
    func stringLayout() {
        #if _pointerBitWidth(_64)
            #expect(MemoryLayout<String>.size == 16)
            #expect(MemoryLayout<String>.size == MemoryLayout<(UInt64, UInt64)>.size)
        #endif
    }
}
