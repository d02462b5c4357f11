import ArgumentParser
import Foundation
import PropertyList
import SurveyStore
import Surveys
import Versions

struct InitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "init", abstract: "Create the store (idempotent).")
    @OptionGroup var options: StoreOptions
    @Option(help: "This device's name (default: the host name).") var device: String?

    func run() throws {
        try runReporting {
            let store = try SurveyStore.create(at: options.path, deviceName: device)
            if options.json {
                try Console.printJSON(["store": store.root, "deviceID": store.device.id, "deviceName": store.device.name])
            } else {
                print("store \(store.root) ready (device \(store.device.name))")
            }
        }
    }
}

struct NewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "new", abstract: "Create a document.")
    @OptionGroup var options: StoreOptions
    @Option(help: "The title of a new, empty survey.") var title: String?
    @Option(help: "A survey in the interchange form (JSON or XML plist).") var from: String?

    func validate() throws {
        if (title == nil) == (from == nil) { throw ValidationError("give exactly one of --title and --from") }
    }

    func run() throws {
        try runReporting {
            let store = try options.open()
            let survey = try from.map { try readSurvey(from: $0) } ?? Survey(title: title ?? "", items: [])
            let (id, revision) = try store.create(survey)
            if options.json { try Console.printJSON(["id": id.lowercased, "revision": revision.id.description]) }
            else { print(id.lowercased) }
        }
    }
}

struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "One row per document.")
    @OptionGroup var options: StoreOptions

    struct Row: Encodable {
        var id, revision, modified, device: String
        var title: String?
        var formatVersion, conflicts: Int
        var deleted: Bool
    }

    func run() throws {
        try runReporting {
            let rows = try options.listDocuments().map { summary in
                Row(id: summary.id.lowercased, revision: summary.revision.id.description, modified: iso(summary.revision.timestamp),
                    device: summary.revision.device.name, title: summary.title, formatVersion: summary.revision.formatVersion,
                    conflicts: summary.conflicts.count, deleted: summary.isDeleted)
            }
            if options.json { try Console.printJSON(rows); return }
            for row in rows {
                let state = row.deleted ? "deleted" : row.conflicts > 0 ? "\(row.conflicts) conflict(s)" : ""
                print("\(row.id)  \(row.title ?? "—")  \(row.modified)  \(row.device)  \(state)")
            }
        }
    }
}

struct ShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Show the winner (or a revision).")
    @OptionGroup var options: StoreOptions
    @Argument(help: "The document (its id or a unique prefix).") var document: String
    @Option(help: "A revision to show instead of the winner.") var revision: String?

    func run() throws {
        try runReporting {
            let store = try options.openForReading()
            let id = try store.document(document)
            let (survey, shown) = try store.open(id, revision: revision)
            let conflicts = try store.graph(of: id).conflicts.map(\.id.description)
            if options.json {
                var object = try JSONSerialization.jsonObject(with: survey.jsonData()) as! [String: Any]
                object["id"] = id.lowercased
                object["revision"] = shown.id.description
                object["formatVersion"] = shown.formatVersion
                object["conflicts"] = conflicts
                var data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
                data.append(UInt8(ascii: "\n"))
                Console.write(data)
                return
            }
            print("\(survey.title)  [\(id.lowercased) @ \(shown.id)]")
            if !conflicts.isEmpty { print("in conflict with: \(conflicts.joined(separator: ", "))") }
            for (index, item) in survey.items.enumerated() {
                print("  \(index + 1). \(item.title) (\(item.kind.name))\(item.answer.map { ": " + describe($0) } ?? "")")
            }
        }
    }
}

func describe(_ answer: Answer) -> String {
    answer.text
}

