import Foundation
import Packages
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
        let components = SafeName.components(of: physicalPath(path))
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
        var rest: [String] = []
        var resolved: String?
        while resolved == nil {
            existing = SafeName.withoutTrailingSlashes(existing)
            if let real = realpath(existing, nil) {
                resolved = String(cString: real)
                free(real)
                break
            }
            guard let parent = SafeName.folder(holding: existing), parent != existing else {
                resolved = "/"
                break
            }
            rest.insert(SafeName.lastComponent(of: existing), at: 0)
            existing = parent
        }
        var result = resolved ?? "/"
        for name in rest where !name.isEmpty && name != "." {
            if name == ".." {
                result = SafeName.folder(holding: result) ?? "/"
            } else {
                result += (result.hasSuffix("/") ? "" : "/") + name
            }
        }
        return result
    }
}
