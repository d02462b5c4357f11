import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A progress line for long work, shown only when standard error is a terminal (and
/// never with `--json`), and only for work of at least `threshold` steps.
struct ProgressBar {
    let enabled: Bool
    let label: String

    init(label: String, json: Bool) {
        self.label = label
        enabled = !json && isatty(2) == 1
    }

    func update(_ done: Int, of total: Int, threshold: Int = 20) {
        guard enabled, total >= threshold else { return }
        let width = 30
        let filled = total == 0 ? width : width * done / total
        Console.progress("\r[\(String(repeating: "#", count: filled))\(String(repeating: " ", count: width - filled))] \(done)/\(total) \(label)")
        if done == total { Console.progress("\n") }
    }
}
