import Foundation
import PropertyList

@testable import Surveys

// libFuzzer entry point for the survey decoders: every input goes through the
// interchange form read as an XML property list and as JSON, and through the format-1
// migration. Each must produce a survey that keeps the rules for stored content or refuse
// with an error; a survey that decodes must encode (its XML written straight from the
// model being the bytes of its interchange tree), and decode back to the same survey. A
// crash, a hang, a memory error or a failed check is a finding. Build and run with
// `Fuzz/run survey`.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSurveyDecoders(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Data(bytes: data, count: size)
    if let survey = try? Survey(plist: input, file: "fuzz") { checkRoundTrip(survey) }
    if let survey = try? Survey(json: input, file: "fuzz") { checkRoundTrip(survey) }
    if let file = try? Survey.reading(data: input, file: "fuzz") { checkAdoptedIDs(file) }
    if let survey = try? FormatMigrator.survey(from: input, version: 1, seed: "fuzz", file: "fuzz") {
        checkRoundTrip(survey)
        // Migration is deterministic: the same input and seed give the same survey.
        let again = try? FormatMigrator.survey(from: input, version: 1, seed: "fuzz", file: "fuzz")
        precondition(again == survey, "format-1 migration is not deterministic")
    }
    return 0
}

/// A decoded survey keeps the rules for stored content (the rules added since, a title
/// that is not blank and distinct option labels, apply to new content only), and survives
/// both interchange encodings unchanged: read back by the files' readers when it keeps
/// every rule, else refused by them for a rule and read back as stored content is.
func checkRoundTrip(_ survey: Survey) {
    do {
        try survey.validate(strict: false)
    } catch {
        preconditionFailure("a decoded survey does not validate: \(error)")
    }
    let keepsEveryRule = (try? survey.validate()) != nil
    func readBack(_ file: () throws -> Survey, stored: () throws -> Survey) throws -> Survey {
        if keepsEveryRule { return try file() }
        do {
            _ = try file()
            preconditionFailure("a file's reader took a survey that breaks a rule for new content")
        } catch is SurveyError {
            return try stored()
        }
    }
    do {
        let data = try survey.plistData()
        // The survey's XML is written straight from the model; it must be the bytes the
        // property-list writer makes of the survey's interchange tree.
        precondition(data == (try? survey.interchange.xmlData()), "the direct writer and the tree differ")
        let back = try readBack(
            { try Survey(plist: data) }, stored: { try Survey(interchange: try PropertyList(xml: data)) })
        precondition(back == survey, "a survey changed through its property list")
    } catch {
        // Strings that XML 1.0 cannot carry are refused by the writer, by design, by
        // both writers alike.
        precondition(error is PropertyListError, "plist encoding failed with \(error)")
        precondition(
            (try? survey.interchange.xmlData()) == nil, "the direct writer refused what the tree writer took")
    }
    do {
        let data = try survey.jsonData()
        let back = try readBack(
            { try Survey(json: data) },
            stored: { try Survey(interchange: try PropertyList(json: data)) }
        )
        precondition(back == survey, "a survey changed through JSON")
    } catch {
        preconditionFailure("JSON round trip failed: \(error)")
    }
}

/// The ids a file's items without one are given when it is saved on content: matched with
/// that content (here the survey itself, and nothing), they are unique, the same every
/// time, and the ids the file carries stay where they are, so the survey keeps every rule.
func checkAdoptedIDs(_ file: (survey: Survey, itemsWithoutID: [Int])) {
    let carried = Set(file.survey.items.indices.map { $0 + 1 }).subtracting(file.itemsWithoutID)
    for base in [file.survey, nil] {
        let adopted = file.survey.adoptingIDs(ofItemsAt: file.itemsWithoutID, from: base, seed: "fuzz")
        precondition(
            adopted == file.survey.adoptingIDs(ofItemsAt: file.itemsWithoutID, from: base, seed: "fuzz"),
            "adopting ids is not deterministic")
        precondition(Set(adopted.items.map(\.id)).count == adopted.items.count, "adopted ids repeat")
        for position in carried {
            precondition(
                adopted.items[position - 1].id == file.survey.items[position - 1].id, "a carried id changed")
        }
        precondition(
            (try? Survey(title: adopted.title, items: adopted.items)) != nil, "adopted ids break a rule")
    }
}
