import Packages
import SurveyStore

/// A document a command over many documents could not read (its folder, or a package or
/// file in it, may not be read, or gives an input/output error), as `--json` names it:
/// the command did everything else, and exits 1.
struct Unreadable: Encodable {
    var id, path, message: String

    /// `issue`, about document `id` (by default the one whose folder it names), with its
    /// message as the command line says it (``Advice/message(of:)``).
    init(_ issue: StoreIssue, id: String? = nil) {
        self.id = id ?? SafeName.lastComponent(of: issue.path)
        path = issue.path
        message = Advice.message(of: issue)
    }

    /// "1 document could not be read" or "N documents could not be read".
    static func count(_ count: Int) -> String {
        documents(count) + " could not be read"
    }

    /// "1 document" or "N documents".
    static func documents(_ count: Int) -> String {
        count == 1 ? "1 document" : "\(count) documents"
    }

    /// The documents a listing's `issues` say could not be looked at, whole or in part
    /// (``StoreIssue/isFailureToLook``), by folder.
    static func folders(among issues: [StoreIssue]) -> Set<String> {
        Set(issues.filter(\.isFailureToLook).map(\.path))
    }

    /// Ends a listing that left out, or could not look at all of, `count` documents: it
    /// says the listing is incomplete and exits 1; nothing when `count` is 0.
    static func endListing(leavingOut count: Int) throws {
        guard count > 0 else { return }
        Console.error("error: \(Unreadable.count(count)), so this listing is incomplete")
        throw ExitStatus.failure
    }
}
