import Foundation
import Surveys
import TestSupport
import Testing
import Versions

@testable import SurveyStore

#if canImport(Glibc)
    import Glibc
#endif

/// Names that are not UTF-8 (left by a system that names files in another encoding, or
/// copied from one by rsync) are names a `String` cannot hold: what the store removes, it
/// removes with them.
@Suite("Names that are not UTF-8")
struct UndecodableNameTests {
    /// Makes `name`'s bytes in `folder`: a file, or a folder holding a file.
    static func make(_ name: [UInt8], in folder: String, folderWithFile: Bool = false) throws {
        let path = Array(folder.utf8) + [UInt8(ascii: "/")] + name
        func call(_ bytes: [UInt8], _ body: (UnsafePointer<CChar>) -> Int32) -> Int32 {
            (bytes + [0]).withUnsafeBufferPointer {
                $0.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) }
            }
        }
        if folderWithFile {
            try #require(call(path) { mkdir($0, 0o755) } == 0)
            let inside = call(path + Array("/inside".utf8)) { open($0, O_CREAT | O_WRONLY, 0o644) }
            try #require(inside >= 0)
            close(inside)
        } else {
            let file = call(path) { open($0, O_CREAT | O_WRONLY, 0o644) }
            try #require(file >= 0)
            close(file)
        }
    }

    @Test(
        "prune removes a package holding entries whose names are not UTF-8, and writes go on: the removal failed ('Directory not empty'), and every later write failed finishing it"
    )
    func pruneRemovesUndecodableNames() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("undecodable-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = try SurveyStore.create(at: root, deviceName: "laptop")
        let (id, first) = try store.create(try Survey(title: "First", items: []))
        let head = try store.save(try Survey(title: "Head", items: []), to: id, base: first.id)
        let package = root + "/" + StoreLayout.package(first.id, of: id)
        try Self.make([0xFF, 0xFE] + Array(".txt".utf8), in: package)
        try Self.make([0x63, 0x61, 0x66, 0xE9], in: package, folderWithFile: true)
        // And in the temporary folder, which every command that writes empties first.
        try Self.make([0xE9, 0x74, 0xE9], in: root + "/Local.nosync/tmp", folderWithFile: true)

        let prune = try CommandRunner.run(["prune", "--store", root])
        #expect(prune.status == 0, "\(prune.stderr)")
        #expect(!FileManager.default.fileExists(atPath: package))
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/Local.nosync/tmp").isEmpty)
        let edit = try CommandRunner.run(["edit", id.uuidString, "--title", "Later", "--store", root])
        #expect(edit.status == 0, "\(edit.stderr)")
        let verify = try CommandRunner.run(["verify", "--store", root])
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
        #expect(try SurveyStore.openForReading(at: root).revision(id).parents == [head.id])
    }
}
