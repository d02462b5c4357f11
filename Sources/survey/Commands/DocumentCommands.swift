import ArgumentParser
import Foundation
import SurveyStore

struct InitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init", abstract: "Create the store (idempotent).",
        discussion: SurveyTool.exitCodesReference)
    @OptionGroup var options: StoreOptions
    @Option(
        help:
            "This device's name (default: the host name; at most 255 bytes of UTF-8). On an existing store it renames this device; its id, and the revisions it saved, stay."
    )
    var device: String?

    func validate() throws {
        if let device {
            do { try SurveyStore.checkDeviceName(device) } catch { throw ValidationError("\(error)") }
        }
    }

    func run() throws {
        try runReporting {
            // Said as a store command says it, rather than as a folder that cannot be opened.
            if let reason = StoreFolder.notAFolder(options.path) {
                throw CommandFailure(
                    code: "notAFolder",
                    message: "cannot create a store at \(ShownText.escaping(options.path)): \(reason)",
                    exit: ExitStatus.noInput.rawValue)
            }
            // A layout file cut short is written again by `create`; said here.
            let isTorn = try SurveyStore.isLayoutTorn(at: options.path)
            let store = try SurveyStore.create(at: options.path, deviceName: device)
            if isTorn {
                Console.error(
                    "warning: \(ShownText.escaping(options.path))/Store.plist was cut short (a write a power loss interrupted); written again (store layout \(SurveyStore.layoutVersion))"
                )
            }
            if options.json {
                try Console.printJSONObject([
                    "store": store.root, "deviceID": store.device.id, "deviceName": store.device.name,
                    "layoutRewritten": isTorn,
                ])
            } else {
                print(
                    "store \(ShownText.escaping(store.root)) ready (device \(ShownText.escaping(store.device.name)))"
                )
            }
        }
    }
}

struct NewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "new", abstract: "Create a document.", discussion: SurveyTool.exitCodesReference)
    @OptionGroup var options: StoreOptions
    @Option(
        parsing: .unconditional,
        help: "The title of a new, empty survey (the next argument, even one that starts with -).")
    var title: String?
    @Option(help: "A survey in the interchange form (JSON or XML plist).") var from: String?

    /// Checked as the command runs rather than in `validate()`, which the parser calls
    /// before it looks for unknown options: `new --titel X` is then said to be an unknown
    /// option, not a missing title.
    func checkArguments() throws {
        if (title == nil) == (from == nil) { throw ValidationError("give exactly one of --title and --from") }
        try PathArgument.requireName(from, for: "--from")
    }

    func run() throws {
        try checkArguments()
        try runReporting {
            let store = try options.open()
            let survey = try from.map { try readSurvey(from: $0) } ?? Survey(title: title ?? "", items: [])
            let (id, revision) = try store.create(survey)
            if options.json {
                try Console.printJSON(["id": id.lowercased, "revision": revision.id.description])
            } else {
                print(id.lowercased)
            }
        }
    }
}

struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "One row per document.",
        discussion: """
            Columns: ID, TITLE, REVISION (the winner), MODIFIED, DEVICE (that saved the winner), FORMAT (its format \
            version), CONFLICTS (how many unresolved conflict versions), DELETED. A store with no documents prints \
            the header alone, and says on standard error how to create one (or, when the store's layout is newer \
            than this build writes, that it can be read but not changed). A document that cannot be read (no \
            permission, an input/output error) is named on standard error and left out: every other one is \
            listed, then the command says the listing is incomplete and exits 1.

            \(SurveyTool.exitCodesReference)
            """)
    @OptionGroup var options: StoreOptions

    struct Row: Encodable {
        var id, revision, modified, device: String
        /// `null` for a document whose winner has no readable title (a deletion).
        @NullIfAbsent var title: String?
        var formatVersion, conflicts: Int
        var deleted: Bool
    }

    func run() throws {
        try runReporting {
            let (documents, skippedAny, unreadable) = try options.listDocuments()
            let rows = documents.map { summary in
                Row(
                    id: summary.id.lowercased, revision: summary.revision.id.description,
                    modified: iso(summary.revision.timestamp),
                    device: summary.revision.device.name, title: summary.title,
                    formatVersion: summary.revision.formatVersion,
                    conflicts: summary.conflicts.count, deleted: summary.isDeleted)
            }
            // Every other document is listed first; then the listing says it is incomplete.
            if options.json {
                try Console.printJSON(rows)
                return try Unreadable.endListing(leavingOut: unreadable)
            }
            let table =
                [["ID", "TITLE", "REVISION", "MODIFIED", "DEVICE", "FORMAT", "CONFLICTS", "DELETED"]]
                + rows.map { row in
                    [
                        row.id, row.title ?? "—", row.revision, row.modified, row.device,
                        String(row.formatVersion), String(row.conflicts),
                        row.deleted ? "yes" : "no",
                    ]
                }
            Console.printTable(table)
            try Unreadable.endListing(leavingOut: unreadable)
            if rows.isEmpty && !skippedAny {
                let store = ShownText.escaping(options.path)
                do {
                    try SurveyStore.checkLayoutForWriting(at: options.path)
                } catch let error as StoreError {
                    // No advice to create a document where this build cannot: it says why.
                    return Console.error(
                        "the store at \(store) has no documents yet (\(Advice.describe(error)))")
                } catch {
                    return Console.error("the store at \(store) has no documents yet")
                }
                Console.error(
                    "the store at \(store) has no documents yet "
                        + "(create one with `survey new --store \(Advice.shellWord(store)) --title TITLE`)")
            }
        }
    }
}

struct ShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Show the winner (or a revision).",
        discussion: """
            Prints the title, the document id, the revision and its format version, the revisions it is in \
            conflict with (for an earlier revision, the document's heads that do not win), and each item \
            with its answer (a binary answer as its label).

            \(SurveyTool.exitCodesReference)
            """)
    @OptionGroup var options: StoreOptions
    @Argument(help: "The document (its id or a unique prefix).") var document: String
    @Option(help: "A revision to show instead of the winner.") var revision: String?

    func validate() throws {
        try IDArgument.requireDocument(document)
        try IDArgument.requireRevision(revision, for: "--revision")
    }

    func run() throws {
        try runReporting {
            let store = try options.openForReading()
            let id = try store.document(document)
            let opened = try store.openNamingNewer(id, revision: try store.revisionID(revision, in: id))
            let (survey, shown) = (opened.survey, opened.base)
            let conflicts = opened.conflicts.map(\.id.description)
            if options.json {
                var object = try JSONSerialization.jsonObject(with: survey.jsonData()) as! [String: Any]
                object["id"] = id.lowercased
                object["revision"] = shown.id.description
                object["formatVersion"] = shown.formatVersion
                object["conflicts"] = conflicts
                try Console.printJSONObject(object)
                return
            }
            Console.printRow(survey.title)
            print("  document  \(id.lowercased)")
            print("  revision  \(shown.id) (format \(shown.formatVersion))")
            if !conflicts.isEmpty {
                // An earlier revision is in conflict with nothing: the document's heads that
                // do not win are named as such.
                var isHead = false
                if case .inConflict(let heads) = opened.state {
                    isHead = heads.contains { $0.id == shown.id }
                }
                print(
                    "  \(isHead ? "in conflict with" : "the document's conflicts (not won)"): \(conflicts.joined(separator: ", "))"
                )
            }
            for (index, item) in survey.items.enumerated() {
                Console.printRow(
                    "  \(index + 1). \(item.title) (\(item.kind.name))\(item.answerText.map { ": " + $0 } ?? "")"
                )
            }
        }
    }
}

