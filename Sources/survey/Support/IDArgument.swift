import ArgumentParser

/// Documents and revisions named on the command line, each by its id or a prefix of one.
enum IDArgument {
    /// Refuses an empty document argument: a lookup of it would fail as if no document
    /// matched, naming nothing the user typed.
    ///
    /// - Parameter text: The document as given, or `nil` when it was left out.
    /// - Throws: `ValidationError` (a usage error, exit 64) when `text` is empty.
    static func requireDocument(_ text: String?) throws {
        if text?.isEmpty == true {
            throw ValidationError("the document is empty; give a document id or a prefix of one")
        }
    }

    /// Refuses an empty revision: a lookup of it would fail as if no revision matched.
    ///
    /// - Parameters:
    ///   - text: The revision as given, or `nil` when it was left out.
    ///   - argument: The option or argument, as the usage line names it (`--revision`,
    ///     `<revision-a>`).
    /// - Throws: `ValidationError` (a usage error, exit 64) when `text` is empty.
    static func requireRevision(_ text: String?, for argument: String) throws {
        if text?.isEmpty == true {
            throw ValidationError("\(argument) is empty; give a revision id or a prefix of one")
        }
    }
}
