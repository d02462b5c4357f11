import Foundation
import PropertyList

/// The interchange form of a survey (DESIGN.md, "Interchange form"): the same keys in
/// JSON and in an XML property list. Unknown keys are an error, never dropped.
extension Survey {
    static let surveyKeys: Set<String> = ["title", "items"]
    static let commonItemKeys: Set<String> = ["id", "title", "kind", "answer"]

    static func settingKeys(ofKind kind: String) -> Set<String>? {
        switch kind {
        case "binary", "picker", "multiTF": ["options"]
        case "textOnly": ["text"]
        case "textField": ["subtitle"]
        case "datePicker": []
        case "slider": ["minimum", "maximum", "roundToInteger"]
        default: nil
        }
    }

    /// Reads a survey from its interchange form.
    ///
    /// Items without an `id` get a new random one.
    ///
    /// - Parameter interchange: A dictionary with `title` and `items`.
    /// - Throws: ``SurveyError`` naming the item and the rule.
    public init(interchange: PropertyList) throws {
        guard case .dictionary(let root) = interchange else {
            throw SurveyError(position: nil, title: nil, rule: .wrongType, message: "a survey is a dictionary, not \(Self.describe(interchange))")
        }
        if let unknown = root.keys.filter({ !Self.surveyKeys.contains($0) }).sorted().first {
            throw SurveyError(position: nil, title: nil, rule: .unknownKey, message: "unknown key '\(unknown)'")
        }
        guard let titleValue = root["title"] else {
            throw SurveyError(position: nil, title: nil, rule: .missingKey, message: "the key 'title' is missing")
        }
        guard case .string(let title) = titleValue else {
            throw SurveyError(position: nil, title: nil, rule: .wrongType, message: "'title' is a string, not \(Self.describe(titleValue))")
        }
        guard let itemsValue = root["items"] else {
            throw SurveyError(position: nil, title: nil, rule: .missingKey, message: "the key 'items' is missing")
        }
        guard case .array(let elements) = itemsValue else {
            throw SurveyError(position: nil, title: nil, rule: .wrongType, message: "'items' is an array, not \(Self.describe(itemsValue))")
        }
        let items = try elements.enumerated().map { try Self.item(from: $1, position: $0 + 1) }
        try self.init(title: title, items: items)
    }

    static func item(from value: PropertyList, position: Int) throws -> Item {
        guard case .dictionary(let entries) = value else {
            throw SurveyError(position: position, title: nil, rule: .wrongType, message: "an item is a dictionary, not \(describe(value))")
        }
        let title = entries["title"]?.stringValue
        func fail(_ rule: SurveyError.Rule, _ message: String) -> SurveyError {
            SurveyError(position: position, title: title, rule: rule, message: message)
        }
        func string(_ key: String, required: Bool) throws -> String? {
            guard let value = entries[key] else {
                if required { throw fail(.missingKey, "the key '\(key)' is missing") }
                return nil
            }
            guard case .string(let text) = value else { throw fail(.wrongType, "'\(key)' is a string, not \(describe(value))") }
            return text
        }
        func number(_ key: String) throws -> Double {
            guard let value = entries[key] else { throw fail(.missingKey, "the key '\(key)' is missing") }
            switch value {
            case .real(let real): return real
            case .integer(let integer):
                if let signed = integer.int64Value { return Double(signed) }
                return Double(integer.magnitude)
            default: throw fail(.wrongType, "'\(key)' is a number, not \(describe(value))")
            }
        }
        func options() throws -> [String] {
            guard let value = entries["options"] else { throw fail(.missingKey, "the key 'options' is missing") }
            guard case .array(let labels) = value else { throw fail(.wrongType, "'options' is an array of strings, not \(describe(value))") }
            return try labels.map { label in
                guard case .string(let text) = label else { throw fail(.wrongType, "'options' holds strings, not \(describe(label))") }
                return text
            }
        }

        guard let kindName = try string("kind", required: true) else { throw fail(.missingKey, "the key 'kind' is missing") }
        guard let settings = settingKeys(ofKind: kindName) else {
            throw fail(.unknownKind, "unknown kind '\(kindName)'; the kinds are binary, textOnly, textField, datePicker, slider, picker and multiTF")
        }
        let allowed = commonItemKeys.union(settings)
        if let unknown = entries.keys.filter({ !allowed.contains($0) }).sorted().first {
            throw fail(.unknownKey, "the key '\(unknown)' is not part of a \(kindName) item")
        }
        let itemTitle = try string("title", required: true) ?? ""
        var id = UUID()
        if let idText = try string("id", required: false) {
            guard let parsed = UUID(uuidString: idText) else { throw fail(.invalidID, "'\(idText)' is not a UUID") }
            id = parsed
        }
        let kind: Item.Kind
        switch kindName {
        case "binary": kind = .binary(options: try options())
        case "textOnly": kind = .textOnly(text: try string("text", required: false))
        case "textField": kind = .textField(subtitle: try string("subtitle", required: false))
        case "datePicker": kind = .datePicker
        case "slider":
            var round = false
            if let value = entries["roundToInteger"] {
                guard case .boolean(let flag) = value else { throw fail(.wrongType, "'roundToInteger' is a boolean, not \(describe(value))") }
                round = flag
            }
            kind = .slider(minimum: try number("minimum"), maximum: try number("maximum"), roundToInteger: round)
        case "picker": kind = .picker(options: try options())
        default: kind = .multiTF(options: try options())
        }
        var answer: Answer?
        if let value = entries["answer"] {
            answer = try Self.answer(from: value, kind: kind) ?? { throw fail(.answerType, "a \(kindName) item is not answered by \(describe(value))") }()
        }
        return Item(id: id, title: itemTitle, kind: kind, answer: answer)
    }

