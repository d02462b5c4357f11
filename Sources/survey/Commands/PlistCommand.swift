import ArgumentParser
import Foundation
import SurveyStore

/// `survey plist …`: the property-list codec on its own.
struct PlistCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plist",
        abstract: "Check XML property lists, and convert XML or JSON ones, with SurveyStore's codec.",
        discussion: SurveyTool.exitCodesReference,
        subcommands: [Lint.self, Convert.self]
    )

    /// The most of one file the commands read (256 MiB): as much as a store reads of a
    /// revision's `Survey.plist`.
    static let fileLimit = 256 << 20

    /// The bytes of `path` (`-`: standard input), read as a survey file is read: to the
    /// end of whatever it is, so that a FIFO, `/dev/stdin` or a device works.
    /// - Throws: ``CommandFailure``: the file cannot be read (66), or is larger than
    ///   ``fileLimit`` (65).
    static func read(_ path: String) throws -> Data {
        let data: Data
        do {
            data = try readInput(path, limit: fileLimit)
        } catch {
            throw CommandFailure(error)
        }
        guard data.count <= fileLimit else {
            throw CommandFailure(
                code: "invalidPropertyList",
                message: "the file is larger than \(fileLimit >> 20) MiB, the most `survey plist` reads",
                exit: ExitStatus.invalidData.rawValue, file: inputName(path))
        }
        return data
    }
}

extension PlistCommand {
    /// `survey plist lint FILE…`
    struct Lint: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check that files are valid XML property lists.",
            discussion: """
                Exits 0 when every file is valid. Otherwise prints FILE:LINE:COLUMN: message \
                for each invalid file on standard error and exits 65 (66 when a file cannot be read).

                \(SurveyTool.exitCodesReference)
                """
        )

        @Argument(
            help: "The property-list files to check (- is standard input, named <stdin> in the output).")
        var files: [String]

        @Flag(help: "Print one JSON document with a result per file.")
        var json = false

        func validate() throws {
            try PathArgument.requireNames(files, for: "<files>")
        }

        struct Result: Encodable {
            var path: String
            var valid: Bool
            /// Where and why a file is invalid; `null` for a valid one.
            @NullIfAbsent var line: Int? = nil
            @NullIfAbsent var column: Int? = nil
            @NullIfAbsent var message: String? = nil
        }

        func run() throws {
            var results: [Result] = []
            var worst: ExitCode = .success
            for path in files {
                let data: Data
                do {
                    data = try PlistCommand.read(path)
                } catch let failure as CommandFailure {
                    Console.error(failure.text)
                    results.append(Result(path: inputName(path), valid: false, message: failure.message))
                    if worst != ExitStatus.noInput { worst = ExitCode(failure.exit) }
                    continue
                }
                do {
                    _ = try PropertyList(xml: data, file: inputName(path))
                    results.append(Result(path: inputName(path), valid: true))
                } catch let error as PropertyListError {
                    Console.error(error.description)
                    results.append(
                        Result(
                            path: inputName(path), valid: false, line: error.line, column: error.column,
                            message: error.message))
                    if worst == .success { worst = ExitStatus.invalidData }
                }
            }
            if json {
                try Console.printJSON(["files": results])
            }
            if worst != .success { throw worst }
        }
    }

    /// `survey plist convert FILE --to json|xml`
    struct Convert: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Convert a property list, XML or JSON, to JSON or to canonical XML.",
            discussion: """
                The input is read as JSON when its first character (after white space) is { or [, \
                and as an XML property list otherwise.

                JSON output maps dictionaries to objects, arrays to arrays, strings, integers, \
                reals and booleans to themselves, dates to ISO 8601 strings and data to base64 \
                strings. Reals that are NaN or infinite cannot be written as JSON and are refused. \
                XML output is byte-identical to CoreFoundation's.

                JSON input maps the other way: objects to dictionaries, numbers without a fraction \
                or an exponent to integers and other numbers to reals. JSON has no dates and no \
                data, so an ISO 8601 or base64 string stays a string: a date or data value does \
                not survive a round trip through JSON. null and a key repeated in one object are \
                refused with the line and column. A string holding a character XML cannot carry \
                (a control character other than tab and line feed, a carriage return, U+FFFE or \
                U+FFFF) converts to JSON; --to xml refuses it with the line and column of that \
                character.

                \(SurveyTool.exitCodesReference)
                """
        )

        enum Format: String, ExpressibleByArgument, CaseIterable {
            case json, xml
        }

        @Argument(
            help:
                "The property list to convert: XML, or JSON (- is standard input, named <stdin> in the output)."
        )
        var file: String

        @Option(help: "The output format: json or xml.")
        var to: Format

        @Option(
            name: [.short, .customLong("output")],
            help: ArgumentHelp(
                "Write to this file instead of standard output (- is standard output).", valueName: "output"))
        var outputOption: String?

        /// The file to write, or `nil` for standard output (`-o -` included).
        var output: String? { outputOption == "-" ? nil : outputOption }

        @Flag(
            help: "Print one JSON document: the file, the format, and the output file or the converted text.")
        var json = false

        func validate() throws {
            try PathArgument.requireName(file, for: "<file>")
            try PathArgument.requireName(outputOption, for: "--output")
        }

        func run() throws {
            let data = try PlistCommand.read(file)
            let name = inputName(file)
            let value: PropertyList
            do {
                value =
                    PropertyList.looksLikeJSON(data)
                    ? try PropertyList(json: data, file: name) : try PropertyList(xml: data, file: name)
            } catch let error as PropertyListError {
                throw CommandFailure(error)
            }
            let converted: Data
            do {
                switch to {
                case .xml:
                    converted = try value.xmlData()
                case .json:
                    converted = try JSONPropertyList.encode(value)
                }
            } catch let error as PropertyListError {
                // JSON read from a file can hold text XML cannot carry; the writer names its
                // path in the value, the reader (reading again) the place in the file.
                if to == .xml, PropertyList.looksLikeJSON(data),
                    let place = JSONReader.unwritableCharacter(in: data, at: nil)
                {
                    throw CommandFailure(
                        code: "invalidPropertyList", message: "cannot be written as XML: \(place.message)",
                        exit: ExitStatus.invalidData.rawValue, file: name, line: place.line,
                        column: place.column)
                }
                throw CommandFailure(
                    code: "invalidPropertyList", message: error.message,
                    exit: ExitStatus.invalidData.rawValue, file: name)
            }
            if let output { try Console.writeFile(converted, to: output) }
            if json {
                var report = ["file": name, "format": to.rawValue]
                if let output {
                    report["output"] = output
                } else {
                    report["content"] = String(decoding: converted, as: UTF8.self)
                }
                try Console.printJSON(report)
            } else if output == nil {
                Console.write(converted)
            }
        }
    }
}
