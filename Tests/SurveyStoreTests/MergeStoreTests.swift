import Foundation
import Surveys
import Testing
import Versions

@_spi(Testing) @testable import SurveyStore

@Suite("resolve --merge in a store: format-1 revisions, pruned bases")
struct MergeStoreTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/formats").path
    static let document = UUID(uuidString: "5A1D1E7C-0B7E-4F0A-9C3B-2F6E8D9A0009")!

    static func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "merge-store-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test(
        "A format-1 head (an older app's edit) merges with a format-2 head: its items are matched to the base's by position"
    )
    func formatOneHeads() throws {
        let path = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try SurveyStore.create(at: path, deviceName: "new app")
        let content = try String(
            contentsOfFile: Self.fixtures + "/format1/answered.survey/Survey.plist", encoding: .utf8)
        let oldApp = RevisionStore(
            root: path, device: Device(id: "old-app-1", name: "old app"), wallClock: { 1_560_000_000_000 })
        let base = try oldApp.write(
            document: Self.document, parents: [], content: Data(content.utf8), formatVersion: 1)
        // The older app edits "Your name"; this app edits the title of the first item.
        let edited = content.replacingOccurrences(of: "<string>Ada</string>", with: "<string>Grace</string>")
        #expect(edited != content)
        let oldHead = try oldApp.write(
            document: Self.document, parents: [base], content: Data(edited.utf8), formatVersion: 1)
        var survey = try store.survey(Self.document, base)
        let first = survey.items[0]
        survey = try Survey(
            title: survey.title,
            items: [Item(id: first.id, title: "Back soon?", kind: first.kind, answer: first.answer)]
                + survey.items.dropFirst())
        _ = try store.save(survey, to: Self.document, base: base.id)

        let plan = try #require(try store.mergePlan(Self.document))
        #expect(plan.base?.id == base.id && !plan.isTwoWay)
        let result = try #require(plan.result)
        #expect(result.isClean, "\(result.contested.map(\.field))")
        #expect(result.survey.items.count == survey.items.count)
        #expect(result.survey.items.map(\.id) == survey.items.map(\.id), "the base's derived ids")
        #expect(result.survey.items[0].title == "Back soon?")
        let name = try #require(result.survey.items.first { $0.title == "Your name" })
        #expect(name.answer == .text("Grace"))
        // Without matching by position, the older app's head would bring its own ids.
        let unmatched = try store.survey(Self.document, oldHead)
        #expect(Set(unmatched.items.map(\.id)).isDisjoint(with: survey.items.map(\.id)))
        let written = try #require(try store.resolve(Self.document, .merge(prefer: nil)))
        #expect(written.parents.count == 2 && written.formatVersion == SurveyStore.formatVersion)
        #expect(store.verify().isEmpty)
    }
}
