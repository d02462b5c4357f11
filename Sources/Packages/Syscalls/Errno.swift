#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An error number returned by a system call.
///
/// A small value type of the package's own rather than swift-system's `Errno`: the file
/// layer makes its calls through ``SystemCalls`` (so tests can inject faults) and needs
/// nothing else from swift-system.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    /// The raw `errno` value.
    public let rawValue: Int32

    public init(_ rawValue: Int32) { self.rawValue = rawValue }

    /// The current thread's `errno`.
    static var current: Errno { Errno(errno) }

    public static let interrupted = Errno(EINTR)
    public static let exists = Errno(EEXIST)
    public static let noEntry = Errno(ENOENT)
    public static let io = Errno(EIO)
    public static let noSpace = Errno(ENOSPC)
    public static let wouldBlock = Errno(EAGAIN)
    public static let invalid = Errno(EINVAL)
    public static let notSupported = Errno(ENOSYS)
    public static let notEmpty = Errno(ENOTEMPTY)
    public static let accessDenied = Errno(EACCES)
    public static let notDirectory = Errno(ENOTDIR)
    public static let isDirectory = Errno(EISDIR)
    public static let badDescriptor = Errno(EBADF)
    /// `EPERM`: the operation is not permitted.
    public static let notPermitted = Errno(EPERM)
    /// `EDQUOT`: the user's disk quota is used up (its number differs between systems).
    public static let quotaExceeded = Errno(EDQUOT)
    /// `EROFS`: the file system is mounted read-only.
    public static let readOnlyFileSystem = Errno(EROFS)
    /// `ELOOP`: a symbolic link where none may be followed.
    public static let symbolicLinkLoop = Errno(ELOOP)
    /// `ENXIO`: no such device, as opening a socket gives.
    public static let noDevice = Errno(ENXIO)

    /// The system's text for the error, as `strerror` gives it.
    public var description: String { String(cString: strerror(rawValue)) }
}
