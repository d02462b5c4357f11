import Foundation
import PropertyList

/// The item-level three-way merge of a base survey and any number of heads.
///
/// Every choice is deterministic. Heads are ranked (the winner first, as the revision
/// graph orders them); a *preferred* head, when named, goes first. That order is the
/// *preference order*: whenever a choice has to be made, the first head in it that has a
/// say decides. The rules:
///
/// 1. A field changed on one side only is taken; the same change on several sides is
///    taken; different changes are *contested*: the value of the first head in
///    preference order that changed the field is taken, and the contest is reported with
///    every head's value.
/// 2. Fields of one item merge independently (title on one side, answer on the other).
/// 3. An item removed on one side and modified on another is kept, modified (an edit
///    never loses to a removal), and reported.
/// 4. An item removed on every side that changed it (the others left it as in the
///    base, or merely moved it) is removed.
/// 5. Order merges apart from content. Each head's *moved* items are the common items
///    outside the longest run it keeps in base order. Items no head moved keep the base
///    order; every other item (moved, or new) is placed after the item that precedes it
///    in the first head (in preference order) that moved or added it. An item moved to
///    different places takes the first head's place, and the contest is reported (field
///    `position`). No item is duplicated or lost.
/// 6. Inserts after the same item on several sides are all kept, each side's run
///    together, the runs in preference order.
/// 7. An item added on several sides with the same id: equal, one item; different,
///    merged field by field without a base (every difference contested). Added at
///    different places (after different items among those all these heads keep), it
///    takes the first head's place, and the contest is reported (field `position`).
/// 8. When an item's kind differs anywhere, its kind, settings and answer merge as one
///    unit (field `kind`, its value a dictionary of the three); a kind change against an
///    edit of a setting or the answer is contested.
/// 9. An item whose merged fields break a rule of the model takes the whole item of the
///    first head (in preference order) that changed it (without a base, the first that
///    has it); this is reported as a contest of the field `item`.
/// 10. Heads are sorted by rank before anything else, so the order in which they are
///     passed (or arrived) never changes the result.
/// 11. Answers follow their options. A binary or multiTF answer (a position in the
///     options) follows its labels: when a head holds the reference options (the base's)
///     in another order, its answer is compared by label, and the merged answer is put
///     against the merged options. When every head's options are the base's reordered or
///     renamed in place (as many labels, each label shared with the base at the base's
///     place), the one reorder and each option's one rename are applied together, every
///     answer (a picker's label too) read and written by option; two reorders, two
///     renames of one option or merged labels that are not distinct leave the option
///     lists to merge as one field. A binary or multiTF item whose options a head renamed
///     and reordered at once, grew or shrank (no answer can follow its option) merges as
///     one unit, as in rule 8; so does one whose options are unknown on a side or in the
///     base, unless every head holds the same options.
/// 12. A base may be *virtual* (``VirtualBase``): several bases merged by these rules,
///     whatever they contested unknown. A head's value of an unknown field counts as a
///     change (heads that agree take it, heads that differ contest it); an item unknown as
///     a whole is kept when a head has it; an item whose place is unknown is placed as
///     moved on every head that has it. A head may be a *group*
///     (``Head/init(merging:of:from:)``): heads merged first, whatever they contested,
///     and whatever they changed since their own base, unknown on that head alone (its
///     value counts as a change). Its contests are carried into
///     the merge, and every contest lists each head of a group with its own value.
///
/// Without a base (its content pruned or unreadable, or no common ancestor) the merge is
/// *two-way*: every difference between heads is contested, items are kept if any head
/// has them, and the order is the first head's, with other heads' items after their
/// predecessors.
public enum SurveyMerge {
    /// One head to merge.
    public struct Head: Sendable {
        /// An opaque label (the revision id), used in reports and to name the preferred head.
        public var label: String
        /// The head's survey.
        public var survey: Survey
        /// Its place in the winner order: 0 for the winner. Ties are broken by label.
        public var rank: Int
        /// When the head stands for a group of heads merged first: that merge.
        var group: Group?

        /// - Parameters:
        ///   - label: The head's label (its revision id).
        ///   - survey: Its content.
        ///   - rank: Its place in the winner order, 0 for the winner.
        public init(label: String, survey: Survey, rank: Int) {
            self.label = label
            self.survey = survey
            self.rank = rank
        }

        /// A head that stands for `heads`, merged first into `result` from `base` because
        /// they share history the other heads lack (see ``SurveyMerge``, rule 12).
        ///
        /// Merged further, what `result` contested (and every item it kept although some
        /// of `heads` lacked it) is *unknown* on this head: its value counts as a change,
        /// so that the contest is carried into the merge, or contested again with another
        /// head's change, each of `heads` listed with its own value. So does every field
        /// `result` holds differently from `base` (or whose value in `base` is unknown), and
        /// whatever a group among `heads` leaves unknown: a change made since `base` (or
        /// since a nested group's own base) counts as one from the merge's own base too,
        /// even when it sets the field back to that base's value, so that another head's
        /// change of the field contests it rather than silently replacing it. The head takes the
        /// label of the first of `heads` in `result`'s preference order (its place among
        /// the heads, and the one `prefer` names) and the least rank of `heads`.
        ///
        /// - Parameters:
        ///   - result: The merge of `heads`.
        ///   - heads: The heads merged (groups among them too).
        ///   - base: The base `heads` were merged from (`nil`: a two-way merge, in which
        ///     `result` contested every difference).
        public init(merging result: Result, of heads: [Head], from base: VirtualBase?) {
            var leaves: [String: Leaf] = [:]
            for head in heads {
                if let group = head.group {
                    for leaf in group.leaves { leaves[leaf.label] = leaf }
                } else {
                    leaves[head.label] = Leaf(label: head.label, survey: head.survey, base: base)
                }
            }
            label = result.order.first ?? heads.first?.label ?? ""
            survey = result.survey
            rank = heads.map(\.rank).min() ?? 0
            group = Group(
                leaves: result.order.compactMap { leaves[$0] },
                contested: result.contested, notes: result.notes,
                unknown: VirtualBase(merging: result).markingChanges(of: result.survey, since: base)
                    .absorbing(heads.compactMap { $0.group?.unknown }, of: result.survey))
        }

