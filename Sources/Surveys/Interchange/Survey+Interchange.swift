import Foundation
import PropertyList

/// The interchange form of a survey (DESIGN.md, "Interchange form"): the same keys in
/// JSON and in an XML property list. Unknown keys are an error, never dropped.
extension Survey {
    static let surveyKeys: Set<String> = ["title", "items"]
    /// The keys `survey show --json` adds around the interchange form; accepted on input
    /// so that its output can be saved back.
    static let envelopeKeys: Set<String> = ["id", "revision", "formatVersion", "conflicts"]
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

    /// Reads a survey from its interchange form (the stored content's form): only `title`
    /// and `items` at the top level.
    ///
    /// Items without an `id` get a new random one. The rules added after content was
    /// first stored (a non-empty title, distinct option labels) are not applied here, so
    /// that a document written before them still opens; ``validate()`` and the store's
    /// writes apply them.
    ///
    /// - Parameter interchange: A dictionary with `title` and `items`.
    /// - Throws: ``SurveyError`` naming the item and the rule.
    public init(interchange: PropertyList) throws {
        try self.init(interchange: interchange, envelope: false, document: nil, strict: false, seed: nil)
    }

    /// Reads stored content, as ``init(interchange:)`` does, but gives an item without an
    /// `id` the one derived from `seed` (its revision) and its position, as a format-1
    /// item gets on migration: every read of the revision, on every replica, then gives
    /// the same ids.
    init(interchange: PropertyList, seed: String) throws {
        try self.init(interchange: interchange, envelope: false, document: nil, strict: false, seed: seed)
    }

    /// Reads a survey from a file's interchange form, which may carry the keys
    /// `survey show --json` adds around it.
    ///
    /// Besides `title` and `items`, these keys are accepted and checked, then left aside:
    /// `id` (the document's UUID), `revision` (a string), `formatVersion` (an integer) and
    /// `conflicts` (an array of strings). Any other key is refused.
    ///
    /// - Parameters:
    ///   - interchange: A dictionary with `title` and `items`.
    ///   - document: The document the survey is for, when it is saved to one: an `id`
    ///     naming another document is refused (rule ``SurveyError/Rule/otherDocument``).
    /// - Throws: ``SurveyError`` naming the item and the rule.
    public init(interchange: PropertyList, document: UUID?) throws {
        try self.init(interchange: interchange, envelope: true, document: document, strict: true, seed: nil)
    }

    private init(
        interchange: PropertyList, envelope: Bool, document: UUID?, strict: Bool, seed: String?
    ) throws {
        guard case .dictionary(let root) = interchange else {
            throw SurveyError(
                position: nil, title: nil, rule: .wrongType,
                message: "a survey must be a dictionary, not \(Self.describe(interchange))")
        }
        let known = envelope ? Self.surveyKeys.union(Self.envelopeKeys) : Self.surveyKeys
        if let unknown = root.keys.filter({ !known.contains($0) }).sorted().first {
            throw SurveyError(
                position: nil, title: nil, rule: .unknownKey, message: "unknown key '\(unknown)'")
        }
        if envelope { try Self.checkEnvelope(root, document: document) }
        guard let titleValue = root["title"] else {
            throw SurveyError(
                position: nil, title: nil, rule: .missingKey, message: "the key 'title' is missing")
        }
        guard case .string(let title) = titleValue else {
            throw SurveyError(
                position: nil, title: nil, rule: .wrongType,
                message: "'title' must be a string, not \(Self.describe(titleValue))")
        }
        guard let itemsValue = root["items"] else {
            throw SurveyError(
                position: nil, title: nil, rule: .missingKey, message: "the key 'items' is missing")
        }
        guard case .array(let elements) = itemsValue else {
            throw SurveyError(
                position: nil, title: nil, rule: .wrongType,
                message: "'items' must be an array, not \(Self.describe(itemsValue))")
        }
        try Self.checkItemCount(elements.count)
        let items = try elements.enumerated().map {
            try Self.item(from: $1, position: $0 + 1, seed: seed, strict: strict)
        }
        try self.init(title: title, items: items, strict: strict)
    }

