import Foundation
import PropertyList
import Surveys
import TestSupport
import Testing

/// Seeded random edit scripts on random surveys. The seed comes from `SURVEYSTORE_SEED`
/// (default 13), and every failure message names it: replay with
/// `SURVEYSTORE_SEED=<seed> swift test --filter MergePropertyTests`.
@Suite("Merge properties over random edit scripts")
struct MergePropertyTests {
    static var seed: UInt64 { SeededRandom.seed(fallback: 13) }
    static let cases = 300

    /// Random values for items; new ids count up from `nextID`.
    struct Generator {
        var random: SeededRandom
        var nextID = 1
        var nextLabel = 1

        mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }
        mutating func bool() -> Bool { Bool.random(using: &random) }
        mutating func word() -> String { ["Soup", "Fish", "Cake", "Tea", "Pie", "Jam"][int(0...5)] }

        mutating func newID() -> UUID {
            defer { nextID += 1 }
            return UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", nextID))!
        }

        /// A label no other option of the run has.
        mutating func newLabel() -> String {
            defer { nextLabel += 1 }
            return word() + "+\(nextLabel)"
        }

        mutating func options(_ count: ClosedRange<Int>) -> [String] {
            var labels: [String] = []
            for index in 0..<int(count) { labels.append(word() + "\(index)") }
            return labels
        }

        /// A random valid kind with a random valid answer (or none).
        mutating func body() -> (Item.Kind, Answer?) {
            let answered = bool()
            switch int(0...6) {
            case 0: return (.binary(options: options(2...2)), answered ? .choice(int(0...1)) : nil)
            case 1: return (.textOnly(text: bool() ? word() : nil), nil)
            case 2: return (.textField(subtitle: bool() ? word() : nil), answered ? .text(word()) : nil)
            case 3:
                return (
                    .datePicker,
                    answered ? .date(Date(timeIntervalSince1970: Double(int(0...1_000_000)) * 60)) : nil
                )
            case 4:
                let maximum = Double(int(1...20))
                return (
                    .slider(minimum: 0, maximum: maximum, roundToInteger: bool()),
                    answered ? .number(Double(int(0...Int(maximum)))) : nil
                )
            case 5:
                let labels = options(1...4)
                return (.picker(options: labels), answered ? .text(labels[int(0...labels.count - 1)]) : nil)
            default:
                let labels = options(1...4)
                return (.multiTF(options: labels), answered ? .flags(labels.map { _ in bool() }) : nil)
            }
        }

        mutating func item() -> Item {
            let (kind, answer) = body()
            return Item(id: newID(), title: word(), kind: kind, answer: answer)
        }

        /// A settings edit of `item` that keeps it valid and may invalidate another head's
        /// answer: options reordered (a positional answer following them), grown, shrunk
        /// or renamed in place (a picker's answer following its option); a slider's bounds
        /// narrowed or its rounding turned on.
        mutating func settingsEdit(_ item: Item) -> Item {
            var item = item
            switch item.kind {
            case .binary(let labels):
                if bool() {
                    item.kind = .binary(options: labels.reversed())
                    if case .choice(let index) = item.answer { item.answer = .choice(1 - index) }
                } else {
                    item.kind = .binary(options: [labels[0] + "~", labels[1]])
                }
            case .picker(var labels):
                switch int(0...3) {
                case 0: labels.reverse()
                case 1: labels.append(newLabel())
                case 2:
                    let index = int(0...labels.count - 1)
                    let renamed = newLabel()
                    if item.answer == .text(labels[index]) { item.answer = .text(renamed) }
                    labels[index] = renamed
                default:
                    guard labels.count > 1 else { break }
                    let removed = labels.remove(at: int(0...labels.count - 1))
                    if item.answer == .text(removed) { item.answer = nil }
                }
                item.kind = .picker(options: labels)
            case .multiTF(var labels):
                var flags: [Bool]? = if case .flags(let flags) = item.answer { flags } else { nil }
                switch int(0...3) {
                case 0:
                    labels.reverse()
                    flags?.reverse()
                case 1:
                    labels.append(newLabel())
                    flags?.append(bool())
                case 2: labels[int(0...labels.count - 1)] = newLabel()
                default:
                    guard labels.count > 1 else { break }
                    let index = int(0...labels.count - 1)
                    labels.remove(at: index)
                    flags?.remove(at: index)
                }
                item.kind = .multiTF(options: labels)
                item.answer = flags.map { .flags($0) }
            case .slider(let minimum, let maximum, let round):
                if bool(), maximum - minimum >= 2 {
                    let narrowed = maximum - 1
                    item.kind = .slider(minimum: minimum, maximum: narrowed, roundToInteger: round)
                    if case .number(let value) = item.answer, value > narrowed {
                        item.answer = .number(narrowed)
                    }
                } else {
                    item.kind = .slider(minimum: minimum, maximum: maximum, roundToInteger: true)
                    if case .number(let value) = item.answer { item.answer = .number(value.rounded(.down)) }
                }
            default: break
            }
            return item
        }

