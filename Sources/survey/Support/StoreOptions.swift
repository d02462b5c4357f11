import ArgumentParser
import Foundation
import SurveyStore

/// Options every store command takes.
struct StoreOptions: ParsableArguments {
    @Option(help: "The store folder (default: $SURVEY_STORE unless empty, else ./Surveys).")
    var store: String?

    @Flag(help: "Print exactly one JSON document on standard output.")
    var json = false

    var path: String { Self.path(store) }

    func validate() throws {
        try PathArgument.requireName(store, for: "--store")
        try Self.requireUTF8Environment(unless: store)
        Advice.store = store
    }

    /// The environment variable that names the store when `--store` is left out.
    static let environmentVariable = "SURVEY_STORE"

    /// The store folder `--store` names, else `$SURVEY_STORE` when it is set and not
    /// empty (as the shell's `${SURVEY_STORE:-./Surveys}` reads it), else `./Surveys`.
    /// A variable whose bytes are not UTF-8 is refused first
    /// (``requireUTF8Environment(unless:)``).
    static func path(_ store: String?) -> String {
        if let store { return store }
        if let bytes = getenv(environmentVariable), let variable = String(validatingCString: bytes),
            !variable.isEmpty
        {
            return variable
        }
        return "./Surveys"
    }

    /// Refuses `$SURVEY_STORE` when it would name the store (`store`, the `--store` given,
    /// is `nil`) and its bytes are not UTF-8: read as text, they would become U+FFFD, and
    /// the store would be looked for under another name, as an argument would (see
    /// `SurveyTool.main`).
    ///
    /// - Throws: `ValidationError` (a usage error, exit 64) naming the variable.
    static func requireUTF8Environment(unless store: String?) throws {
        guard store == nil, let bytes = getenv(environmentVariable),
            String(validatingCString: bytes) == nil
        else { return }
        throw ValidationError(
            "\(environmentVariable) (\(ShownText.escaping(String(cString: bytes))) as read) is not UTF-8 text; "
                + "survey reads it as UTF-8 (name the store by a UTF-8 path, or give --store)")
    }

    func open() throws -> SurveyStore {
        try SurveyStore.open(at: path)
    }

    /// Opens the store for a command that only reads: nothing is created, cleaned up or
    /// locked, so it works on a read-only store.
    func openForReading() throws -> SurveyStore {
        try SurveyStore.openForReading(at: path)
    }

    /// Opens the store for a dry run (`--dry-run`): read only, as ``openForReading()``, but
    /// a store in a layout newer than this build writes is refused as the command itself
    /// refuses it (exit 65), since a dry run says what the command would do.
    func openForDryRun() throws -> SurveyStore {
        let store = try openForReading()
        try SurveyStore.checkLayoutForWriting(at: path)
        return store
    }

    /// Opens the store for a command that lists documents: as ``openForReading()``,
    /// except that the listing may refresh the summary cache when the store can be written.
    func openForListing() throws -> SurveyStore {
        try SurveyStore.openForReading(at: path, refreshingSummaryCache: true)
    }

    /// The documents of the store, read only (but for the summary cache, see
    /// ``openForListing()``); what was skipped on the way is named on standard error.
    ///
    /// - Returns: The documents, whether anything was skipped, and how many documents
    ///   could not be looked at, whole or in part (permission denied, an input/output
    ///   error): the listing is incomplete when there are any.
    func listDocuments() throws -> (documents: [SurveyStore.Summary], skippedAny: Bool, unreadable: Int) {
        let (documents, issues) = try openForListing().documentsReport()
        for issue in issues { Console.error("warning: \(Advice.describe(issue))") }
        return (documents, !issues.isEmpty, Unreadable.folders(among: issues).count)
    }

