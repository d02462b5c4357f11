import Foundation
import Packages
import SurveyStore

/// Output of the command: one JSON document or human text on stdout, messages on stderr.
enum Console {
    /// Writes `text` and a newline to standard error, its control characters shown
    /// (``shown(_:)``) and the commands it advises naming the store `--store` named
    /// (``Advice/namingStore(in:)``).
    static func error(_ text: String) {
        toStandardError(Data((shown(Advice.namingStore(in: text)) + "\n").utf8))
    }

    /// `text` with every control character but line feed and tab written out as
    /// `\u{1B}`: a file name in a store (made by anyone) reaches the terminal as text,
    /// never as an escape sequence that sets its title, moves its cursor or clears it.
    static func shown(_ text: String) -> String {
        ShownText.escaping(text, keepingLineBreaks: true)
    }

    /// Writes `text` to standard error without a newline, for progress on a terminal.
    static func progress(_ text: String) {
        toStandardError(Data(text.utf8))
    }

    /// Whether anything was written to standard output through ``write(_:)``: a failing
    /// command that already printed its JSON report prints no second document.
    nonisolated(unsafe) static var wroteOutput = false

    /// Set, before the arguments are parsed, for the one command whose `--json` is a stream
    /// of lines (`watch`): its failure, a usage error at start-up included, is reported as
    /// one more line, `{"error": …}`, after whatever lines it wrote.
    nonisolated(unsafe) static var streamsLines = false

    /// Writes `data` to standard output. When it cannot be written (its reader has gone
    /// while SIGPIPE is ignored, so the write fails with `EPIPE` rather than ending the
    /// process; a full disk), the command cannot report anything more: it says so on
    /// standard error and ends with exit 1, rather than go on or crash.
    static func write(_ data: Data) {
        wroteOutput = true
        do {
            try SystemCalls.live.writeAll(data, to: STDOUT_FILENO, name: "standard output")
        } catch {
            let reason = (error as? FileSystemError)?.errno?.description ?? "\(error)"
            toStandardError(Data("error: cannot write to standard output: \(reason)\n".utf8))
            exit(ExitStatus.failure.rawValue)
        }
    }

    /// Writes `data` to standard error, as the file layer writes (``SystemCalls/writeAll(_:to:name:)``);
    /// a message that cannot be written there is dropped: there is nowhere left to say so.
    private static func toStandardError(_ data: Data) {
        try? SystemCalls.live.writeAll(data, to: STDERR_FILENO, name: "standard error")
    }

    /// Writes `object` (made of `JSONSerialization`'s types) to standard output as one
    /// pretty-printed JSON document with sorted keys (an empty array or object as `[]` or
    /// `{}`).
    static func printJSONObject(_ object: [String: Any]) throws {
        var data = CompactEmptyJSON.compacting(
            try JSONSerialization.data(
                withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]))
        data.append(UInt8(ascii: "\n"))
        write(data)
    }

    /// Prints one row of human-readable output (``row(_:)``).
    static func printRow(_ text: String) {
        print(row(text))
    }

    /// `text` as a row of human-readable output shows it: every control character (a
    /// line feed and a tab too) written out as `\u{1B}`, so that what a store holds (a
    /// title, an item's text, an answer, a device name) neither drives the terminal nor
    /// splits the row, whoever wrote it. JSON output carries such text as it is.
    static func row(_ text: String) -> String {
        ShownText.escaping(text)
    }

    /// Prints `rows` as columns separated by two spaces, each as wide as its widest cell
    /// (the last one unpadded); the first row is the header. Each cell is written out as
    /// ``row(_:)`` writes it, so that a row is one line.
    static func printTable(_ rows: [[String]]) {
        let rows = rows.map { $0.map(row) }
        guard let columns = rows.map(\.count).max() else { return }
        let widths = (0..<columns).map { column in
            rows.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0
        }
        for row in rows {
            let cells = row.enumerated().map { column, cell in
                column == row.count - 1
                    ? cell : cell + String(repeating: " ", count: widths[column] - cell.count)
            }
            print(cells.joined(separator: "  "))
        }
    }

    /// Writes `data` to the file at `path` (an `-o FILE` option): a new or regular file
    /// durably and atomically; a device, FIFO or link written through, never replaced.
    ///
    /// - Throws: ``CommandFailure`` (exit 1) saying why the file cannot be written.
    static func writeFile(_ data: Data, to path: String) throws {
        do {
            try SurveyStore.writeOutput(data, to: path)
        } catch let error as CategorizedError {
            // No such folder (66), a folder in the file's place: said as export says it.
            throw CommandFailure(error)
        } catch {
            throw CommandFailure(
                code: "cannotWrite", message: "cannot write the file: \(FileProblem.describe(error))",
                exit: ExitStatus.failure.rawValue, file: path)
        }
    }

    /// Writes `value` to standard output as one JSON document (``jsonData(_:)``).
    static func printJSON<T: Encodable>(_ value: T) throws {
        write(try jsonData(value))
    }

    /// `value` as the command prints JSON: pretty-printed with sorted keys, an empty array
    /// or object as `[]` or `{}`, and a final newline; or, as `oneLine`, on one line with
    /// sorted keys (a line of a stream).
    static func jsonData<T: Encodable>(_ value: T, oneLine: Bool = false) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting =
            oneLine
            ? [.sortedKeys, .withoutEscapingSlashes] : [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var data =
            oneLine ? try encoder.encode(value) : CompactEmptyJSON.compacting(try encoder.encode(value))
        data.append(UInt8(ascii: "\n"))
        return data
    }
}
