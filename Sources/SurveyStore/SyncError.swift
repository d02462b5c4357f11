/// A sync that cannot be made.
public enum SyncError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The other store is this store itself (the same folder, under this path): a
    /// sync, or a repair from a copy, needs two stores.
    case sameStore(String)

    /// The message, naming the path given.
    public var description: String {
        switch self {
        case .sameStore(let path): "\(path) is this store itself; sync and repair need another store"
        }
    }
}