        /// Whether the head stands for a group of heads merged first.
        public var isGroup: Bool { group != nil }
    }

    /// A head of a group merged first, as it was.
    struct Leaf: Sendable {
        var label: String
        var survey: Survey
        /// The base it was merged from, in the innermost group that holds it (`nil`: a
        /// two-way merge): what it changed is what it holds differently from this.
        var base: VirtualBase?
    }

    /// The merge a group head stands for.
    struct Group: Sendable {
        /// Its heads, in its preference order (those of the groups it merged, in their place).
        var leaves: [Leaf]
        /// What it contested, each value that of one of `leaves`.
        var contested: [Contest]
        /// What else it decided.
        var notes: [Note]
        /// What it contested, as unknown fields (its survey is the merge's).
        var unknown: VirtualBase
    }

    /// One head's value of a contested field (`nil`: absent).
    public struct HeadValue: Sendable, Equatable {
        /// The head's label.
        public var label: String
        /// Its value of the field.
        public var value: PropertyList?
        /// Whether the head left the field as it was in the base (for `position`, did not
        /// move the item): its value is listed, but it is not one of the changes that
        /// contest. Always `false` in a two-way merge, which has no base.
        public var isUnchanged: Bool
        /// For a binary answer, the label of the option it chooses among this head's
        /// options (``Item/chosenOption``), which a person knows it by rather than by its
        /// index; `nil` for any other value.
        public var option: String?

        /// Creates a head's value.
        ///
        /// - Parameters:
        ///   - label: The head's label.
        ///   - value: Its value of the field (`nil`: absent).
        ///   - isUnchanged: Whether the head left the field as it was in the base.
        ///   - option: For a binary answer, the label of the option it chooses.
        public init(label: String, value: PropertyList?, isUnchanged: Bool = false, option: String? = nil) {
            self.label = label
            self.value = value
            self.isUnchanged = isUnchanged
            self.option = option
        }
    }

    /// A field the heads changed in different ways.
    public struct Contest: Sendable, Equatable {
        /// The item, or `nil` for the survey's title.
        public var item: UUID?
        /// The item's title in the merge (the survey's title for the title itself).
        public var itemTitle: String
        /// The field: `title`, `kind`, a setting, `answer`, `position` (rule 5) or `item`
        /// (rule 9, the whole item).
        public var field: String
        /// The head whose value was taken.
        public var chosen: String
        /// The value taken.
        public var chosenValue: PropertyList?
        /// Each head's value, in preference order (only heads that have the item).
        public var values: [HeadValue]
        /// For a binary answer, the label of the option the value taken chooses (the
        /// chosen head's ``HeadValue/option``); `nil` for any other value.
        public var chosenOption: String? = nil
    }

    /// Something the merge decided that a person should know, beyond contests.
    public struct Note: Sendable, Equatable {
        /// What happened.
        public enum Kind: String, Sendable {
            /// Removed on some heads, modified on others: kept (rule 3).
            case keptDespiteRemoval
            /// The merged fields broke a rule; the whole item of the first head that changed
            /// it was taken (rule 9).
            case tookWholeItem
            /// Two-way merge, or a virtual base that cannot tell whether the item was added or
            /// removed (rule 12): only some heads have the item; kept.
            case keptWithoutBase
        }
        /// The item the note is about.
        public var item: UUID
        /// The item's title, for messages.
        public var itemTitle: String
        /// What the merge did.
        public var kind: Kind
        /// The heads concerned (the removers; the head whose item was taken; the heads
        /// that have it).
        public var heads: [String]
    }

    /// The merged survey and what was decided.
    public struct Result: Sendable {
        /// The merge; always valid.
        public var survey: Survey
        /// Fields the heads changed differently, in the order of the merged survey (the
        /// title first).
        public var contested: [Contest]
        /// Other decisions worth reporting.
        public var notes: [Note]
        /// Whether there was no base.
        public var isTwoWay: Bool
        /// The labels of the heads in preference order.
        public var order: [String]
        /// Whether nothing was contested.
        public var isClean: Bool { contested.isEmpty }
    }

    /// Merges `heads` from `base`.
    ///
    /// - Parameters:
    ///   - base: The common ancestor's survey, or `nil` for a two-way merge.
    ///   - heads: The heads, in any order (their ranks order them).
    ///   - prefer: The label of a head to put first in preference order.
    /// - Returns: The merge, always a valid survey (an empty one when there are no heads).
    public static func merge(base: Survey?, heads: [Head], prefer: String? = nil) -> Result {
        merge(virtualBase: base.map(VirtualBase.init), heads: heads, prefer: prefer)
    }

