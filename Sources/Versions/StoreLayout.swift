import Foundation
import Packages

/// Every name of a store's layout on disk, in one place: folders, files, suffixes and
/// the paths made of them. Every other part of the package asks this type; the file
/// layer below is handed the folders it works in. See `docs/FORMAT.md`.
///
/// Paths are relative to the store's root. Every name the store creates is lower case,
/// so that no two differ only by letter case.
public enum StoreLayout {
    /// The layout file: a dictionary holding ``layoutKey``; written once.
    public static let layoutFile = "Store.plist"
    /// The key of ``layoutFile`` that holds the layout version.
    public static let layoutKey = "StoreLayoutVersion"

    /// The synced part: a folder per document.
    public static let documentsFolder = "Documents"
    /// This replica only, never synced (file-sync engines are told to exclude `*.nosync`).
    public static let localFolder = "Local.nosync"
    /// Writes in progress, under ``localFolder``.
    public static let temporaryFolder = localFolder + "/tmp"
    /// Lock files, under ``localFolder``.
    public static let locksFolder = localFolder + "/locks"
    /// Notes of prunes under way, one empty file per document, under ``localFolder``.
    public static let pruningFolder = localFolder + "/pruning"
    /// This replica's device identity.
    public static let deviceFile = localFolder + "/Device.plist"
    /// The lock a process holds while it renews this device's identity (in a copied
    /// store), so that processes opening the copy at once renew it once.
    public static let deviceLock = locksFolder + "/device.lock"
    /// Per-device state (an app's last-opened item, sort order…), under ``localFolder``:
    /// one property list per document and one for the store, made when first written.
    public static let stateFolder = localFolder + "/state"
    /// The store's per-device state, in ``stateFolder``.
    public static let storeStateFile = stateFolder + "/store.plist"

    /// A document's per-device state, in ``stateFolder``.
    public static func stateFile(of document: UUID) -> String {
        stateFolder + "/" + folderName(of: document) + ".plist"
    }
    /// The summary cache: each document's row of `survey list` with the state of its
    /// folder it was read from (see `docs/FORMAT.md`); never synced, rebuilt when absent,
    /// damaged or stale.
    public static let summaryCacheFile = localFolder + "/summaries.cache"

    /// A revision's metadata, in its package.
    public static let metadataFile = "DocumentMetadata.plist"
    /// A revision's content, in its package (absent in a deletion).
    public static let contentFile = "Survey.plist"
    /// The suffix of a revision package's folder name.
    public static let packageSuffix = ".survey"
    /// The suffix of a pruned revision's tombstone.
    public static let tombstoneSuffix = ".pruned"

    /// Whether `name` is a hidden entry: one that begins with a dot, or a temporary of
    /// Syncthing's Windows form (`~syncthing~NAME.tmp`, its `.syncthing.NAME.tmp`
    /// elsewhere). The store never makes one under `Documents/`; the system and file-sync
    /// engines do (Finder's `.DS_Store`, AppleDouble `._` files, rsync's `.NAME.XXXXXX`
    /// and Syncthing's temporaries while they copy, Unison's `.unison.` files). No hidden
    /// entry is ever a document, revision, tombstone or part of one: readers pass over it
    /// without a warning, sync never copies it, and `verify` names it in a note.
    public static func isHidden(_ name: String) -> Bool {
        switch name.utf8.first {
        case UInt8(ascii: "."): true
        case UInt8(ascii: "~"): name.hasPrefix("~syncthing~")
        default: false
        }
    }

    /// Every folder the store itself makes, in the order they are made.
    public static let folders = [documentsFolder, localFolder, temporaryFolder, locksFolder, pruningFolder]

    /// A document's folder name: its UUID in lower case.
    public static func folderName(of document: UUID) -> String {
        String(unsafeUninitializedCapacity: 36) { buffer in
            writeFolderName(of: document, into: UnsafeMutableRawBufferPointer(buffer))
            return 36
        }
    }

