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

    /// The identity of the store folder itself: its file system and inode numbers.
    /// A copied store (with its `Local.nosync/`) lives in another folder, so it differs.
    static func folderIdentity(_ store: String) -> String {
        let attributes = (try? FileManager.default.attributesOfItem(atPath: store)) ?? [:]
        return "\(attributes[.systemNumber] ?? 0):\(attributes[.systemFileNumber] ?? 0)"
    }

    /// This store's device. A `Device.plist` copied along with a whole store names
    /// another folder; the copy then gets a new device id, keeping the name, so that two
    /// replicas never save under one id.
    static func read(store: String) throws -> Device {
        let data = try Data(contentsOf: URL(fileURLWithPath: path(store)))
        let value = try PropertyList(xml: data, file: path(store))
        guard case .string(let id)? = value["DeviceID"], case .string(let name)? = value["DeviceName"] else {
            throw StoreError.noSuchStore(store)
        }
        let device = Device(id: id, name: name)
        if case .string(let folder)? = value["StoreFolder"], folder != folderIdentity(store) {
            let renewed = Device(id: newID(), name: name)
            try write(renewed, store: store)
            return renewed
        }
        return device
    }

    /// Local state may be rewritten: it is replaced atomically (written aside, renamed over).
    static func write(_ device: Device, store: String) throws {
        let data = try PropertyList.dictionary([
            "DeviceID": .string(device.id), "DeviceName": .string(device.name),
            "StoreFolder": .string(folderIdentity(store)),
        ]).xmlData()
        try data.write(to: URL(fileURLWithPath: path(store)), options: .atomic)
    }
}
