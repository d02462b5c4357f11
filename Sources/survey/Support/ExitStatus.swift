import ArgumentParser
import SurveyStore

/// The documented exit codes of the `survey` command (see README, "Exit codes").
enum ExitStatus {
    /// Invalid data: a malformed property list, an invalid survey, an unsupported format, a
    /// document none of whose revisions can be read.
    static let invalidData = ExitCode(65)
    /// No such store, document, revision, item or file.
    static let noInput = ExitCode(66)
    /// A refusal: `--if-current` refused the save, or `resolve --merge --strict` found a
    /// contested field (nothing written).
    static let refused = ExitCode(75)
    /// Anything else.
    static let failure = ExitCode(1)

    /// The exit code of a failure of `category`: one mapping for every error.
    static func code(for category: ErrorCategory) -> ExitCode {
        switch category {
        case .invalidData: invalidData
        case .notFound: noInput
        case .refused: refused
        case .usage: ExitCode.validationFailure
        case .failure: failure
        }
    }
}
