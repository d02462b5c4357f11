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

    /// Refuses an empty path among those given to an argument that takes several, naming
    /// the first empty one by its place when more than one was given (`the 3rd of
    /// <paths> is an empty path`), so that a long command line says which to fix.
    ///
    /// - Parameters:
    ///   - paths: The paths as given.
    ///   - argument: The argument, as the usage line names it (`<paths>`).
    /// - Throws: `ValidationError` (a usage error, exit 64) when a path is empty.
    static func requireNames(_ paths: [String], for argument: String) throws {
        guard let index = paths.firstIndex(where: \.isEmpty) else { return }
        try requireName("", for: paths.count == 1 ? argument : "the \(ordinal(index + 1)) of \(argument)")
    }

    /// `1st`, `2nd`, `3rd`, `4th`, …, `11th`, `12th`, `13th`, `21st`, ….
    static func ordinal(_ number: Int) -> String {
        let suffix =
            switch (number % 10, number % 100) {
            case (_, 11...13): "th"
            case (1, _): "st"
            case (2, _): "nd"
            case (3, _): "rd"
            default: "th"
            }
        return "\(number)\(suffix)"
    }
}
