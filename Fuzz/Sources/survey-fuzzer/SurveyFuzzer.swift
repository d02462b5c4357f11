import Foundation
import PropertyList
import Surveys

// libFuzzer entry point for the survey decoders: every input goes through the
// interchange form read as an XML property list and as JSON, and through the format-1
// migration. Each must produce a valid survey or refuse with an error; a survey that
// decodes must encode, and decode back to the same survey. A crash, a hang, a memory
// error or a failed check is a finding. Build and run with `Fuzz/run survey`.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSurveyDecoders(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Data(bytes: data, count: size)
    if let survey = try? Survey(plist: input, file: "fuzz") { checkRoundTrip(survey) }
    if let survey = try? Survey(json: input, file: "fuzz") { checkRoundTrip(survey) }
    if let survey = try? FormatMigrator.survey(from: input, version: 1, seed: "fuzz", file: "fuzz") {
        checkRoundTrip(survey)
        // Migration is deterministic: the same input and seed give the same survey.
        let again = try? FormatMigrator.survey(from: input, version: 1, seed: "fuzz", file: "fuzz")
        precondition(again == survey, "format-1 migration is not deterministic")
    }
    return 0
}

/// A decoded survey is valid, and survives both interchange encodings unchanged.
func checkRoundTrip(_ survey: Survey) {
    do {
        try survey.validate()
    } catch {
        preconditionFailure("a decoded survey does not validate: \(error)")
    }
    do {
        let back = try Survey(plist: try survey.plistData())
        precondition(back == survey, "a survey changed through its property list")
    } catch {
        // Strings that XML 1.0 cannot carry are refused by the writer, by design.
        precondition(error is PropertyListError, "plist encoding failed with \(error)")
    }
    do {
        let back = try Survey(json: try survey.jsonData())
        precondition(back == survey, "a survey changed through JSON")
    } catch {
        preconditionFailure("JSON round trip failed: \(error)")
    }
}
