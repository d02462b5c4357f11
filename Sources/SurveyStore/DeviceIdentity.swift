import Foundation
import Packages
import PropertyList
import Versions

/// This replica's device id and name, in `Local.nosync/Device.plist` (never synced).
enum DeviceIdentity {
    static func path(_ store: String) -> String { store + "/Local.nosync/Device.plist" }

    static func newID() -> String {
        (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    static func read(store: String) throws -> Device {
        let data = try Data(contentsOf: URL(fileURLWithPath: path(store)))
        let value = try PropertyList(xml: data, file: path(store))
        guard case .string(let id)? = value["DeviceID"], case .string(let name)? = value["DeviceName"] else {
            throw StoreError.noSuchStore(store)
        }
        return Device(id: id, name: name)
    }

    /// Local state may be rewritten: it is replaced atomically (written aside, renamed over).
    static func write(_ device: Device, store: String) throws {
        let data = try PropertyList.dictionary(["DeviceID": .string(device.id), "DeviceName": .string(device.name)]).xmlData()
        try data.write(to: URL(fileURLWithPath: path(store)), options: .atomic)
    }
}
