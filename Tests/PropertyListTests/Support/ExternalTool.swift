import Foundation
import TestSupport
import Testing

/// Runs independent tools (Python's plistlib, libplist's plistutil) for interop tests,
/// through the shared ``ChildProcess`` and ``Tools``.
enum ExternalTool {
    typealias Output = ChildProcess.Output

    static var isCI: Bool { Tools.isCI }

    /// The path of `name` on `PATH`, if it is there.
    static func find(_ name: String) -> String? { Tools.find(name) }

    /// A trait for a test that needs `tools` (see `Tools.needs`).
    static func needs(_ tools: String...) -> ConditionTrait { Tools.needs(tools) }

    /// The path of `name`; an issue in CI when it is missing (see `Tools.require`).
    static func require(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        Tools.require(name, sourceLocation: sourceLocation)
    }

    /// Runs `executable` with `arguments` and waits for it.
    static func run(_ executable: String, _ arguments: [String], stdin: Data? = nil) throws -> Output {
        try ChildProcess.run(executable, arguments, input: stdin ?? Data())
    }

    /// A new empty temporary directory.
    static func temporaryDirectory() throws -> URL { try ChildProcess.temporaryDirectory() }
}
