import Foundation
import PropertyList
import Surveys
import Testing

/// Items that come without an `id` in a file saved on a document: matched with the base's
/// items by kind and title, or new items with ids derived from the base.
@Suite("Item identity: a file without ids matched with the content it is saved on")
struct ItemIdentityTests {
    static func uuid(_ number: Int) -> UUID {
        UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", number))!
    }

    func text(_ title: String, id: Int? = nil, answer: String = "x") -> String {
        let identity = id.map { #""id": "\#(Self.uuid($0).uuidString)", "# } ?? ""
        return #"{\#(identity)"title": "\#(title)", "kind": "textField", "answer": "\#(answer)"}"#
    }

    func slider(_ title: String, id: Int? = nil, answer: Int = 5) -> String {
        let identity = id.map { #""id": "\#(Self.uuid($0).uuidString)", "# } ?? ""
        return
            #"{\#(identity)"title": "\#(title)", "kind": "slider", "minimum": 0, "maximum": 10, "answer": \#(answer)}"#
    }

    static func read(_ items: [String]) throws -> (survey: Survey, itemsWithoutID: [Int]) {
        try Survey.reading(data: Data(#"{"title": "T", "items": [\#(items.joined(separator: ", "))]}"#.utf8))
    }

    /// The base: two items titled "Comments" (1 and 3), a slider "Rate" (2), "Name" (4).
    func base() throws -> Survey {
        try Self.read([
            text("Comments", id: 1), slider("Rate", id: 2), text("Comments", id: 3), text("Name", id: 4),
        ])
        .survey
    }

    @Test("reading says which items had no id, in a JSON file and in a property list alike")
    func positionsWithoutID() throws {
        let json = try Self.read([text("A", id: 1), text("B"), text("C", id: 3), text("D")])
        #expect(json.itemsWithoutID == [2, 4])
        let plist = try Survey.reading(data: try json.survey.plistData())
        #expect(plist.itemsWithoutID.isEmpty, "the written survey carries every id")
        let bare = Data(
            """
            <plist version="1.0"><dict><key>title</key><string>T</string><key>items</key><array>
            <dict><key>title</key><string>D</string><key>kind</key><string>datePicker</string></dict>
            </array></dict></plist>
            """.utf8)
        #expect(try Survey.reading(data: bare).itemsWithoutID == [1])
        #expect(try Survey(data: bare).items.count == 1)
    }

    @Test(
        "Items without an id take the base's ids by kind and title, in order, duplicates paired in order; the rest of the file is untouched"
    )
    func matchedByKindAndTitle() throws {
        // Edited without ids, reordered: Name first, the answers changed.
        let file = try Self.read([
            text("Name", answer: "Grace"), text("Comments", answer: "first"), slider("Rate", answer: 9),
            text("Comments", answer: "second"),
        ])
        let adopted = file.survey.adoptingIDs(ofItemsAt: file.itemsWithoutID, from: try base(), seed: "2-ab")
        #expect(adopted.items.map(\.id) == [4, 1, 2, 3].map(Self.uuid))
        #expect(adopted.items.map(\.answer) == file.survey.items.map(\.answer))
        #expect(adopted.title == file.survey.title)
    }

    @Test(
        "A changed kind or title is a new item, with an id derived from the seed, its kind and title: the same for the same seed, another for another seed"
    )
    func newItemsDerived() throws {
        // "Rate" as a text field now, and "Comment" (renamed): neither matches.
        let file = try Self.read([text("Rate"), text("Comment"), text("Comment")])
        let base = try base()
        let one = file.survey.adoptingIDs(ofItemsAt: file.itemsWithoutID, from: base, seed: "2-ab")
        let ids = one.items.map(\.id)
        #expect(Set(ids).count == 3 && Set(ids).isDisjoint(with: base.items.map(\.id)))
        let again = file.survey.adoptingIDs(ofItemsAt: file.itemsWithoutID, from: base, seed: "2-ab")
        #expect(again.items.map(\.id) == ids, "derived, not random")
        let other = file.survey.adoptingIDs(ofItemsAt: file.itemsWithoutID, from: base, seed: "3-cd")
        #expect(Set(other.items.map(\.id)).isDisjoint(with: ids))
        // No base at all (a deletion): the same derived ids, since none matched anyway.
        let unbased = file.survey.adoptingIDs(ofItemsAt: file.itemsWithoutID, from: nil, seed: "2-ab")
        #expect(unbased.items.map(\.id) == ids)
    }

    @Test(
        "An id the file carries is never given to another item: the match moves on to the next such item of the base, or makes a new one"
    )
    func carriedIDsKept() throws {
        // Item 3 carries Comments' first id; the id-less Comments takes the second.
        let file = try Self.read([
            text("Comments"), text("Name", id: 4), text("Other", id: 1), text("Comments"),
        ])
        let adopted = file.survey.adoptingIDs(ofItemsAt: file.itemsWithoutID, from: try base(), seed: "s")
        let ids = adopted.items.map(\.id)
        #expect(ids[0] == Self.uuid(3) && ids[1] == Self.uuid(4) && ids[2] == Self.uuid(1))
        #expect(Set(ids).count == 4, "the second id-less Comments is a new item: \(ids)")
        // A derived id the file already carries (copied from a later export) is skipped.
        let first = try Self.read([text("New")])
        let derived = first.survey.adoptingIDs(ofItemsAt: [1], from: nil, seed: "s").items[0].id
        let clash = try Survey.reading(
            data: Data(
                #"{"title": "T", "items": [{"id": "\#(derived.uuidString)", "title": "New", "kind": "textField"}, \#(text("New"))]}"#
                    .utf8))
        let both = clash.survey.adoptingIDs(ofItemsAt: clash.itemsWithoutID, from: nil, seed: "s")
        #expect(both.items[0].id == derived && both.items[1].id != derived)
        // Valid: every id unique, so the store takes it.
        #expect(throws: Never.self) { try Survey(title: both.title, items: both.items) }
    }
}