    /// Checks the envelope keys `survey show --json` adds, and that `id`, when present,
    /// names `document`.
    private static func checkEnvelope(_ root: [String: PropertyList], document: UUID?) throws {
        func fail(_ rule: SurveyError.Rule, _ message: String) -> SurveyError {
            SurveyError(position: nil, title: nil, rule: rule, message: message)
        }
        if let value = root["id"] {
            guard case .string(let text) = value else {
                throw fail(.wrongType, "'id' must be a string, not \(describe(value))")
            }
            guard let id = UUID(uuidString: text) else {
                throw fail(.invalidID, "'id' is not a document UUID")
            }
            if let document, id != document {
                throw fail(
                    .otherDocument,
                    "its 'id' names document \(id.uuidString.lowercased()), not \(document.uuidString.lowercased()); remove 'id' to save it to this document"
                )
            }
        }
        if let value = root["revision"], value.stringValue == nil {
            throw fail(.wrongType, "'revision' must be a string, not \(describe(value))")
        }
        if let value = root["formatVersion"], case .integer = value {
        } else if let value = root["formatVersion"] {
            throw fail(.wrongType, "'formatVersion' must be an integer, not \(describe(value))")
        }
        if let value = root["conflicts"] {
            guard case .array(let ids) = value, ids.allSatisfy({ $0.stringValue != nil }) else {
                throw fail(.wrongType, "'conflicts' must be an array of strings, not \(describe(value))")
            }
        }
    }

