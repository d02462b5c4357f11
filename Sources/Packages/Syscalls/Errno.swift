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

    /// Wraps a raw `errno` value.
    public init(_ rawValue: Int32) { self.rawValue = rawValue }

    /// The current thread's `errno`.
    static var current: Errno { Errno(errno) }

    /// `EINTR`: a signal interrupted the call.
    public static let interrupted = Errno(EINTR)
    /// `EEXIST`: the name exists already.
    public static let exists = Errno(EEXIST)
    /// `ENOENT`: no such file or folder.
    public static let noEntry = Errno(ENOENT)
    /// `EIO`: an input/output error.
    public static let io = Errno(EIO)
    /// `ENOSPC`: no space left on the device.
    public static let noSpace = Errno(ENOSPC)
    /// `EAGAIN`: the call would block (a lock held elsewhere).
    public static let wouldBlock = Errno(EAGAIN)
    /// `EINVAL`: an invalid argument.
    public static let invalid = Errno(EINVAL)
    /// `ENOSYS`: the system does not have the call.
    public static let notSupported = Errno(ENOSYS)
    /// `ENOTEMPTY`: the folder is not empty.
    public static let notEmpty = Errno(ENOTEMPTY)
    /// `EACCES`: permission denied.
    public static let accessDenied = Errno(EACCES)
    /// `ENOTDIR`: a path component is not a folder.
    public static let notDirectory = Errno(ENOTDIR)
    /// `EISDIR`: a folder where a file was expected.
    public static let isDirectory = Errno(EISDIR)
    /// `EBADF`: not an open descriptor.
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