    /// Merges `heads` from a base that may be *virtual*: the merge of several bases, the
    /// fields they disagreed on unknown (see ``VirtualBase``).
    ///
    /// A field whose base value is unknown merges as in a two-way merge: every head's
    /// value counts as a change, so the heads' one value is taken and different values
    /// are contested. An item whose presence is unknown is kept when any head has it, and
    /// an item whose place is unknown is placed as one every head that has it moved.
    ///
    /// - Parameters:
    ///   - virtualBase: The base, or `nil` for a two-way merge.
    ///   - heads: The heads, in any order (their ranks order them).
    ///   - prefer: The label of a head to put first in preference order.
    /// - Returns: The merge, always a valid survey (an empty one when there are no heads).
    public static func merge(virtualBase: VirtualBase?, heads: [Head], prefer: String? = nil) -> Result {
        var ordered = heads.sorted { ($0.rank, $0.label) < ($1.rank, $1.label) }
        if let prefer,
            let index = ordered.firstIndex(where: { head in
                head.label == prefer || head.group?.leaves.contains { $0.label == prefer } == true
            })
        {
            ordered.insert(ordered.remove(at: index), at: 0)
        }
        var state = MergeState(base: virtualBase, heads: ordered)
        return state.run()
    }

    /// A base for a merge: one survey, or the merge of several bases (the best common
    /// ancestors of a criss-cross history) with what they disagreed on left *unknown*.
    ///
    /// A merge from a virtual base counts a head's value of an unknown field as a change,
    /// whatever it is: a value that one base had and the other did not tells nothing of
    /// which head changed it.
    public struct VirtualBase: Sendable, Equatable {
        /// The survey: one base's, or the merge of several (a field they disagreed on holds
        /// the value the merge took).
        public var survey: Survey
        /// Whether the survey's title is unknown.
        var isTitleUnknown = false
        /// The unknown fields of each item: field names of the interchange form, `position`
        /// for its place among the items, `item` for the whole item (its presence too).
        var unknownFields: [UUID: Set<String>] = [:]

        /// A base that is `survey`, nothing unknown.
        ///
        /// - Parameter survey: The base's survey.
        public init(_ survey: Survey) {
            self.survey = survey
        }

        /// The virtual base made by merging several bases: `result`'s survey, with every
        /// field it contested unknown (a `kind` contest makes the kind, its settings and the
        /// answer unknown; a `position` contest the item's place; an `item` contest the
        /// whole item), and every item it kept although some of the bases lacked it
        /// (`keptDespiteRemoval`, `keptWithoutBase`) unknown as a whole.
        ///
        /// - Parameter result: The merge of the bases (itself from their own base, or
        ///   two-way).
        public init(merging result: Result) {
            survey = result.survey
            for contest in result.contested {
                guard let item = contest.item else {
                    isTitleUnknown = true
                    continue
                }
                switch contest.field {
                case "kind": unknownFields[item, default: []].formUnion(MergeState.bodyFields + ["kind"])
                default: unknownFields[item, default: []].insert(contest.field)
                }
            }
            for note in result.notes where note.kind != .tookWholeItem {
                unknownFields[note.item, default: []].insert("item")
            }
        }

        /// This, with every field that `survey` holds differently from `base` unknown too
        /// (or whose value `base` leaves unknown): the title, the fields of each item both
        /// have (a changed `kind` makes the kind, its settings and the answer unknown, as a
        /// `kind` contest does), and the place of each item `survey` moved since `base`
        /// (rule 5), or whose place there is unknown. An item `survey` added or removed is
        /// left as it is.
        func markingChanges(of survey: Survey, since base: VirtualBase?) -> VirtualBase {
            guard let base else { return self }
            var marked = self
            if base.isTitleUnknown || survey.title != base.survey.title { marked.isTitleUnknown = true }
            let before = Dictionary(
                base.survey.items.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            let unknownPlaces = base.unknownPlaces
            let moved = base.moved(in: survey)
            let names = Set(Item.fieldOrder)
            for item in survey.items {
                guard let was = before[item.id] else { continue }
                var fields = base.unknown(item.id).intersection(names)
                if moved.contains(item.id) || unknownPlaces.contains(item.id) { fields.insert("position") }
                if item != was {
                    let now = item.fields
                    let then = was.fields
                    for name in Item.fieldOrder where now[name] != then[name] { fields.insert(name) }
                    // A binary or multiTF answer is a place in the options: with the options
                    // reordered, the same place may hold another option, and the answer
                    // changed although its value did not.
                    if fields.contains("options"), !fields.contains("answer"),
                        ["binary", "multiTF"].contains(item.kind.name), item.kind.name == was.kind.name,
                        MergeState.answer(now["answer"], from: now["options"], to: then["options"])
                            != then["answer"]
                    {
                        fields.insert("answer")
                    }
                }
                if fields.contains("kind") { fields.formUnion(MergeState.bodyFields + ["kind"]) }
                if !fields.isEmpty { marked.unknownFields[item.id, default: []].formUnion(fields) }
            }
            return marked
        }

        /// This, with what `others` (the groups merged into `survey`, each as one head) leave
        /// unknown unknown too, for the items `survey` holds: a change a group made since its
        /// own base stays a change through every merge above it, even where its value is
        /// that merge's base value (a field set back, then merged from a base that had it).
        func absorbing(_ others: [VirtualBase], of survey: Survey) -> VirtualBase {
            guard !others.isEmpty else { return self }
            var merged = self
            let present = Set(survey.items.map(\.id))
            for other in others {
                if other.isTitleUnknown { merged.isTitleUnknown = true }
                for (item, fields) in other.unknownFields where present.contains(item) {
                    merged.unknownFields[item, default: []].formUnion(fields)
                }
            }
            return merged
        }

        /// The items whose place is unknown (their `position`, or the whole item).
        var unknownPlaces: Set<UUID> {
            Set(unknownFields.filter { !$0.value.isDisjoint(with: ["position", "item"]) }.keys)
        }

        /// The items `survey` moved from this base (rule 5): among those whose place here
        /// is known, the ones outside the longest run `survey` keeps in this order.
        func moved(in survey: Survey) -> Set<UUID> {
            let places = unknownPlaces
            let order = self.survey.items.map(\.id).filter { !places.contains($0) }
            let known = Set(order)
            let sequence = survey.items.map(\.id).filter { known.contains($0) }
            return Set(sequence).subtracting(OrderMatching.stableItems(base: order, side: sequence))
        }

        /// Whether nothing is unknown: the base is one survey as it was.
        public var isExact: Bool { !isTitleUnknown && unknownFields.isEmpty }

        /// The fields of `item` whose base value is unknown (every field when the item is).
        func unknown(_ item: UUID) -> Set<String> {
            guard let fields = unknownFields[item] else { return [] }
            return fields.contains("item") ? fields.union(Item.fieldOrder + ["position", "item"]) : fields
        }
    }
}

/// The work of one merge.
struct MergeState {
    let base: Survey?
    /// The base with what is unknown of it (`nil`: a two-way merge).
    let virtualBase: SurveyMerge.VirtualBase?
    let heads: [SurveyMerge.Head]
    let baseItems: [UUID: Item]
    let headItems: [[UUID: Item]]
    var contested: [SurveyMerge.Contest] = []
    var notes: [SurveyMerge.Note] = []
    /// Per head: what a group head leaves unknown (`nil` for a head that is one revision).
    let sideUnknown: [SurveyMerge.VirtualBase?]
    /// The fields merged without a contest although a group head's value was unknown:
    /// the heads whose value was taken (see `carryGroups`).
    var taken: [FieldKey: Set<String>] = [:]
    /// Per head: the items it moved (rule 5).
    var moved: [Set<UUID>] = []

