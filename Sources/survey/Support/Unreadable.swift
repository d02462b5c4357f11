/// A document a command over many documents could not read (its folder, or a package or
/// file in it, may not be read, or gives an input/output error), as `--json` names it:
/// the command did everything else, and exits 1.
struct Unreadable: Encodable {
    var id, path, message: String

    /// "1 document could not be read" or "N documents could not be read".
    static func count(_ count: Int) -> String {
        count == 1 ? "1 document could not be read" : "\(count) documents could not be read"
    }
}