    /// Reports a revision a command wrote: `{"id", "revision", "changed"}` with `--json`,
    /// else its id. When nothing was written (`changed` false), `revision` is the one that
    /// stays current and standard error says so (`unchanged`, or the reason given), or
    /// prints `unchangedLine` in its place.
    func report(
        _ id: UUID, _ revision: RevisionMetadata, changed: Bool = true, unchanged: String = "unchanged",
        unchangedLine: String? = nil, deleted: Bool? = nil, unsuperseded: [RevisionID]? = nil
    ) throws {
        struct Written: Encodable {
            var id, revision: String
            var changed: Bool
            /// `delete` only: whether the document is deleted now.
            var deleted: Bool?
            /// `delete` only: the revisions it could not read, and so does not supersede.
            var unsuperseded: [String]?
        }
        if json {
            try Console.printJSON(
                Written(
                    id: id.lowercased, revision: revision.id.description, changed: changed, deleted: deleted,
                    unsuperseded: unsuperseded?.map(\.description)))
        } else {
            print(revision.id.description)
        }
        if !changed {
            Console.error(
                unchangedLine
                    ?? "\(unchanged): nothing was written; the document stays at revision \(revision.id)")
        }
    }
}

/// Runs a command's body, turning the library's errors into a ``CommandFailure``: the
/// documented exit code, and the message `SurveyTool.main` prints on standard error (or,
/// with `--json`, as `{"error": …}` on standard output).
func runReporting(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as ExitCode {
        throw error
    } catch let error as ValidationError {
        throw error
    } catch let error as CommandFailure {
        throw error
    } catch {
        throw CommandFailure(error)
    }
}

/// A command that failed: what to tell the user, and the exit code.
struct CommandFailure: Error {
    /// A short machine-readable name of the failure, such as `noSuchDocument`.
    var code: String
    /// The message, without a location prefix.
    var message: String
    var exit: Int32
    var file: String?
    var line: Int?
    var column: Int?

    init(
        code: String, message: String, exit: Int32, file: String? = nil, line: Int? = nil, column: Int? = nil
    ) {
        (self.code, self.message, self.exit, self.file, self.line, self.column) = (
            code, message, exit, file, line, column
        )
    }

    /// The failure a library error stands for: every error of the package has one shape
    /// (``CategorizedError``), and its category alone decides the exit code.
    init(_ error: any Error) {
        // A rule broken by a file's content (an input file, a stored or imported
        // package's Survey.plist): located in the file, as a malformed file is.
        if let error = error as? SurveyError, error.file != nil || error.line != nil {
            self.init(error.leavingOutFile)
            (file, line, column) = (error.file, error.line, error.line == nil ? nil : error.column ?? 1)
            return
        }
        guard let error = error as? any CategorizedError else {
            self.init(
                code: "failure", message: Advice.namingStore(in: Advice.describe(error)),
                exit: ExitStatus.failure.rawValue)
            return
        }
        // The library says what mends it in words; the command says it in commands.
        var message =
            error is StoreError || error is DocumentDeletedError
            ? Advice.describe(error) : error.inputLocation == nil ? error.description : error.message
        // The library does not know the command; the command adds how to go on.
        // A file where the store's folder belongs: init cannot make one there either.
        if case StoreError.noSuchStore(let path) = error {
            if let reason = StoreFolder.notAFolder(path) {
                message += ": \(reason)"
            } else if let (store, folder) = SurveyStore.enclosingStore(of: path) {
                // `init` refuses it: a store is never made inside another.
                message +=
                    " (it is inside the store at \(ShownText.escaping(store)), in its \(folder) folder; a store belongs outside it)"
            } else {
                message +=
                    " (create one with `survey init --store \(Advice.shellWord(ShownText.escaping(path)))`)"
            }
        }
        // A damaged file of a revision: a replica's intact copy repairs it. A sync compares
        // content by size only, so it mends content cut short, not every change.
        switch error as? VersionsError {
        case .contentMismatch?:
            message +=
                " (`survey verify --repair-from OTHER_STORE` repairs it from a replica that has it intact; `survey sync OTHER_STORE` does too when the damage changed the file's size)"
        case .digestMismatch?:
            message +=
                " (`survey verify --repair-from OTHER_STORE` or `survey sync OTHER_STORE` repairs it from a replica that has it intact)"
        default: break
        }
        self.init(
            code: error.errorCode, message: Advice.namingStore(in: message),
            exit: ExitStatus.code(for: error.category).rawValue,
            file: error.inputLocation?.file, line: error.inputLocation?.line,
            column: error.inputLocation?.column)
    }

