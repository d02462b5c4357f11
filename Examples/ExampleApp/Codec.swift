import Foundation
import PropertyList

/// README's snippet of the property-list codec on its own, compiled: reads `data` (a
/// property list) and returns the bytes written back and a title that went through
/// `Codable` and back.
func codecExample(data: Data) throws -> (xml: Data, title: String) {
    // Values
    let value = try PropertyList(xml: data, file: "Survey.plist")  // strict reader
    let xml = try value.xmlData()  // CoreFoundation's bytes

    // Codable, shaped like Foundation's PropertyListEncoder/PropertyListDecoder
    struct Settings: Codable { var title: String; var count: Int }
    let bytes = try PlistEncoder().encode(Settings(title: "Visits", count: 3))
    let settings = try PlistDecoder().decode(Settings.self, from: bytes)
    return (xml, settings.title)
}