struct EditCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "edit", abstract: "Edit a document's title or answers.")
    @OptionGroup var options: StoreOptions
    @Argument(help: "The document.") var document: String
    @Option(help: "The revision the edit is based on (default: the winner).") var base: String?
    @Option(help: "A new title.") var title: String?
    @Option(name: .customLong("answer"), help: "ITEM=VALUE, where ITEM is an item id or 1-based position.") var answers: [String] = []

    func run() throws {
        try runReporting {
            let store = try options.open()
            let id = try store.document(document)
            var (survey, revision) = try store.open(id, revision: base)
            if let title { survey.title = title }
            for assignment in answers {
                guard let equals = assignment.firstIndex(of: "=") else { throw ValidationError("--answer takes ITEM=VALUE, not '\(assignment)'") }
                let itemText = String(assignment[..<equals]), valueText = String(assignment[assignment.index(after: equals)...])
                let index: Int
                if let position = Int(itemText), (1...survey.items.count).contains(position) { index = position - 1 }
                else if let found = survey.items.firstIndex(where: { $0.id.uuidString.lowercased() == itemText.lowercased() }) { index = found }
                else { throw ValidationError("there is no item '\(itemText)' (give a position from 1 to \(survey.items.count) or an item id)") }
                let item = survey.items[index]
                try survey.setAnswer(try parseAnswer(valueText, for: item, position: index + 1), forItem: item.id)
            }
            let saved = try store.save(survey, to: id, base: revision.id.description)
            try options.report(id, saved)
        }
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
        guard let number = Double(text) else { throw fail("a number") }
        return .number(number)
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
    static let configuration = CommandConfiguration(commandName: "save", abstract: "Replace a document's content.")
    @OptionGroup var options: StoreOptions
    @Argument(help: "The document.") var document: String
    @Option(help: "The survey (JSON or XML plist).") var from: String
    @Option(help: "The revision the content is based on (default: the winner).") var base: String?
    @Flag(help: "Refuse (exit 75) unless the base is the only current revision.") var ifCurrent = false

    func run() throws {
        try runReporting {
            let store = try options.open()
            let id = try store.document(document)
            let saved = try store.save(try readSurvey(from: from, document: id), to: id, base: base, ifCurrent: ifCurrent)
            try options.report(id, saved)
        }
    }
}

struct DeleteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete a document (a deletion revision).")
    @OptionGroup var options: StoreOptions
    @Argument(help: "The document.") var document: String
    @Option(help: "The revision the deletion is based on (default: every current revision).") var base: String?

    func run() throws {
        try runReporting {
            let store = try options.open()
            let id = try store.document(document)
            let deletion = try store.delete(id, base: base)
            try options.report(id, deletion)
        }
    }
}

struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "export", abstract: "Write a document's content out.")
    @OptionGroup var options: StoreOptions
    @Argument(help: "The document.") var document: String
    @Option(help: "A revision instead of the winner.") var revision: String?
    @Option(help: "json or plist.") var format: String = "json"
    @Option(name: [.short, .customLong("output")], help: "Write to this file.") var output: String?
    @Option(help: "Copy the whole revision package to this new folder instead.") var package: String?

    func run() throws {
        try runReporting {
            let store = try options.openForReading()
            let id = try store.document(document)
            if let package {
                let exported = try store.exportPackage(id, revision: revision, to: package)
                if options.json { try Console.printJSON(["id": id.lowercased, "revision": exported.id.description, "package": package]) }
                else { print(package) }
                return
            }
            let (survey, exported) = try store.open(id, revision: revision)
            guard format == "json" || format == "plist" else { throw ValidationError("--format is json or plist") }
            let data = format == "json" ? try survey.jsonData() : try survey.plistData()
            if let output { try store.writeExport(data, to: output) }
            if options.json {
                // One JSON document: where the content went, or the content itself.
                var report = ["id": id.lowercased, "revision": exported.id.description, "format": format]
                if let output { report["output"] = output } else { report["content"] = String(decoding: data, as: UTF8.self) }
                try Console.printJSON(report)
            } else if output == nil {
                Console.write(data)
            }
        }
    }
}

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import", abstract: "Add a revision package, as a new document or a revision of a known one.")
    @OptionGroup var options: StoreOptions
    @Argument(help: "The revision package (a folder with DocumentMetadata.plist and Survey.plist).") var path: String

    func run() throws {
        try runReporting {
            let store = try options.open()
            let (id, revision, how): (UUID, RevisionMetadata, String)
            switch try store.importPackage(at: path) {
            case .added(let document, let metadata): (id, revision, how) = (document, metadata, "added")
            case .alreadyPresent(let document, let metadata): (id, revision, how) = (document, metadata, "already present")
            case .newRevision(let document, let metadata): (id, revision, how) = (document, metadata, "new revision")
            }
            if store.isStampedAhead(revision) {
                Console.error("warning: revision \(revision.id) is stamped \(revision.timestamp), more than a day ahead of this device's clock")
            }
            if options.json { try Console.printJSON(["id": id.lowercased, "revision": revision.id.description, "outcome": how]) }
            else { print("\(id.lowercased) \(revision.id) (\(how))") }
        }
    }
}