        /// A field edit of `item` that keeps it valid: its title, its answer, a setting,
        /// or (sometimes) its kind.
        mutating func edit(_ item: Item) -> Item {
            var item = item
            switch int(0...4) {
            case 0: item.title += "!\(int(0...99))"
            case 1:
                let (kind, answer) = body()
                item.kind = kind
                item.answer = answer
            case 2: item = settingsEdit(item)
            default:
                switch item.kind {
                case .binary: item.answer = item.answer == .choice(1) ? .choice(0) : .choice(1)
                case .textOnly(let text): item.kind = .textOnly(text: (text ?? "") + "+")
                case .textField: item.answer = .text(word() + "\(int(0...99))")
                case .datePicker:
                    item.answer = .date(Date(timeIntervalSince1970: Double(int(0...1_000_000)) * 60))
                case .slider(let minimum, let maximum, let round):
                    if bool() {
                        item.kind = .slider(minimum: minimum, maximum: maximum + 1, roundToInteger: round)
                    } else {
                        item.answer = .number(round ? maximum : (minimum + maximum) / 2 + 0.5)
                    }
                case .picker(let labels): item.answer = .text(labels[int(0...labels.count - 1)])
                case .multiTF(let labels): item.answer = .flags(labels.map { _ in bool() })
                }
            }
            return item
        }

