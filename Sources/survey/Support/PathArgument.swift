import ArgumentParser

/// Paths given on the command line.
enum PathArgument {
    /// Refuses an empty path. The system takes `""` for no file at all, or in some calls
    /// for the current folder, so a command given one would report a failure about a name
    /// nobody typed, or read the wrong thing.
    ///
    /// - Parameters:
    ///   - path: The path as given, or `nil` when the option was left out.
    ///   - argument: The option or argument, as the usage line names it (`--store`,
    ///     `<other-store>`).
    /// - Throws: `ValidationError` (a usage error, exit 64) when `path` is empty.
    static func requireName(_ path: String?, for argument: String) throws {
        if path?.isEmpty == true {
            throw ValidationError("\(argument) is an empty path; give the name of a file or folder")
        }
    }
}