struct EditCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "edit", abstract: "Edit a document's title or answers.",
        discussion: """
            ITEM is an item id (in either letter case) or a 1-based position. VALUE depends on the item's kind:
              binary      0 or 1, or one of its two labels
              textField   any text
              datePicker  an ISO 8601 date, such as 2026-11-20T10:00:00Z
              slider      a number from its minimum to its maximum (whole if it rounds)
              picker      one of its options
              multiTF     one T or F per option, such as TFFT (or 1 and 0), or one word per
                          option separated by commas: t, f, true, false, yes, no, 1 or 0
            An empty VALUE (ITEM=) clears the answer; a textOnly item takes none.

            Prints the new revision. An edit that changes nothing writes nothing: it says so on \
            standard error and prints the current revision ("changed": false with --json).

            \(SurveyTool.exitCodesReference)
            """)
    @OptionGroup var options: StoreOptions
    @Argument(help: "The document.") var document: String
    @Option(help: "The revision the edit is based on (default: the winner).") var base: String?
    @Option(parsing: .unconditional, help: "A new title (the next argument, even one that starts with -).")
    var title: String?
    @Option(
        name: .customLong("answer"), parsing: .unconditionalSingleValue,
        help:
            "ITEM=VALUE (see above; the next argument, even one that starts with -); repeat for several answers."
    )
    var answers: [String] = []

    func validate() throws {
        try IDArgument.requireDocument(document)
        try IDArgument.requireRevision(base, for: "--base")
    }

    func run() throws {
        try runReporting {
            let store = try options.open()
            let id = try store.document(document)
            var document = try store.openNamingNewer(id, revision: try store.revisionID(base, in: id))
            if let title { document.survey.title = title }
            var answered: [Int: String] = [:]
            for assignment in answers {
                guard let equals = assignment.firstIndex(of: "=") else {
                    throw ValidationError("--answer takes ITEM=VALUE, not '\(assignment)'")
                }
                let itemText = String(assignment[..<equals]),
                    valueText = String(assignment[assignment.index(after: equals)...])
                // An empty ITEM, as an empty document or revision, is a usage error.
                guard !itemText.isEmpty else {
                    throw ValidationError(
                        "--answer '\(assignment)' names no item; ITEM is an item id or a 1-based position")
                }
                let survey = document.survey
                let index: Int
                if let position = Int(itemText), position >= 1, position <= survey.items.count {
                    index = position - 1
                } else if let found = survey.items.firstIndex(where: {
                    $0.id.uuidString.lowercased() == itemText.lowercased()
                }) {
                    index = found
                } else {
                    throw NoSuchItemError(item: itemText, count: survey.items.count)
                }
                // Two answers for one item: which one was meant is not the command's to guess.
                if let earlier = answered.updateValue(itemText, forKey: index) {
                    throw ValidationError(
                        "--answer gives item \(index + 1) two answers ('\(ShownText.escaping(earlier))=…' and '\(ShownText.escaping(itemText))=…'); give one"
                    )
                }
                let item = survey.items[index]
                let answer = try parseAnswer(valueText, for: item, position: index + 1)
                try document.survey.setAnswer(answer, forItem: item.id)
            }
            let saved = try store.save(document)
            try options.report(id, saved.base, changed: saved.base.id != document.base.id)
        }
    }
}

/// An `--answer ITEM=VALUE` whose ITEM names no item of the survey: not found (exit 66),
/// as an unknown document is.
struct NoSuchItemError: CategorizedError {
    /// ITEM as typed.
    var item: String
    /// How many items the survey has.
    var count: Int
    var errorCode: String { "noSuchItem" }
    var category: ErrorCategory { .notFound }
    var description: String {
        count == 0
            ? "there is no item '\(ShownText.escaping(item))': the survey has no items"
            : "there is no item '\(ShownText.escaping(item))' (give a position from 1 to \(count) or an item id)"
    }
}

