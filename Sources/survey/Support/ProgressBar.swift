import Foundation  // (isatty and ioctl come with it, from the C library)

/// A progress line for long work, shown only when standard error is a terminal (and
/// never with `--json`), and only for work of at least `threshold` steps. The line is
/// sized to the terminal's width, so it never wraps.
struct ProgressBar {
    let enabled: Bool
    let label: String

    init(label: String, json: Bool) {
        self.label = label
        enabled = !json && isatty(2) == 1
    }

    /// The width of the terminal on standard error: the window size the terminal driver
    /// reports (`TIOCGWINSZ`), else `$COLUMNS`, else 80.
    static var columns: Int {
        var size = winsize()
        if ioctl(2, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        if let text = ProcessInfo.processInfo.environment["COLUMNS"], let columns = Int(text), columns > 0 {
            return columns
        }
        return 80
    }

    /// The line for `done` of `total` steps, at most `columns - 1` characters wide: the
    /// count and label, and a bar in the room that is left (none on a very narrow
    /// terminal).
    static func line(_ done: Int, of total: Int, label: String, columns: Int) -> String {
        let text = " \(done)/\(total) \(label)"
        let room = columns - 1 - text.count - 2
        guard room >= 5 else { return String(String(text.dropFirst()).prefix(max(columns - 1, 0))) }
        let width = min(room, 40)
        let filled = total == 0 ? width : width * min(done, total) / total
        return "[\(String(repeating: "#", count: filled))\(String(repeating: " ", count: width - filled))]"
            + text
    }

    func update(_ done: Int, of total: Int, threshold: Int = 20) {
        guard enabled, total >= threshold else { return }
        Console.progress("\r" + Self.line(done, of: total, label: label, columns: Self.columns) + "\u{1B}[K")
        if done == total { Console.progress("\n") }
    }

    /// Clears the progress line, so that a line of output can be printed in its place.
    func clear() {
        guard enabled else { return }
        Console.progress("\r\u{1B}[K")
    }
}
