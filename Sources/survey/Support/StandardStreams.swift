import CSystemShims
import Foundation

/// Standard input, output and error, made safe before the command opens anything, and
/// standard output checked when the process ends.
enum StandardStreams {
    /// Puts `/dev/null` in the place of each of standard input, output and error that was
    /// closed when the process started (`survey list >&-`, a service started without them),
    /// opened so that it behaves as the closed descriptor did: standard output and error
    /// cannot be written (`EBADF`), standard input cannot be read.
    ///
    /// A closed descriptor's number is the first one the next `open` returns: without this,
    /// a store's folder or a revision's file could be opened as descriptor 1 or 2, and every
    /// line or message meant for the closed stream would be written into it.
    static func occupyClosed() {
        for descriptor: Int32 in 0...2 where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
            // The lowest free number: this one, those below it being open now.
            let opened = open("/dev/null", descriptor == 0 ? O_WRONLY : O_RDONLY)
            if opened > descriptor {
                dup2(opened, descriptor)
                close(opened)
            }
        }
    }

    /// Has the process, as it ends, write out what it holds for standard output (the text
    /// printed through `print`) and, when that write or an earlier one failed (standard
    /// output closed, a full disk, a reader gone while SIGPIPE is ignored), say so on
    /// standard error and end with exit 1, as a failed write of JSON does
    /// (``Console/write(_:)``), rather than end as if all had been written.
    static func checkOutputAtExit() {
        atexit {
            let failure = cshim_flush_stdout()
            guard failure != 0 else { return }
            let reason = failure > 0 ? String(cString: strerror(failure)) : "a write failed earlier"
            let message = Array("error: cannot write to standard output: \(reason)\n".utf8)
            _ = message.withUnsafeBytes { Foundation.write(STDERR_FILENO, $0.baseAddress, $0.count) }
            _exit(ExitStatus.failure.rawValue)
        }
    }
}
