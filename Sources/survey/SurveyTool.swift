import ArgumentParser
import Diagnostics
import Foundation

/// The `survey` command: survey documents, their revisions and their property lists.
@main
struct SurveyTool: ParsableCommand {
    /// The version `survey --version` prints; the one place it is written.
    static let version = "1.0.0"

    static let configuration = CommandConfiguration(
        commandName: "survey",
        abstract: "Survey documents stored as revisions of XML property-list packages.",
        discussion: """
            Every store command takes --store PATH (default: $SURVEY_STORE unless empty, else ./Surveys) and --json, \
            which prints exactly one JSON document on standard output, on failure too (watch prints a stream of \
            one JSON object per line): \
            {"error": {"code", "message", "exit"}}, plus "file" when the error is about an input file, and "line" and "column" when it is about a place in one \
            (a command whose own report says what failed prints that report instead: check and plist lint of \
            invalid input, the refusals of resolve, and the documents a command over many could not read). \
            Messages go to standard error.

            \(exitCodes)
            """,
        version: version,
        subcommands: [
            InitCommand.self, NewCommand.self, ListCommand.self, ShowCommand.self, EditCommand.self,
            SaveCommand.self,
            DeleteCommand.self, ExportCommand.self, ImportCommand.self, VersionsCommand.self,
            ConflictsCommand.self, DiffCommand.self, ResolveCommand.self,
            PruneCommand.self, VerifyCommand.self, SyncCommand.self, CheckCommand.self, MigrateCommand.self,
            DemoCommand.self, PlistCommand.self,
            WatchCommand.self,
        ]
    )

    /// The EXIT CODES section, shown once, in `survey --help`.
    static let exitCodes = """
        EXIT CODES (every command):
          0   success
          64  usage: an unknown subcommand or option, a missing or malformed argument
              (an empty path, document or revision too, and a prefix that matches
              more than one document or revision), an argument (or the
              $SURVEY_STORE in use) that is not UTF-8; sync with the store itself;
              init or demo --store inside another store's Documents or
              Local.nosync folder
          65  invalid data: a malformed property list (FILE:LINE:COLUMN: message),
              an invalid survey (naming the item and the rule), an unsupported format,
              a document none of whose revisions can be read, a revision named
              whose package cannot be read (half-copied or damaged), a file over its
              size limit, a package to import with a link, FIFO or folder where a
              file belongs, a store whose Documents is a link or a file, a winner
              that migrate cannot migrate (reported once the others are migrated)
          66  no such store, document, revision, item (edit --answer ITEM=VALUE) or
              file; a file where a store's folder belongs (init and demo --store too);
              content that is not there (a deleted document's, a pruned revision's,
              a deletion's); a watched store removed, moved away or replaced
          75  refused: save --if-current when the base is not the only current
              revision (a deletion an edit raced does not count), and
              resolve --merge --strict when a field is contested (nothing written);
              resolve --all --merge when a document is left in conflict
          1   anything else (verify finding problems, a file that cannot be written,
              a document that list, conflicts, prune or sync cannot read, once every
              other one is done)
        """

    /// The line each subcommand's help ends with, pointing at ``exitCodes``.
    static let exitCodesReference = "Exit codes: see EXIT CODES in `survey --help`."

