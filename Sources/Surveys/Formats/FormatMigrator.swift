import Crypto
import Foundation
import PropertyList

/// The format versions of `Survey.plist` and the ordered steps between them.
///
/// Each step turns content of one version into the next; reading content of any older
/// version runs the steps from its version to ``current`` in order. Adding format 3 means
/// appending one step. Migration is deterministic: the same content and seed give the
/// same result on every machine, so replicas that migrate the same revision agree.
public enum FormatMigrator {
    /// The format this build reads and writes.
    public static let current = 2

    /// One step of the registry.
    public struct Step: Sendable {
        /// The version the step reads; it writes `from + 1`.
        public let from: Int
        /// What the step does, for messages.
        public let name: String
        let migrate: @Sendable (PropertyList, _ seed: String) throws -> PropertyList
    }

    /// The steps, in order.
    public static let steps: [Step] = [
        Step(
            from: 1, name: "format 1 (Core Data strings) to format 2 (typed items)",
            migrate: FormatOne.migrate)
    ]

    /// Reads content of `version` as a survey, migrating older formats in memory.
    ///
    /// - Parameters:
    ///   - data: The `Survey.plist` bytes.
    ///   - version: Its format version.
    ///   - seed: Stable text naming the content (a revision id): format-1 items, and
    ///     items of any format stored without an `id`, get ids derived from it and their
    ///     position.
    ///   - file: Where the bytes came from, for messages.
    /// - Throws: ``FormatError/newer(_:supported:)`` for a format this build does not
    ///   know; `PropertyListError` or ``SurveyError`` for content that cannot be read.
    public static func survey(from data: Data, version: Int, seed: String, file: String? = nil) throws
        -> Survey
    {
        guard version <= current else { throw FormatError.newer(version, supported: current) }
        guard version >= 1 else { throw FormatError.unknown(version) }
        var value = try PropertyList(xml: data, file: file)
        // A rule an older format breaks (found while migrating) names the file as a rule
        // of the current format does.
        return try SurveyError.reading(from: file) {
            for step in steps where step.from >= version && step.from < current {
                value = try step.migrate(value, seed)
            }
            return try Survey(interchange: value, seed: seed)
        }
    }

    /// A UUID derived from `seed` and `position`: the first 16 bytes of their SHA-256,
    /// marked as a name-based UUID.
    static func derivedID(seed: String, position: Int) -> UUID {
        var bytes = Array(SHA256.hash(data: Data("\(seed)/item/\(position)".utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x50
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }
}

/// Content this build cannot read because of its format version.
public enum FormatError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The format is newer than the newest this build supports.
    case newer(Int, supported: Int)
    /// The number names no format (below 1).
    case unknown(Int)

    public var description: String {
        switch self {
        case .newer(let version, let supported):
            "format \(version) is newer than this build supports (\(supported))"
        case .unknown(let version): "format \(version) is not a known format"
        }
    }
}