/// Reads an answer typed on the command line for `item`.
func parseAnswer(_ text: String, for item: Item, position: Int) throws -> Answer? {
    if text.isEmpty { return nil }
    func fail(_ expected: String) -> SurveyError {
        SurveyError(position: position, title: item.title, rule: .answerType, message: "expected \(expected)")
    }
    switch item.kind {
    case .binary(let options):
        if let index = Int(text) { return .choice(index) }
        if let index = options.firstIndex(of: text) { return .choice(index) }
        throw fail("0, 1 or one of the two options")
    case .textOnly: return .text(text)
    case .textField, .picker: return .text(text)
    case .datePicker:
        return try item.dateAnswer(from: text, position: position)
    case .slider:
        guard let number = try item.numberAnswer(from: text, position: position) else {
            throw fail("a decimal number, such as 7, -2.5 or 1e3")
        }
        return number
    case .multiTF:
        let parts = text.contains(",") ? text.split(separator: ",").map(String.init) : text.map(String.init)
        let flags = try parts.map { part -> Bool in
            switch part.lowercased() {
            case "t", "true", "1", "yes": return true
            case "f", "false", "0", "no": return false
            default: throw fail("one T or F per option, such as TFFT")
            }
        }
        return .flags(flags)
    }
}

struct SaveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "save", abstract: "Replace a document's content.",
        discussion: """
            Prints the new revision. Content identical to the base's writes nothing: it says so on standard \
            error and prints the base ("changed": false with --json). Saving on top of a deletion (--base \
            DELETION) restores a deleted document; without --base, a deleted document is refused (exit 66), \
            as edit refuses it. An item of the file without an id takes the id of \
            the base's first item of the same kind and title not taken already, or is a new item, so \
            that a file edited without ids still saves as the same items, edited.

            \(SurveyTool.exitCodesReference)
            """)
    @OptionGroup var options: StoreOptions
    @Argument(help: "The document.") var document: String
    @Option(help: "The survey (JSON or XML plist).") var from: String
    @Option(help: "The revision the content is based on (default: the winner).") var base: String?
    @Flag(help: "Refuse (exit 75) unless the base is the only current revision.") var ifCurrent = false

    func validate() throws {
        try IDArgument.requireDocument(document)
        try IDArgument.requireRevision(base, for: "--base")
        try PathArgument.requireName(from, for: "--from")
    }

    func run() throws {
        try runReporting {
            let store = try options.open()
            let id = try store.document(document)
            let based = try store.revision(id, try store.revisionID(base, in: id))
            // Restoring a deleted document takes a --base naming the deletion: a save on
            // top of the winner, without one, is refused as edit refuses it.
            if base == nil, based.isDeleted, let deleted = try store.deletedDocument(id) { throw deleted }
            let survey = try readSurvey(from: from, document: id, on: based, in: store)
            let saved = try store.save(survey, to: id, base: based.id, ifCurrent: ifCurrent)
            try options.report(id, saved, changed: saved.id != based.id)
        }
    }
}

