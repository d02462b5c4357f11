import Foundation

/// A seeded random number generator (SplitMix64), shared by every test target: the same
/// seed gives the same values everywhere, so a failing random run can be replayed. Tests
/// print their seed and take `SURVEYSTORE_SEED` to replay one.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    /// The seed this run uses: `SURVEYSTORE_SEED` when set, else `fallback`.
    public static func seed(fallback: UInt64) -> UInt64 {
        ProcessInfo.processInfo.environment["SURVEYSTORE_SEED"].flatMap(UInt64.init) ?? fallback
    }

    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
