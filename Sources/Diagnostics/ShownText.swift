/// Text that came from outside the program (a file name, a path, a message quoting one, a
/// document's title, item texts and answers in a row of output) as a message or a row
/// shows it: a name in a store can hold any byte but `/` and NUL, and a survey's text any
/// character, and neither may drive the terminal that prints it nor split the line that
/// names it.
public enum ShownText {
    /// `text` with each control character (C0, DEL and C1), the line and paragraph
    /// separators (U+2028, U+2029) and the bidirectional controls (U+061C, U+200E,
    /// U+200F, U+202A–U+202E, U+2066–U+2069, which can show a row's text in another
    /// order than it has) written as `\u{…}`, its scalar value in hexadecimal:
    /// `"a\u{1B}[2Jb"` shows as `a\u{1B}[2Jb`.
    ///
    /// - Parameters:
    ///   - text: The text to show.
    ///   - keepingLineBreaks: Whether line feeds and tabs stay as they are (a whole
    ///     message, whose own lines are meant); a name keeps none.
    /// - Returns: `text` itself when it holds no such character.
    public static func escaping(_ text: String, keepingLineBreaks: Bool = false) -> String {
        func isEscaped(_ scalar: Unicode.Scalar) -> Bool {
            let value = scalar.value
            if keepingLineBreaks && (value == 0x0A || value == 0x09) { return false }
            if value < 0x20 || (0x7F...0x9F).contains(value) { return true }
            guard value >= 0x61C else { return false }
            return value == 0x61C || value == 0x200E || value == 0x200F || value == 0x2028 || value == 0x2029
                || (0x202A...0x202E).contains(value) || (0x2066...0x2069).contains(value)
        }
        guard text.unicodeScalars.contains(where: isEscaped) else { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if isEscaped(scalar) {
                let hex = String(scalar.value, radix: 16, uppercase: true)
                result.append(contentsOf: "\\u{\(hex)}".unicodeScalars)
            } else {
                result.append(scalar)
            }
        }
        return String(result)
    }

    /// `text` in double quotes, a quote in it written `\"` and a backslash `\\` (as in a
    /// JSON or Swift string literal), so that the quotes around it say where it ends:
    /// `say "hi"` is quoted as `"say \"hi\""`. A line feed or tab in it is written out as
    /// `\u{A}` or `\u{9}`, so that a quoted name stays on its line even in a message whose
    /// own line breaks are kept; other control characters are left to
    /// ``escaping(_:keepingLineBreaks:)``, which writes them out the same way.
    ///
    /// - Parameter text: The text to quote.
    /// - Returns: `text` in quotes.
    public static func quoted(_ text: String) -> String {
        // By scalar: a quote that a combining mark follows is a quote all the same.
        var result = String.UnicodeScalarView()
        result.append("\"")
        for scalar in text.unicodeScalars {
            if scalar == "\n" || scalar == "\t" {
                result.append(
                    contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
                continue
            }
            if scalar == "\"" || scalar == "\\" { result.append("\\") }
            result.append(scalar)
        }
        result.append("\"")
        return String(result)
    }
}
