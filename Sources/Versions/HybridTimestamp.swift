import Foundation
import PropertyList

/// A hybrid-logical-clock timestamp: wall-clock milliseconds since 1970 and a counter
/// that orders events within the same millisecond.
///
/// Timestamps compare by milliseconds, then counter. A revision's timestamp is made by
/// ``HybridClock/next(after:)``, which is never earlier than any of its parents', even when
/// the device's clock is behind.
public struct HybridTimestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Milliseconds since 1970, from the wall clock or a parent's stamp.
    public var milliseconds: Int64
    /// Orders stamps within one millisecond.
    public var counter: Int

    /// Creates a stamp.
    public init(milliseconds: Int64, counter: Int = 0) {
        self.milliseconds = milliseconds
        self.counter = counter
    }

    /// The wall-clock part as a date.
    public var date: Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }

    public static func < (lhs: HybridTimestamp, rhs: HybridTimestamp) -> Bool {
        (lhs.milliseconds, lhs.counter) < (rhs.milliseconds, rhs.counter)
    }

    /// `2026-11-20T10:00:00.123Z+2`.
    public var description: String {
        ISO8601Date.string(from: date, fractionDigits: 3) + (counter > 0 ? "+\(counter)" : "")
    }
}

/// A hybrid logical clock for one device.
///
/// `next(after:)` returns a timestamp later than every parent it trusts and than anything
/// this clock gave or saw before, and as close to the wall clock as that allows. A
/// parent more than ``maximumDrift`` ahead of the wall clock is not trusted: the child
/// does not inherit its stamp. Timestamps
/// arriving from other devices advance the clock through ``observe(_:)``, unless they
/// lie further in the future than ``maximumDrift``: those are flagged, not trusted.
public struct HybridClock: Sendable {
    /// How far ahead of the local wall clock a received timestamp may be before it is
    /// treated as suspect.
    public static let maximumDrift: Int64 = 24 * 60 * 60 * 1000

    /// The latest timestamp given or accepted.
    public private(set) var latest: HybridTimestamp
    private let wallClock: @Sendable () -> Int64

    /// - Parameters:
    ///   - latest: The last timestamp this device used (persisted between runs).
    ///   - wallClock: Milliseconds since 1970; the system clock by default.
    public init(
        latest: HybridTimestamp = HybridTimestamp(milliseconds: 0),
        wallClock: @escaping @Sendable () -> Int64 = {
            Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        }
    ) {
        self.latest = latest
        self.wallClock = wallClock
    }

    /// A timestamp for a new revision with `parents`' timestamps.
    public mutating func next(after parents: [HybridTimestamp] = []) -> HybridTimestamp {
        let floor = ([latest] + parents.filter { !isFarAhead($0) }).max()!
        let wall = wallClock()
        // A parent stamped far in the future is not trusted: its child takes this
        // device's clock instead of inheriting the stamp, so a revision from a device
        // whose clock ran ahead cannot make every later edit win every conflict.
        let result =
            wall > floor.milliseconds
            ? HybridTimestamp(milliseconds: wall, counter: 0) : Self.tick(after: floor)
        latest = result
        return result
    }

    /// The timestamp right after `timestamp`: one more on the counter, or the next
    /// millisecond once the counter reaches 2^31 − 1 (so that it never overflows); the
    /// last stamp metadata can hold (the end of the year 9999, the counter at its limit)
    /// stays as it is, so that revisions on top of heads stamped there (a clock gone far
    /// wrong) can still be written: a resolution is then stamped like its newest head,
    /// which it supersedes all the same.
    static func tick(after timestamp: HybridTimestamp) -> HybridTimestamp {
        if timestamp.counter < RevisionMetadata.counterRange.upperBound {
            return HybridTimestamp(milliseconds: timestamp.milliseconds, counter: timestamp.counter + 1)
        }
        if timestamp.milliseconds < RevisionMetadata.millisecondRange.upperBound {
            return HybridTimestamp(milliseconds: timestamp.milliseconds + 1, counter: 0)
        }
        return timestamp
    }

    /// Advances the clock past a timestamp seen on another device; returns `false` (and
    /// ignores it) when it is suspiciously far in the future.
    @discardableResult
    public mutating func observe(_ timestamp: HybridTimestamp) -> Bool {
        guard !isFarAhead(timestamp) else { return false }
        if timestamp > latest { latest = timestamp }
        return true
    }

    /// Whether `timestamp` lies more than ``maximumDrift`` ahead of the wall clock.
    public func isFarAhead(_ timestamp: HybridTimestamp) -> Bool {
        timestamp.milliseconds > wallClock() + Self.maximumDrift
    }
}