    /// The answer `value` stands for in an item of `kind`, or `nil` when its type does not fit.
    private static func answer(from value: PropertyList, kind: Item.Kind) throws -> Answer? {
        switch (kind, value) {
        case (.binary, .integer(let integer)): return integer.exactly(Int.self).map(Answer.choice) ?? .choice(Int.max)
        case (.textField, .string(let text)), (.picker, .string(let text)): return .text(text)
        case (.datePicker, .date(let date)): return .date(date)
        case (.datePicker, .string(let text)): return parseDate(text).map(Answer.date)
        case (.slider, .real(let real)): return .number(real)
        case (.slider, .integer(let integer)): return .number(Double(integer.int64Value ?? Int64.max))
        case (.multiTF, .array(let elements)):
            var flags: [Bool] = []
            for element in elements {
                guard case .boolean(let flag) = element else { return nil }
                flags.append(flag)
            }
            return .flags(flags)
        case (.textOnly, _): return .text("")  // any answer on textOnly is refused by validation
        default: return nil
        }
    }

    static func parseDate(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }

    static func describe(_ value: PropertyList) -> String { value.typeDescription }

    /// The survey in its interchange form, as a property list (dates as dates).
    public var interchange: PropertyList {
        .dictionary([
            "title": .string(title),
            "items": .array(items.map(\.interchange)),
        ])
    }
}

extension Item {
    /// The item in its interchange form.
    public var interchange: PropertyList {
        var entries: [String: PropertyList] = [
            "id": .string(id.uuidString), "title": .string(title), "kind": .string(kind.name),
        ]
        switch kind {
        case .binary(let options), .picker(let options), .multiTF(let options):
            entries["options"] = .array(options.map(PropertyList.string))
        case .textOnly(let text):
            if let text { entries["text"] = .string(text) }
        case .textField(let subtitle):
            if let subtitle { entries["subtitle"] = .string(subtitle) }
        case .datePicker:
            break
        case .slider(let minimum, let maximum, let roundToInteger):
            entries["minimum"] = .real(minimum)
            entries["maximum"] = .real(maximum)
            entries["roundToInteger"] = .boolean(roundToInteger)
        }
        switch answer {
        case nil: break
        case .choice(let index): entries["answer"] = .integer(PropertyList.Integer(Int64(index)))
        case .text(let text): entries["answer"] = .string(text)
        case .date(let date): entries["answer"] = .date(date)
        case .number(let number): entries["answer"] = .real(number)
        case .flags(let flags): entries["answer"] = .array(flags.map(PropertyList.boolean))
        }
        return .dictionary(entries)
    }
}
