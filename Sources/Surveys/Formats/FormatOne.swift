import Foundation
import PropertyList

/// Format 1: the loose shape older apps wrote straight from a Core Data entity with
/// string attributes (see DESIGN.md, "Format versions").
enum FormatOne {
    static let itemKeys: Set<String> = ["title", "type", "value1", "value2", "value3", "result"]

    static func migrate(_ value: PropertyList, seed: String) throws -> PropertyList {
        guard case .dictionary(let root) = value else {
            throw SurveyError(
                position: nil, title: nil, rule: .wrongType,
                message: "a format-1 survey must be a dictionary, not \(value.typeDescription)")
        }
        if let unknown = root.keys.filter({ $0 != "title" && $0 != "items" }).sorted().first {
            throw SurveyError(
                position: nil, title: nil, rule: .unknownKey,
                message: "unknown key '\(unknown)' in a format-1 survey")
        }
        guard case .string(let title)? = root["title"] else {
            throw SurveyError(
                position: nil, title: nil, rule: .missingKey,
                message: "the key 'title' is missing or not a string")
        }
        guard case .array(let items)? = root["items"] else {
            throw SurveyError(
                position: nil, title: nil, rule: .missingKey,
                message: "the key 'items' is missing or not an array")
        }
        let migrated = try items.enumerated().map { offset, item in
            try migrateItem(item, position: offset + 1, seed: seed)
        }
        return .dictionary(["title": .string(title), "items": .array(migrated)])
    }

    private static func migrateItem(_ value: PropertyList, position: Int, seed: String) throws -> PropertyList
    {
        guard case .dictionary(let item) = value else {
            throw SurveyError(
                position: position, title: nil, rule: .wrongType,
                message: "an item must be a dictionary, not \(value.typeDescription)")
        }
        let title = item["title"]?.stringValue
        func fail(_ rule: SurveyError.Rule, _ message: String) -> SurveyError {
            SurveyError(position: position, title: title, rule: rule, message: message)
        }
        if let unknown = item.keys.filter({ !itemKeys.contains($0) }).sorted().first {
            throw fail(.unknownKey, "unknown key '\(unknown)' in a format-1 item")
        }
        func string(_ key: String) throws -> String? {
            guard let value = item[key] else { return nil }
            guard case .string(let text) = value else {
                throw fail(.wrongType, "'\(key)' must be a string in format 1, not \(value.typeDescription)")
            }
            return text
        }
        guard let title else { throw fail(.missingKey, "the key 'title' is missing or not a string") }
        guard let type = try string("type") else { throw fail(.missingKey, "the key 'type' is missing") }
        let value1 = try string("value1"), value2 = try string("value2"), value3 = try string("value3")
        var result: String?
        if let resultValue = item["result"] {
            guard case .dictionary(let entries) = resultValue, entries.count == 1,
                case .string(let text)? = entries["text"]
            else {
                throw fail(.wrongType, "'result' must be a dictionary with one key, 'text', a string")
            }
            result = text
        }
        func number(_ text: String?, _ name: String) throws -> Double {
            guard let text else { throw fail(.missingKey, "a Slider needs \(name)") }
            guard let number = Answer.number(decimal: text) else {
                // `inf` and `nan` are named as what they are.
                if let other = Double(text.trimmingCharacters(in: .whitespaces)), !other.isFinite {
                    throw fail(.sliderBounds, "the Slider's \(name) '\(text)' is not a finite number")
                }
                throw fail(.sliderBounds, "the Slider's \(name) '\(text)' is not a number")
            }
            guard number.isFinite else {
                throw fail(.sliderBounds, "the Slider's \(name) '\(text)' is not a finite number")
            }
            return number
        }
        func options(_ text: String?) -> [PropertyList] {
            (text ?? "").split(separator: "|", omittingEmptySubsequences: false).map { .string(String($0)) }
        }

        var out: [String: PropertyList] = [
            "id": .string(FormatMigrator.derivedID(seed: seed, position: position).uuidString),
            "title": .string(title),
        ]
        switch type {
        case "Binary":
            out["kind"] = "binary"
            out["options"] = .array([.string(value1 ?? ""), .string(value2 ?? "")])
            if let result {
                guard let index = Int64(result) else {
                    throw fail(.answerType, "a Binary result is \"0\" or \"1\"")
                }
                out["answer"] = .integer(PropertyList.Integer(index))
            }
        case "TextOnly":
            out["kind"] = "textOnly"
            if let value1 { out["text"] = .string(value1) }
            if result != nil { throw fail(.answerNotAllowed, "a TextOnly item has no result") }
        case "TextField":
            out["kind"] = "textField"
            if let value1 { out["subtitle"] = .string(value1) }
            if let result { out["answer"] = .string(result) }
        case "DatePicker":
            out["kind"] = "datePicker"
            if let result {
                guard let date = try? Survey.parseDate(result) else {
                    throw fail(.invalidDate, "a DatePicker result is a possible date (\(Survey.dateRule))")
                }
                out["answer"] = .date(date)
            }
        case "Slider":
            out["kind"] = "slider"
            out["minimum"] = .real(try number(value1, "minimum (value1)"))
            out["maximum"] = .real(try number(value2, "maximum (value2)"))
            switch value3 {
            case nil, "F": out["roundToInteger"] = false
            case "T": out["roundToInteger"] = true
            case let other?:
                throw fail(.wrongType, "a Slider's value3 must be \"T\" or \"F\", not '\(other)'")
            }
            if let result {
                guard let number = Answer.number(decimal: result) else {
                    throw fail(.answerType, "a Slider result is a number")
                }
                out["answer"] = .real(number)
            }
        case "Picker":
            out["kind"] = "picker"
            out["options"] = .array(options(value1))
            if let result { out["answer"] = .string(result) }
        case "MultiTF":
            out["kind"] = "multiTF"
            out["options"] = .array(options(value1))
            if let result {
                var flags: [PropertyList] = []
                for character in result {
                    switch character {
                    case "T": flags.append(true)
                    case "F": flags.append(false)
                    default: throw fail(.answerType, "a MultiTF result is one T or F per option")
                    }
                }
                out["answer"] = .array(flags)
            }
        default:
            throw fail(.unknownKind, "unknown format-1 type '\(type)'")
        }
        return .dictionary(out)
    }
}