struct DeleteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete a document (a deletion revision).",
        discussion: """
            Deleting a deleted document writes nothing ("changed": false with --json), nor does deleting \
            again with the same --base while that deletion is current. A deleted document \
            is restored with `survey resolve DOC --keep REV` or `survey save DOC --from FILE --base DELETION`.

            With --base, the deletion supersedes only that revision and its ancestors: an edit saved since \
            stays current (an edit never loses to a deletion it raced), and a warning says so. --json: \
            {"id", "revision", "changed", "deleted", "unsuperseded"}, where deleted says whether the \
            document is deleted now, and unsuperseded lists the revisions named in the warning below.

            A deletion supersedes the revisions the store can read. A revision it holds but cannot read \
            (half-copied, damaged, or a link in its package's place) cannot be named as a parent: a warning names it, \
            since if a repair brings it back it counts as an edit the deletion did not see, and an edit \
            never loses to a deletion. Repair first (survey sync, survey verify --repair-from) to delete it \
            too.

            \(SurveyTool.exitCodesReference)
            """)
    @OptionGroup var options: StoreOptions
    @Argument(help: "The document.") var document: String
    @Option(help: "The revision the deletion is based on (default: every current revision).") var base:
        String?

    func validate() throws {
        try IDArgument.requireDocument(document)
        try IDArgument.requireRevision(base, for: "--base")
    }

    func run() throws {
        try runReporting {
            let store = try options.open()
            let id = try store.document(document)
            let baseID = try store.revisionID(base, in: id)
            let deletion = try store.deleteDocument(id, base: baseID)
            let heads = try store.graph(of: id).heads
            let winner = heads.first
            // A deletion of the base made before, while an edit saved since stays current.
            let outlived = !deletion.isNew && winner.map { !$0.isDeleted } == true
            try options.report(
                id, deletion.revision, changed: deletion.isNew, unchanged: "already deleted",
                unchangedLine: outlived
                    ? "unchanged: revision \(baseID?.description ?? "") is deleted already, by revision \(deletion.revision.id); nothing was written"
                    : nil,
                deleted: winner?.isDeleted ?? true, unsuperseded: deletion.unsuperseded)
            if !deletion.unsuperseded.isEmpty {
                Console.error(
                    Advice.unsupersededWarning(
                        deletion.unsuperseded, written: "deletion",
                        outcome: "the document is no longer deleted, since an edit never loses to a deletion",
                        again: "delete"))
            }
            // A deletion based on an older revision races the edits made since: they win.
            // In a conflict, several such heads stay: each is named, and a deletion based on
            // the winner alone would leave the others current.
            let live = heads.filter { !$0.isDeleted }
            if base != nil, deletion.isNew || outlived, let winner, !winner.isDeleted {
                if live.count == 1 {
                    Console.error(
                        "warning: \(id.lowercased) is not deleted: revision \(winner.id) was saved after the base of the deletion and is still current, since an edit never loses to a deletion it raced; delete again without --base (or with --base \(winner.id)) to delete it"
                    )
                } else {
                    Console.error(
                        "warning: \(id.lowercased) is not deleted: revisions \(live.map(\.id.description).joined(separator: ", ")) are still current (in conflict, the first the winner), since an edit never loses to a deletion it raced; delete again without --base to delete it"
                    )
                }
            }
        }
    }
}

struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Write a document's content out.",
        discussion: """
            Writes the winner's (or REV's) content in the interchange form, JSON or an XML property list, to \
            standard output or to -o FILE, whose folder must exist. With --package DIR, copies the whole \
            revision package to DIR, a new folder in an existing one (then -o and --format are refused). A \
            deleted document is refused (exit 66), --package too; --package with --revision DELETION copies \
            that deletion's package, its metadata alone, which import takes. A \
            revision in a format newer than this build is exported as it is stored, with --format plist or \
            --package. With --json, the content is part of the one JSON document (as an object for json). \
            Content stored before a rule for new content was added (an empty title, two options with one \
            label) is exported as it is, with a warning naming the item and rule for each problem (with \
            --json, also as "newContentProblems": [{"rule", "item", "message"}], and the first as \
            "newContentProblem"): new --from and save --from refuse such a file until each is fixed (a \
            package exported with --package imports as it is). Content whose file would be over the 128 MiB \
            a survey file may be (a revision's Survey.plist is read up to 256 MiB) is exported too, with a \
            warning that new --from and save --from refuse that file (--package copies it in a form import \
            takes).

            \(SurveyTool.exitCodesReference)
            """)
    @OptionGroup var options: StoreOptions
    @Argument(help: "The document.") var document: String
    @Option(help: "A revision instead of the winner.") var revision: String?
    @Option(help: "json or plist (default: json).") var format: String?
    @Option(
        name: [.short, .customLong("output")],
        help: ArgumentHelp(
            "Write to this file (in an existing folder); - is standard output, as with no -o.",
            valueName: "output"))
    var outputOption: String?
    @Option(help: "Copy the whole revision package to this new folder instead.") var package: String?

    /// The file to write, or `nil` for standard output (`-o -` included).
    var output: String? { outputOption == "-" ? nil : outputOption }

    func validate() throws {
        try IDArgument.requireDocument(document)
        try IDArgument.requireRevision(revision, for: "--revision")
        if let format, format != "json", format != "plist" {
            throw ValidationError("--format is json or plist, not '\(format)'")
        }
        try PathArgument.requireName(outputOption, for: "--output")
        try PathArgument.requireName(package, for: "--package")
        if package != nil, outputOption != nil {
            throw ValidationError("--package writes a folder of its own; it does not take -o/--output")
        }
        if package != nil, format != nil {
            throw ValidationError("--package copies the package as it is; it does not take --format")
        }
    }

    func run() throws {
        try runReporting {
            let store = try options.openForReading()
            let id = try store.document(document)
            if let package {
                let named = try store.revisionID(revision, in: id)
                let exported = try store.exportPackage(id, revision: named, to: package)
                if options.json {
                    try Console.printJSON([
                        "id": id.lowercased, "revision": exported.id.description, "package": package,
                    ])
                } else {
                    print(ShownText.escaping(package))
                }
                return
            }
            let format = self.format ?? "json"
            let named = try store.revisionID(revision, in: id)
            let form: SurveyStore.ExportFormat = format == "plist" ? .plist : .json
            let content = try store.advisingOnUnreadable(id, revision: named) {
                try store.namingNewer(then: "; export it as it is with --format plist or --package DIR") {
                    try store.exportedContent(id, revision: named, as: form)
                }
            }
            let (exported, data) = (content.revision, content.data)
            if let output { try store.writeExport(data, to: output) }
            if data.count > Survey.maximumFileSize {
                Console.error(
                    "warning: the exported file is \(data.count) bytes, over the \(Survey.maximumFileSize >> 20) MiB "
                        + "a survey file may be, so new --from and save --from refuse it; "
                        + "export --package DIR copies the revision in a form survey import takes")
            }
            for problem in content.newContentProblems {
                Console.error(
                    "warning: the exported content breaks a rule for new content, so new --from and save --from "
                        + "refuse it until it is fixed: \(problem)")
            }
            if options.json {
                // One JSON document: where the content went, or the content itself.
                var report: [String: Any] = [
                    "id": id.lowercased, "revision": exported.id.description, "format": format,
                ]
                let problems: [[String: Any]] = content.newContentProblems.map { problem in
                    [
                        "rule": problem.rule.rawValue, "item": problem.position.map { $0 as Any } ?? NSNull(),
                        "message": problem.description,
                    ]
                }
                if let first = problems.first {
                    report["newContentProblems"] = problems
                    report["newContentProblem"] = first
                }
                if let output {
                    report["output"] = output
                } else if format == "json" {
                    report["content"] = try JSONSerialization.jsonObject(with: data)
                } else {
                    report["content"] = String(decoding: data, as: UTF8.self)
                }
                try Console.printJSONObject(report)
            } else if output == nil {
                Console.write(data)
            }
        }
    }
}

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Add revision packages, each as a new document or a revision of a known one.",
        discussion: """
            Each package is checked (its digest, its format, its content) and imported \
            whole or not at all; one whose content no longer matches the revision its \
            metadata records (edited, or damaged, since it was exported) becomes a new \
            revision without parents, with a warning on standard error; with several, \
            they are written in batches made durable \
            at once, and a package that fails is reported on standard error with its path \
            and why, without keeping the others out. With one package, --json prints one \
            object {"id", "revision", "outcome"}; with several, an array with one object \
            per package in the order given: {"path", "id", "revision", "outcome"} for one \
            imported, {"path", "error": {"code", "message", "exit"}} for one that failed. \
            When some packages fail, the exit code is that of the first one's error, once \
            the others are imported.

            \(SurveyTool.exitCodesReference)
            """)
    @OptionGroup var options: StoreOptions
    @Argument(
        help:
            "The revision packages: each a folder with \(StoreLayout.metadataFile) and, unless it records a deletion, \(StoreLayout.contentFile)."
    )
    var paths: [String]

    func validate() throws {
        if paths.isEmpty { throw ValidationError("Missing expected argument '<paths> ...'") }
        try PathArgument.requireNames(paths, for: "<paths>")
    }

    func run() throws {
        try runReporting {
            let store = try options.open()
            if paths.count == 1 {
                let described = describe(try store.importPackage(at: paths[0]), of: paths[0], in: store)
                if options.json {
                    try Console.printJSON([
                        "id": described.id, "revision": described.revision, "outcome": described.how,
                    ])
                } else {
                    print("\(described.id) \(described.revision) (\(described.how))")
                }
                return
            }
            struct Entry: Encodable {
                var path: String
                var id, revision, outcome: String?
                var error: CommandFailure.Body?
            }
            var entries: [Entry] = []
            var firstFailure: CommandFailure?
            for (path, result) in zip(paths, try store.importPackages(at: paths)) {
                switch result {
                case .success(let outcome):
                    let described = describe(outcome, of: path, in: store)
                    entries.append(
                        Entry(
                            path: path, id: described.id, revision: described.revision, outcome: described.how
                        ))
                    if !options.json { print("\(described.id) \(described.revision) (\(described.how))") }
                case .failure(let error):
                    let failure = CommandFailure(error)
                    firstFailure = firstFailure ?? failure
                    Console.error(Self.notImported(path, failure: failure, error: error))
                    entries.append(
                        Entry(
                            path: path,
                            error: failure.body))
                }
            }
            if options.json { try Console.printJSON(entries) }
            if let firstFailure { throw ExitCode(firstFailure.exit) }
        }
    }

    /// The line that says a package of several was not imported: `PATH: not imported: …`,
    /// the path written out, as every path is, and said once. "not imported" says what
    /// "cannot be imported" would: a package refused for itself says why (and which file
    /// of it is at fault, when one is), from the error's own parts; any other failure
    /// (a file of it that is malformed, no package there, an I/O error) says its message,
    /// located as it is printed alone.
    static func notImported(_ path: String, failure: CommandFailure, error: any Error) -> String {
        let shown = ShownText.escaping(path)
        if case StoreError.unimportablePackage(let file, let reason) = error {
            if file == path { return "\(shown): not imported: \(reason)" }
            if file.hasPrefix(path + "/") {
                return "\(shown): not imported: \(ShownText.escaping(file)): \(reason)"
            }
        }
        return "\(shown): not imported: \(failure.located)"
    }

    /// The document, revision and outcome as printed; warns of a revision stamped ahead,
    /// and of content that does not match the revision the package's metadata records.
    private func describe(_ outcome: SurveyStore.ImportOutcome, of path: String, in store: SurveyStore) -> (
        id: String, revision: String, how: String
    ) {
        let (id, revision, how): (UUID, RevisionMetadata, String)
        switch outcome {
        case .added(let document, let metadata): (id, revision, how) = (document, metadata, "added")
        case .alreadyPresent(let document, let metadata):
            (id, revision, how) = (document, metadata, "already present")
        case .newRevision(let document, let metadata):
            (id, revision, how) = (document, metadata, "new revision")
        case .changedContent(let document, let metadata, let exported):
            (id, revision, how) = (document, metadata, "new revision")
            Console.error(
                Advice.namingStore(
                    in:
                        "warning: \(ShownText.escaping(path)): its content does not match the digest of revision \(exported), which its \(StoreLayout.metadataFile) records (edited, or damaged, since it was exported): imported as revision \(metadata.id) without parents; see it with `survey show \(document.lowercased) --revision \(metadata.id)`"
                ))
        }
        if store.isStampedAhead(revision) {
            Console.error(
                "warning: revision \(revision.id) is stamped \(revision.timestamp), more than a day ahead of this device's clock"
            )
        }
        return (id.lowercased, revision.id.description, how)
    }
}
