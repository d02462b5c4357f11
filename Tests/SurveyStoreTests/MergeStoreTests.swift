import Foundation
import Packages
import Surveys
import Synchronization
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
        "A merge preferring a head that records a deletion is refused, writing nothing: a deletion changes no field"
    )
    func preferDeletion() throws {
        let path = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try SurveyStore.create(at: path, deviceName: "laptop")
        let (id, base) = try store.create(try Survey(title: "Base", items: []))
        _ = try store.save(try Survey(title: "One", items: []), to: id, base: base.id)
        _ = try store.save(try Survey(title: "Two", items: []), to: id, base: base.id)
        let deletion = try store.delete(id, base: base.id)
        let heads = try store.graph(of: id).heads
        #expect(heads.count == 3 && heads.contains { $0.id == deletion.id })
        for dryRun in [true, false] {
            let refused = try #require(throws: StoreError.self) {
                try store.resolveMerge(id, prefer: deletion.id, dryRun: dryRun)
            }
            #expect(refused == .noSuchRevision("\(deletion.id) among the heads that are not deletions"))
        }
        #expect(try store.graph(of: id).heads == heads)
        #expect(try store.resolveMerge(id, prefer: heads.first { !$0.isDeleted }!.id) != nil)
    }

    @Test(
        "A merge that would hold more than 100,000 items is refused, dry run or not, and nothing is written (it wrote a resolution no reader takes, and the document's winner could no longer be read); conflicts counts it as one that cannot be merged"
    )
    func mergeOverTheItemLimit() throws {
        let path = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try SurveyStore.create(at: path, deviceName: "here")
        let (id, base) = try store.create(try Survey(title: "Many", items: []))
        func items(_ count: Int, _ prefix: String) -> [Item] {
            (0..<count).map { Item(title: "\(prefix) \($0)", kind: .textOnly(text: nil)) }
        }
        let half = Survey.maximumItemCount / 2
        _ = try store.save(try Survey(title: "Many", items: items(half + 1, "A")), to: id, base: base.id)
        _ = try store.save(try Survey(title: "Many", items: items(half, "B")), to: id, base: base.id)
        let heads = try store.graph(of: id).heads.map(\.id)
        #expect(heads.count == 2)
        for dryRun in [true, false] {
            let error = #expect(throws: SurveyError.self) { try store.resolveMerge(id, dryRun: dryRun) }
            #expect(error?.rule == .tooManyItems, "\(String(describing: error))")
            #expect(
                error?.message.hasPrefix(
                    "the merge of the heads would hold 100001 items; a survey has at most 100000")
                    == true, "\(String(describing: error))")
        }
        // `conflicts` says it cannot be merged, rather than that it merges cleanly.
        #expect(try store.contestedFieldCount(of: id) == nil)
        #expect(throws: SurveyError.self) { try store.mergePlan(id) }
        #expect(try store.graph(of: id).heads.map(\.id) == heads)
        // The winner (the newer save) still reads.
        #expect(try store.open(id).survey.items.count == half)
        #expect(store.verify().isEmpty)
    }

    @Test(
        "Beside a package that cannot be read yet, a conflict is not merged by mergePlan or resolveMerge (unseenForMerge) and contestedFieldCount(of:) has no count; unseenRevisions(of:) names the package"
    )
    func unseenPackageKeepsTheMergeWaiting() throws {
        let path = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try SurveyStore.create(at: path, deviceName: "here")
        let (id, base) = try store.create(try Survey(title: "Base", items: []))
        _ = try store.save(try Survey(title: "One", items: []), to: id, base: base.id)
        _ = try store.save(
            try Survey(title: "Base", items: [Item(title: "Two", kind: .textOnly(text: nil))]), to: id,
            base: base.id)
        #expect(try store.contestedFieldCount(of: id) == 0)
        #expect(try store.unseenRevisions(of: id).isEmpty)
        let content = path + "/" + StoreLayout.package(base.id, of: id) + "/" + StoreLayout.contentFile
        try FileManager.default.removeItem(atPath: content)
        #expect(try store.unseenRevisions(of: id) == [base.id])
        #expect(try store.contestedFieldCount(of: id) == nil)
        for attempt in [{ _ = try store.mergePlan(id) }, { _ = try store.resolveMerge(id, dryRun: true) }] {
            let error = #expect(throws: StoreError.self) { try attempt() }
            guard case .unseenForMerge(id, [base.id])? = error else {
                Issue.record("\(String(describing: error))")
                continue
            }
        }
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

    @Test(
        "An I/O error reading the merge base's content fails the merge; it is not taken for a base without content (a two-way merge, contesting everything), and contestedFieldCount throws it rather than answer nil (cannot be merged)"
    )
    func ioErrorReadingTheBase() throws {
        let path = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try SurveyStore.create(at: path, deviceName: "here")
        let title = Item(title: "Name", kind: .textField(subtitle: nil))
        let rate = Item(title: "Rate", kind: .slider(minimum: 0, maximum: 10, roundToInteger: true))
        let (id, base) = try store.create(try Survey(title: "Base", items: [title, rate]))
        var one = title, other = rate
        one.answer = .text("Ada")
        other.answer = .number(7)
        _ = try store.save(try Survey(title: "Base", items: [one, rate]), to: id, base: base.id)
        _ = try store.save(try Survey(title: "Base", items: [title, other]), to: id, base: base.id)
        let clean = try #require(try store.mergePlan(id))
        #expect(clean.base?.id == base.id && clean.result?.isClean == true)
        // The next content read (the base's, read first) fails with EIO.
        let armed = Atomic<Bool>(true)
        var calls = SystemCalls.live
        calls.openat = { directory, name, flags, mode in
            if name.hasSuffix(StoreLayout.contentFile),
                armed.compareExchange(expected: true, desired: false, ordering: .sequentiallyConsistent)
                    .exchanged
            {
                return .failure(.io)
            }
            return SystemCalls.live.openat(directory, name, flags, mode)
        }
        let failing = try SurveyStore.open(at: path, calls: calls)
        let error = #expect(throws: FileSystemError.self) { try failing.mergePlan(id) }
        #expect(error?.errno == .io, "\(String(describing: error))")
        let fired = !armed.load(ordering: .sequentiallyConsistent)
        #expect(fired, "the hook did not run")
        #expect(try store.graph(of: id).heads.count == 2)
        // contestedFieldCount passes the failure on: `nil` would say the heads cannot be
        // merged, which an input/output error does not tell.
        armed.store(true, ordering: .sequentiallyConsistent)
        let counted = #expect(throws: FileSystemError.self) { try failing.contestedFieldCount(of: id) }
        #expect(counted?.errno == .io, "\(String(describing: counted))")
        // So does its form for a graph read already, whose failure is the base's content.
        let graph = try store.graph(of: id)
        armed.store(true, ordering: .sequentiallyConsistent)
        let countedInGraph = #expect(throws: FileSystemError.self) {
            try failing.contestedFieldCount(of: id, in: graph)
        }
        #expect(countedInGraph?.errno == .io, "\(String(describing: countedInGraph))")
        #expect(try failing.contestedFieldCount(of: id) == 0, "the heads merge cleanly once they can be read")
        #expect(try failing.contestedFieldCount(of: id, in: graph) == 0)
    }
}