    /// Parses and runs the command. Every failure ends here: a message on standard error
    /// (or, with `--json`, one `{"error": …}` document on standard output) and its
    /// documented exit code.
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let isWatch = namedCommand(in: arguments) is WatchCommand.Type
        // Before anything else: a watch told to end as it starts ends with success.
        if isWatch { WatchCommand.holdEndingSignals() }
        StandardStreams.occupyClosed()
        StandardStreams.checkOutputAtExit()
        // `--json` before a `--` terminator asks for JSON, even when the rest of the line
        // does not parse.
        let json = arguments.prefix { $0 != "--" }.contains("--json")
        // `watch --json` is a stream of lines: a failure is one more line, at start-up (a
        // usage error found before the command runs) as later.
        Console.streamsLines = isWatch
        // Arguments reach the commands as text: bytes that are not UTF-8 (a terminal or a
        // file name in another encoding) would be read as U+FFFD, and an answer saved, or
        // a path looked up, changed without a word.
        if let position = argumentNotUTF8() {
            let failure = CommandFailure(
                code: "usage",
                message:
                    "argument \(position) (\(ShownText.escaping(CommandLine.arguments[position])) as read) is not UTF-8 text; "
                    + "survey reads its arguments as UTF-8 (set the terminal to UTF-8, or name a file by a UTF-8 path)",
                exit: ExitCode.validationFailure.rawValue)
            failure.report(json: json)
            Foundation.exit(failure.exit)
        }
        // A word that names no subcommand is reported as `survey WORD` reports it, whatever
        // follows it: the parser's `help` shows some help whatever words follow it, and
        // `survey WORD --help` or `--version` shows the root's help or version.
        if let unknown = unknownSubcommand(in: arguments) {
            fail(unknownSubcommand: unknown.word, of: unknown.parent, named: unknown.path, json: json)
        }
        var command: any ParsableCommand
        do {
            command = try parseAsRoot(arguments)
        } catch {
            fail(usage: error, json: json, command: nil)
        }
        do {
            try command.run()
        } catch let failure as CommandFailure {
            failure.report(json: json)
            Foundation.exit(failure.exit)
        } catch let code as ExitCode {
            // The command has already said what went wrong (with --json, in its report).
            if json, code != .success, !Console.wroteOutput {
                CommandFailure(
                    code: "failure", message: "the command failed (see standard error)", exit: code.rawValue
                ).report(json: true)
            }
            Foundation.exit(code.rawValue)
        } catch {
            fail(usage: error, json: json, command: type(of: command))
        }
    }

    /// The command that the first words of `arguments` name (`survey plist lint`), or the
    /// root when the first names none.
    private static func namedCommand(in arguments: [String]) -> any ParsableCommand.Type {
        var command: any ParsableCommand.Type = SurveyTool.self
        for word in arguments {
            guard
                let next = command.configuration.subcommands.first(where: {
                    $0._commandName == word || $0.configuration.aliases.contains(word)
                })
            else { break }
            command = next
        }
        return command
    }

    /// The first word of `arguments` that stands where a subcommand belongs but names none,
    /// with the command it would belong to and that command's name as typed (`survey
    /// plist`). swift-argument-parser has no such error: it calls the word an unexpected
    /// argument, names an option after it instead (`survey bogus --json`: "Unknown option
    /// '--json'"), or shows the root's help or version (`survey bogus --help`).
    ///
    /// After `help`, every word up to the first option names a subcommand (`survey help
    /// plist lint`), where the parser shows the help of the last one it knows: a word past
    /// a command without subcommands (`survey help list bogus`) names none either.
    private static func unknownSubcommand(in arguments: [String]) -> (
        word: String, parent: any ParsableCommand.Type, path: String
    )? {
        let help = arguments.first == "help"
        // `survey help help` is the parser's own help command.
        if help && arguments.dropFirst().first == "help" { return nil }
        var parent: any ParsableCommand.Type = SurveyTool.self
        var path = "survey"
        for word in help ? Array(arguments.dropFirst()) : arguments {
            let subcommands = parent.configuration.subcommands
            guard !subcommands.isEmpty || help, !word.hasPrefix("-") else { return nil }
            guard
                let next = subcommands.first(where: {
                    $0._commandName == word || $0.configuration.aliases.contains(word)
                })
            else { return (word, parent, path) }
            parent = next
            path += " " + word
        }
        return nil
    }

    /// Reports `word`, where a subcommand of `parent` belongs, as an unknown subcommand:
    /// a usage error, as the parser's own are reported.
    private static func fail(
        unknownSubcommand word: String, of parent: any ParsableCommand.Type, named path: String, json: Bool
    ) -> Never {
        let failure = CommandFailure(
            code: "usage", message: "unknown subcommand '\(word)'", exit: ExitCode.validationFailure.rawValue)
        if json {
            failure.report(json: true)
        } else {
            Console.error(
                "\(failure.text)\nUsage: \(usageString(for: parent))\n  See '\(path) --help' for more information."
            )
        }
        Foundation.exit(failure.exit)
    }

    /// The position of the first argument whose bytes are not valid UTF-8, if any.
    private static func argumentNotUTF8() -> Int? {
        for position in 1..<Int(CommandLine.argc) {
            guard let bytes = CommandLine.unsafeArgv[position] else { continue }
            if String(validatingCString: bytes) == nil { return position }
        }
        return nil
    }

    /// Reports an argument-parser error (a usage error, or help and version requests).
    private static func fail(usage error: any Error, json: Bool, command: (any ParsableCommand.Type)?)
        -> Never
    {
        let code = exitCode(for: error)
        // Help and --version are not failures.
        if code == .success { exit(withError: error) }
        var message = self.message(for: error)
        if message.hasPrefix("Error: ") { message = String(message.dropFirst("Error: ".count)) }
        if message.isEmpty { message = "\(error)" }
        if json {
            CommandFailure(code: "usage", message: message, exit: code.rawValue).report(json: true)
        } else if let command {
            // A usage error found while running: the subcommand's usage, not the root's.
            let name = command.configuration.commandName ?? ""
            Console.error(
                "error: \(message)\nUsage: \(usageString(for: command))\n  See 'survey \(name) --help' for more information."
            )
        } else {
            var text = fullMessage(for: error)
            if text.hasPrefix("Error: ") { text = "error: " + text.dropFirst("Error: ".count) }
            Console.error(text.hasSuffix("\n") ? String(text.dropLast()) : text)
        }
        Foundation.exit(code.rawValue)
    }
}
