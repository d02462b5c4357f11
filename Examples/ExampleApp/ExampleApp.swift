// An app's use of SurveyStore, as README's "Using the library" tells it: every README
// snippet is in this file (a test checks), and this target is built with warnings as
// errors under Swift 6 strict concurrency.
//
// Run: swift run ExampleApp [FOLDER]   (default: a temporary folder, removed at the end)

import Foundation
import SurveyStore

/// Fails the example with a message (exit 1).
func check(_ condition: Bool, _ message: String) {
    if !condition {
        FileHandle.standardError.write(Data("ExampleApp: \(message)\n".utf8))
        exit(1)
    }
}

/// The app: one store on this device ("Laptop"), another device ("Phone") editing the
/// same document offline, a conflict merged item by item.
@main
struct ExampleApp {
    static func main() async throws {
        let arguments = CommandLine.arguments.dropFirst()
        let temporary = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ExampleApp-\(UUID().uuidString)")
        let folder = arguments.first ?? temporary.path
        let laptopPath = folder + "/Laptop"
        let phonePath = folder + "/Phone"

        // MARK: Open a store

        // A store is Sendable: one value serves every task of the app. The async forms of its
        // calls wait for the disk on a queue of the library's, never on the caller's executor.
        let store = try await SurveyStore.create(at: laptopPath, deviceName: "Laptop")

        // MARK: Observe the store

        let changes = try store.changes()  // or store.changes(of: id): one document
        // A task that prefers the watch's own thread gets each change without waking another.
        let observer = Task(executorPreference: changes.executor) {
            for try await change in changes {  // ends when the task is cancelled
                switch change.kind {
                case .reread: print("read everything again")  // the kernel's queue overflowed
                case .conflictAppeared: print("conflict in", change.document!, "heads:", change.heads)
                default: print(change)  // created, revisionAdded, conflictResolved, deleted, restored
                }
            }
        }

        // MARK: Open a document, edit it, save it

        let sample = try Survey(json: Data(Survey.exampleJSON.utf8))
        let (id, _) = try await store.create(sample)

        var document = try await store.open(id)
        let name = document.survey.items[2].id
        try document.survey.setAnswer(.text("Grace"), forItem: name)
        document = try await store.save(document)  // based on the revision it was opened at
        print("saved", document.base.id)

        // MARK: Another device edits the same document offline

        let phone = try await SurveyStore.create(at: phonePath, deviceName: "Phone")
        try await store.sync(with: phone)
        var onPhone = try await phone.open(id)
        try onPhone.survey.setAnswer(.text("Soup"), forItem: onPhone.survey.items[5].id)
        onPhone = try await phone.save(onPhone)

        let rating = document.survey.items[4].id
        try document.survey.setAnswer(.number(9), forItem: rating)
        document = try await store.save(document)

        // MARK: React to a conflict arriving from another device

        let report = try await store.sync(with: phone)
        if report.conflictsAppeared.contains(document.id) {
            document = try await store.open(document.id)
        }
        if case .inConflict(let heads) = document.state {
            print("in conflict:", heads.map(\.device.name).joined(separator: ", "))
            // Merge item by item: edits of different items both stay.
            document = try await store.resolve(document, .merge(prefer: nil))
        }

        // MARK: Keep per-device state

        // Never synced, never a revision.
        try await store.setLocalState(["LastOpenedItem": 3, "SortOrder": "title"], of: document.id)
        let state = try await store.localState(of: document.id)  // [String: PropertyList]?
        observer.cancel()  // stops watching and closes the watch's descriptors
        check(state?["SortOrder"] == "title", "the per-device state did not read back")

        // MARK: The merged document

        check(!document.isInConflict, "the merge left the document in conflict")
        let answers = [2, 4, 5].map { document.survey.items[$0].answer?.text ?? "—" }
        print("merged:", answers.joined(separator: ", "))
        check(answers == ["Grace", "9", "Soup"], "unexpected answers \(answers)")

        // MARK: The property-list codec on its own (README's last snippet, in Codec.swift)

        let plist = try sample.plistData()
        let codec = try codecExample(data: plist)
        check(codec.xml == plist && codec.title == "Visits", "the codec did not write back what it read")

        if arguments.isEmpty { try SurveyStore.removeFolder(folder) }
    }
}