    /// Writes the 36 bytes of `document`'s folder name (``folderName(of:)``) at the start
    /// of `buffer`, which must hold at least 36 bytes.
    public static func writeFolderName(of document: UUID, into buffer: UnsafeMutableRawBufferPointer) {
        precondition(buffer.count >= 36)
        let digits: StaticString = "0123456789abcdef"
        withUnsafeBytes(of: document.uuid) { bytes in
            var out = 0
            for index in 0..<16 {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    buffer[out] = UInt8(ascii: "-")
                    out += 1
                }
                buffer[out] = digits.utf8Start[Int(bytes[index] >> 4)]
                buffer[out + 1] = digits.utf8Start[Int(bytes[index] & 0x0f)]
                out += 2
            }
        }
    }

    /// The document a folder of `Documents/` belongs to: its name must be a UUID in lower
    /// case, 36 characters with dashes after the 8th, 12th, 16th and 20th digit (a case
    /// variant is a foreign copy, never a second document); `nil` for any other name.
    public static func documentID(folderName name: String) -> UUID? {
        var name = name
        return name.withUTF8 { documentID(folderName: UnsafeRawBufferPointer($0)) }
    }

    /// The document a folder name given as its UTF-8 bytes belongs to, by the same rule as
    /// `documentID(folderName:)` with a `String`.
    public static func documentID(folderName name: UnsafeRawBufferPointer) -> UUID? {
        guard name.count == 36 else { return nil }
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let parsed = withUnsafeMutableBytes(of: &uuid) { out -> Bool in
            var offset = 0
            for index in 0..<16 {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    guard name[offset] == UInt8(ascii: "-") else { return false }
                    offset += 1
                }
                guard let high = lowerHexValue(name[offset]), let low = lowerHexValue(name[offset + 1])
                else { return false }
                out[index] = high << 4 | low
                offset += 2
            }
            return true
        }
        return parsed ? UUID(uuid: uuid) : nil
    }

    /// The value of a lower-case hexadecimal digit.
    private static func lowerHexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    /// A document's folder.
    public static func folder(of document: UUID) -> String {
        documentsFolder + "/" + folderName(of: document)
    }

    /// The package of a revision, in its document's folder.
    public static func packageName(_ revision: RevisionID) -> String { "\(revision)" + packageSuffix }

    /// The tombstone of a pruned revision, in its document's folder.
    public static func tombstoneName(_ revision: RevisionID) -> String { "\(revision)" + tombstoneSuffix }

    /// A revision's package.
    public static func package(_ revision: RevisionID, of document: UUID) -> String {
        folder(of: document) + "/" + packageName(revision)
    }

    /// A pruned revision's tombstone.
    public static func tombstone(_ revision: RevisionID, of document: UUID) -> String {
        folder(of: document) + "/" + tombstoneName(revision)
    }

    /// The lock a writer of `document` holds.
    public static func lock(of document: UUID) -> String {
        locksFolder + "/" + folderName(of: document) + ".lock"
    }

    /// The note of a prune of `document` under way.
    public static func pruneNote(of document: UUID) -> String {
        pruningFolder + "/" + folderName(of: document)
    }

    /// The revision id a tombstone's name carries, or `nil` for any other name.
    public static func revision(tombstoneName name: String) -> RevisionID? {
        guard name.hasSuffix(tombstoneSuffix) else { return nil }
        return RevisionID(String(name.dropLast(tombstoneSuffix.count)))
    }

    /// The revision whose package holds the file at `path` (`…/REVISION.survey/Survey.plist`),
    /// or `nil` when the folder `path` is in is no package.
    public static func revision(holding path: String) -> RevisionID? {
        guard let folder = SafeName.folder(holding: path) else { return nil }
        return revision(packageName: SafeName.lastComponent(of: folder))
    }

    /// The revision id a package's folder name carries, or `nil` for any other name.
    public static func revision(packageName name: String) -> RevisionID? {
        // By bytes, in place: Character-wise suffix checks cost far more, and listings and
        // the change feed ask this of every entry.
        var name = name
        var suffix = packageSuffix
        return name.withUTF8 { buffer -> RevisionID? in
            suffix.withUTF8 { suffix -> RevisionID? in
                let bytes = buffer.span
                let length = suffix.count
                guard bytes.count > length else { return nil }
                for index in 0..<length where bytes[bytes.count - length + index] != suffix[index] {
                    return nil
                }
                return RevisionID.parsing(bytes.extracting(..<(bytes.count - length)))
            }
        }
    }
}
