import Foundation
import PropertyList

extension Answer {
    /// The answer as a person reads it: the index, the text, the date as
    /// `YYYY-MM-DDTHH:MM:SSZ` (PropertyList's `ISO8601Date`), the number, or one `T`/`F`
    /// per option.
    ///
    /// Every number a survey accepts can be shown: whole numbers up to 2^53 print without
    /// a fraction (`8`), any other number in Swift's shortest exact form (`0.5`, `1e+19`,
    /// `-1e+300`).
    public var text: String {
        switch self {
        case .choice(let index): String(index)
        case .text(let text): text
        case .date(let date): ISO8601Date.string(from: date)
        case .number(let number): Self.text(of: number)
        case .flags(let flags): flags.map { $0 ? "T" : "F" }.joined()
        }
    }

    /// The number `text` spells in decimal (digits, a sign, a point, an exponent; spaces
    /// around it allowed), as a format-1 Slider string or a number typed by a person
    /// is read.
    ///
    /// - Parameter text: The text.
    /// - Returns: The number, or `nil`: hexadecimal (`0x10`, `0x1p4`), `inf` and `nan`,
    ///   which `Double(_:)` would also take, are not decimal.
    public static func number(decimal text: String) -> Double? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.utf8.allSatisfy({ (0x30...0x39).contains($0) || "+-.eE".utf8.contains($0) }),
            trimmed.utf8.contains(where: { (0x30...0x39).contains($0) })
        else { return nil }
        return Double(trimmed)
    }

    /// A number as ``text`` shows it.
    ///
    /// - Parameter number: Any number, including very large, infinite or NaN ones.
    /// - Returns: `8` for a whole number whose magnitude is at most 2^53, else the
    ///   number's `description`.
    public static func text(of number: Double) -> String {
        if number.rounded() == number, abs(number) <= 9_007_199_254_740_992 {
            return String(Int64(number))
        }
        return number.description
    }
}

extension Item {
    /// The label of the option this item's answer chooses: for an answered binary item,
    /// the option its index names; `nil` for any other item, or an index out of range.
    public var chosenOption: String? {
        guard case .choice(let index)? = answer, case .binary(let options) = kind,
            options.indices.contains(index)
        else { return nil }
        return options[index]
    }

    /// The answer as `survey show` prints it: a binary answer as the label of the option
    /// it chooses (``chosenOption``), any other as ``Answer/text`` (one `T`/`F` per option
    /// for multiTF); `nil` when the item is not answered.
    public var answerText: String? { chosenOption ?? answer?.text }

    /// Reads a slider's answer given as text (on a command line, say): a number written
    /// in decimal, as ``Answer/number(decimal:)`` reads it. An integer (digits, with a
    /// sign or not) that a double cannot hold exactly is refused, as it is in a file,
    /// rather than rounded to another number.
    ///
    /// - Parameters:
    ///   - text: The number, spaces around it allowed.
    ///   - position: The item's 1-based position, for the error.
    /// - Returns: The ``Answer/number(_:)`` answer, or `nil` when `text` is no decimal
    ///   number.
    /// - Throws: ``SurveyError`` with the rule ``SurveyError/Rule/answerOutOfRange`` for
    ///   an integer a double cannot hold exactly.
    public func numberAnswer(from text: String, position: Int) throws(SurveyError) -> Answer? {
        guard let number = Answer.number(decimal: text) else { return nil }
        var digits = Substring(text.trimmingCharacters(in: .whitespaces))
        if digits.first == "-" || digits.first == "+" { digits = digits.dropFirst() }
        if digits.allSatisfy(\.isASCII) && digits.allSatisfy(\.isNumber) {
            let written = digits.drop { $0 == "0" }
            // `%.0f` writes a double's integer value exactly, every digit of it.
            let held = String(format: "%.0f", abs(number))
            if held != (written.isEmpty ? "0" : String(written)) {
                throw SurveyError(
                    position: position, title: title, rule: .answerOutOfRange,
                    message:
                        "the answer is an integer a double cannot hold exactly; \(Survey.inexactIntegerRule)")
            }
        }
        return .number(number)
    }

    /// Reads a date answer given as text (on a command line, say) for this item, by the
    /// same rule as every other date: PropertyList's `ISO8601Date`, impossible dates
    /// refused, a fraction of a second dropped.
    ///
    /// - Parameters:
    ///   - text: `YYYY-MM-DDTHH:MM:SS[.fraction]Z`.
    ///   - position: The item's 1-based position, for the error.
    /// - Returns: The ``Answer/date(_:)`` answer, to the whole second.
    /// - Throws: ``SurveyError`` with the rule ``SurveyError/Rule/invalidDate``.
    public func dateAnswer(from text: String, position: Int) throws(SurveyError) -> Answer {
        do {
            return .date(try Survey.parseDate(text))
        } catch {
            throw SurveyError(
                position: position, title: title, rule: .invalidDate,
                message: Survey.invalidDateMessage(error))
        }
    }
}
