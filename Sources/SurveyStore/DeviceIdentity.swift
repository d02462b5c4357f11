import Foundation
import Packages
import PropertyList
import Versions

/// This replica's device id and name, in `StoreLayout/deviceFile` (never synced).
enum DeviceIdentity {
    static func path(_ store: String) -> String { store + "/" + StoreLayout.deviceFile }

    static func newID() -> String {
        (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    /// The identity of the store folder itself: its file system and inode numbers.
    /// A copied store (with its local state) lives in another folder, so it differs.
    ///
    /// - Throws: ``FileSystemError`` when the folder's status cannot be taken (an
    ///   input/output error): never an identity made up in its place, which would differ
    ///   from the one recorded and renew the device.
    static func folderIdentity(_ store: String, reader: FileReader) throws -> String {
        guard let status = try reader.status(atPath: store) else {
            throw FileSystemError(.notFound, operation: .stat, path: store)
        }
        return "\(status.device):\(status.inode)"
    }

    /// This store's device. A `Device.plist` copied along with a whole store names
    /// another folder; the copy then gets a new device id, keeping the name, so that two
    /// replicas never save under one id. The renewal holds ``StoreLayout/deviceLock`` and
    /// looks again once it is held: of processes opening the copy at once, the first
    /// renews the id and the others take the one it recorded, so that the replica saves
    /// under one id.
    static func read(store: String, writer: PackageWriter) throws -> Device {
        let reader = FileReader(root: store, calls: writer.calls)
        return try renewedIfCopied(try recorded(store: store, reader: reader), store: store, writer: writer)
    }

    /// `found`, the identity recorded in `store`, or a new one recorded in its place when
    /// the record names another folder (see ``read(store:writer:)``).
    private static func renewedIfCopied(
        _ found: (device: Device, folder: String?), store: String, writer: PackageWriter
    ) throws -> Device {
        let reader = FileReader(root: store, calls: writer.calls)
        let (device, folder) = found
        guard let folder else { return device }
        let identity = try folderIdentity(store, reader: reader)
        guard folder != identity else { return device }
        let lock = try writer.lock(at: StoreLayout.deviceLock, mode: .exclusive)
        defer { lock.unlock() }
        let again = try recorded(store: store, reader: reader)
        if again.folder == identity { return again.device }
        let renewed = Device(id: newID(), name: again.device.name)
        try write(renewed, writer: writer)
        return renewed
    }

    /// ``read(store:writer:)``, or `nil` when no identity is recorded: none, or something
    /// in its place that is no identity (`verify` names it). An input/output error is
    /// thrown, never taken for a missing identity, which would renew it; so is a failure
    /// to renew a copied store's identity (its lock file unusable, a write that fails).
    static func readIfRecorded(store: String, writer: PackageWriter) throws -> Device? {
        let found: (device: Device, folder: String?)
        do {
            found = try recorded(store: store, reader: FileReader(root: store, calls: writer.calls))
        } catch let error as FileSystemError where error.isFailureToLook {
            throw error
        } catch {
            return nil
        }
        return try renewedIfCopied(found, store: store, writer: writer)
    }

    /// The device recorded in the store, as it is, without renewing anything.
    static func peek(store: String, reader: FileReader) throws -> Device {
        try recorded(store: store, reader: reader).device
    }

    private static func recorded(store: String, reader: FileReader) throws -> (
        device: Device, folder: String?
    ) {
        guard let data = try reader.contents(atPath: path(store)) else { throw StoreError.noSuchStore(store) }
        let value = try PropertyList(xml: data, file: path(store))
        guard case .string(let id)? = value["DeviceID"], case .string(let name)? = value["DeviceName"] else {
            throw StoreError.noSuchStore(store)
        }
        // A name this build never records (the file edited by hand: longer than
        // `maximumDeviceNameBytes`, empty, white space alone) is no identity either, rather
        // than one every revision saved would name: it throws `DeviceNameError`.
        try SurveyStore.checkDeviceName(name)
        return (Device(id: id, name: name), value["StoreFolder"]?.stringValue)
    }

    /// The property list `write` writes for `device`, refusing a name that XML cannot
    /// carry (see ``SurveyStore/checkDeviceName(_:)``) before anything is written.
    static func plistData(_ device: Device, folder: String) throws -> Data {
        try PropertyList.dictionary([
            "DeviceID": .string(device.id), "DeviceName": .string(device.name),
            "StoreFolder": .string(folder),
        ]).xmlData()
    }

    /// Records `device` as the store's device, atomically and durably, unless a device is
    /// recorded already (another process made the store's local state first): that one
    /// stays.
    ///
    /// Something in its place that is no identity is replaced, as opening the store
    /// replaces it.
    ///
    /// - Returns: The device recorded now: `device`, or the one another process recorded
    ///   first, which this process's revisions must name too.
    static func create(_ device: Device, writer: PackageWriter) throws -> Device {
        let made = try writer.writeFile(record(device, writer: writer), at: StoreLayout.deviceFile)
        guard made == .alreadyExists else { return device }
        if let recorded = try readIfRecorded(store: writer.root, writer: writer) { return recorded }
        // Something in its place that is no identity: replaced under the identity's lock,
        // after a last look, so that processes replacing it at once record one.
        let lock = try writer.lock(at: StoreLayout.deviceLock, mode: .exclusive)
        defer { lock.unlock() }
        let reader = FileReader(root: writer.root, calls: writer.calls)
        do {
            let again = try recorded(store: writer.root, reader: reader)
            let identity = try folderIdentity(writer.root, reader: reader)
            if again.folder == nil || again.folder == identity { return again.device }
        } catch let error as FileSystemError where error.isFailureToLook {
            throw error
        } catch {
            // Still no identity: this one replaces it.
        }
        try write(device, writer: writer)
        return device
    }

    /// Local state may be rewritten: it is replaced atomically and durably (written
    /// aside, fsynced, renamed over).
    static func write(_ device: Device, writer: PackageWriter) throws {
        try writer.replaceFile(record(device, writer: writer), at: StoreLayout.deviceFile)
    }

    /// What records `device` for the store `writer` writes: ``plistData(_:folder:)`` with
    /// the store folder's identity.
    private static func record(_ device: Device, writer: PackageWriter) throws -> Data {
        try plistData(
            device,
            folder: try folderIdentity(
                writer.root, reader: FileReader(root: writer.root, calls: writer.calls)))
    }
}