    init(base virtualBase: SurveyMerge.VirtualBase?, heads: [SurveyMerge.Head]) {
        self.virtualBase = virtualBase
        sideUnknown = heads.map { $0.group?.unknown }
        let base = virtualBase?.survey
        self.base = base
        self.heads = heads
        baseItems = Dictionary(
            (base?.items ?? []).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        headItems = heads.map { head in
            Dictionary(head.survey.items.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        }
    }

    var labels: [String] { heads.map(\.label) }

    mutating func run() -> SurveyMerge.Result {
        guard let first = heads.first else {
            return SurveyMerge.Result(
                survey: base ?? Self.empty, contested: [], notes: [], isTwoWay: base == nil, order: [])
        }
        // The title.
        let title = mergeField(
            "title",
            base: virtualBase?.isTitleUnknown == true
                ? .none : base.map { .some(.string($0.title)) } ?? .none,
            sides: heads.map { .string($0.survey.title) },
            labels: labels, item: nil, itemTitle: first.survey.title,
            forced: sideUnknown.map { $0?.isTitleUnknown == true })
        let mergedTitle = title?.stringValue ?? first.survey.title

        // Content, item by item, in a fixed order: base order, then each head's.
        var merged: [UUID: Item] = [:]
        var candidates: [UUID] = []
        var seen = Set<UUID>()
        for id in (base?.items.map(\.id) ?? []) + heads.flatMap({ $0.survey.items.map(\.id) })
        where seen.insert(id).inserted {
            candidates.append(id)
        }
        for id in candidates {
            let present = heads.indices.filter { headItems[$0][id] != nil }
            guard !present.isEmpty else { continue }
            let sides = present.map { (label: heads[$0].label, item: headItems[$0][id]!) }
            let unknown = virtualBase?.unknown(id) ?? []
            // What a group head contested is unknown on that head.
            let sideUnknowns = present.map { sideUnknown[$0]?.unknown(id) ?? [] }
            if let baseItem = baseItems[id], !unknown.contains("item") {
                let removers = heads.indices.filter { headItems[$0][id] == nil }.map { heads[$0].label }
                // A field whose base value is unknown is changed on every head that has it,
                // and one unknown on a head is changed on that head.
                let modified =
                    sides.contains { $0.item != baseItem } || unknown.contains { $0 != "position" }
                    || sideUnknowns.contains { $0.contains { $0 != "position" } }
                if !removers.isEmpty {
                    guard modified else { continue }  // rule 4
                    notes.append(
                        .init(
                            item: id, itemTitle: sides[0].item.title, kind: .keptDespiteRemoval,
                            heads: removers))
                }
                merged[id] = mergeItem(
                    id: id, base: baseItem, unknown: unknown, sides: sides, sideUnknown: sideUnknowns)
            } else {
                // Without a base, or with one that cannot tell whether the item was added
                // or removed, an item only some heads have is kept.
                if (base == nil || baseItems[id] != nil) && present.count < heads.count {
                    notes.append(
                        .init(
                            item: id, itemTitle: sides[0].item.title, kind: .keptWithoutBase,
                            heads: sides.map(\.label)))
                }
                merged[id] = mergeItem(
                    id: id, base: nil, unknown: [], sides: sides, sideUnknown: sideUnknowns)
            }
        }

        let order = mergeOrder(keep: Set(merged.keys))
        let items = order.map { merged[$0]! }
        carryGroups(merged: merged, title: mergedTitle)
        let position = Dictionary(
            order.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        let fieldRank = Dictionary(
            (["item", "position"] + Item.fieldOrder).enumerated().map { ($1, $0) },
            uniquingKeysWith: { a, _ in a })
        contested = contested.enumerated().sorted { a, b in
            let keyA = (
                a.element.item.flatMap { position[$0] } ?? -1, fieldRank[a.element.field] ?? 99, a.offset
            )
            let keyB = (
                b.element.item.flatMap { position[$0] } ?? -1, fieldRank[b.element.field] ?? 99, b.offset
            )
            return keyA < keyB
        }.map(\.element)
        notes = notes.enumerated().sorted { a, b in
            (position[a.element.item] ?? Int.max, a.offset) < (position[b.element.item] ?? Int.max, b.offset)
        }.map(\.element)
        // Every item is valid on its own (a head's item as it was, or one checked after
        // merging) and the ids are unique (one item per id), so the survey is valid
        // without checking it again.
        let survey = Survey(checkedTitle: mergedTitle, items: items)
        return SurveyMerge.Result(
            survey: survey, contested: contested, notes: notes, isTwoWay: base == nil,
            order: heads.flatMap { head in head.group?.leaves.map(\.label) ?? [head.label] })
    }

    static let empty = Survey(checkedTitle: "", items: [])

    // MARK: Fields

    /// Merges one field. `base` is `.none` without a base, `.some(nil)` when the base
    /// lacks the field; `forced` tells, side by side, whether the side's value is unknown
    /// (a group head's contest), which counts as a change. Returns the merged value (`nil`:
    /// absent) and records a contest.
    mutating func mergeField(
        _ field: String, base: PropertyList??, sides: [PropertyList?], labels: [String], item: UUID?,
        itemTitle: String, forced: [Bool] = []
    ) -> PropertyList? {
        let changed: [Int]
        if case .some(let baseValue) = base {
            changed = sides.indices.filter { sides[$0] != baseValue || ($0 < forced.count && forced[$0]) }
            if changed.isEmpty { return baseValue }
        } else {
            changed = Array(sides.indices)
        }
        let chosen = changed[0]
        if changed.allSatisfy({ sides[$0] == sides[chosen] }) {
            if forced.contains(true) {
                taken[FieldKey(item: item, field: field)] = Set(
                    changed.filter { sides[$0] == sides[chosen] }.map { labels[$0] })
            }
            return sides[chosen]
        }
        contested.append(
            .init(
                item: item, itemTitle: itemTitle, field: field, chosen: labels[chosen],
                chosenValue: sides[chosen],
                values: sides.indices.map {
                    .init(label: labels[$0], value: sides[$0], isUnchanged: !changed.contains($0))
                }))
        return sides[chosen]
    }

    static let bodyFields = Item.fieldOrder.filter { $0 != "title" }

    /// Merges one item's fields; `unknown` names the fields whose base value is unknown,
    /// `sideUnknown` side by side those unknown on that side (a group head's contests).
    mutating func mergeItem(
        id: UUID, base: Item?, unknown: Set<String>, sides: [(label: String, item: Item)],
        sideUnknown: [Set<String>] = []
    ) -> Item {
        func unknownOn(_ side: Int) -> Set<String> { side < sideUnknown.count ? sideUnknown[side] : [] }
        func forced(_ fields: Set<String>) -> [Bool] {
            sides.indices.map { !unknownOn($0).isDisjoint(with: fields) }
        }
        // Most items are unchanged, or changed one way only: every field then resolves to
        // that one version, which is valid as it is. (A field whose base value is unknown
        // is changed on every head, and merges as the heads have it; one unknown on a
        // side is changed on that side.)
        let isKnown = unknown.allSatisfy { $0 == "position" }
        let changedSides = sides.indices.filter {
            sides[$0].item != base || !isKnown || !unknownOn($0).allSatisfy { $0 == "position" }
        }
        if changedSides.isEmpty, let base { return base }
        if let first = changedSides.first, changedSides.allSatisfy({ sides[$0].item == sides[first].item }) {
            return sides[first].item
        }
        let labels = sides.map(\.label)
        let baseFields = base.map { base in base.fields.filter { !unknown.contains($0.key) } }
        let sideFields = sides.map(\.item.fields)
        let contestsBefore = contested.count
        var out: [String: PropertyList] = ["id": .string(id.uuidString)]
        func baseValue(_ name: String) -> PropertyList?? {
            unknown.contains(name) ? .none : baseFields.map { .some($0[name]) } ?? .none
        }
        out["title"] = mergeField(
            "title", base: baseValue("title"), sides: sideFields.map { $0["title"] }, labels: labels,
            item: id, itemTitle: sides[0].item.title, forced: forced(["title"]))
        let title = out["title"]?.stringValue ?? sides[0].item.title
        let kinds = Set(
            (base.map { unknown.contains("kind") ? [] : [$0.kind.name] } ?? []) + sides.map(\.item.kind.name))
        // A binary or multiTF answer is given by position in the options: when a head's
        // options cannot be read against the reference options (the base's, else the
        // first head's) as a reorder or as renames in place, no answer can follow its
        // option, and the item merges as one unit (rule 8), so that an answer never lands
        // on another option unreported.
        let reference =
            unknown.contains("options") ? sideFields[0]["options"] : (baseFields ?? sideFields[0])["options"]
        let isPositional = kinds.first.map { ["binary", "multiTF"].contains($0) } ?? false
        // Options unknown on a side (a group that changed or contested them since its own
        // base) or in the base (a virtual one) say nothing of where a head's option went:
        // read across only when every head holds the same options.
        let isOptionsUnknown =
            unknown.contains("options") || sides.indices.contains { unknownOn($0).contains("options") }
        let optionsRead =
            !isPositional
            || (isOptionsUnknown
                ? sideFields.allSatisfy { $0["options"] == sideFields[0]["options"] }
                : sideFields.allSatisfy { Self.options($0["options"], canBeReadAgainst: reference) })
        if kinds.count == 1, optionsRead {
            // Rule 11: options reordered on one head and renamed in place on others merge
            // slot by slot (the renamed labels in the new order); otherwise the option
            // lists merge as one field.
            let slots = baseFields.flatMap {
                unknown.contains("options") || sides.indices.contains { unknownOn($0).contains("options") }
                    ? nil : OptionSlotMerge(base: $0["options"], sides: sideFields.map { $0["options"] })
            }
            for name in Self.bodyFields where name != "answer" && !(name == "options" && slots != nil) {
                out[name] = mergeField(
                    name, base: baseValue(name), sides: sideFields.map { $0[name] }, labels: labels, item: id,
                    itemTitle: title, forced: forced([name]))
            }
            // A binary or multiTF answer is given by position in the options, a picker's
            // by label: each answer is read against the slots, or else against the
            // reference options (the base's, else the first head's), and the merged answer
            // put back against the merged options, so that an answer follows its option
            // when a head reordered or renamed them.
            let sideAnswers = sideFields.indices.map { index in
                slots.map { $0.canonical(sideFields[index]["answer"], side: index) }
                    ?? Self.answer(
                        sideFields[index]["answer"], from: sideFields[index]["options"], to: reference)
            }
            let contestsBeforeAnswer = contested.count
            let answer = mergeField(
                "answer", base: baseValue("answer"), sides: sideAnswers, labels: labels, item: id,
                itemTitle: title, forced: forced(["answer"]))
            if let slots {
                out["options"] = slots.options
                out["answer"] = slots.placed(answer)
            } else {
                out["answer"] = Self.answer(answer, from: reference, to: out["options"])
            }
            // A contest shows each head's answer as that head has it.
            for index in contested.indices.dropFirst(contestsBeforeAnswer) {
                for (offset, value) in contested[index].values.enumerated() {
                    contested[index].values[offset].value = sideFields[offset]["answer"]
                    // A binary answer also by its option's label, among that head's options.
                    contested[index].values[offset].option = sides[offset].item.chosenOption
                    if value.label == contested[index].chosen {
                        contested[index].chosenValue = sideFields[offset]["answer"]
                        contested[index].chosenOption = sides[offset].item.chosenOption
                    }
                }
            }
        } else {
            // Rule 8: kind, settings and answer as one unit (also for a binary or multiTF
            // item whose options a head changed past reading, above).
            func unit(_ fields: [String: PropertyList]) -> PropertyList {
                .dictionary(fields.filter { $0.key != "title" })
            }
            // The unit's base is unknown when any of its fields is.
            let isUnitKnown = unknown.isDisjoint(with: Self.bodyFields + ["kind"])
            let value = mergeField(
                "kind", base: isUnitKnown ? baseFields.map { .some(unit($0)) } ?? .none : .none,
                sides: sideFields.map(unit),
                labels: labels, item: id,
                itemTitle: title, forced: forced(Set(Self.bodyFields + ["kind"])))
            if case .dictionary(let body)? = value { out.merge(body) { _, new in new } }
        }
        // The rules added after content was first stored (distinct option labels) are left
        // to the heads: a merged option list is one head's list as it was, or slots whose
        // merged labels were checked to be distinct.
        if let item = try? Survey.item(from: .dictionary(out), position: 1),
            (try? item.validate(position: 1, strict: false)) != nil
        {
            return item
        }
        // Rule 9: the merged fields break a rule; the whole item of the first head that
        // changed it (a head that left it as in the base has no change to keep).
        let taken = sides[changedSides.first ?? 0]
        contested.removeSubrange(contestsBefore...)
        contested.append(
            .init(
                item: id, itemTitle: taken.item.title, field: "item", chosen: taken.label,
                chosenValue: taken.item.interchange,
                values: sides.indices.map {
                    .init(
                        label: sides[$0].label, value: sides[$0].item.interchange,
                        isUnchanged: !changedSides.contains($0))
                }))
        notes.append(
            .init(item: id, itemTitle: taken.item.title, kind: .tookWholeItem, heads: [taken.label]))
        return taken.item
    }

    /// Whether a binary or multiTF answer given against the options `side` can be read
    /// against `reference`: the same options, the same distinct labels in another order,
    /// or as many distinct labels, each one `reference` also has at its place there
    /// (renames in place; see ``OptionSlots``).
    static func options(_ side: PropertyList?, canBeReadAgainst reference: PropertyList?) -> Bool {
        if side == reference { return true }
        guard let side = OptionSlots.labels(of: side), let reference = OptionSlots.labels(of: reference)
        else {
            return false
        }
        return OptionSlots(base: reference, side: side) != nil
    }

    /// A binary or multiTF answer given against the options `from`, put against the
    /// options `to` when these hold the same distinct labels in another order (the index,
    /// or each flag, follows its label). Otherwise, and for every other answer, the
    /// answer as it is: options renamed keep their places (when they can be told from a
    /// reorder, `OptionSlotMerge` reads answers instead).
    static func answer(_ answer: PropertyList?, from: PropertyList?, to: PropertyList?) -> PropertyList? {
        guard let answer, from != to, case .array(let fromOptions)? = from, case .array(let toOptions)? = to,
            fromOptions.count == toOptions.count
        else { return answer }
        var place: [PropertyList: Int] = [:]
        for (offset, label) in toOptions.enumerated() where place.updateValue(offset, forKey: label) != nil {
            return answer
        }
        let moves = fromOptions.compactMap { place[$0] }
        guard moves.count == fromOptions.count, Set(moves).count == moves.count else { return answer }
        switch answer {
        case .integer(let index):
            guard let index = index.int64Value, index >= 0, index < moves.count else { return answer }
            return .integer(PropertyList.Integer(Int64(moves[Int(index)])))
        case .array(let flags) where flags.count == moves.count:
            var moved = flags
            for (offset, flag) in flags.enumerated() { moved[moves[offset]] = flag }
            return .array(moved)
        default:
            return answer
        }
    }

    // MARK: Order

    /// The merged order of the items in `keep` (rules 5 and 6).
    mutating func mergeOrder(keep: Set<UUID>) -> [UUID] {
        let baseOrder = base?.items.map(\.id) ?? []
        let baseSet = Set(baseOrder)
        let sequences = heads.map { $0.survey.items.map(\.id) }
        let indexIn = sequences.map { sequence in
            Dictionary(sequence.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        }
        // An item whose place in the base is unknown is placed as one every head that has
        // it moved (and the others' moves are told without it).
        let unknownPlaces = Set(
            (virtualBase?.unknownFields ?? [:]).filter { !$0.value.isDisjoint(with: ["position", "item"]) }
                .keys)
        let knownOrder = unknownPlaces.isEmpty ? baseOrder : baseOrder.filter { !unknownPlaces.contains($0) }
        // So is an item whose place is unknown on a group head, on that head.
        let moved: [Set<UUID>] = sequences.indices.map { head in
            let sequence = sequences[head]
            let common = Set(sequence).intersection(baseSet)
            let places = Set(
                (sideUnknown[head]?.unknownFields ?? [:]).filter {
                    !$0.value.isDisjoint(with: ["position", "item"])
                }
                .keys)
            let excluded = unknownPlaces.union(places)
            let known = excluded.isEmpty ? sequence : sequence.filter { !excluded.contains($0) }
            let base = places.isEmpty ? knownOrder : knownOrder.filter { !places.contains($0) }
            return common.subtracting(OrderMatching.stableItems(base: base, side: known))
        }
        self.moved = moved
        let skeleton = baseOrder.filter { id in keep.contains(id) && !moved.contains { $0.contains(id) } }
        let skeletonSet = Set(skeleton)

        // Who places each other item, and after what.
        var placer: [UUID: Int] = [:]
        var anchor: [UUID: UUID?] = [:]
        var placedOrder: [UUID] = []
        func predecessor(of id: UUID, in head: Int) -> UUID? {
            var index = indexIn[head][id]! - 1
            while index >= 0 {
                let candidate = sequences[head][index]
                if keep.contains(candidate) { return candidate }
                index -= 1
            }
            return nil
        }
        // The nearest skeleton item before each position of a head (skeleton items are
        // all kept), made once per head that needs it: a walk back for each broken cycle
        // would cost the distance to the skeleton each time, quadratic when many cycles
        // form far from it.
        var skeletonBefore: [Int: [UUID?]] = [:]
        func skeletonPredecessor(of id: UUID, in head: Int) -> UUID? {
            if skeletonBefore[head] == nil {
                var last: UUID? = nil
                skeletonBefore[head] = sequences[head].map { candidate in
                    defer { if skeletonSet.contains(candidate) { last = candidate } }
                    return last
                }
            }
            return skeletonBefore[head]![indexIn[head][id]!]
        }
        for (headIndex, sequence) in sequences.enumerated() {
            for id in sequence where keep.contains(id) && !skeletonSet.contains(id) && placer[id] == nil {
                let places = baseSet.contains(id) ? moved[headIndex].contains(id) : true
                guard places else { continue }
                placer[id] = headIndex
                anchor[id] = predecessor(of: id, in: headIndex)
                placedOrder.append(id)
            }
        }
        // An item in the base that no head moved but is not in the skeleton cannot be
        // (the skeleton holds them all); an item kept whose placer is missing would be a
        // bug: place it after its base predecessor so that nothing is lost.
        let unplaced = keep.filter { !skeletonSet.contains($0) && placer[$0] == nil }
        for id in unplaced.sorted(by: { $0.uuidString < $1.uuidString }) {
            placer[id] = 0
            anchor[id] = .some(nil)
            placedOrder.append(id)
        }

        // A contest of the position of `id`, which `chosen` places, among the heads
        // `present` that hold it (each value its 1-based place on that head).
        func positionContest(
            _ id: UUID, chosen: Int, present: [Int], isUnchanged: (Int) -> Bool = { _ in false }
        ) -> SurveyMerge.Contest {
            func place(_ head: Int) -> PropertyList {
                .integer(PropertyList.Integer(Int64(indexIn[head][id]! + 1)))
            }
            return .init(
                item: id, itemTitle: headItems[chosen][id]?.title ?? "", field: "position",
                chosen: heads[chosen].label, chosenValue: place(chosen),
                values: present.map {
                    .init(label: heads[$0].label, value: place($0), isUnchanged: isUnchanged($0))
                })
        }

        // Rule 5: one item moved to different places on several heads.
        for id in placedOrder where baseSet.contains(id) {
            let movers = heads.indices.filter { moved[$0].contains(id) }
            guard movers.count > 1 else { continue }
            let anchors = movers.map { predecessor(of: id, in: $0) }
            if Set(anchors.map { $0?.uuidString ?? "" }).count > 1 {
                let present = heads.indices.filter { indexIn[$0][id] != nil }
                contested.append(
                    positionContest(id, chosen: movers[0], present: present) { !moved[$0].contains(id) })
            }
        }

        // Rule 7: an item added on several heads (the same id) at different places, after
        // different items among those all of these heads keep, takes the first head's
        // place, and the contest is reported. (Without a base every item is new to every
        // head, and the order is the first head's.)
        if base != nil {
            var sharedItems: [[Int]: Set<UUID>] = [:]
            for id in placedOrder where !baseSet.contains(id) {
                let present = heads.indices.filter { indexIn[$0][id] != nil }
                guard present.count > 1 else { continue }
                if sharedItems[present] == nil {
                    sharedItems[present] = present.dropFirst().reduce(
                        keep.intersection(sequences[present[0]])
                    ) { $0.intersection(sequences[$1]) }
                }
                let shared = sharedItems[present]!
                let anchors = present.map { head -> UUID? in
                    var index = indexIn[head][id]! - 1
                    while index >= 0, !shared.contains(sequences[head][index]) { index -= 1 }
                    return index >= 0 ? sequences[head][index] : nil
                }
                guard Set(anchors).count > 1 else { continue }
                contested.append(positionContest(id, chosen: present[0], present: present))
            }
        }

        // Break cycles of anchors (possible when heads move items around each other):
        // the member with the smallest id goes after its nearest unmoved predecessor.
        // The chains of anchors are followed from each placed item in order, and a cycle
        // is broken where the first such walk meets one; walks are then taken again from
        // that item. An item whose chain is known to end (at the start, the skeleton or
        // an item no head places) ends every walk that reaches it: re-anchoring a cycle's
        // member changes no chain that ended, so the cycles broken, and the order, are
        // those of following every chain in full, without its quadratic cost.
        var ends = Set<UUID>()
        var next = 0
        while next < placedOrder.count {
            var path: [UUID] = []
            var onPath = Set<UUID>()
            var cursor: UUID? = placedOrder[next]
            var brokeCycle = false
            while let current = cursor, placer[current] != nil, !skeletonSet.contains(current),
                !ends.contains(current)
            {
                if onPath.contains(current) {
                    let cycle = path[path.firstIndex(of: current)!...]
                    let victim = cycle.min { $0.uuidString < $1.uuidString }!
                    anchor[victim] = .some(skeletonPredecessor(of: victim, in: placer[victim]!))
                    brokeCycle = true
                    break
                }
                path.append(current)
                onPath.insert(current)
                cursor = anchor[current] ?? nil
            }
            if brokeCycle { continue }
            ends.formUnion(path)
            next += 1
        }

        // Children of each anchor (nil: the start), in preference order, then each head's order.
        var children: [UUID?: [UUID]] = [:]
        for id in placedOrder { children[anchor[id] ?? nil, default: []].append(id) }
        for key in Array(children.keys) {
            children[key]!.sort { a, b in
                (placer[a]!, indexIn[placer[a]!][a]!) < (placer[b]!, indexIn[placer[b]!][b]!)
            }
        }
        var result: [UUID] = []
        result.reserveCapacity(keep.count)
        var emitted = Set<UUID>()
        func emit(_ id: UUID) {
            var stack = [id]
            while let next = stack.popLast() {
                guard emitted.insert(next).inserted else { continue }
                result.append(next)
                stack.append(contentsOf: (children[next] ?? []).reversed())
            }
        }
        for id in children[nil] ?? [] { emit(id) }
        for id in skeleton { emit(id) }
        // Nothing is lost even if an anchor was never reached.
        for id in placedOrder where !emitted.contains(id) { emit(id) }
        return result
    }
}

extension Survey {
    /// The survey with its items' ids replaced, position by position, by those of
    /// `reference`'s items (items beyond the reference's count keep theirs).
    ///
    /// Format 1 has no item ids: migration derives them from the revision and the
    /// position, so two format-1 revisions of one document give the same item different
    /// ids. Before merging, a format-1 revision's items are matched by position to the
    /// base's (see ``SurveyMerge``). An id the reference uses at a later position is
    /// not taken, so the result's ids stay unique.
    ///
    /// - Parameter reference: The survey whose ids to take.
    /// - Returns: The survey with the ids matched.
    public func matchingItemIDs(byPositionTo reference: Survey) -> Survey {
        let own = Set(items.map(\.id))
        var used = Set<UUID>()
        var renamed: [Item] = []
        for (offset, item) in items.enumerated() {
            var item = item
            if offset < reference.items.count {
                let candidate = reference.items[offset].id
                if !used.contains(candidate) && (candidate == item.id || !own.contains(candidate)) {
                    item.id = candidate
                }
            }
            if !used.insert(item.id).inserted { return self }
            renamed.append(item)
        }
        return (try? Survey(title: title, items: renamed)) ?? self
    }
}
