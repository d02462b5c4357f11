import ArgumentParser
import Diagnostics
import Foundation
import Packages
import SurveyStore

/// The folder a store lives in, as a path given to a command names it.
enum StoreFolder {
    /// The file (anything but a folder, links followed) at `path`, or at the nearest of
    /// its parents that exists: no store is there, and none can be made there.
    ///
    /// - Parameter path: The store's folder, as given.
    /// - Returns: `path` itself or the parent that is a file; `nil` when the nearest
    ///   entry that exists is a folder, or nothing does.
    static func fileInTheWay(of path: String) -> String? {
        var candidate: String? = path
        while let entry = candidate, !entry.isEmpty {
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: entry, isDirectory: &isFolder) {
                return isFolder.boolValue ? nil : entry
            }
            candidate = SafeName.folder(holding: entry)
        }
        return nil
    }

    /// Why no store can be at `path`, as a message goes on after naming it: `it is a file,
    /// not a folder` (or the parent that is); `nil` when nothing is in the way.
    static func notAFolder(_ path: String) -> String? {
        guard let file = fileInTheWay(of: path) else { return nil }
        return file == path
            ? "it is a file, not a folder" : "\(ShownText.escaping(file)) is a file, not a folder"
    }
}
