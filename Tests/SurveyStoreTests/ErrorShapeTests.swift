import Diagnostics
import Foundation
import Packages
import PropertyList
import Surveys
import Testing
import Versions

@_spi(Testing) @testable import SurveyStore

/// Every error has one shape (`CategorizedError`): a code, a category, a message and,
/// where it has them, a cause, an input position and a source location; the store names
/// the operation and the document around the file layer's errors.
@Suite("One error shape")
struct ErrorShapeTests {
    @Test(
        "A save whose fsync fails names the operation and the document, with the file layer's error as cause")
    func failedSaveNamesDocument() throws {
        // A store over system calls whose fsync fails with EIO.
        var calls = SystemCalls.live
        calls.fsync = { _ in .failure(.io) }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "errors-\(UUID().uuidString)"
        ).path
        let good = try SurveyStore.create(at: path, deviceName: "laptop")
        let document = try good.create(try Survey(title: "T", items: [])).id
        let store = try SurveyStore.open(at: path, calls: calls)
        let error = try #require(throws: OperationError.self) {
            try store.save(try Survey(title: "Changed", items: []), to: document)
        }
        #expect(error.operation == .save)
        #expect(error.document == document)
        #expect(error.errorCode == "io")
        #expect(error.category == .failure)
        #expect(error.description.hasPrefix("cannot save document \(document.uuidString.lowercased()): "))
        let cause = try #require(error.cause as? FileSystemError)
        #expect(cause.operation == .fsync)
        #expect(cause.cause as? Errno == .io)
        #expect(error.sourceLocation?.file.hasPrefix("Packages/") == true)
        // Nothing was published: the document still has one revision.
        #expect(try good.graph(of: document).revisions.count == 1)
    }

    @Test("Each module's errors carry their category and code")
    func categories() throws {
        let cases: [(any CategorizedError, String, ErrorCategory)] = [
            (StoreError.noSuchDocument(UUID()), "noSuchDocument", .notFound),
            (
                StoreError.notCurrent(
                    base: RevisionID(generation: 1, digest: String(repeating: "a", count: 64)), heads: []),
                "notCurrent", .refused
            ),
            (StoreError.documentExists(UUID()), "documentExists", .refused),
            (
                StoreError.revisionTooLarge("Survey.plist", 1 << 29, limit: 1 << 28), "revisionTooLarge",
                .invalidData
            ),
            (StoreError.damagedStore("Store.plist", "x"), "damagedStore", .invalidData),
            (StoreError.noSuchPackage("/p"), "noSuchPackage", .notFound),
            (
                StoreError.noContent(RevisionID(generation: 1, digest: String(repeating: "b", count: 64))),
                "noContent", .notFound
            ),
            (
                StoreError.deletion(RevisionID(generation: 2, digest: String(repeating: "c", count: 64))),
                "deletion", .notFound
            ),
            (
                StoreError.newerFormat(
                    RevisionID(generation: 1, digest: String(repeating: "a", count: 64)), 3, supported: 2),
                "newerFormat", .invalidData
            ),
            (StoreError.unimportablePackage("/p/Survey.plist", "x"), "unimportablePackage", .invalidData),
            (StoreError.readOnly("/s"), "readOnly", .failure),
            (StoreError.storeGone("/s"), "storeGone", .notFound),
            (
                StoreError.documentsFolderBlocked("/s/Documents", .regular), "documentsFolderBlocked",
                .invalidData
            ),
            (LookupError.ambiguousDocument("ab", []), "ambiguous", .usage),
            (LookupError.noSuchDocument("ab"), "noSuchDocument", .notFound),
            (FormatError.newer(9, supported: 2), "newerFormat", .invalidData),
            (FormatError.unknown(0), "unsupportedFormat", .invalidData),
            (
                VersionsError.contentMismatch(
                    "/s/Survey.plist", RevisionID(generation: 1, digest: String(repeating: "a", count: 64))),
                "invalidRevision",
                .invalidData
            ),
            (ExportError.noSuchFolder("/x"), "noSuchFolder", .notFound),
            (DeviceNameError(name: "", reason: "empty"), "invalidDeviceName", .usage),
        ]
        for (error, code, category) in cases {
            #expect(error.errorCode == code, "\(error)")
            #expect(error.category == category, "\(error)")
            #expect(error.message == error.description, "\(error)")
        }
    }

    @Test(
        "A revision in a newer format: opening it, the winner or by id, fails naming that revision, as an error about the heads"
    )
    func newerFormatNamesTheRevision() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("newer-\(UUID().uuidString)")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try SurveyStore.create(at: path, deviceName: "laptop")
        let (id, first) = try store.create(try Survey(title: "Old", items: []))
        let newerApp = RevisionStore(root: path, device: Device(id: "new-app", name: "new app"))
        let newer = try newerApp.write(
            document: id, parents: [first], content: Data("<plist/>".utf8), formatVersion: 3)
        let expected = StoreError.newerFormat(newer.id, 3, supported: SurveyStore.formatVersion)
        for revision in [nil, newer.id] {
            let error = #expect(throws: StoreError.self) { try store.open(id, revision: revision) }
            #expect(error == expected)
            #expect(error?.description == "\(newer.id): format 3 is newer than this build supports (2)")
            #expect(error.map(SurveyStore.isAboutHeads) == true)
        }
        // The older revision still opens.
        #expect(try store.open(id, revision: first.id).survey.title == "Old")
    }

    @Test(
        "A stored revision that breaks a rule of the model: the error names its content's file, so the revision, as well as the item and rule"
    )
    func brokenRevisionNamesItsFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "broken-\(UUID().uuidString)"
        )
        .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try SurveyStore.create(at: path, deviceName: "laptop")
        let item = Item(title: "Name", kind: .textField(subtitle: nil))
        let second = Item(title: "Name", kind: .textField(subtitle: nil))
        let (id, first) = try store.create(try Survey(title: "T", items: [item]))
        // Another program wrote two items with one id (the store's own saves refuse that).
        let text = try #require(
            String(data: try Survey(title: "T", items: [item, second]).plistData(), encoding: .utf8))
        let twice = Data(
            text.replacingOccurrences(of: second.id.uuidString, with: item.id.uuidString)
                .replacingOccurrences(
                    of: second.id.uuidString.lowercased(), with: item.id.uuidString.lowercased()
                ).utf8)
        let other = RevisionStore(root: path, device: Device(id: "other", name: "other app"))
        let broken = try other.write(
            document: id, parents: [first], content: twice, formatVersion: SurveyStore.formatVersion)
        // Named by its path in the store, as damage to it is.
        let file = path + "/Documents/\(id.uuidString.lowercased())/\(broken.id).survey/Survey.plist"
        let error = #expect(throws: SurveyError.self) { try store.open(id, revision: broken.id) }
        #expect(error?.rule == .duplicateID)
        #expect(error?.file == file)
        #expect(
            error?.description.hasPrefix("\(file): item 2 (\"Name\"): ") == true,
            "\(error.map(String.init(describing:)) ?? "")")
        // verify names the whole path once, not the file twice.
        let problems = store.verify().filter { !$0.isNote }
        #expect(problems.count == 1)
        #expect(problems.first?.path.hasSuffix(file) == true)
        #expect(problems.first?.message.hasPrefix("item 2 (\"Name\"): ") == true, "\(problems)")
    }

    @Test("Errors about input carry the file, line and column; the message leaves them out")
    func inputLocation() throws {
        let error = try #require(throws: PropertyListError.self) {
            _ = try PropertyList(
                xml: Data("<plist version=\"1.0\">\n<dict><key>a</key></dict></plist>".utf8), file: "in.plist"
            )
        }
        let shaped: any CategorizedError = error
        #expect(shaped.inputLocation?.file == "in.plist")
        #expect(shaped.inputLocation?.line == 2)
        #expect(shaped.inputLocation?.column != nil)
        #expect(!shaped.message.hasPrefix("in.plist"))
        #expect(shaped.description.hasPrefix("in.plist:2:"))
    }
}
