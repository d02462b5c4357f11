import ArgumentParser
import Diagnostics
import Foundation
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
        var candidate: Substring? = Substring(path)
        while let entry = candidate, !entry.isEmpty {
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: String(entry), isDirectory: &isFolder) {
                return isFolder.boolValue ? nil : String(entry)
            }
            candidate = parent(of: entry)
        }
        return nil
    }

    /// The folder `path` names an entry of: what comes before its last name (`/` for a
    /// name at the root); `nil` for a name without a slash, in the current folder.
    private static func parent(of path: Substring) -> Substring? {
        var path = path
        while path.count > 1, path.last == "/" { path = path.dropLast() }
        guard let slash = path.lastIndex(of: "/") else { return nil }
        var parent = path[..<slash]
        while parent.count > 1, parent.last == "/" { parent = parent.dropLast() }
        return parent.isEmpty ? "/" : parent
    }

    /// The store whose `Documents/` or `Local.nosync/` folder holds `path` (or is it), with
    /// that folder's name, the path resolved from the current folder with its links
    /// followed: a store made there would be inside the other, whose sync, verify and
    /// prune would take its files for their own (and a revision package is never changed).
    ///
    /// - Parameter path: The folder a store would be made in, as given.
    /// - Returns: The enclosing store's folder and `Documents` or `Local.nosync`; `nil`
    ///   when no store's folder holds `path`.
    static func enclosingStore(of path: String) -> (store: String, folder: String)? {
        let components = physical(path).split(separator: "/").map(String.init)
        for index in components.indices.reversed()
        where components[index] == StoreLayout.documentsFolder || components[index] == StoreLayout.localFolder
        {
            let store = "/" + components[..<index].joined(separator: "/")
            var isFolder: ObjCBool = false
            let layout = (store == "/" ? "" : store) + "/" + StoreLayout.layoutFile
            if FileManager.default.fileExists(atPath: layout, isDirectory: &isFolder), !isFolder.boolValue {
                return (store, components[index])
            }
        }
        return nil
    }

    /// `path` as the file system reaches it: absolute, with every link on the way resolved
    /// (through the nearest part of it that exists), then what does not exist yet added
    /// name by name (`..` going up, `.` dropped), as a folder made there will be reached.
    static func physical(_ path: String) -> String {
        var existing =
            path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var rest: [Substring] = []
        var resolved: String?
        while resolved == nil {
            existing = withoutTrailingSlashes(existing)
            if let real = realpath(existing, nil) {
                resolved = String(cString: real)
                free(real)
                break
            }
            guard let parent = self.parent(of: Substring(existing)), parent != Substring(existing) else {
                resolved = "/"
                break
            }
            if let slash = existing.lastIndex(of: "/") {
                rest.insert(existing[existing.index(after: slash)...], at: 0)
            }
            existing = String(parent)
        }
        var result = resolved ?? "/"
        for name in rest where !name.isEmpty && name != "." {
            if name == ".." {
                result = String(parent(of: Substring(result)) ?? "/")
            } else {
                result += (result.hasSuffix("/") ? "" : "/") + name
            }
        }
        return result
    }

    /// `path` without the slashes after its last name (`/` stays `/`).
    static func withoutTrailingSlashes(_ path: String) -> String {
        var path = Substring(path)
        while path.count > 1, path.last == "/" { path = path.dropLast() }
        return String(path)
    }

    /// Refuses `path` for a new store when another store's `Documents/` or `Local.nosync/`
    /// holds it (``enclosingStore(of:)``), for a command that makes stores (`init`, `demo`).
    ///
    /// - Throws: ``CommandFailure`` with code `insideStore`, exit 64.
    static func refuseInsideStore(_ path: String) throws {
        guard let (store, folder) = enclosingStore(of: path) else { return }
        throw CommandFailure(
            code: "insideStore",
            message:
                "cannot create a store at \(ShownText.escaping(path)): it is inside the store at \(ShownText.escaping(store)) (in its \(folder) folder), whose sync, verify and prune would take the new store's files for their own; choose a folder outside it",
            exit: ExitCode.validationFailure.rawValue)
    }

    /// Why no store can be at `path`, as a message goes on after naming it: `it is a file,
    /// not a folder` (or the parent that is); `nil` when nothing is in the way.
    static func notAFolder(_ path: String) -> String? {
        guard let file = fileInTheWay(of: path) else { return nil }
        return file == path
            ? "it is a file, not a folder" : "\(ShownText.escaping(file)) is a file, not a folder"
    }
}