        /// A random script applied to `survey`: edits, inserts, removals, moves, kind changes.
        mutating func randomScript(on survey: Survey) -> Survey {
            var items = survey.items
            var title = survey.title
            for _ in 0..<int(0...5) {
                switch int(0...5) {
                case 0 where !items.isEmpty, 1 where !items.isEmpty:
                    let index = int(0...items.count - 1)
                    items[index] = edit(items[index])
                case 2: items.insert(item(), at: int(0...items.count))
                case 3 where !items.isEmpty: items.remove(at: int(0...items.count - 1))
                case 4 where items.count > 1:
                    let moved = items.remove(at: int(0...items.count - 1))
                    items.insert(moved, at: int(0...items.count))
                default: title += "\(int(0...9))"
                }
            }
            return try! Survey(title: title, items: items)
        }
    }

    static func label(_ index: Int) -> String { "head\(index)" }

    static func heads(_ surveys: [Survey]) -> [SurveyMerge.Head] {
        surveys.enumerated().map { SurveyMerge.Head(label: label($0), survey: $1, rank: $0) }
    }

    static func bytes(_ survey: Survey) -> Data { (try? survey.plistData()) ?? Data() }

    @Test(
        "Random scripts on 2–4 heads: valid merges, identical bytes in any head order, nothing every head keeps is lost"
    )
    func randomScripts() throws {
        let seed = Self.seed
        var generator = Generator(random: SeededRandom(seed: seed))
        for index in 0..<Self.cases {
            let base = try Survey(
                title: "Base", items: (0..<generator.int(0...8)).map { _ in generator.item() })
            let surveys = (0..<generator.int(2...4)).map { _ in generator.randomScript(on: base) }
            let heads = Self.heads(surveys)
            let merged = SurveyMerge.merge(base: base, heads: heads)
            let context = "seed \(seed), case \(index); replay with SURVEYSTORE_SEED=\(seed)"
            #expect(throws: Never.self, "\(context): the merge is invalid") { try merged.survey.validate() }
            let reference = Self.bytes(merged.survey)
            var shuffled = heads
            for _ in 0..<3 {
                shuffled.shuffle(using: &generator.random)
                #expect(
                    Self.bytes(SurveyMerge.merge(base: base, heads: shuffled).survey) == reference,
                    "\(context): head order changed the merge")
            }
            let everywhere = surveys.dropFirst().reduce(Set(surveys[0].items.map(\.id))) {
                $0.intersection($1.items.map(\.id))
            }
            let mergedIDs = Set(merged.survey.items.map(\.id))
            #expect(everywhere.isSubset(of: mergedIDs), "\(context): an item every head has was lost")
            let known = Set(surveys.flatMap { $0.items.map(\.id) })
            #expect(mergedIDs.isSubset(of: known), "\(context): an item appeared from nowhere")
            // merge(x, x) = x, and a head equal to the base yields the other head.
            #expect(
                Self.bytes(SurveyMerge.merge(base: base, heads: Self.heads([surveys[0], surveys[0]])).survey)
                    == Self.bytes(surveys[0]), "\(context): merge(x, x) != x")
            #expect(
                Self.bytes(SurveyMerge.merge(base: nil, heads: Self.heads([surveys[0], surveys[0]])).survey)
                    == Self.bytes(surveys[0]), "\(context): two-way merge(x, x) != x")
            #expect(
                Self.bytes(SurveyMerge.merge(base: base, heads: Self.heads([base, surveys[1]])).survey)
                    == Self.bytes(surveys[1]), "\(context): merge(base, y) != y")
            #expect(
                Self.bytes(SurveyMerge.merge(base: base, heads: Self.heads([surveys[1], base])).survey)
                    == Self.bytes(surveys[1]), "\(context): merge(y, base) != y")
        }
    }

    /// What an item's answer says, by label for the kinds answered by position, each
    /// label renamed by `map` when it names it.
    static func meaning(_ item: Item, renaming map: [String: String] = [:]) -> [String] {
        switch (item.kind, item.answer) {
        case (.binary(let labels), .choice(let index)?): ["chose " + (map[labels[index]] ?? labels[index])]
        case (.picker, .text(let label)?): ["chose " + (map[label] ?? label)]
        case (.multiTF(let labels), .flags(let flags)?):
            zip(labels, flags).map { "\(map[$0] ?? $0)=\($1)" }.sorted()
        default: [item.answer.map { "\($0)" } ?? "none"]
        }
    }

    static func options(_ item: Item) -> [String]? {
        switch item.kind {
        case .binary(let labels), .picker(let labels), .multiTF(let labels): labels
        default: nil
        }
    }

    /// `survey` with the options of every binary and multiTF item (and picker, with
    /// `pickers`) in reverse order, each answer following its label.
    static func reversingOptions(of survey: Survey, pickers: Bool) throws -> Survey {
        try Survey(
            title: survey.title,
            items: survey.items.map { item in
                var item = item
                switch (item.kind, item.answer) {
                case (.binary(let labels), let answer):
                    item.kind = .binary(options: labels.reversed())
                    if case .choice(let index)? = answer { item.answer = .choice(1 - index) }
                case (.picker(let labels), _) where pickers: item.kind = .picker(options: labels.reversed())
                case (.multiTF(let labels), let answer):
                    item.kind = .multiTF(options: labels.reversed())
                    if case .flags(let flags)? = answer { item.answer = .flags(flags.reversed()) }
                default: break
                }
                return item
            })
    }

    @Test(
        "A head that only reorders options, merged with another head's random script: every answer keeps its labels"
    )
    func reorderedOptionsKeepLabels() throws {
        let seed = Self.seed
        var generator = Generator(random: SeededRandom(seed: seed ^ 0x0B7))
        for index in 0..<Self.cases {
            let base = try Survey(
                title: "Base", items: (0..<generator.int(1...8)).map { _ in generator.item() })
            let reordered = try Self.reversingOptions(of: base, pickers: false)
            let other = generator.randomScript(on: base)
            let context = "seed \(seed), case \(index); replay with SURVEYSTORE_SEED=\(seed)"
            for surveys in [[reordered, other], [other, reordered]] {
                let merged = SurveyMerge.merge(base: base, heads: Self.heads(surveys))
                #expect(throws: Never.self, "\(context): the merge is invalid") {
                    try merged.survey.validate()
                }
                for item in merged.survey.items {
                    guard let theirs = other.items.first(where: { $0.id == item.id }),
                        let original = base.items.first(where: { $0.id == item.id }),
                        theirs.kind.name == original.kind.name, Self.options(theirs) == Self.options(original)
                    else { continue }
                    #expect(
                        Self.meaning(item) == Self.meaning(theirs),
                        "\(context): item \(item.id) answers \(Self.meaning(item)), not \(Self.meaning(theirs))"
                    )
                }
            }
        }
    }

    @Test(
        "One head renames options in place, another reorders them, a third runs a random script: the merged options are the renamed labels in the new order, each answer on its option"
    )
    func renamedAndReorderedOptions() throws {
        let seed = Self.seed
        var generator = Generator(random: SeededRandom(seed: seed ^ 0x5107))
        for index in 0..<Self.cases {
            let base = try Survey(
                title: "Base", items: (0..<generator.int(1...8)).map { _ in generator.item() })
            // Every option renamed, or every other one, in place; answers follow.
            var renames: [UUID: [String: String]] = [:]
            let renamed = try Survey(
                title: base.title,
                items: base.items.map { item in
                    var item = item
                    guard let labels = Self.options(item) else { return item }
                    var map: [String: String] = [:]
                    for (offset, label) in labels.enumerated() where offset % 2 == 0 || generator.bool() {
                        map[label] = generator.newLabel()
                    }
                    renames[item.id] = map
                    let new = labels.map { map[$0] ?? $0 }
                    switch item.kind {
                    case .binary: item.kind = .binary(options: new)
                    case .picker:
                        item.kind = .picker(options: new)
                        if case .text(let label)? = item.answer { item.answer = .text(map[label] ?? label) }
                    default: item.kind = .multiTF(options: new)
                    }
                    return item
                })
            let reordered = try Self.reversingOptions(of: base, pickers: true)
            let other = generator.randomScript(on: base)
            let context = "seed \(seed), case \(index); replay with SURVEYSTORE_SEED=\(seed)"
            for surveys in [[renamed, reordered, other], [other, reordered, renamed]] {
                let merged = SurveyMerge.merge(base: base, heads: Self.heads(surveys))
                #expect(throws: Never.self, "\(context): the merge is invalid") {
                    try merged.survey.validate()
                }
                for original in base.items {
                    guard let map = renames[original.id], let labels = Self.options(original),
                        let theirs = other.items.first(where: { $0.id == original.id }), theirs == original,
                        let item = merged.survey.items.first(where: { $0.id == original.id })
                    else { continue }
                    #expect(
                        !merged.contested.contains { $0.item == original.id },
                        "\(context): item \(original.id) was contested")
                    #expect(
                        Self.options(item) == labels.reversed().map { map[$0] ?? $0 },
                        "\(context): item \(original.id) has options \(Self.options(item) ?? [])")
                    let expected = Self.meaning(original, renaming: map)
                    #expect(
                        Self.meaning(item) == expected,
                        "\(context): item \(original.id) answers \(Self.meaning(item)), not \(expected)")
                }
            }
        }
    }

    @Test(
        "One head renames and reorders a binary or multiTF's options at once, or grows or shrinks them; another runs a random script: an uncontested answer is one head's, by label"
    )
    func optionsChangedPastReading() throws {
        let seed = Self.seed
        var generator = Generator(random: SeededRandom(seed: seed ^ 0x0A75))
        for index in 0..<Self.cases {
            let base = try Survey(
                title: "Base", items: (0..<generator.int(1...8)).map { _ in generator.item() })
            // Each binary and multiTF item's options reversed with one of them renamed, or
            // (multiTF) one option added or removed; each answer stays on its label.
            let changed = try Survey(
                title: base.title,
                items: base.items.map { item in
                    var item = item
                    switch (item.kind, item.answer) {
                    case (.binary(let labels), let answer):
                        item.kind = .binary(options: [labels[1], generator.newLabel()])
                        if case .choice(let index)? = answer { item.answer = .choice(1 - index) }
                    case (.multiTF(var labels), let answer):
                        var flags: [Bool]? = if case .flags(let flags)? = answer { flags } else { nil }
                        switch generator.int(0...2) {
                        case 0 where labels.count > 1:
                            labels.reverse()
                            flags?.reverse()
                            labels[generator.int(0...labels.count - 1)] = generator.newLabel()
                        case 1 where labels.count > 1:
                            let removed = generator.int(0...labels.count - 1)
                            labels.remove(at: removed)
                            flags?.remove(at: removed)
                        default:
                            labels.insert(generator.newLabel(), at: 0)
                            flags?.insert(generator.bool(), at: 0)
                        }
                        item.kind = .multiTF(options: labels)
                        item.answer = flags.map { .flags($0) }
                    default: break
                    }
                    return item
                })
            let other = generator.randomScript(on: base)
            let context = "seed \(seed), case \(index); replay with SURVEYSTORE_SEED=\(seed)"
            for surveys in [[changed, other], [other, changed]] {
                let merged = SurveyMerge.merge(base: base, heads: Self.heads(surveys))
                #expect(throws: Never.self, "\(context): the merge is invalid") {
                    try merged.survey.validate()
                }
                for item in merged.survey.items
                where !merged.contested.contains(where: { $0.item == item.id }) {
                    switch item.kind {
                    case .binary, .multiTF: break
                    default: continue
                    }
                    let versions = ([base] + surveys).compactMap { $0.items.first { $0.id == item.id } }
                    #expect(
                        versions.contains { Self.meaning($0) == Self.meaning(item) },
                        "\(context): item \(item.id) answers \(Self.meaning(item)), as no head does")
                }
            }
        }
    }

    /// A criss-cross history from `base`: A and B each run a random script; M1 merges them
    /// preferring A, M2 preferring B. Returns A and B's merge (the virtual base's source),
    /// M1 and M2.
    static func crissCross(_ base: Survey, _ generator: inout Generator) -> (
        inner: SurveyMerge.Result, m1: Survey, m2: Survey
    ) {
        let sides = [generator.randomScript(on: base), generator.randomScript(on: base)]
        let inner = SurveyMerge.merge(base: base, heads: Self.heads(sides))
        let other = SurveyMerge.merge(base: base, heads: Self.heads(sides), prefer: label(1))
        return (inner, inner.survey, other.survey)
    }

    @Test(
        "Criss-cross histories (two merges of the same two heads, each edited again): from the virtual base, valid merges, identical bytes in any head order, nothing both heads keep is lost, merge(x, x) = x"
    )
    func crissCrossScripts() throws {
        let seed = Self.seed
        var generator = Generator(random: SeededRandom(seed: seed ^ 0xC155))
        for index in 0..<Self.cases {
            let base = try Survey(
                title: "Base", items: (0..<generator.int(0...8)).map { _ in generator.item() })
            let (inner, m1, m2) = Self.crissCross(base, &generator)
            let virtual = SurveyMerge.VirtualBase(merging: inner)
            let surveys = [generator.randomScript(on: m1), generator.randomScript(on: m2)]
            let heads = Self.heads(surveys)
            let merged = SurveyMerge.merge(virtualBase: virtual, heads: heads)
            let context = "seed \(seed), case \(index); replay with SURVEYSTORE_SEED=\(seed)"
            #expect(throws: Never.self, "\(context): the merge is invalid") { try merged.survey.validate() }
            #expect(
                Self.bytes(SurveyMerge.merge(virtualBase: virtual, heads: heads.reversed()).survey)
                    == Self.bytes(merged.survey), "\(context): head order changed the merge")
            let both = Set(surveys[0].items.map(\.id)).intersection(surveys[1].items.map(\.id))
            #expect(
                both.isSubset(of: merged.survey.items.map(\.id)),
                "\(context): an item both heads have was lost")
            #expect(
                Self.bytes(
                    SurveyMerge.merge(virtualBase: virtual, heads: Self.heads([surveys[0], surveys[0]]))
                        .survey)
                    == Self.bytes(surveys[0]), "\(context): merge(x, x) != x")
        }
    }

    @Test(
        "Criss-cross histories with disjoint edits after the two merges: nothing is contested but what the two merges chose differently, and every edit applies"
    )
    func crissCrossDisjointEdits() throws {
        let seed = Self.seed
        var generator = Generator(random: SeededRandom(seed: seed ^ 0xC0DE))
        var contestedSomewhere = false
        for index in 0..<Self.cases {
            let base = try Survey(
                title: "Base", items: (0..<generator.int(4...12)).map { _ in generator.item() })
            let (inner, m1, m2) = Self.crissCross(base, &generator)
            let virtual = SurveyMerge.VirtualBase(merging: inner)
            // Items both merges hold alike, about which the virtual base knows everything.
            let second = Dictionary(uniqueKeysWithValues: m2.items.map { ($0.id, $0) })
            let differing = Set(inner.contested.compactMap(\.item) + inner.notes.map(\.item))
            var free = m1.items.filter { second[$0.id] == $0 && !differing.contains($0.id) }.map(\.id)
            free.shuffle(using: &generator.random)
            var scripts = [[Operation](), [Operation]()]
            var edits: [UUID: Item] = [:]
            var touched = Set<UUID>()
            for id in free where generator.int(0...2) > 0 {
                let head = generator.int(0...1)
                touched.insert(id)
                switch generator.int(0...3) {
                case 0: scripts[head].append(.remove(id))
                case 1: scripts[head].append(.insert([generator.item()], after: id))
                default:
                    edits[id] = generator.edit(m1.items.first { $0.id == id }!)
                    scripts[head].append(.edit(id))
                }
            }
            var surveys: [Survey] = []
            for (script, start) in zip(scripts, [m1, m2]) {
                var items = start.items
                Self.apply(script, to: &items, edits: edits)
                surveys.append(try Survey(title: start.title, items: items))
            }
            let merged = SurveyMerge.merge(virtualBase: virtual, heads: Self.heads(surveys))
            let context = "seed \(seed), case \(index); replay with SURVEYSTORE_SEED=\(seed)"
            let spurious = merged.contested.filter { contest in
                contest.item.map { !differing.contains($0) } ?? (m1.title == m2.title)
            }
            #expect(
                spurious.isEmpty,
                "\(context): contested although only one head changed it: \(spurious.map { ($0.item, $0.field) })"
            )
            contestedSomewhere = contestedSomewhere || !merged.contested.isEmpty
            let result = Dictionary(uniqueKeysWithValues: merged.survey.items.map { ($0.id, $0) })
            for script in scripts {
                for operation in script {
                    switch operation {
                    case .edit(let id):
                        #expect(result[id] == edits[id], "\(context): the edit of \(id) was lost")
                    case .remove(let id):
                        #expect(result[id] == nil, "\(context): the removal of \(id) was lost")
                    case .insert(let new, _):
                        #expect(result[new[0].id] == new[0], "\(context): the insert \(new[0].id) was lost")
                    case .move: break
                    }
                }
            }
            for id in free where !touched.contains(id) {
                #expect(result[id] == second[id], "\(context): \(id), left alone, changed")
            }
        }
        #expect(contestedSomewhere, "seed \(seed): no case had the two merges choose differently")
    }

    /// One head's share of a disjoint set of edits.
    enum Operation {
        case edit(UUID)
        case remove(UUID)
        case insert([Item], after: UUID)
        case move(UUID, after: UUID)
    }

    static func apply(_ operations: [Operation], to items: inout [Item], edits: [UUID: Item]) {
        func index(_ id: UUID) -> Int { items.firstIndex { $0.id == id }! }
        for operation in operations {
            switch operation {
            case .edit(let id): items[index(id)] = edits[id]!
            case .remove(let id): items.remove(at: index(id))
            case .insert(let new, let anchor): items.insert(contentsOf: new, at: index(anchor) + 1)
            case .move(let id, let anchor):
                let item = items.remove(at: index(id))
                items.insert(item, at: index(anchor) + 1)
            }
        }
    }

    /// Whether moving the item at `from` to just after the anchor at `to` reads as that
    /// move alone: it jumps over two items or more, none of them (but the anchor) taken by
    /// another operation (`free`). A jump over one item is the same sequence as that item
    /// jumping the other way, and the merge cannot tell which of the two a head made.
    static func isUnambiguousMove(from: Int, after to: Int, in base: Survey, free: [UUID]) -> Bool {
        let over = from < to ? (from + 1)..<(to + 1) : (to + 1)..<max(to + 1, from)
        guard over.count >= 2 else { return false }
        let available = Set(free)
        return over.allSatisfy { $0 == to || available.contains(base.items[$0].id) }
    }

    @Test(
        "Disjoint edits (fields, kinds, removals, inserts, moves) merge with nothing contested and equal applying all edits"
    )
    func disjointScripts() throws {
        let seed = Self.seed
        var generator = Generator(random: SeededRandom(seed: seed ^ 0xD15))
        for index in 0..<Self.cases {
            let base = try Survey(
                title: "Base", items: (0..<generator.int(8...16)).map { _ in generator.item() })
            let headCount = generator.int(2...4)
            var free = base.items.map(\.id).shuffled(using: &generator.random)
            var reserved = Set<UUID>()
            var scripts = Array(repeating: [Operation](), count: headCount)
            var edits: [UUID: Item] = [:]
            let position = Dictionary(uniqueKeysWithValues: base.items.enumerated().map { ($1.id, $0) })
            // One structural operation per head, at its own anchor, on items nobody else touches.
            for head in 0..<headCount where free.count >= 3 {
                let anchor = free.removeLast()
                reserved.insert(anchor)
                if generator.bool() {
                    scripts[head].append(
                        .insert((0..<generator.int(1...2)).map { _ in generator.item() }, after: anchor))
                } else if let moved = free.firstIndex(where: {
                    Self.isUnambiguousMove(
                        from: position[$0]!, after: position[anchor]!, in: base, free: free)
                        && !reserved.contains($0)
                }) {
                    let id = free.remove(at: moved)
                    reserved.insert(id)
                    // The items it jumps over stay where they are on every head: were one
                    // removed or moved, the jump could read as theirs.
                    let (from, to) = (position[id]!, position[anchor]!)
                    let over = Set(
                        base.items[(min(from, to) + 1)..<(max(from, to) + (from < to ? 1 : 0))].map(\.id))
                    free.removeAll { over.contains($0) }
                    reserved.formUnion(over)
                    scripts[head].append(.move(id, after: anchor))
                }
            }
            // The remaining items are shared out for edits and removals.
            for id in free where generator.int(0...2) > 0 {
                let head = generator.int(0...headCount - 1)
                if generator.int(0...3) == 0 {
                    scripts[head].insert(.remove(id), at: 0)
                } else {
                    edits[id] = generator.edit(base.items[position[id]!])
                    scripts[head].insert(.edit(id), at: 0)
                }
            }
            let surveys = scripts.map { script in
                var items = base.items
                Self.apply(script, to: &items, edits: edits)
                return try! Survey(title: base.title, items: items)
            }
            var expected = base.items
            Self.apply(scripts.flatMap { $0 }, to: &expected, edits: edits)
            let merged = SurveyMerge.merge(base: base, heads: Self.heads(surveys))
            let context = "seed \(seed), case \(index); replay with SURVEYSTORE_SEED=\(seed)"
            #expect(
                merged.contested.isEmpty,
                "\(context): disjoint edits were contested: \(merged.contested.map(\.field))")
            #expect(merged.survey.items == expected, "\(context): the merge differs from applying every edit")
        }
    }

    @Test(
        "Three heads from two forks (two saved from A, the third from A's parent O), disjoint edits since each one's fork, set-backs to O's values among them: merged as a group first, nothing is contested, the merge equals applying every edit, whatever the heads' ranks"
    )
    func forkedDisjointEdits() throws {
        let seed = Self.seed
        var generator = Generator(random: SeededRandom(seed: seed ^ 0xF0C))
        var setBack = 0
        for index in 0..<Self.cases {
            let base = try Survey(
                title: "Base", items: (0..<generator.int(8...16)).map { _ in generator.item() })
            let original = Dictionary(uniqueKeysWithValues: base.items.map { ($0.id, $0) })
            var free = base.items.map(\.id).shuffled(using: &generator.random)
            // A: edits, removals, inserts; the items it touches are left to its two heads.
            var script: [Operation] = []
            var edits: [UUID: Item] = [:]
            var edited: [UUID] = []
            for _ in 0..<generator.int(1...4) where free.count > 4 {
                let id = free.removeLast()
                switch generator.int(0...4) {
                case 0: script.append(.remove(id))
                case 1: script.append(.insert([generator.item()], after: id))
                default:
                    edits[id] = generator.edit(original[id]!)
                    script.append(.edit(id))
                    edited.append(id)
                }
            }
            var items = base.items
            Self.apply(script, to: &items, edits: edits)
            let a = try Survey(title: generator.bool() ? "Base, A" : "Base", items: items)
            // H1 and H2 (from A) each take some of A's edits, and set them back to O's or
            // edit them again; the items nobody touched are shared out among all three.
            var scripts = [[Operation](), [Operation](), [Operation]()]
            var headEdits: [UUID: Item] = [:]
            var titles = [a.title, a.title, base.title]
            var expectedTitle = a.title
            for id in edited where generator.int(0...2) > 0 {
                let head = generator.int(0...1)
                if generator.bool() {
                    headEdits[id] = original[id]!
                    if edits[id] != original[id] { setBack += 1 }
                } else {
                    headEdits[id] = generator.edit(edits[id]!)
                }
                scripts[head].append(.edit(id))
            }
            if a.title != base.title, generator.bool() {
                titles[generator.int(0...1)] = base.title
                expectedTitle = base.title
                setBack += 1
            } else if a.title == base.title, generator.bool() {
                let head = generator.int(0...2)
                titles[head] = base.title + "\(head)"
                expectedTitle = titles[head]
            }
            for id in free where generator.int(0...2) > 0 {
                let head = generator.int(0...2)
                switch generator.int(0...3) {
                case 0: scripts[head].insert(.remove(id), at: 0)
                case 1: scripts[head].append(.insert([generator.item()], after: id))
                default:
                    headEdits[id] = generator.edit(original[id]!)
                    scripts[head].insert(.edit(id), at: 0)
                }
            }
            let surveys = try scripts.indices.map { head in
                var items = head < 2 ? a.items : base.items
                Self.apply(scripts[head], to: &items, edits: headEdits)
                return try Survey(title: titles[head], items: items)
            }
            var expected = a.items
            Self.apply(scripts.flatMap { $0 }, to: &expected, edits: headEdits)
            let context = "seed \(seed), case \(index); replay with SURVEYSTORE_SEED=\(seed)"
            var reference: Data?
            for ranks in [[0, 1, 2], [2, 1, 0], [1, 2, 0]] {
                let heads = surveys.indices.map {
                    SurveyMerge.Head(label: Self.label($0), survey: surveys[$0], rank: ranks[$0])
                }
                let group = SurveyMerge.merge(base: a, heads: Array(heads.prefix(2)))
                let merged = SurveyMerge.merge(
                    base: base,
                    heads: [
                        SurveyMerge.Head(merging: group, of: Array(heads.prefix(2)), from: .init(a)),
                        heads[2],
                    ])
                #expect(
                    merged.contested.isEmpty,
                    "\(context): disjoint edits were contested: \(merged.contested.map { ($0.item, $0.field) })"
                )
                #expect(
                    merged.survey.items == expected, "\(context): the merge differs from applying every edit")
                #expect(merged.survey.title == expectedTitle, "\(context): the title \(merged.survey.title)")
                #expect(
                    Set(merged.order) == Set(heads.map(\.label)), "\(context): the order names every head")
                let bytes = Self.bytes(merged.survey)
                #expect(
                    reference == nil || reference == bytes, "\(context): the heads' ranks changed the merge")
                reference = bytes
            }
        }
        #expect(setBack > 0, "seed \(seed): no case set a field back to O's value")
    }

    @Test(
        "Random scripts on three heads from two forks (two from A, one from A's parent O), merged as a group first: valid merges, identical bytes in any order the heads are passed, nothing every head keeps is lost, every contest lists each head that has the item, by its own label, the value taken among them, and a title the group changed since A (even back to O's) is never replaced without a contest"
    )
    func forkedScripts() throws {
        let seed = Self.seed
        var generator = Generator(random: SeededRandom(seed: seed ^ 0xF0F))
        var carried = 0
        var setBackContested = 0
        for index in 0..<Self.cases {
            let base = try Survey(
                title: "Base", items: (0..<generator.int(0...8)).map { _ in generator.item() })
            let a = generator.randomScript(on: base)
            var surveys = [
                generator.randomScript(on: a), generator.randomScript(on: a),
                generator.randomScript(on: base),
            ]
            // Now and then the first head sets the title back to the base's.
            if generator.int(0...3) == 0 {
                surveys[0] = try Survey(title: base.title, items: surveys[0].items)
            }
            let heads = Self.heads(surveys)
            func merge(_ heads: [SurveyMerge.Head], prefer: String? = nil) -> SurveyMerge.Result {
                let pair = heads.filter { $0.label != Self.label(2) }
                let group = SurveyMerge.Head(
                    merging: SurveyMerge.merge(base: a, heads: pair, prefer: prefer), of: pair, from: .init(a)
                )
                return SurveyMerge.merge(
                    base: base, heads: [group] + heads.filter { $0.label == Self.label(2) }, prefer: prefer)
            }
            let merged = merge(heads)
            let context = "seed \(seed), case \(index); replay with SURVEYSTORE_SEED=\(seed)"
            #expect(throws: Never.self, "\(context): the merge is invalid") { try merged.survey.validate() }
            #expect(merged.order == [0, 1, 2].map(Self.label), "\(context): the order \(merged.order)")
            let reference = Self.bytes(merged.survey)
            for order in [[2, 1, 0], [1, 2, 0]] {
                #expect(
                    Self.bytes(merge(order.map { heads[$0] }).survey) == reference,
                    "\(context): head order changed the merge")
            }
            let everywhere = surveys.dropFirst().reduce(Set(surveys[0].items.map(\.id))) {
                $0.intersection($1.items.map(\.id))
            }
            #expect(
                everywhere.isSubset(of: merged.survey.items.map(\.id)),
                "\(context): an item every head has was lost")
            for contest in merged.contested {
                let having = surveys.indices.filter { head in
                    contest.item.map { id in surveys[head].items.contains { $0.id == id } } ?? true
                }.map(Self.label)
                #expect(
                    contest.values.map(\.label).sorted() == having,
                    "\(context): \(contest.field) of \(contest.item?.uuidString ?? "the title") lists \(contest.values.map(\.label)), not \(having)"
                )
                #expect(
                    having.contains(contest.chosen)
                        && contest.values.contains { $0.label == contest.chosen && !$0.isUnchanged },
                    "\(context): \(contest.field) took the value of \(contest.chosen)")
                if !contest.values.contains(where: { $0.label == Self.label(2) && !$0.isUnchanged }) {
                    carried += 1
                }
            }
            // A title the group changed since A is never replaced without a contest; where
            // the group set it back to the base's value and the third head changed it, the
            // two are contested whichever wins.
            let grouped = SurveyMerge.merge(base: a, heads: heads.filter { $0.label != Self.label(2) }).survey
            func titles(_ survey: Survey) -> [UUID?: String] {
                var titles: [UUID?: String] = [nil: survey.title]
                for item in survey.items { titles[item.id] = item.title }
                return titles
            }
            let (before, mine, now, original, third) = (
                titles(a), titles(grouped), titles(merged.survey), titles(base), titles(surveys[2])
            )
            let wholeItemTaken = Set(merged.notes.filter { $0.kind == .tookWholeItem }.map(\.item))
            for (item, was) in before {
                guard let value = mine[item], value != was, let result = now[item] else { continue }
                let isContested =
                    merged.contested.contains {
                        $0.item == item && ["title", "item", "kind"].contains($0.field)
                    }
                    || item.map(wholeItemTaken.contains) == true
                let name = item?.uuidString ?? "the survey"
                #expect(
                    result == value || isContested,
                    "\(context): the title of \(name) changed in the group was replaced without a contest")
                if value == original[item], let other = third[item], other != value {
                    #expect(
                        isContested, "\(context): the title of \(name) set back in the group is not contested"
                    )
                    setBackContested += 1
                }
            }
            // Preferring a head of the group puts its value first, as preferring it alone would.
            let preferred = merge(heads, prefer: Self.label(1))
            #expect(throws: Never.self, "\(context): the merge is invalid") {
                try preferred.survey.validate()
            }
            #expect(preferred.order.first == Self.label(1), "\(context): the order \(preferred.order)")
        }
        #expect(carried > 0, "seed \(seed): no case carried a contest of the group's alone")
        #expect(
            setBackContested > 0, "seed \(seed): no case set back in the group a field the third head changed"
        )
    }
}
