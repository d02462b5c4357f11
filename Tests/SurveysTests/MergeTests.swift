import Foundation
import PropertyList
import Surveys
import Testing

/// Fixed ids and a base survey for the diff and merge tests.
enum MergeFixture {
    static func id(_ number: Int) -> UUID {
        UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", number))!
    }

    /// 1 binary, 2 textField, 3 slider, 4 picker, 5 multiTF, 6 textOnly.
    static let base = try! Survey(
        title: "Visit",
        items: [
            Item(id: id(1), title: "Come again?", kind: .binary(options: ["No", "Yes"]), answer: .choice(1)),
            Item(id: id(2), title: "Name", kind: .textField(subtitle: "First"), answer: .text("Ada")),
            Item(
                id: id(3), title: "Rate", kind: .slider(minimum: 0, maximum: 10, roundToInteger: true),
                answer: .number(8)),
            Item(id: id(4), title: "Dish", kind: .picker(options: ["Soup", "Fish", "Cake"])),
            Item(id: id(5), title: "Tried", kind: .multiTF(options: ["Soup", "Fish"])),
            Item(id: id(6), title: "Thanks", kind: .textOnly(text: "Bye")),
        ])

    /// `survey` with its items changed by `change` (and its title, when given).
    static func edit(
        _ survey: Survey = base, title: String? = nil, _ change: (inout [Item]) -> Void = { _ in }
    ) -> Survey {
        var items = survey.items
        change(&items)
        return try! Survey(title: title ?? survey.title, items: items)
    }

    static func index(_ items: [Item], _ number: Int) -> Int { items.firstIndex { $0.id == id(number) }! }

    static func setAnswer(_ items: inout [Item], _ number: Int, _ answer: Answer?) {
        items[index(items, number)].answer = answer
    }

    static func move(_ items: inout [Item], _ number: Int, to offset: Int) {
        let item = items.remove(at: index(items, number))
        items.insert(item, at: offset)
    }

    /// Merges `heads` labelled h0, h1, … ranked in that order.
    static func merge(_ base: Survey?, _ heads: [Survey], prefer: String? = nil) -> SurveyMerge.Result {
        SurveyMerge.merge(
            base: base, heads: heads.enumerated().map { .init(label: "h\($0)", survey: $1, rank: $0) },
            prefer: prefer)
    }

    static func ids(_ survey: Survey) -> [UUID] { survey.items.map(\.id) }
}

@Suite("Item-level diff")
struct DiffTests {
    typealias F = MergeFixture

    @Test("The title, and items added (with position), removed, moved and modified (with old and new values)")
    func everyKindOfChange() throws {
        let new = F.edit(title: "Visit 2") { items in
            items.remove(at: F.index(items, 2))
            F.setAnswer(&items, 3, .number(9))
            items[F.index(items, 4)].kind = .picker(options: ["Soup", "Pie"])
            F.move(&items, 6, to: 0)
            items.insert(Item(id: F.id(7), title: "New", kind: .textField(subtitle: nil)), at: 2)
        }
        let diff = SurveyDiff(from: F.base, to: new)
        #expect(diff.title == .init(field: "title", from: "Visit", to: "Visit 2"))
        let byID = Dictionary(uniqueKeysWithValues: diff.items.map { ($0.id, $0) })
        #expect(byID.count == 5)
        #expect(byID[F.id(2)]?.change == .removed && byID[F.id(2)]?.from == 2 && byID[F.id(2)]?.to == nil)
        #expect(byID[F.id(7)]?.change == .added && byID[F.id(7)]?.to == 3)
        #expect(byID[F.id(6)]?.change == .moved && byID[F.id(6)]?.from == 6 && byID[F.id(6)]?.to == 1)
        #expect(byID[F.id(3)]?.change == .modified)
        #expect(byID[F.id(3)]?.fields == [.init(field: "answer", from: .real(8), to: .real(9))])
        #expect(
            byID[F.id(4)]?.fields == [
                .init(field: "options", from: ["Soup", "Fish", "Cake"], to: ["Soup", "Pie"])
            ])
        // Items shifted by the insert and the removal are not "moved".
        #expect(byID[F.id(1)] == nil && byID[F.id(5)] == nil)
        #expect(SurveyDiff(from: F.base, to: F.base).isEmpty)
    }

    @Test("A kind change lists kind, the settings that differ and the answer")
    func kindChange() {
        let new = F.edit { items in
            items[F.index(items, 3)] = Item(
                id: F.id(3), title: "Rate", kind: .textField(subtitle: "x"), answer: .text("9"))
        }
        let change = SurveyDiff(from: F.base, to: new).items.first!
        #expect(
            change.fields.map(\.field) == [
                "kind", "subtitle", "minimum", "maximum", "roundToInteger", "answer",
            ])
        #expect(change.fields.first == .init(field: "kind", from: "slider", to: "textField"))
    }
}

