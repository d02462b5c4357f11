import PropertyList

extension Item {
    /// The item's texts, in the order ``textProblems(position:)`` reports them: each with
    /// its name in messages, its key in the interchange form and, for an option, its index
    /// in that key's array.
    func texts() -> [(field: String, key: String, index: Int?, text: String)] {
        var texts: [(field: String, key: String, index: Int?, text: String)] = [
            ("title", "title", nil, title)
        ]
        switch kind {
        case .binary(let options), .picker(let options), .multiTF(let options):
            texts += options.enumerated().map {
                ("option \($0.offset + 1)", "options", $0.offset, $0.element)
            }
        case .textOnly(let text?): texts.append(("text", "text", nil, text))
        case .textField(let subtitle?): texts.append(("hint", "subtitle", nil, subtitle))
        default: break
        }
        if case .text(let answer) = answer { texts.append(("answer", "answer", nil, answer)) }
        return texts
    }

    /// A ``SurveyError/Rule/unwritableText`` error for each of the item's texts that an
    /// XML property list cannot carry, naming it.
    func textProblems(position: Int) -> [SurveyError] {
        texts().compactMap { field, _, _, text in
            XMLPlistWriter.unwritableReason(text).map { reason in
                SurveyError(
                    position: position, title: title, rule: .unwritableText,
                    message: "its \(field) cannot be saved: \(reason)")
            }
        }
    }

    /// Checks the item's settings and answer against the rules of its kind.
    ///
    /// - Parameters:
    ///   - position: The item's 1-based position, for the error.
    ///   - strict: Whether to apply the rules added after content was first stored
    ///     (distinct option labels, a date answer within ``Survey/answerDates``); stored
    ///     content is read without them.
    /// - Throws: ``SurveyError`` naming the item and the first rule it breaks.
    func validate(position: Int, strict: Bool = true) throws(SurveyError) {
        func fail(_ rule: SurveyError.Rule, _ message: String) -> SurveyError {
            SurveyError(position: position, title: title, rule: rule, message: message)
        }
        func answerType(_ expected: String) -> SurveyError {
            fail(
                .answerType,
                "a \(kind.name) item is answered by \(expected), not \(answer.map(Self.describe) ?? "nothing")"
            )
        }
        switch kind {
        case .binary(let options):
            guard options.count == 2 else {
                throw fail(.binaryOptions, "a binary item has exactly 2 options, not \(options.count)")
            }
            if strict, options[0] == options[1] {
                throw fail(.duplicateOptions, "a binary item's two options are different labels")
            }
            switch answer {
            case nil: break
            case .choice(let index):
                guard index == 0 || index == 1 else {
                    throw fail(.answerOutOfRange, "a binary answer is 0 or 1, not \(index)")
                }
            default: throw answerType("0 or 1 (the index of the chosen option)")
            }
        case .textOnly:
            if answer != nil { throw fail(.answerNotAllowed, "a textOnly item takes no answer") }
        case .textField:
            switch answer {
            case nil, .text: break
            default: throw answerType("a string")
            }
        case .datePicker:
            switch answer {
            case nil: break
            case .date(let date):
                if strict, !Survey.answerDates.contains(date) {
                    throw fail(
                        .invalidDate,
                        "the answer \(ISO8601Date.string(from: date)) lies outside the years 1 to 9999, "
                            + "which every property-list reader can read (Python's plistlib reads no others)")
                }
            default: throw answerType("a date")
            }
        case .slider(let minimum, let maximum, let roundToInteger):
            for (name, bound) in [("minimum", minimum), ("maximum", maximum)] where !bound.isFinite {
                throw fail(.sliderBounds, "a slider's \(name) (\(bound)) must be a finite number")
            }
            guard minimum < maximum else {
                throw fail(
                    .sliderBounds, "a slider's minimum (\(minimum)) must be below its maximum (\(maximum))")
            }
            switch answer {
            case nil: break
            case .number(let value):
                guard value.isFinite else {
                    throw fail(.answerOutOfRange, "the answer must be a finite number")
                }
                guard value >= minimum && value <= maximum else {
                    throw fail(.answerOutOfRange, "the answer must lie between \(minimum) and \(maximum)")
                }
                if roundToInteger && value.rounded() != value {
                    throw fail(
                        .answerNotWhole, "the slider rounds to whole numbers, so its answer must be whole")
                }
            default: throw answerType("a number")
            }
        case .picker(let options):
            guard !options.isEmpty else { throw fail(.emptyOptions, "a picker has at least one option") }
            if strict, let repeated = Self.repeatedOption(options) { throw fail(.duplicateOptions, repeated) }
            switch answer {
            case nil: break
            case .text(let choice):
                guard options.contains(choice) else {
                    throw fail(.answerNotAnOption, "the answer must be one of the \(options.count) options")
                }
            default: throw answerType("one of its options")
            }
        case .multiTF(let options):
            guard !options.isEmpty else {
                throw fail(.emptyOptions, "a multiTF item has at least one option")
            }
            if strict, let repeated = Self.repeatedOption(options) { throw fail(.duplicateOptions, repeated) }
            switch answer {
            case nil: break
            case .flags(let flags):
                guard flags.count == options.count else {
                    throw fail(
                        .answerLength, "the answer has \(flags.count) flags for \(options.count) options")
                }
            default: throw answerType("one boolean per option")
            }
        }
    }

    /// A message naming the first option whose label repeats an earlier one, if any.
    static func repeatedOption(_ options: [String]) -> String? {
        var seen: [String: Int] = [:]
        for (offset, label) in options.enumerated() {
            if let first = seen[label] {
                return
                    "option \(offset + 1) has the same label as option \(first + 1); the options of an item are different labels"
            }
            seen[label] = offset
        }
        return nil
    }

    /// The kind of an answer, without its content.
    static func describe(_ answer: Answer) -> String {
        switch answer {
        case .choice: "an integer"
        case .text: "a string"
        case .date: "a date"
        case .number: "a number"
        case .flags: "a list of booleans"
        }
    }
}