    /// The message as standard error shows it: `FILE:LINE:COLUMN: message` for a file,
    /// else `error: message`.
    var text: String {
        guard file != nil || line != nil else { return "error: \(message)" }
        return located
    }

    /// The message with the file, line and column it is about when it has them
    /// (``text`` without `error: ` when it has none), for a line that says what failed first.
    var located: String {
        guard file != nil || line != nil else { return message }
        let position = [line.map(String.init), line == nil ? nil : column.map(String.init)].compactMap { $0 }
        return ([file.map { ShownText.escaping($0) } ?? "<input>"] + position).joined(separator: ":") + ": "
            + message
    }

    /// The failure as `--json` reports it: `{"code", "message", "exit"}`, with `file`,
    /// `line` and `column` when the input was a file.
    struct Body: Encodable {
        var code, message: String
        var exit: Int32
        var file: String?
        var line, column: Int?
    }

    /// This failure as `--json` reports it.
    var body: Body { Body(code: code, message: message, exit: exit, file: file, line: line, column: column) }

    /// Prints the failure: ``text`` on standard error and, with `--json` (unless the
    /// command already printed its one JSON document), `{"error": {"code", "message",
    /// "exit", …}}` on standard output: pretty-printed, or for a command whose output is a
    /// stream of lines (``Console/streamsLines``), as one more line, whatever it wrote.
    func report(json: Bool) {
        Console.error(text)
        guard json, Console.streamsLines || !Console.wroteOutput else { return }
        let report = ["error": body]
        guard let data = try? Console.jsonData(report, oneLine: Console.streamsLines) else { return }
        Console.write(data)
    }
}

struct InputFileError: CategorizedError {
    var path: String
    var reason: String
    var description: String { "\(ShownText.escaping(path)): \(reason)" }
    var errorCode: String { "noSuchFile" }
    var category: ErrorCategory { .notFound }
    var message: String { reason }
    var inputLocation: InputLocation? { InputLocation(file: path) }
}

/// Reads a survey from an interchange file, JSON or an XML property list (told apart
/// by content), as a new document's content; `-` is standard input.
func readSurvey(from path: String) throws -> Survey {
    // Survey(data:) refuses more than the limit; reading stops one byte past it.
    let data = try readInput(path, limit: Survey.maximumFileSize)
    // A rule broken by the file's content names the file, and the command reports it
    // located there (`CommandFailure`), with the item and rule.
    return try Survey(data: data, file: inputName(path))
}

/// Reads a survey file given as a document's new content, on top of `base` (a save's
/// base; a resolution's winner), and gives each of its items that came without an `id`
/// the id of the base's item of the same kind and title, or an id derived from `base`
/// when none matches (`Survey.adoptingIDs(ofItemsAt:from:seed:)`). Base content that
/// cannot be read (damaged, in a newer format) is named in a warning, and those items are
/// then saved as new items; a failure to look at it is thrown.
func readSurvey(
    from path: String, document id: UUID, on base: @autoclosure () throws -> RevisionMetadata,
    in store: SurveyStore
) throws -> Survey {
    let data = try readInput(path, limit: Survey.maximumFileSize)
    // A file whose `id` names another document is refused.
    let file = try Survey.reading(data: data, file: inputName(path), document: id)
    // The base is looked up only when there is something to match, after the file is read.
    guard !file.itemsWithoutID.isEmpty else { return file.survey }
    let base = try base()
    // Content that cannot be read (damaged, in a newer format) leaves nothing to match, as
    // a deletion does; a failure to look (an I/O error, permission denied) fails the save,
    // which can be tried again, rather than give the items new ids for it.
    let baseSurvey: Survey? =
        base.isDeleted
        ? nil
        : try FileSystemError.rethrowingFailureToLook {
            try store.survey(id, base)
        } otherwise: { error in
            let count = file.itemsWithoutID.count
            let (items, them) =
                count == 1
                ? ("its item without an id is saved as a new item", "it")
                : ("its \(count) items without an id are saved as new items", "they")
            Console.error(
                "warning: \(ShownText.escaping(inputName(path))): \(items), since the base revision's content, which \(them) would be matched with, cannot be read: \(error)"
            )
            return nil
        }
    return file.survey.adoptingIDs(
        ofItemsAt: file.itemsWithoutID, from: baseSurvey, seed: base.id.description)
}

