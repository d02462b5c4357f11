import Foundation
import Versions

extension SurveyStore {
    /// The store whose `Documents/` or `Local.nosync/` folder holds `path` (or is it), with
    /// that folder's name, the path resolved from the current folder with its links
    /// followed: a store made there would be inside the other, whose sync, verify and
    /// prune would take its files for their own (and a revision package is never changed).
    ///
    /// `create(at:deviceName:)` refuses such a path (`StoreError/insideStore(_:store:folder:)`).
    ///
    /// - Parameter path: The folder a store would be made in, as given.
    /// - Returns: The enclosing store's folder and `Documents` or `Local.nosync`; `nil`
    ///   when no store's folder holds `path`.
    public static func enclosingStore(of path: String) -> (store: String, folder: String)? {
        let components = physicalPath(path).split(separator: "/").map(String.init)
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

    /// Throws `StoreError/insideStore(_:store:folder:)` when another store's
    /// `Documents/` or `Local.nosync/` holds `path` (``enclosingStore(of:)``): what
    /// `create(at:deviceName:)` does first, and a command that makes stores (`demo`) does
    /// before it makes anything.
    package static func refuseInsideStore(_ path: String) throws {
        if let (store, folder) = enclosingStore(of: path) {
            throw StoreError.insideStore(path, store: store, folder: folder)
        }
    }

    /// `path` as the file system reaches it: absolute, with every link on the way resolved
    /// (through the nearest part of it that exists), then what does not exist yet added
    /// name by name (`..` going up, `.` dropped), as a folder made there will be reached.
    ///
    /// Resolving links is what the path is asked for, so this reads the file system as
    /// `realpath(3)` does rather than through the store's own reads, which never follow one
    /// (and so through the live system, whatever table of system calls a store is given).
    static func physicalPath(_ path: String) -> String {
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
            guard let parent = folder(holding: Substring(existing)), parent != Substring(existing) else {
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
                result = String(folder(holding: Substring(result)) ?? "/")
            } else {
                result += (result.hasSuffix("/") ? "" : "/") + name
            }
        }
        return result
    }

    /// `path` without the slashes after its last name (`/` stays `/`).
    package static func withoutTrailingSlashes(_ path: String) -> String {
        var path = Substring(path)
        while path.count > 1, path.last == "/" { path = path.dropLast() }
        return String(path)
    }

    /// The folder `path` names an entry of: what comes before its last name (`/` for a
    /// name at the root); `nil` for a name without a slash, in the current folder.
    package static func folder(holding path: Substring) -> Substring? {
        var path = path
        while path.count > 1, path.last == "/" { path = path.dropLast() }
        guard let slash = path.lastIndex(of: "/") else { return nil }
        var parent = path[..<slash]
        while parent.count > 1, parent.last == "/" { parent = parent.dropLast() }
        return parent.isEmpty ? "/" : parent
    }
}