@Suite("Three-way merge, one test per rule")
struct MergeRuleTests {
    typealias F = MergeFixture

    @Test(
        "Rule 1: one side's change is taken, the same change once, different changes contested (winner's, or the preferred head's)"
    )
    func rule1() throws {
        let nine = F.edit { F.setAnswer(&$0, 3, .number(9)) }
        let six = F.edit { F.setAnswer(&$0, 3, .number(6)) }
        let one = F.merge(F.base, [F.base, nine])
        #expect(one.survey == nine && one.isClean)
        let same = F.merge(F.base, [nine, nine])
        #expect(same.survey == nine && same.isClean)
        let contested = F.merge(F.base, [nine, six])
        #expect(contested.survey == nine)
        #expect(contested.contested.count == 1)
        let contest = try #require(contested.contested.first)
        #expect(
            contest.item == F.id(3) && contest.field == "answer" && contest.chosen == "h0"
                && contest.chosenValue == .real(9))
        #expect(contest.values == [.init(label: "h0", value: .real(9)), .init(label: "h1", value: .real(6))])
        let preferred = F.merge(F.base, [nine, six], prefer: "h1")
        #expect(preferred.survey == six && preferred.contested.first?.chosen == "h1")
        // The survey title follows the same rule (its contest has no item).
        let titled = F.merge(F.base, [F.edit(title: "A"), F.edit(title: "B")])
        #expect(
            titled.survey.title == "A" && titled.contested.first?.item == nil
                && titled.contested.first?.field == "title")
    }

    @Test(
        "A contest lists every head's value and marks the heads that left the field (or the item's place) as in the base"
    )
    func unchangedHeadsMarked() throws {
        let nine = F.edit { F.setAnswer(&$0, 3, .number(9)) }
        let six = F.edit { F.setAnswer(&$0, 3, .number(6)) }
        let answer = try #require(F.merge(F.base, [F.base, nine, six]).contested.first)
        #expect(answer.chosen == "h1" && answer.chosenValue == .real(9))
        #expect(
            answer.values == [
                .init(label: "h0", value: .real(8), isUnchanged: true),
                .init(label: "h1", value: .real(9)), .init(label: "h2", value: .real(6)),
            ])
        let toEnd = F.edit { F.move(&$0, 1, to: 5) }
        let toMiddle = F.edit { F.move(&$0, 1, to: 2) }
        let position = try #require(F.merge(F.base, [toEnd, F.base, toMiddle]).contested.first)
        #expect(position.field == "position")
        #expect(position.values.map(\.isUnchanged) == [false, true, false])
        #expect(position.values.map(\.value) == [.integer(6), .integer(1), .integer(3)])
        // Without a base nothing can be called unchanged.
        let twoWay = try #require(F.merge(nil, [nine, six]).contested.first { $0.field == "answer" })
        #expect(twoWay.values.allSatisfy { !$0.isUnchanged })
    }

    @Test("Rule 2: different fields of one item merge independently")
    func rule2() {
        let title = F.edit { $0[F.index($0, 3)].title = "Rate us" }
        let answer = F.edit { F.setAnswer(&$0, 3, .number(2)) }
        let result = F.merge(F.base, [title, answer])
        #expect(result.isClean)
        let item = result.survey.items[F.index(result.survey.items, 3)]
        #expect(item.title == "Rate us" && item.answer == .number(2))
    }

    @Test("Rule 3: removed on one side and modified on another: kept with the modification, and reported")
    func rule3() throws {
        let removed = F.edit { $0.remove(at: F.index($0, 2)) }
        let modified = F.edit { F.setAnswer(&$0, 2, .text("Grace")) }
        let result = F.merge(F.base, [removed, modified])
        #expect(F.ids(result.survey) == F.ids(F.base))
        #expect(result.survey.items[1].answer == .text("Grace"))
        let note = try #require(result.notes.first)
        #expect(note.kind == .keptDespiteRemoval && note.item == F.id(2) && note.heads == ["h0"])
    }

    @Test("Rule 4: removed on every side that touched it (others unchanged or only moved): removed")
    func rule4() {
        let removed = F.edit { $0.remove(at: F.index($0, 2)) }
        #expect(F.merge(F.base, [removed, F.base]).survey == removed)
        #expect(F.merge(F.base, [F.base, removed, removed]).survey == removed)
        let moved = F.edit { F.move(&$0, 2, to: 5) }
        let result = F.merge(F.base, [moved, removed])
        #expect(result.survey == removed && result.isClean)
    }

    @Test(
        "Rule 5: a move and an edit both apply; one item moved to different places takes the winner's place, reported; nothing duplicated or lost"
    )
    func rule5() throws {
        let moved = F.edit { F.move(&$0, 6, to: 0) }
        let edited = F.edit { $0[F.index($0, 6)].kind = .textOnly(text: "See you") }
        let both = F.merge(F.base, [edited, moved])
        #expect(both.isClean)
        #expect(
            both.survey.items.first?.id == F.id(6)
                && both.survey.items.first?.kind == .textOnly(text: "See you"))
        #expect(F.ids(both.survey) == F.ids(moved))

        let toEnd = F.edit { F.move(&$0, 1, to: 5) }
        let toMiddle = F.edit { F.move(&$0, 1, to: 2) }
        let clash = F.merge(F.base, [toEnd, toMiddle])
        #expect(F.ids(clash.survey) == F.ids(toEnd))
        let contest = try #require(clash.contested.first)
        #expect(contest.field == "position" && contest.item == F.id(1) && contest.chosen == "h0")
        #expect(contest.values.map(\.value) == [.integer(6), .integer(3)])
        let swapped = F.merge(F.base, [toMiddle, toEnd])
        #expect(F.ids(swapped.survey) == F.ids(toMiddle))
        for result in [clash, swapped] {
            #expect(Set(F.ids(result.survey)) == Set(F.ids(F.base)) && result.survey.items.count == 6)
        }
    }

    @Test(
        "Rule 6: inserts at the same place on several sides are all kept, each side's run together, sides in winner order"
    )
    func rule6() {
        func insert(_ numbers: [Int]) -> Survey {
            F.edit { items in
                for (offset, number) in numbers.enumerated() {
                    items.insert(
                        Item(id: F.id(number), title: "n\(number)", kind: .textOnly(text: nil)),
                        at: 3 + offset)
                }
            }
        }
        let a = insert([10, 11])
        let b = insert([20])
        let expectedAFirst = [1, 2, 3, 10, 11, 20, 4, 5, 6].map(F.id)
        #expect(F.ids(F.merge(F.base, [a, b]).survey) == expectedAFirst)
        #expect(F.ids(F.merge(F.base, [b, a]).survey) == [1, 2, 3, 20, 10, 11, 4, 5, 6].map(F.id))
        #expect(F.merge(F.base, [a, b]).isClean)
    }

    @Test(
        "Rule 7: the same new id on several sides: equal, one item; different, merged without a base, every difference contested"
    )
    func rule7() {
        let new = Item(
            id: F.id(9), title: "Age", kind: .slider(minimum: 0, maximum: 120, roundToInteger: true),
            answer: .number(30))
        let a = F.edit { $0.append(new) }
        var other = new
        other.answer = .number(40)
        let b = F.edit { $0.insert(other, at: 0) }
        let equal = F.merge(F.base, [a, a])
        #expect(equal.survey == a && equal.isClean)
        let different = F.merge(F.base, [a, b])
        #expect(different.survey.items.filter { $0.id == F.id(9) }.count == 1)
        #expect(
            different.contested.map(\.field) == ["position", "answer"],
            "only the field that differs is contested, and the place (last on one head, first on the other)")
        #expect(different.survey.items.last?.answer == .number(30))
    }

    @Test(
        "Rule 7: the same new item added at different places on two heads takes the first head's place, reported as a contest of its position"
    )
    func rule7Position() throws {
        let new = Item(id: F.id(9), title: "Age", kind: .textField(subtitle: nil))
        let first = F.edit { $0.insert(new, at: 0) }
        let last = F.edit { $0.append(new) }
        let result = F.merge(F.base, [first, last])
        #expect(F.ids(result.survey) == [9, 1, 2, 3, 4, 5, 6].map(F.id))
        let contest = try #require(result.contested.first)
        #expect(result.contested.count == 1 && contest.field == "position" && contest.chosen == "h0")
        #expect(contest.values.map(\.value) == [.integer(1), .integer(7)])
        #expect(F.ids(F.merge(F.base, [last, first]).survey) == [1, 2, 3, 4, 5, 6, 9].map(F.id))
        // The same place, even with another item inserted beside it on one head, is no contest.
        let beside = F.edit {
            $0.append(Item(id: F.id(10), title: "Other", kind: .datePicker))
            $0.append(new)
        }
        #expect(F.merge(F.base, [beside, last]).isClean)
        #expect(F.merge(F.base, [last, last]).isClean)
    }

    @Test(
        "Rule 8: kind, settings and answer move as one unit; a kind change against an answer edit is contested"
    )
    func rule8() throws {
        let kind = F.edit {
            $0[F.index($0, 3)] = Item(
                id: F.id(3), title: "Rate", kind: .textField(subtitle: nil), answer: .text("good"))
        }
        let answer = F.edit { F.setAnswer(&$0, 3, .number(9)) }
        let result = F.merge(F.base, [kind, answer])
        let contest = try #require(result.contested.first)
        #expect(result.contested.count == 1 && contest.field == "kind" && contest.chosen == "h0")
        #expect(
            result.survey.items[2].kind == .textField(subtitle: nil)
                && result.survey.items[2].answer == .text("good"))
        let flipped = F.merge(F.base, [answer, kind])
        #expect(flipped.survey.items[2] == answer.items[2])
        // A kind change and a title change do not collide.
        let title = F.edit { $0[F.index($0, 3)].title = "Score" }
        let clean = F.merge(F.base, [title, kind])
        #expect(
            clean.isClean && clean.survey.items[2].title == "Score"
                && clean.survey.items[2].kind == .textField(subtitle: nil))
    }

    @Test(
        "Rule 9: merged fields that break a rule take the winner's whole item (picker, slider), reported"
    )
    func rule9() throws {
        let pickerOptions = F.edit { $0[F.index($0, 4)].kind = .picker(options: ["Soup", "Fish"]) }
        let pickerAnswer = F.edit { F.setAnswer(&$0, 4, .text("Cake")) }
        let sliderRange = F.edit {
            $0[F.index($0, 3)].kind = .slider(minimum: 0, maximum: 9, roundToInteger: true)
        }
        let sliderAnswer = F.edit { F.setAnswer(&$0, 3, .number(10)) }
        for (a, b, number) in [
            (pickerOptions, pickerAnswer, 4), (sliderRange, sliderAnswer, 3),
        ] {
            let result = F.merge(F.base, [a, b])
            try result.survey.validate()
            #expect(
                result.survey.items[F.index(result.survey.items, number)] == a.items[F.index(a.items, number)]
            )
            #expect(
                result.contested.contains {
                    $0.item == F.id(number) && $0.field == "item" && $0.chosen == "h0"
                })
            #expect(result.notes.contains { $0.item == F.id(number) && $0.kind == .tookWholeItem })
            let other = F.merge(F.base, [b, a])
            #expect(
                other.survey.items[F.index(other.survey.items, number)] == b.items[F.index(b.items, number)])
        }
    }

    @Test(
        "Rule 9 with three heads: the whole item is that of the first head that changed it, not of one that left it as in the base"
    )
    func rule9FirstChanger() throws {
        let untouched = F.edit(title: "Visit again")
        let narrowed = F.edit {
            $0[F.index($0, 3)].kind = .slider(minimum: 0, maximum: 9, roundToInteger: true)
        }
        let answered = F.edit { F.setAnswer(&$0, 3, .number(10)) }
        let result = F.merge(F.base, [untouched, narrowed, answered])
        try result.survey.validate()
        #expect(result.survey.items[F.index(result.survey.items, 3)] == narrowed.items[2])
        let contest = try #require(result.contested.first { $0.field == "item" })
        #expect(contest.chosen == "h1")
        #expect(contest.values.map(\.isUnchanged) == [true, false, false])
        #expect(result.notes.first { $0.kind == .tookWholeItem }?.heads == ["h1"])
    }

    @Test(
        "A contested binary answer names each head's option label beside its position (both heads' answer 0 here: No, and Yes among swapped options); other answers name none"
    )
    func contestedBinaryAnswerNamesItsOption() throws {
        let base = F.edit {
            F.setAnswer(&$0, 1, nil)
            F.setAnswer(&$0, 5, .flags([false, false]))
        }
        let answeredNo = F.edit(base) {
            F.setAnswer(&$0, 1, .choice(0))
            F.setAnswer(&$0, 5, .flags([true, false]))
        }
        let swappedYes = F.edit(base) {
            $0[F.index($0, 1)].kind = .binary(options: ["Yes", "No"])
            F.setAnswer(&$0, 1, .choice(0))
            F.setAnswer(&$0, 5, .flags([false, true]))
        }
        let result = F.merge(base, [answeredNo, swappedYes])
        #expect(result.contested.map(\.field) == ["answer", "answer"])
        let binary = try #require(result.contested.first { $0.item == F.id(1) })
        #expect(binary.values.map(\.value) == [.integer(0), .integer(0)])
        #expect(binary.values.map(\.option) == ["No", "Yes"])
        #expect(binary.chosen == "h0" && binary.chosenOption == "No")
        let flags = try #require(result.contested.first { $0.item == F.id(5) })
        #expect(flags.values.map(\.option) == [nil, nil] && flags.chosenOption == nil)
        // As show prints each: the label, and one T or F per option.
        #expect(answeredNo.items[0].answerText == "No" && swappedYes.items[0].answerText == "Yes")
        #expect(answeredNo.items[4].answerText == "TF" && base.items[0].answerText == nil)
        #expect(answeredNo.items[0].chosenOption == "No" && answeredNo.items[4].chosenOption == nil)
    }

    @Test(
        "Binary and multiTF answers, given by position, follow their labels when another head reordered the options"
    )
    func answersFollowReorderedOptions() throws {
        // One head swaps a binary item's options (its answer, still "Yes", follows them);
        // the other answers "No". The merge holds "No", and nothing is contested.
        let swapped = F.edit {
            $0[F.index($0, 1)].kind = .binary(options: ["Yes", "No"])
            F.setAnswer(&$0, 1, .choice(0))
        }
        let answeredNo = F.edit { F.setAnswer(&$0, 1, .choice(0)) }
        for heads in [[swapped, answeredNo], [answeredNo, swapped]] {
            let result = F.merge(F.base, heads)
            #expect(result.isClean, "\(result.contested.map(\.field))")
            let item = result.survey.items[F.index(result.survey.items, 1)]
            #expect(item.kind == .binary(options: ["Yes", "No"]) && item.answer == .choice(1))
        }
        // A multiTF's options reordered on one head (Soup still ticked), Fish ticked
        // instead of Soup on the other: Fish is ticked in the merge.
        let base = F.edit { F.setAnswer(&$0, 5, .flags([true, false])) }
        let reordered = F.edit(base) {
            $0[F.index($0, 5)].kind = .multiTF(options: ["Fish", "Soup"])
            F.setAnswer(&$0, 5, .flags([false, true]))
        }
        let fish = F.edit(base) { F.setAnswer(&$0, 5, .flags([false, true])) }
        for heads in [[reordered, fish], [fish, reordered]] {
            let result = F.merge(base, heads)
            #expect(result.isClean, "\(result.contested.map(\.field))")
            let item = result.survey.items[F.index(result.survey.items, 5)]
            #expect(
                item.kind == .multiTF(options: ["Fish", "Soup"]) && item.answer == .flags([true, false]))
        }
        // Different answers still contest, each head's value shown as that head has it.
        let both = F.edit(base) {
            $0[F.index($0, 5)].kind = .multiTF(options: ["Fish", "Soup"])
            F.setAnswer(&$0, 5, .flags([true, true]))
        }
        let result = F.merge(base, [both, fish])
        let contest = try #require(result.contested.first)
        #expect(result.contested.count == 1 && contest.field == "answer" && contest.chosen == "h0")
        func answer(_ item: Item) -> PropertyList? {
            if case .dictionary(let fields) = item.interchange { fields["answer"] } else { nil }
        }
        #expect(contest.values.map(\.value) == [answer(both.items[4]), answer(fish.items[4])])
        #expect(result.survey.items[4] == both.items[4])
        let preferred = F.merge(base, [fish, both])
        #expect(preferred.survey.items[4].answer == .flags([true, false]))
    }

    @Test(
        "Rule 11: options renamed in place on one head and reordered on another merge to the renamed labels in the new order, each answer on its option, nothing contested"
    )
    func renamedAndReorderedOptions() throws {
        // The base answers Yes (binary), Fish (picker), Soup ticked (multiTF).
        let base = F.edit {
            F.setAnswer(&$0, 4, .text("Fish"))
            F.setAnswer(&$0, 5, .flags([true, false]))
        }
        // One head renames "No" to "Nope" and "Fish" to "Fish pie" (the picker's answer
        // follows its option) and ticks "Fish pie" too.
        let renamed = F.edit(base) {
            $0[F.index($0, 1)].kind = .binary(options: ["Nope", "Yes"])
            $0[F.index($0, 4)].kind = .picker(options: ["Soup", "Fish pie", "Cake"])
            F.setAnswer(&$0, 4, .text("Fish pie"))
            $0[F.index($0, 5)].kind = .multiTF(options: ["Soup", "Fish pie"])
            F.setAnswer(&$0, 5, .flags([true, true]))
        }
        // The other reorders every option list (answers following their options) and
        // answers "No".
        let reordered = F.edit(base) {
            $0[F.index($0, 1)].kind = .binary(options: ["Yes", "No"])
            F.setAnswer(&$0, 1, .choice(1))
            $0[F.index($0, 4)].kind = .picker(options: ["Cake", "Soup", "Fish"])
            $0[F.index($0, 5)].kind = .multiTF(options: ["Fish", "Soup"])
            F.setAnswer(&$0, 5, .flags([false, true]))
        }
        for heads in [[renamed, reordered], [reordered, renamed]] {
            let result = F.merge(base, heads)
            #expect(result.isClean, "\(result.contested.map { ($0.item, $0.field) })")
            try result.survey.validate()
            let items = result.survey.items
            #expect(items[F.index(items, 1)].kind == .binary(options: ["Yes", "Nope"]))
            #expect(items[F.index(items, 1)].answer == .choice(1), "\"Nope\", the renamed \"No\"")
            #expect(items[F.index(items, 4)].kind == .picker(options: ["Cake", "Soup", "Fish pie"]))
            #expect(items[F.index(items, 4)].answer == .text("Fish pie"))
            #expect(items[F.index(items, 5)].kind == .multiTF(options: ["Fish pie", "Soup"]))
            #expect(items[F.index(items, 5)].answer == .flags([true, true]))
        }
        // Two heads each renaming another option: both renames.
        let cake = F.edit(base) { $0[F.index($0, 4)].kind = .picker(options: ["Soup", "Fish", "Cake!"]) }
        let soup = F.edit(base) { $0[F.index($0, 4)].kind = .picker(options: ["Soups", "Fish", "Cake"]) }
        let both = F.merge(base, [cake, soup, reordered])
        #expect(both.isClean, "\(both.contested.map(\.field))")
        #expect(
            both.survey.items[F.index(both.survey.items, 4)].kind
                == .picker(options: ["Cake!", "Soups", "Fish"]))
    }

    @Test(
        "Rule 11: options that cannot be read as renames and a reorder (renamed and reordered on one head, one option renamed two ways, merged labels that collide) merge as one field, contested"
    )
    func optionsThatCannotBeToldApart() throws {
        let reordered = F.edit { $0[F.index($0, 4)].kind = .picker(options: ["Cake", "Soup", "Fish"]) }
        let cases: [(String, [String])] = [
            ("renamed and reordered at once", ["Fish pie", "Soup", "Cake"]),
            ("grown", ["Soup", "Fish", "Cake", "Tea"]),
            ("a label another option had", ["Soup", "Cake", "Pie"]),
        ]
        for (what, options) in cases {
            let other = F.edit { $0[F.index($0, 4)].kind = .picker(options: options) }
            let result = F.merge(F.base, [other, reordered])
            #expect(result.contested.map(\.field) == ["options"], "\(what)")
            #expect(result.survey.items[F.index(result.survey.items, 4)].kind == .picker(options: options))
        }
        // One option renamed two ways; and two renames that would give two options one label.
        let pie = F.edit { $0[F.index($0, 4)].kind = .picker(options: ["Soup", "Pie", "Cake"]) }
        let stew = F.edit { $0[F.index($0, 4)].kind = .picker(options: ["Soup", "Stew", "Cake"]) }
        let pieToo = F.edit { $0[F.index($0, 4)].kind = .picker(options: ["Pie", "Fish", "Cake"]) }
        for heads in [[pie, stew, reordered], [pie, pieToo]] {
            let result = F.merge(F.base, heads)
            #expect(result.contested.map(\.field) == ["options"])
            #expect(result.survey.items[F.index(result.survey.items, 4)] == pie.items[F.index(pie.items, 4)])
        }
    }

    @Test(
        "Rule 11: a binary or multiTF answer against options another head renamed and reordered at once, or grew, merges with them as one unit, contested; never on another option"
    )
    func positionalAnswerAgainstUnreadableOptions() throws {
        // The base answers "Yes" and ticks nothing. One head reorders and renames at once
        // (the binary's "No" becomes "Never" in first place; the multiTF's "Fish" becomes
        // "Fish pie" in first place), its answers still on their labels.
        let changed = F.edit {
            $0[F.index($0, 1)].kind = .binary(options: ["Never", "Yes"].reversed())
            F.setAnswer(&$0, 1, .choice(0))
            $0[F.index($0, 5)].kind = .multiTF(options: ["Fish pie", "Soup"])
            F.setAnswer(&$0, 5, .flags([false, false]))
        }
        // The other answers "No" and ticks "Fish".
        let answered = F.edit {
            F.setAnswer(&$0, 1, .choice(0))
            F.setAnswer(&$0, 5, .flags([false, true]))
        }
        for (heads, first) in [([changed, answered], changed), ([answered, changed], answered)] {
            let result = F.merge(F.base, heads)
            try result.survey.validate()
            #expect(result.contested.map(\.item) == [F.id(1), F.id(5)])
            #expect(result.contested.map(\.field) == ["kind", "kind"])
            for number in [1, 5] {
                // The first head's options and answer together: by place, "No" would have
                // become "Yes", and the tick on "Fish" one on "Fish pie"'s neighbour.
                let item = result.survey.items[F.index(result.survey.items, number)]
                #expect(item == first.items[F.index(first.items, number)])
            }
        }
        // Grown options against an answer: one unit too.
        let grown = F.edit {
            $0[F.index($0, 5)].kind = .multiTF(options: ["Tea", "Soup", "Fish"])
            F.setAnswer(&$0, 5, .flags([true, false, false]))
        }
        let againstGrown = F.merge(F.base, [answered, grown])
        #expect(againstGrown.contested.filter { $0.item == F.id(5) }.map(\.field) == ["kind"])
        #expect(
            againstGrown.survey.items[F.index(againstGrown.survey.items, 5)]
                == answered.items[F.index(answered.items, 5)])
        // A head that left the options and answer alone contests nothing.
        let retitled = F.edit { $0[F.index($0, 5)].title = "Tasted" }
        let quiet = F.merge(F.base, [retitled, changed])
        #expect(quiet.isClean)
        #expect(
            quiet.survey.items[F.index(quiet.survey.items, 5)].kind
                == .multiTF(options: ["Fish pie", "Soup"]))
        #expect(quiet.survey.items[F.index(quiet.survey.items, 5)].title == "Tasted")
        // Options renamed in place two ways keep each answer on its place: only the
        // options are contested, and a third head's tick stays on "Fish".
        let pie = F.edit { $0[F.index($0, 5)].kind = .multiTF(options: ["Soup", "Pie"]) }
        let stew = F.edit { $0[F.index($0, 5)].kind = .multiTF(options: ["Soup", "Stew"]) }
        let inPlace = F.merge(F.base, [pie, stew, answered])
        #expect(inPlace.contested.map(\.field) == ["options"])
        #expect(inPlace.survey.items[F.index(inPlace.survey.items, 5)].answer == .flags([false, true]))
    }

    @Test("Rule 10: three heads merge to the same bytes whatever order they are passed in")
    func rule10() throws {
        let heads = [
            F.edit {
                F.setAnswer(&$0, 3, .number(9)); $0.remove(at: F.index($0, 6))
            },
            F.edit {
                F.setAnswer(&$0, 3, .number(2)); F.move(&$0, 1, to: 4)
            },
            F.edit(title: "Three") { $0.append(Item(id: F.id(8), title: "x", kind: .datePicker)) },
        ].enumerated().map { SurveyMerge.Head(label: "r\($0)", survey: $1, rank: $0) }
        let reference = try SurveyMerge.merge(base: F.base, heads: heads).survey.plistData()
        for order in [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]] {
            #expect(
                try SurveyMerge.merge(base: F.base, heads: order.map { heads[$0] }).survey.plistData()
                    == reference)
        }
        let merged = try Survey(plist: reference)
        #expect(merged.title == "Three" && merged.items.map(\.id) == [2, 3, 4, 5, 1, 8].map(F.id))
        #expect(merged.items[1].answer == .number(9))
    }

    @Test(
        "Without a base the merge is two-way: every difference contested, items only some heads have are kept"
    )
    func twoWay() throws {
        let a = F.edit { F.setAnswer(&$0, 3, .number(9)) }
        let b = F.edit { $0.remove(at: F.index($0, 6)) }
        let result = F.merge(nil, [a, b])
        #expect(result.isTwoWay)
        #expect(result.contested.map(\.field) == ["answer"])
        #expect(F.ids(result.survey) == F.ids(F.base))
        #expect(result.notes.map(\.kind) == [.keptWithoutBase])
    }

    @Test(
        "A virtual base whose binary options are unknown (its bases renamed them two ways): heads holding different options merge options and answer as one unit, contested, so the answer stays on the option its head chose (it went by place onto the other head's options)"
    )
    func virtualBaseWithUnknownOptions() throws {
        func binary(_ options: [String], _ answer: Int?) -> Survey {
            F.edit {
                $0[F.index($0, 1)].kind = .binary(options: options)
                F.setAnswer(&$0, 1, answer.map { .choice($0) })
            }
        }
        let bases = F.merge(F.base, [binary(["Nope", "Yeah"], nil), binary(["Non", "Oui"], nil)])
        #expect(bases.contested.map(\.field) == ["options"])
        let virtual = SurveyMerge.VirtualBase(merging: bases)
        // One head reordered its options and chose "Yeah"; the other renamed one.
        let yeah = binary(["Yeah", "Nope"], 0)
        let nein = binary(["Nein", "Oui"], nil)
        for heads in [[yeah, nein], [nein, yeah]] {
            let result = SurveyMerge.merge(
                virtualBase: virtual,
                heads: heads.enumerated().map { .init(label: "h\($0)", survey: $1, rank: $0) })
            try result.survey.validate()
            #expect(result.contested.map(\.field) == ["kind"])
            let item = result.survey.items[F.index(result.survey.items, 1)]
            #expect(item == heads[0].items[F.index(heads[0].items, 1)], "\(item)")
        }
    }

    @Test(
        "A virtual base (two bases merged) leaves what they contested unknown: heads that agree on such a field take it, heads that differ contest it, none counted unchanged; every other field merges as from one base"
    )
    func virtualBase() throws {
        // The bases both changed the rating (contested), one the name and one the title.
        let first = F.edit(title: "Visit 2") { F.setAnswer(&$0, 3, .number(9)) }
        let second = F.edit {
            F.setAnswer(&$0, 3, .number(2)); F.setAnswer(&$0, 2, .text("Grace"))
        }
        let bases = F.merge(F.base, [first, second])
        #expect(bases.contested.map(\.field) == ["answer"])
        let virtual = SurveyMerge.VirtualBase(merging: bases)
        #expect(!virtual.isExact && SurveyMerge.VirtualBase(F.base).isExact)
        func merge(_ heads: [Survey]) -> SurveyMerge.Result {
            SurveyMerge.merge(
                virtualBase: virtual,
                heads: heads.enumerated().map { .init(label: "h\($0)", survey: $1, rank: $0) })
        }
        // Each head took another rating when it merged the bases; one then renamed, the
        // other set the name back to the base's.
        let x = F.edit(bases.survey, title: "Visit 3") { F.setAnswer(&$0, 3, .number(9)) }
        let y = F.edit(bases.survey) {
            F.setAnswer(&$0, 3, .number(2)); F.setAnswer(&$0, 2, .text("Ada"))
        }
        let result = merge([x, y])
        #expect(result.survey.title == "Visit 3" && result.survey.items[1].answer == .text("Ada"))
        let contest = try #require(result.contested.first)
        #expect(result.contested.count == 1 && contest.item == F.id(3) && contest.field == "answer")
        #expect(contest.values.map(\.isUnchanged) == [false, false])
        #expect(result.survey.items[2].answer == .number(9))
        // Heads that agree on the unknown field take it, even when the base holds another value.
        let agreed = merge([F.edit(x) { F.setAnswer(&$0, 3, .number(2)) }, y])
        #expect(agreed.isClean && agreed.survey.items[2].answer == .number(2))
        // A head that changed nothing but the unknown field still contests it.
        let alone = merge([bases.survey, y])
        #expect(
            alone.contested.map(\.field) == ["answer"]
                && alone.contested[0].values.allSatisfy { !$0.isUnchanged })
    }

    @Test(
        "A virtual base: an item its bases kept although one removed it is unknown, so a head's removal does not take it away; an item they placed differently is placed as a move of every head"
    )
    func virtualBaseItems() throws {
        let removed = F.edit {
            $0.remove(at: F.index($0, 2)); F.move(&$0, 6, to: 0)
        }
        let modified = F.edit {
            F.setAnswer(&$0, 2, .text("Grace")); F.move(&$0, 6, to: 3)
        }
        let bases = F.merge(F.base, [removed, modified])
        #expect(bases.notes.map(\.kind) == [.keptDespiteRemoval])
        #expect(bases.contested.map(\.field) == ["position"])
        let virtual = SurveyMerge.VirtualBase(merging: bases)
        func merge(_ heads: [Survey]) -> SurveyMerge.Result {
            SurveyMerge.merge(
                virtualBase: virtual,
                heads: heads.enumerated().map { .init(label: "h\($0)", survey: $1, rank: $0) })
        }
        // One head's merge of the bases left item 2 out, the other's kept it.
        let without = F.edit(bases.survey) { $0.remove(at: F.index($0, 2)) }
        let kept = merge([without, bases.survey])
        #expect(kept.survey.items.contains { $0.id == F.id(2) })
        #expect(kept.notes.map(\.kind) == [.keptWithoutBase])
        // Item 6 at the end on one head and first on the other: a contest of its place.
        let last = F.edit(bases.survey) { F.move(&$0, 6, to: $0.count - 1) }
        let first = F.edit(bases.survey) { F.move(&$0, 6, to: 0) }
        let placed = merge([last, first])
        #expect(placed.contested.map(\.field) == ["position"] && placed.contested[0].item == F.id(6))
        #expect(placed.survey.items.last?.id == F.id(6))
        #expect(merge([first, first]).survey == first)
    }

    @Test("Format-1 items are matched by position to the base's ids")
    func formatOneMatching() throws {
        let renamed = try Survey(
            title: "Visit",
            items: F.base.items.enumerated().map { offset, item in
                var item = item
                item.id = F.id(100 + offset)
                return item
            } + [Item(id: F.id(200), title: "extra", kind: .datePicker)])
        let matched = renamed.matchingItemIDs(byPositionTo: F.base)
        #expect(matched.items.map(\.id) == F.ids(F.base) + [F.id(200)])
        #expect(matched.items.map(\.title) == renamed.items.map(\.title))
    }
}
