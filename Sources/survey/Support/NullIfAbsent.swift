/// An optional member of a `--json` shape that is written `null` when absent: the
/// synthesized `Encodable` conformance leaves an absent optional's key out, and a key
/// that a shape always has must be there for scripts that read it.
///
/// ```swift
/// struct Row: Encodable {
///     var id: String
///     @NullIfAbsent var title: String? = nil  // "title": null
/// }
/// ```
@propertyWrapper
struct NullIfAbsent<Value: Encodable>: Encodable {
    var wrappedValue: Value?

    init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue {
            try container.encode(wrappedValue)
        } else {
            try container.encodeNil()
        }
    }
}