/// How messages name the input `path`: `<stdin>` for `-`, else the path itself.
func inputName(_ path: String) -> String { path == "-" ? "<stdin>" : path }

/// The bytes of `path` (`-`: standard input), read from the file descriptor to the end,
/// so that pipes, `/dev/stdin` and other special files work; stops one byte past `limit`.
func readInput(_ path: String, limit: Int) throws -> Data {
    let handle: FileHandle
    if path == "-" {
        handle = FileHandle.standardInput
    } else {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw InputFileError(path: path, reason: "is a folder, not a file")
        }
        do {
            handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        } catch {
            throw InputFileError(path: path, reason: "cannot read the file: \(FileProblem.describe(error))")
        }
    }
    defer { if path != "-" { try? handle.close() } }
    var data = Data()
    do {
        while data.count <= limit,
            let chunk = try handle.read(upToCount: min(1 << 20, limit + 1 - data.count)), !chunk.isEmpty
        {
            data.append(chunk)
        }
    } catch {
        throw InputFileError(
            path: inputName(path),
            reason: "cannot read the file: \(FileProblem.describe(error))")
    }
    return data
}

extension SurveyStore {
    /// The document whose id is `text` or starts with it (see `documentID(matching:)`).
    func document(_ text: String) throws -> UUID {
        let match = try matchDocument(text)
        // What the document's folder holds that is no revision is named, never hidden.
        for issue in match.skipped { Console.error("warning: \(Advice.describe(issue))") }
        return match.id
    }

    /// The revision of `id` named by `text` (an id or a unique prefix); `nil` when none
    /// was named.
    func revisionID(_ text: String?, in id: UUID, headsOnly: Bool = false) throws -> RevisionID? {
        try text.map { try revisionID(matching: $0, in: id, headsOnly: headsOnly) }
    }
}

extension UUID {
    /// A document id as the tool prints it: lower case, as the store names the document's
    /// folder.
    var lowercased: String { uuidString.lowercased() }

    /// An item id as the tool prints it everywhere (`show --json`, `export`, `diff --json`,
    /// `resolve --merge --json`): upper case, as `Survey.plist` holds it. Input (`--answer
    /// ITEM=…`, an `id` in a file) takes either case.
    var itemID: String { uuidString }
}

/// ISO 8601 text of a revision's time, to the millisecond (proleptic Gregorian, UTC).
func iso(_ timestamp: HybridTimestamp) -> String {
    ISO8601Date.string(from: timestamp.date, fractionDigits: 3)
}

extension [StoreIssue] {
    /// The revision a path belongs to, as the path of its tombstone or package: a
    /// tombstone, a revision's package, or a file inside one. A document's folder is none.
    private static func revisionPath(_ path: String) -> Substring? {
        if path.hasSuffix(StoreLayout.tombstoneSuffix) || path.hasSuffix(StoreLayout.packageSuffix) {
            return Substring(path)
        }
        let parent = path.lastIndex(of: "/").map { path[..<$0] } ?? ""
        return parent.hasSuffix(StoreLayout.packageSuffix) ? parent : nil
    }

    /// How many revisions the paths named belong to.
    var revisionCount: Int { Set(compactMap { Self.revisionPath($0.path) }).count }

    /// How many of the paths named are no revision's (a document's folder).
    var folderCount: Int { filter { Self.revisionPath($0.path) == nil }.count }
}

extension SurveyStore {
    /// Runs `body`; when it fails on a revision in a format newer than this build's, which
    /// the error names, fails with `WHAT REV: format 3 is newer than this build supports
    /// (2)THEN` (exit 65).
    func namingNewer<T>(what: String = "", then: String = "", _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as StoreError {
            guard case .newerFormat = error else { throw error }
            var failure = CommandFailure(error)
            failure.message = "\(what)\(failure.message)\(then)"
            throw failure
        }
    }

