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

extension PathBeneathRootTests {
    @Test("A path's folder and last name are split at its last slash byte")
    func lastSlash() {
        let cases: [(path: String, parent: String, name: String)] = [
            ("/s/store/Documents", "/s/store", "Documents"),
            ("name", ".", "name"),
            ("/top", "/", "top"),
            // A combining mark after the slash is the first character of the name, not
            // part of the slash.
            ("/s/\u{301}x", "/s", "\u{301}x"),
            ("caf\u{E9}/\u{301}", "caf\u{E9}", "\u{301}"),
        ]
        for (path, parent, name) in cases {
            #expect(System.parent(of: path) == parent, "the folder of \(path)")
            #expect(System.lastComponent(of: path) == name, "the name of \(path)")
        }
    }

    @Test(
        "SafeName's folder, trailing slashes and components of a path find slashes among its bytes, a combining mark after one too"
    )
    func safeNamePathHelpers() {
        let cases: [(path: String, folder: String?, trimmed: String)] = [
            ("/s/store/Documents/", "/s/store", "/s/store/Documents"),
            ("new//", nil, "new"),
            ("/top", "/", "/top"),
            ("/", "/", "/"),
            ("a//b", "a", "a//b"),
            ("/s/\u{301}x/", "/s", "/s/\u{301}x"),
            ("/s/\u{301}x/\u{301}y", "/s/\u{301}x", "/s/\u{301}x/\u{301}y"),
        ]
        for (path, folder, trimmed) in cases {
            #expect(SafeName.folder(holding: path) == folder, "the folder of \(path)")
            #expect(SafeName.withoutTrailingSlashes(path) == trimmed, "\(path) without trailing slashes")
        }
        #expect(SafeName.components(of: "/s//Documents/\u{301}x/") == ["s", "Documents", "\u{301}x"])
    }

    @Test("A status beneath a folder is never looked up through a link, whatever follows the slash")
    func statusBeneathFolder() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "path-beneath-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: root + "/real", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        try Data("xyz".utf8).write(to: URL(fileURLWithPath: root + "/real/\u{301}f"))
        try FileManager.default.createSymbolicLink(atPath: root + "/\u{301}a", withDestinationPath: "real")
        let descriptor = open(root, O_RDONLY | O_DIRECTORY)
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        let direct = try SystemCalls.live.stat(descriptor, "real/\u{301}f").get()
        #expect(direct.kind == .regular && direct.size == 3)
        // The folder's name is a link: refused, though a combining mark follows the slash.
        guard case .failure = SystemCalls.live.stat(descriptor, "\u{301}a/\u{301}f") else {
            Issue.record("a file was looked up through a link")
            return
        }
    }
}
