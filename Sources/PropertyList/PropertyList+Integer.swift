extension PropertyList {
    /// An integer in the range property lists can carry: −2^63…2^64−1.
    ///
    /// Neither `Int64` nor `UInt64` covers that range alone, so the value is kept as a
    /// sign and a magnitude.
    public struct Integer: Sendable, Hashable, Comparable, CustomStringConvertible,
        ExpressibleByIntegerLiteral
    {
        /// Whether the value is below zero. Zero is never negative.
        public let isNegative: Bool
        /// The absolute value; at most 2^63 when ``isNegative`` is true.
        public let magnitude: UInt64

        /// The smallest value a property list can carry, −2^63.
        public static let min = Integer(Int64.min)
        /// The largest value a property list can carry, 2^64−1.
        public static let max = Integer(UInt64.max)

        /// Creates an integer from a signed value.
        public init(_ value: Int64) {
            isNegative = value < 0
            magnitude = value.magnitude
        }

        /// Creates an integer from an unsigned value.
        public init(_ value: UInt64) {
            isNegative = false
            magnitude = value
        }

        /// Creates an integer from any binary integer, or `nil` when it is out of range.
        public init?<T: BinaryInteger>(exactly value: T) {
            if value < 0 {
                guard let signed = Int64(exactly: value) else { return nil }
                self.init(signed)
            } else {
                guard let unsigned = UInt64(exactly: value) else { return nil }
                self.init(unsigned)
            }
        }

        /// Creates an integer from a sign and a magnitude, or `nil` when out of range.
        public init?(isNegative: Bool, magnitude: UInt64) {
            if isNegative {
                guard magnitude <= UInt64(1) << 63 else { return nil }
                self.isNegative = magnitude != 0
            } else {
                self.isNegative = false
            }
            self.magnitude = magnitude
        }

        public init(integerLiteral value: Int64) {
            self.init(value)
        }

        /// The integer UTF-8 `bytes` give as `<integer>`'s text, exactly as the XML reader
        /// reads it; `nil` when they give none.
        package init?(xmlText bytes: UnsafeBufferPointer<UInt8>) {
            guard let value = try? ScalarParsing.integer(bytes) else { return nil }
            self = value
        }

        /// The value as an `Int64`, or `nil` when it is above `Int64.max`.
        public var int64Value: Int64? {
            if isNegative {
                return magnitude == UInt64(1) << 63 ? Int64.min : -Int64(magnitude)
            }
            return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
        }

        /// The value as a `UInt64`, or `nil` when it is negative.
        public var uint64Value: UInt64? {
            isNegative ? nil : magnitude
        }

        /// The value converted exactly to `T`, or `nil` when `T` cannot hold it.
        public func exactly<T: BinaryInteger>(_: T.Type = T.self) -> T? {
            if isNegative {
                guard let value = int64Value else { return nil }
                return T(exactly: value)
            }
            return T(exactly: magnitude)
        }

        /// The decimal digits, with a leading `-` when negative.
        public var description: String {
            isNegative ? "-\(magnitude)" : "\(magnitude)"
        }

        public static func < (lhs: Integer, rhs: Integer) -> Bool {
            switch (lhs.isNegative, rhs.isNegative) {
            case (true, false): true
            case (false, true): false
            case (true, true): lhs.magnitude > rhs.magnitude
            case (false, false): lhs.magnitude < rhs.magnitude
            }
        }
    }
}
