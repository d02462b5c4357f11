import Foundation

/// Short, human descriptions of file-access errors.
enum FileProblem {
    static func describe(_ error: any Error) -> String {
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError,
            underlying.domain == NSPOSIXErrorDomain
        {
            return String(cString: strerror(Int32(underlying.code)))
        }
        switch nsError.code {
        case NSFileReadNoSuchFileError: return "no such file"
        case NSFileReadNoPermissionError: return "permission denied"
        // Foundation's words for what it could not say better (an empty path, say).
        case NSFileReadUnknownError: return "no file could be read there"
        default: return nsError.localizedDescription
        }
    }
}
