/// Checks for names the store creates or accepts as one path component.
public enum SafeName {
    /// Whether `name` is safe as a single path component: not empty, not `.` or `..`,
    /// no `/` or NUL, at most 255 bytes of UTF-8.
    public static func isValidComponent(_ name: String) -> Bool {
        let bytes = name.utf8
        return !bytes.isEmpty && bytes.count <= 255 && name != "." && name != ".."
            && !bytes.contains(where: { $0 == UInt8(ascii: "/") || $0 == 0 })
    }

    /// Whether every letter in `name` is lower case, so that two names the store makes
    /// never differ only by case (the store's names are lower-case hex and UUIDs).
    public static func isCaseSafe(_ name: String) -> Bool {
        name == name.lowercased()
    }

    /// The last component of `path` (all of it without a slash), the slash found among
    /// its bytes as the file system finds it: a combining mark after a slash belongs to
    /// the name, where a search by characters would miss that slash.
    public static func lastComponent(of path: String) -> String { System.lastComponent(of: path) }

    /// `path` without the slashes after its last name (`/` stays `/`): `new/` names the
    /// folder `new`. Slashes are found among the bytes, as in ``lastComponent(of:)``.
    public static func withoutTrailingSlashes(_ path: String) -> String {
        var bytes = Substring(path).utf8
        while bytes.count > 1, bytes.last == UInt8(ascii: "/") { bytes = bytes.dropLast() }
        return String(Substring(bytes))
    }

    /// The folder `path` names an entry of: what comes before its last name, without the
    /// slashes after it (`/` for a name at the root); `nil` for a name without a slash, in
    /// the current folder. Slashes are found among the bytes, as in ``lastComponent(of:)``.
    public static func folder(holding path: String) -> String? {
        guard let (folder, _) = System.splitAtLastSlash(withoutTrailingSlashes(path)) else { return nil }
        return folder.isEmpty ? "/" : withoutTrailingSlashes(String(folder))
    }

    /// The names in `path`, split at its slashes as the file system splits it (an empty
    /// name for each repeated slash left out).
    public static func components(of path: String) -> [String] {
        path.utf8.split(separator: UInt8(ascii: "/")).map { String(Substring($0)) }
    }
}