    /// `open(_:revision:)`, failing with the revision named, and how to copy it as it is,
    /// when it is in a format newer than this build's; and, when the winner's content is
    /// intact but cannot be read, with what mends it (see ``advisingOnUnreadable(_:revision:_:)``).
    func openNamingNewer(_ id: UUID, revision: RevisionID?) throws -> SurveyDocument {
        try advisingOnUnreadable(id, revision: revision) {
            try namingNewer(then: "; export it as it is with survey export --format plist or --package DIR") {
                try open(id, revision: revision)
            }
        }
    }

    /// Runs `body`, which reads document `id` at `revision` (its winner when `nil`). When
    /// it fails because the revision, a head, has content that matches its digest but is
    /// no survey this build reads (malformed, or breaking a rule), the failure says what
    /// mends it, as `list`'s warning does: new content saved on top, or another head kept.
    /// (Damaged content is sent to a repair by ``CommandFailure`` itself.)
    func advisingOnUnreadable<T>(_ id: UUID, revision: RevisionID?, _ body: () throws -> T) throws -> T {
        try advisingOnUnreadable(id, reading: [revision], body)
    }

    /// Runs `body`, which reads document `id` at each of `revisions` (`nil` standing for
    /// its winner), advising as ``advisingOnUnreadable(_:revision:_:)`` does on the first
    /// of them whose content cannot be read: for a diff of two revisions.
    func advisingOnUnreadable<T>(_ id: UUID, reading revisions: [RevisionID?], _ body: () throws -> T) throws
        -> T
    {
        try advising(body) { advice(onUnreadable: $0, of: id, reading: revisions) }
    }

    /// Runs `body`, which reads every head of document `id` (a merge), advising as
    /// ``advisingOnUnreadable(_:revision:_:)`` does on the first head, winner first, whose
    /// content cannot be read.
    func advisingOnUnreadableHeads<T>(_ id: UUID, _ body: () throws -> T) throws -> T {
        try advising(body) { advice(onUnreadableHeadOf: id, $0) }
    }

    /// Runs `body`; when it fails, with `advice` for the error, fails with the error's
    /// message and that advice after it.
    private func advising<T>(_ body: () throws -> T, with advice: (any Error) -> String?) throws -> T {
        do {
            return try body()
        } catch {
            guard let advice = advice(error) else { throw error }
            var failure = CommandFailure(error)
            failure.message += advice
            throw failure
        }
    }

    /// What mends document `id`, whose heads a merge read when it failed with `error`, as
    /// a suffix for the error's message; `nil` when the error is no head's content that
    /// cannot be read, or nothing mends it.
    func advice(onUnreadableHeadOf id: UUID, _ error: any Error) -> String? {
        guard let heads = try? graph(of: id).liveHeads else { return nil }
        return advice(onUnreadable: error, of: id, reading: heads.map(\.id))
    }

    /// What mends the one of `revisions` of document `id` (`nil` standing for its winner)
    /// whose content could not be read when reading them failed with `error`, as a suffix
    /// for the error's message (see ``remedy(forUnreadable:of:revision:)``): `nil` unless
    /// the error says that content is no survey this build reads. (Damaged content is sent
    /// to a repair by ``CommandFailure`` itself.) The revision is the one whose content
    /// file the error names; one named by no file is found by reading them again (only
    /// when it may have been any of several).
    private func advice(onUnreadable error: any Error, of id: UUID, reading revisions: [RevisionID?])
        -> String?
    {
        switch error {
        case is PropertyListError, is SurveyError, is SurveyFileError, is FormatError: break
        default: return nil
        }
        let failed: RevisionID??
        if let named = Self.revision(namedBy: error) {
            failed = named
        } else if revisions.count == 1 {
            failed = revisions.first
        } else {
            failed = revisions.first { revision in (try? survey(id, self.revision(id, revision))) == nil }
        }
        guard let failed, let remedy = remedy(forUnreadable: error, of: id, revision: failed) else {
            return nil
        }
        return Advice.namingStore(in: Advice.suffix(for: remedy))
    }

    /// The revision whose package holds the file `error` is about
    /// (`…/REVISION.survey/Survey.plist`), if it names one.
    private static func revision(namedBy error: any Error) -> RevisionID? {
        (error as? any CategorizedError)?.inputLocation?.file.flatMap(StoreLayout.revision(holding:))
    }
}
