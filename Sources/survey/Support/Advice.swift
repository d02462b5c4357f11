import Foundation
import SurveyStore

/// The commands a message advises (`` `survey resolve DOC --keep REV` ``) name the store
/// the command was given with `--store`, so that running the advice acts on that store,
/// not on `$SURVEY_STORE` or `./Surveys`.
///
/// The library writes its advice without a store, since it does not know how the store
/// was named; a store named by `$SURVEY_STORE` or the default is named the same way when
/// the advice runs, so only `--store` needs adding.
enum Advice {
    /// The store `--store` named, set once the arguments are parsed (see
    /// `StoreOptions.validate()`); `nil` when it was left out.
    nonisolated(unsafe) static var store: String?

    /// The subcommands that take `--store`.
    static let storeCommands: Set<Substring> = [
        "init", "new", "list", "show", "edit", "save", "delete", "export", "import", "migrate", "diff",
        "sync",
        "versions", "conflicts", "resolve", "prune", "verify", "watch",
    ]

    /// `message` with `--store PATH` after the subcommand of every command it quotes in
    /// backticks (`` `survey save DOC --from FILE` `` becomes
    /// `` `survey save --store PATH DOC --from FILE` ``), unless that command names a store
    /// already; `message` itself when no `--store` was given.
    static func namingStore(in message: String) -> String {
        guard let store else { return message }
        var result = ""
        var rest = message[...]
        while let opening = rest.range(of: "`survey ") {
            result += rest[..<opening.upperBound]
            rest = rest[opening.upperBound...]
            let quoted = rest.prefix { $0 != "`" }
            let subcommand = quoted.prefix { $0 != " " }
            if storeCommands.contains(subcommand), !quoted.contains("--store") {
                result += subcommand + " --store " + shellWord(ShownText.escaping(store))
                rest = rest[subcommand.endIndex...]
            }
        }
        return result + rest
    }

    /// `text` as one word of a shell command: as it is when it holds only characters no
    /// shell treats specially, else in single quotes (a quote in it as `'\''`).
    static func shellWord(_ text: String) -> String {
        let plain =
            !text.isEmpty
            && text.unicodeScalars.allSatisfy { scalar in
                switch scalar {
                case "a"..."z", "A"..."Z", "0"..."9", "_", "-", ".", "/", ",", ":", "@", "%", "+", "=": true
                default: false
                }
            }
        return plain ? text : "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }
}
