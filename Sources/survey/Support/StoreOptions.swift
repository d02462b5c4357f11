import ArgumentParser
import Foundation
import PropertyList
import SurveyStore
import Surveys
import Versions

/// Options every store command takes.
struct StoreOptions: ParsableArguments {
    @Option(help: "The store folder (default: $SURVEY_STORE, else ./Surveys).")
    var store: String?

    @Flag(help: "Print exactly one JSON document on standard output.")
    var json = false

    var path: String {
        store ?? ProcessInfo.processInfo.environment["SURVEY_STORE"] ?? "./Surveys"
    }

    func open() throws -> SurveyStore {
        try SurveyStore.open(at: path)
    }

    /// Opens the store for a command that only reads: nothing is created, cleaned up or
    /// locked, so it works on a read-only store.
    func openForReading() throws -> SurveyStore {
        try SurveyStore.openForReading(at: path)
    }

    /// The documents of the store, read only; what was skipped on the way is named on
    /// standard error.
    func listDocuments() throws -> [SurveyStore.Summary] {
        let (documents, issues) = try openForReading().documentsReport()
        for issue in issues { Console.error("warning: \(issue)") }
        return documents
    }

    /// Reports a revision a command wrote: `{"id", "revision"}` with `--json`, else its id.
    func report(_ id: UUID, _ revision: RevisionMetadata) throws {
        if json { try Console.printJSON(["id": id.lowercased, "revision": revision.id.description]) }
        else { print(revision.id.description) }
    }
}

/// Runs a command's body, turning the library's errors into the documented exit codes
/// and a message on standard error.
func runReporting(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as ExitCode {
        throw error
    } catch let error as ValidationError {
        throw error
    } catch let error as StoreError {
        Console.error("error: \(error)")
        switch error {
        case .noSuchStore, .noSuchDocument, .noSuchRevision: throw ExitStatus.noInput
        case .notCurrent: throw ExitStatus.refused
        case .newerFormat, .newerLayout, .damagedStore: throw ExitStatus.invalidData
        case .noContent, .inConflict, .readOnly, .unreadableWinner: throw ExitStatus.failure
        }
    } catch let error as PropertyListError {
        Console.error(error.description)
        throw ExitStatus.invalidData
    } catch let error as SurveyError {
        Console.error("error: \(error)")
        throw ExitStatus.invalidData
    } catch let error as SurveyFileError {
        Console.error(error.description)
        throw ExitStatus.invalidData
    } catch let error as VersionsError {
        Console.error("error: \(error)")
        throw ExitStatus.invalidData
    } catch let error as FormatError {
        Console.error("error: \(error)")
        throw ExitStatus.invalidData
    } catch let error as InputFileError {
        Console.error(error.description)
        throw ExitStatus.noInput
    } catch {
        Console.error("error: \(error)")
        throw ExitStatus.failure
    }
}

struct InputFileError: Error, CustomStringConvertible {
    var path: String
    var reason: String
    var description: String { "\(path): \(reason)" }
}

/// Reads a survey from an interchange file, JSON or an XML property list (told apart
/// by content); `-` is standard input. `document` is the document it is saved to, if any:
/// a file whose `id` names another document is refused.
func readSurvey(from path: String, document: UUID? = nil) throws -> Survey {
    let name = path == "-" ? "<stdin>" : path
    // Survey(data:) refuses more than the limit; reading stops one byte past it.
    let data = try readInput(path, limit: Survey.maximumFileSize)
    return try Survey(data: data, file: name, document: document)
}

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
        while data.count <= limit, let chunk = try handle.read(upToCount: min(1 << 20, limit + 1 - data.count)), !chunk.isEmpty {
            data.append(chunk)
        }
    } catch {
        throw InputFileError(path: path == "-" ? "<stdin>" : path, reason: "cannot read the file: \(FileProblem.describe(error))")
    }
    return data
}

extension SurveyStore {
    /// The document whose id is `text` or starts with it.
    func document(_ text: String) throws -> UUID {
        let lower = text.lowercased()
        // Names decide: the folders are listed, and documents are read only when more
        // than one folder matches (a folder without a revision is not a document).
        var matches = try documentIDs().filter { $0.uuidString.lowercased().hasPrefix(lower) }
        if matches.count > 1 { matches = matches.filter { (try? revision($0, nil)) != nil } }
        guard matches.count == 1, !lower.isEmpty else {
            if let exact = UUID(uuidString: text) { throw StoreError.noSuchDocument(exact) }
            throw StoreError.noSuchRevision("document \(text)")
        }
        // What the document's folder holds that is no revision is named, never hidden.
        for issue in (try? skippedItems(of: matches[0])) ?? [] { Console.error("warning: \(issue)") }
        return matches[0]
    }
}

extension UUID {
    var lowercased: String { uuidString.lowercased() }
}

/// ISO 8601 text of a revision's time, to the millisecond (proleptic Gregorian, UTC).
func iso(_ timestamp: HybridTimestamp) -> String {
    ISO8601Date.string(from: timestamp.date, fractionDigits: 3)
}
