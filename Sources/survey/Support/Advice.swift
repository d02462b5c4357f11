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

    /// `remedy` as the command line says it, as a suffix for a message (starting with ` (`
    /// or `; `): the commands that carry it out. The library says it in words of its own
    /// (``Remedy/advice``).
    static func suffix(for remedy: Remedy) -> String {
        switch remedy {
        case .writeLayoutAgain(let store):
            // Named whatever store the command was given: the torn one may be the other
            // store of a sync or a repair.
            return
                " (cut short; `survey init --store \(shellWord(ShownText.escaping(store)))` writes it again)"
        case .repairFromReplica:
            return " (`survey verify --repair-from OTHER_STORE` repairs it from a replica that has it intact)"
        case .verifyThenRepair:
            return
                " (`survey verify` names each, and why; `survey sync REPLICA` completes or repairs what another store holds intact)"
        // A sync copies a package again, completing a half-copied one, where
        // `verify --repair-from` replaces only files that are there and do not verify.
        case .finishCopyThenPrune(let count):
            return finishCopy(count, then: "prune")
        case .finishCopyThenMerge(let count):
            return finishCopy(count, then: "merge, or resolve with --keep REV, --accept or --from FILE")
        case .finishCopyThenMigrate(let count):
            return finishCopy(count, then: "migrate")
        case .replaceContent(let id, let otherHeads, let hasHistory, let inConflict):
            let document = id.lowercased
            // In a conflict, content saved on top of every head resolves it too.
            var text =
                " (its content matches the digest in its metadata, so every replica holds these same bytes and no repair"
                + " mends them; "
                + (inConflict
                    ? "save new content on top of every head with `survey resolve \(document) --from FILE`"
                    : "save new content on top with `survey save \(document) --from FILE`")
            if let other = otherHeads.first {
                text +=
                    ", or keep \(otherHeads.count == 1 ? "the other head" : "another head") with `survey resolve \(document) --keep \(other)`"
            } else if hasHistory {
                text +=
                    ", such as an earlier revision's content, which `survey export \(document) --revision REV -o FILE` writes"
            }
            return text + ")"
        case .restoreDeleted(let id, let deletion, let restorable):
            let document = id.lowercased
            return "; restore it with "
                + (restorable.map { "`survey resolve \(document) --keep \($0)` or " } ?? "")
                + "`survey save \(document) --from FILE --base \(deletion)`"
        }
    }

    /// What the remedies for `count` revisions that cannot be read yet say: the copy
    /// finished or made again, `then` what can run.
    private static func finishCopy(_ count: Int, then: String) -> String {
        let them = Remedy.them(count)
        return
            "; let the copy finish, or copy \(them) again from a replica that holds \(them) intact (`survey sync REPLICA`), then \(then)"
    }

    /// The warning that the revision just `written` (a "deletion", a "resolution") does
    /// not supersede `revisions`, which the store cannot read yet and so could not name as
    /// its parents: once a copy completes one or a repair brings it back, `outcome`; the
    /// command to run `again` afterwards supersedes them.
    static func unsupersededWarning(
        _ revisions: [RevisionID], written: String, outcome: String, again: String
    ) -> String {
        let count = revisions.count
        let one = count == 1 ? "it" : "one"
        return
            "warning: the \(written) does not supersede \(count) revision(s) of this document that cannot be read yet (\(revisions.map(\.description).joined(separator: ", ")); half-copied, damaged, or something else in the place of \(count == 1 ? "its package" : "their packages")): if a copy under way completes \(one), or a repair (survey sync, survey verify --repair-from) brings \(one) back, \(outcome); let the copy finish or repair first, then \(again) again to supersede \(Remedy.them(count))"
    }

    /// `error`'s message with its remedy, where it has one, as the command line says it
    /// (``suffix(for:)``, naming the store: ``namingStore(in:)``); its description
    /// otherwise.
    static func describe(_ error: any Error) -> String {
        switch error {
        case let error as StoreError:
            namingStore(in: error.problem + (error.remedy.map(suffix(for:)) ?? ""))
        case let error as DocumentDeletedError:
            namingStore(in: error.problem + suffix(for: error.remedy))
        default:
            "\(error)"
        }
    }

    /// `issue` as its description shows it, with its remedy as the command line says it.
    static func describe(_ issue: StoreIssue) -> String {
        namingStore(in: issue.described(advice: issue.remedy.map(suffix(for:)) ?? ""))
    }

    /// `issue`'s message with its remedy as the command line says it, for a JSON `message`.
    static func message(of issue: StoreIssue) -> String {
        namingStore(in: issue.message + (issue.remedy.map(suffix(for:)) ?? ""))
    }

    /// `path` as one word of a shell command: as it is when it holds only characters no
    /// shell treats specially, else in single quotes (a quote in it as `'\''`); a path
    /// that starts with `-` starts with `./`, so that it is not taken for an option.
    static func shellWord(_ path: String) -> String {
        let text = path.hasPrefix("-") ? "./" + path : path
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
