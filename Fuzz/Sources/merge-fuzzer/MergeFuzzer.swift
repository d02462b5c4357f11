import Foundation

@testable import Surveys

// libFuzzer entry point for the three-way merge. Each input's bytes drive the making of a
// base (or none: a two-way merge) and two to four heads: surveys with item ids drawn from
// a small pool (so heads share items, and may give one id another kind), labels drawn from
// a small pool that holds repeats, case variants and one label in two Unicode forms, and
// heads made by edit scripts on the base (field edits, kind changes, inserts, removals,
// moves, title changes) or from nothing. Surveys are accepted as stored content is (the
// rules for new content, such as distinct option labels, left out). On every input:
// - the merge is the same bytes whatever order the heads are passed in, and made twice;
// - it keeps the rules for stored content, and every rule when every input keeps them;
// - no item comes from nowhere, and no item every head has is lost;
// - two equal heads merge to that head, and a head equal to the base yields the other;
// - heads merged first as a group (two or three edited from a fork of the base) and then
//   with heads edited from the base: the same merge whatever the order of either, valid,
//   no item from nowhere and none that every head has lost.
// A crash, a hang, a memory error or a failed check is a finding. Build and run with
// `Fuzz/run merge`.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMerge(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var bytes = Choices(UnsafeBufferPointer(start: data, count: size))
    let base: Survey? = bytes.bool() ? bytes.survey() : nil
    var surveys: [Survey] = []
    for _ in 0..<(2 + bytes.int(3)) {
        if let base, bytes.int(4) != 0 {
            surveys.append(bytes.script(on: base))
        } else {
            surveys.append(bytes.survey())
        }
    }
    let inputs = [base].compactMap { $0 } + surveys
    guard inputs.allSatisfy({ (try? $0.validate(strict: false)) != nil }) else { return 0 }
    let heads = surveys.enumerated().map {
        SurveyMerge.Head(label: "head\($0)", survey: $1, rank: bytes.int(3))
    }
    let prefer = bytes.int(4) == 0 ? "head\(bytes.int(heads.count))" : nil

    let merged = SurveyMerge.merge(base: base, heads: heads, prefer: prefer)
    let reference = written(merged.survey)
    precondition(written(SurveyMerge.merge(base: base, heads: heads, prefer: prefer).survey) == reference)
    precondition(
        written(SurveyMerge.merge(base: base, heads: heads.reversed(), prefer: prefer).survey) == reference,
        "the heads' order changed the merge")
    do {
        try merged.survey.validate(strict: false)
    } catch {
        preconditionFailure("the merge breaks a rule for stored content: \(error)")
    }
    if inputs.allSatisfy({ (try? $0.validate()) != nil }) {
        do {
            try merged.survey.validate()
        } catch {
            preconditionFailure("the merge of surveys that keep every rule breaks one: \(error)")
        }
    }
    let mergedIDs = Set(merged.survey.items.map(\.id))
    precondition(
        mergedIDs.isSubset(of: Set(surveys.flatMap { $0.items.map(\.id) })), "an item came from nowhere")
    let everywhere = surveys.dropFirst().reduce(Set(surveys[0].items.map(\.id))) {
        $0.intersection($1.items.map(\.id))
    }
    precondition(everywhere.isSubset(of: mergedIDs), "an item every head has was lost")

    let same = [surveys[0], surveys[0]].enumerated().map {
        SurveyMerge.Head(label: "head\($0)", survey: $1, rank: $0)
    }
    precondition(
        written(SurveyMerge.merge(base: base, heads: same).survey) == written(surveys[0]), "merge(x, x) != x")
    if let base {
        let pair = [base, surveys[1]].enumerated().map {
            SurveyMerge.Head(label: "head\($0)", survey: $1, rank: $0)
        }
        precondition(
            written(SurveyMerge.merge(base: base, heads: pair).survey) == written(surveys[1]),
            "merge(base, y) != y")
        if bytes.bool() { checkGroup(base: base, bytes: &bytes) }
    }
    return 0
}

