import Foundation
import Testing

@testable import Packages

/// Which paths the system-call layer opens beneath its root's descriptor, and as what.
@Suite("Paths beneath the root")
struct PathBeneathRootTests {
    @Test("A path is beneath the root when its bytes start with the root's and a slash")
    func beneath() {
        let cases: [(path: String, root: String, relative: String?)] = [
            ("/s/store/Documents/a", "/s/store", "Documents/a"),
            ("/s/store//Documents", "/s/store", "Documents"),
            ("/s/store/", "/s/store", "."),
            ("/s/store", "/s/store", nil),
            ("/s/storage/x", "/s/store", nil),
            ("/s", "/s/store", nil),
            ("/s/store/x", "/s/store/", "x"),
            ("/s/store/", "/s/store/", "."),
            ("relative/x", "relative", "x"),
            // Names are bytes: another normalisation of the root is another folder, and a
            // combining mark after the slash belongs to the name beneath.
            ("/s/cafe\u{301}/x", "/s/caf\u{E9}", nil),
            ("/s/caf\u{E9}/\u{301}x", "/s/caf\u{E9}", "\u{301}x"),
        ]
        for (path, root, relative) in cases {
            #expect(System.relative(path, beneath: root) == relative, "\(path) beneath \(root)")
        }
    }
}