    /// The item `value` stands for at `position`; without an `id`, it gets the one derived
    /// from `seed` and its position, or a random one when there is no seed. Unless
    /// `strict` (stored content, read as it was first read), a slider's integer that a
    /// double cannot hold exactly is rounded rather than refused.
    static func item(
        from value: PropertyList, position: Int, seed: String? = nil, strict: Bool = true
    ) throws -> Item {
        guard case .dictionary(let entries) = value else {
            throw SurveyError(
                position: position, title: nil, rule: .wrongType,
                message: "an item must be a dictionary, not \(describe(value))")
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
            guard case .string(let text) = value else {
                throw fail(.wrongType, "'\(key)' must be a string, not \(describe(value))")
            }
            return text
        }
        func number(_ key: String) throws -> Double {
            guard let value = entries[key] else { throw fail(.missingKey, "the key '\(key)' is missing") }
            switch value {
            case .real(let real): return real
            case .integer(let integer):
                guard let number = exactDouble(integer, strict: strict) else {
                    throw fail(
                        .sliderBounds,
                        "a slider's \(key) (\(integer)) is an integer a double cannot hold exactly; \(inexactIntegerRule)"
                    )
                }
                return number
            default: throw fail(.wrongType, "'\(key)' must be a number, not \(describe(value))")
            }
        }
        func options() throws -> [String] {
            guard let value = entries["options"] else {
                throw fail(.missingKey, "the key 'options' is missing")
            }
            guard case .array(let labels) = value else {
                throw fail(.wrongType, "'options' must be an array of strings, not \(describe(value))")
            }
            return try labels.map { label in
                guard case .string(let text) = label else {
                    throw fail(.wrongType, "'options' must hold strings, not \(describe(label))")
                }
                return text
            }
        }

        guard let kindName = try string("kind", required: true) else {
            throw fail(.missingKey, "the key 'kind' is missing")
        }
        guard let settings = settingKeys(ofKind: kindName) else {
            throw fail(
                .unknownKind,
                "unknown kind '\(kindName)'; the kinds are binary, textOnly, textField, datePicker, slider, picker and multiTF"
            )
        }
        let allowed = commonItemKeys.union(settings)
        if let unknown = entries.keys.filter({ !allowed.contains($0) }).sorted().first {
            throw fail(.unknownKey, "the key '\(unknown)' is not part of a \(kindName) item")
        }
        let itemTitle = try string("title", required: true) ?? ""
        let id: UUID
        if let idText = try string("id", required: false) {
            guard let parsed = UUID(uuidString: idText) else {
                throw fail(.invalidID, "'\(idText)' is not a UUID")
            }
            id = parsed
        } else {
            id = seed.map { FormatMigrator.derivedID(seed: $0, position: position) } ?? UUID()
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
                guard case .boolean(let flag) = value else {
                    throw fail(.wrongType, "'roundToInteger' must be a boolean, not \(describe(value))")
                }
                round = flag
            }
            kind = .slider(
                minimum: try number("minimum"), maximum: try number("maximum"), roundToInteger: round)
        case "picker": kind = .picker(options: try options())
        default: kind = .multiTF(options: try options())
        }
        var answer: Answer?
        if let value = entries["answer"] {
            answer =
                try Self.answer(from: value, kind: kind, strict: strict, fail: fail)
                ?? { throw fail(.answerType, "a \(kindName) item is not answered by \(describe(value))") }()
        }
        return Item(id: id, title: itemTitle, kind: kind, answer: answer)
    }

    /// The answer `value` stands for in an item of `kind`, or `nil` when its type does not fit.
    /// An array for a multiTF item that holds something other than booleans is refused here,
    /// naming the first such flag.
    private static func answer(
        from value: PropertyList, kind: Item.Kind, strict: Bool,
        fail: (SurveyError.Rule, String) -> SurveyError
    ) throws -> Answer? {
        switch (kind, value) {
        case (.binary, .integer(let integer)):
            // One too large for an Int is refused quoting the number written, not another.
            guard let index = integer.exactly(Int.self) else {
                throw fail(.answerOutOfRange, "a binary answer is 0 or 1, not \(integer)")
            }
            return .choice(index)
        case (.textField, .string(let text)), (.picker, .string(let text)): return .text(text)
        case (.datePicker, .date(let date)): return .date(wholeSecond(date))
        case (.datePicker, .string(let text)):
            do {
                return .date(try parseDate(text))
            } catch {
                throw fail(.invalidDate, invalidDateMessage(error))
            }
        case (.slider, .real(let real)): return .number(real)
        case (.slider, .integer(let integer)):
            // Stored as a double, which would round it: refused rather than changed.
            guard let number = exactDouble(integer, strict: strict) else {
                throw fail(
                    .answerOutOfRange,
                    "the answer is an integer a double cannot hold exactly; \(inexactIntegerRule)")
            }
            return .number(number)
        case (.multiTF, .array(let elements)):
            var flags: [Bool] = []
            for (index, element) in elements.enumerated() {
                guard case .boolean(let flag) = element else {
                    throw fail(
                        .answerType,
                        "flag \(index + 1) of the answer must be a boolean, not \(describe(element)) (a multiTF item is answered by one boolean per option)"
                    )
                }
                flags.append(flag)
            }
            return .flags(flags)
        case (.textOnly, _): return .text("")  // any answer on textOnly is refused by validation
        default: return nil
        }
    }

    /// `integer` as a double, or, when `strict`, `nil` when a double cannot hold it
    /// exactly (most integers beyond 2^53 in magnitude): a slider's numbers are doubles,
    /// and an integer rounded on the way in would be stored as another number than the
    /// one written. Stored content (not `strict`) is read as it always was, rounded.
    static func exactDouble(_ integer: PropertyList.Integer, strict: Bool) -> Double? {
        let magnitude: Double
        if let exact = Double(exactly: integer.magnitude) {
            magnitude = exact
        } else if strict {
            return nil
        } else {
            magnitude = Double(integer.magnitude)
        }
        return integer.isNegative ? -magnitude : magnitude
    }

    /// The rule for integers in a slider, for messages.
    static let inexactIntegerRule =
        "a slider's minimum, maximum and answer are doubles, exact for every integer up to 2^53 (9007199254740992) in magnitude but only for some beyond"

    /// The rule for dates, for messages.
    static let dateRule =
        "dates are YYYY-MM-DDTHH:MM:SSZ in UTC and the proleptic Gregorian calendar; a fraction of a second is dropped"

    /// Why a date answer is refused, without quoting it.
    static func invalidDateMessage(_ failure: ISO8601Date.Failure) -> String {
        "the answer is not a possible date: it \(failure.reason) (\(dateRule))"
    }

    /// Refuses more than ``maximumItemCount`` items.
    static func checkItemCount(_ count: Int) throws(SurveyError) {
        guard count <= maximumItemCount else {
            throw SurveyError(
                position: nil, title: nil, rule: .tooManyItems,
                message: "it has \(count) items; a survey has at most \(maximumItemCount)")
        }
    }

    /// Reads a date answer: `ISO8601Date`'s form and checks, to the whole second.
    ///
    /// - Throws: ``ISO8601Date/Failure`` for text that is not a possible date.
    static func parseDate(_ text: String) throws(ISO8601Date.Failure) -> Date {
        wholeSecond(try ISO8601Date.date(from: text))
    }

    /// The date rounded down to the whole second, as the XML writer stores it, so that a
    /// survey equals itself read back.
    static func wholeSecond(_ date: Date) -> Date {
        Date(timeIntervalSinceReferenceDate: date.timeIntervalSinceReferenceDate.rounded(.down))
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
        // Room for every key an item can have, so that adding its settings and answer
        // never grows the dictionary.
        var entries = [String: PropertyList](minimumCapacity: 8)
        entries["id"] = .string(id.uuidString)
        entries["title"] = .string(title)
        entries["kind"] = .string(kind.name)
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