/// Heads that share history the others lack, merged first as a group (README rule 12):
/// two or three heads edited from a revision A (itself edited from the base) merged from
/// A, then as one head with one or two heads edited from the base. The grouped merge must
/// not depend on the order of the group's heads or of the others, must keep the rules for
/// stored content, must keep every item all heads have and make none from nowhere, and
/// must not replace a title the group changed without a contest.
func checkGroup(base: Survey, bytes: inout Choices) {
    let fork = bytes.script(on: base)
    let inside = (0..<(2 + bytes.int(2))).map { _ in bytes.script(on: fork) }
    let outside = (0..<(1 + bytes.int(2))).map { _ in bytes.script(on: base) }
    guard ([fork] + inside + outside).allSatisfy({ (try? $0.validate(strict: false)) != nil }) else { return }
    let members = inside.enumerated().map {
        SurveyMerge.Head(label: "in\($0)", survey: $1, rank: bytes.int(3))
    }
    let others = outside.enumerated().map {
        SurveyMerge.Head(label: "out\($0)", survey: $1, rank: bytes.int(3))
    }
    func groupedMerge(_ members: [SurveyMerge.Head], _ others: [SurveyMerge.Head]) -> SurveyMerge.Result {
        let group = SurveyMerge.Head(
            merging: SurveyMerge.merge(base: fork, heads: members), of: members, from: .init(fork))
        return SurveyMerge.merge(base: base, heads: [group] + others)
    }
    func grouped(_ members: [SurveyMerge.Head], _ others: [SurveyMerge.Head]) -> Survey {
        groupedMerge(members, others).survey
    }
    let result = groupedMerge(members, others)
    let merged = result.survey
    // A title the group changed since the fork (even back to the base's) is replaced only
    // through a contest.
    func titles(_ survey: Survey) -> [UUID?: String] {
        var titles: [UUID?: String] = [nil: survey.title]
        for item in survey.items { titles[item.id] = item.title }
        return titles
    }
    let ownResult = titles(SurveyMerge.merge(base: fork, heads: members).survey)
    let now = titles(merged)
    let wholeItemTaken = Set(result.notes.filter { $0.kind == .tookWholeItem }.map(\.item))
    for (item, was) in titles(fork) {
        guard let value = ownResult[item], value != was, let taken = now[item], taken != value else {
            continue
        }
        precondition(
            result.contested.contains { $0.item == item && ["title", "item", "kind"].contains($0.field) }
                || item.map(wholeItemTaken.contains) == true,
            "a title the group changed was replaced without a contest")
    }
    precondition(
        written(grouped(members.reversed(), others.reversed())) == written(merged),
        "the heads' order changed a grouped merge")
    do {
        try merged.validate(strict: false)
    } catch {
        preconditionFailure("a grouped merge breaks a rule for stored content: \(error)")
    }
    let surveys = inside + outside
    let mergedIDs = Set(merged.items.map(\.id))
    precondition(
        mergedIDs.isSubset(of: Set(surveys.flatMap { $0.items.map(\.id) })),
        "a grouped merge made an item from nowhere")
    let everywhere = surveys.dropFirst().reduce(Set(surveys[0].items.map(\.id))) {
        $0.intersection($1.items.map(\.id))
    }
    precondition(everywhere.isSubset(of: mergedIDs), "a grouped merge lost an item every head has")
}

/// The survey's bytes, or the error its writer gives (a text XML cannot carry).
func written(_ survey: Survey) -> String {
    do {
        return String(decoding: try survey.plistData(), as: UTF8.self)
    } catch {
        return "error: \(error)"
    }
}

/// Choices read from the fuzzer's bytes; zeros once they run out.
struct Choices {
    let bytes: UnsafeBufferPointer<UInt8>
    var offset = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// A number below `count`.
    mutating func int(_ count: Int) -> Int { count <= 1 ? 0 : Int(byte()) % count }
    mutating func bool() -> Bool { byte() & 1 == 1 }

    /// Labels with repeats, a case variant, and "Café" in NFC and in NFD (equal as Swift
    /// strings, different as bytes).
    static let words = ["Soup", "soup", "Fish", "Caf\u{E9}", "Cafe\u{301}", "", "Tea & <cake>", "Pie"]
    mutating func word() -> String { Self.words[int(Self.words.count)] }

    static let ids = (1...6).map { UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", $0))! }
    mutating func id() -> UUID { Self.ids[int(Self.ids.count)] }

    mutating func labels(_ range: ClosedRange<Int>) -> [String] {
        (0..<(range.lowerBound + int(range.count))).map { _ in word() }
    }

    /// A kind with an answer that fits it (or none).
    mutating func body() -> (Item.Kind, Answer?) {
        let answered = bool()
        switch int(7) {
        case 0: return (.binary(options: labels(2...2)), answered ? .choice(int(2)) : nil)
        case 1: return (.textOnly(text: bool() ? word() : nil), nil)
        case 2: return (.textField(subtitle: bool() ? word() : nil), answered ? .text(word()) : nil)
        case 3:
            return (.datePicker, answered ? .date(Date(timeIntervalSince1970: Double(int(256)) * 3600)) : nil)
        case 4:
            let maximum = Double(1 + int(20))
            return (
                .slider(minimum: 0, maximum: maximum, roundToInteger: bool()),
                answered ? .number(Double(int(Int(maximum) + 1))) : nil
            )
        case 5:
            let options = labels(1...3)
            return (.picker(options: options), answered ? .text(options[int(options.count)]) : nil)
        default:
            let options = labels(1...3)
            return (.multiTF(options: options), answered ? .flags(options.map { _ in bool() }) : nil)
        }
    }

    mutating func item() -> Item {
        let (kind, answer) = body()
        return Item(id: id(), title: word(), kind: kind, answer: answer)
    }

    mutating func survey() -> Survey {
        Survey(checkedTitle: word(), items: (0..<int(5)).map { _ in item() })
    }

    /// `survey` after a few edits, inserts, removals, moves and title changes.
    mutating func script(on survey: Survey) -> Survey {
        var items = survey.items
        var title = survey.title
        for _ in 0..<int(6) {
            switch int(6) {
            case 0 where !items.isEmpty:
                let index = int(items.count)
                if bool() {
                    items[index].title = word()
                } else {
                    (items[index].kind, items[index].answer) = body()
                }
            case 1 where !items.isEmpty:
                items[int(items.count)].answer = nil
            case 2: items.insert(item(), at: int(items.count + 1))
            case 3 where !items.isEmpty: items.remove(at: int(items.count))
            case 4 where items.count > 1:
                let moved = items.remove(at: int(items.count))
                items.insert(moved, at: int(items.count + 1))
            default: title = word()
            }
        }
        return Survey(checkedTitle: title, items: items)
    }
}
