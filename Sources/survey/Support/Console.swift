import Foundation

/// Output of the command: one JSON document or human text on stdout, messages on stderr.
enum Console {
    /// Writes `text` and a newline to standard error.
    static func error(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Writes `text` to standard error without a newline, for progress on a terminal.
    static func progress(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// Writes `data` to standard output.
    static func write(_ data: Data) {
        FileHandle.standardOutput.write(data)
    }

    /// Writes `value` to standard output as one pretty-printed JSON document with sorted keys.
    static func printJSON<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(value)
        data.append(UInt8(ascii: "\n"))
        write(data)
    }
}
