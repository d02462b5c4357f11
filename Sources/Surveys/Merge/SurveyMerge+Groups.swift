import Foundation
import PropertyList

extension MergeState {
    /// A field of an item (`item` `nil`: the survey's title), as a contest names it.
    struct FieldKey: Hashable {
        var item: UUID?
        var field: String

        init(item: UUID?, field: String) {
            self.item = item
            self.field = field
        }

        init(_ contest: SurveyMerge.Contest) {
            self.init(item: contest.item, field: contest.field)
        }
    }

    /// A survey with its items found by id, to read a field as a contest lists it.
    struct Holder {
        let survey: Survey
        let index: [UUID: Int]

        init(_ survey: Survey) {
            self.survey = survey
            index = Dictionary(
                survey.items.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { first, _ in first })
        }

        /// The value of `field` of `item` (of the survey's title when `item` is `nil`) as a
        /// contest lists it, and a binary answer's option; `nil` when the survey lacks the
        /// item.
        func value(_ key: FieldKey) -> (value: PropertyList?, option: String?)? {
            guard let id = key.item else { return (.string(survey.title), nil) }
            guard let place = index[id] else { return nil }
            if key.field == "position" { return (.integer(PropertyList.Integer(Int64(place + 1))), nil) }
            let item = survey.items[place]
            return (Self.value(key.field, of: item), key.field == "answer" ? item.chosenOption : nil)
        }

        /// The value of `field` of `item` as a contest lists it (not `position`).
        static func value(_ field: String, of item: Item) -> PropertyList? {
            switch field {
            case "item": item.interchange
            case "kind": .dictionary(item.fields.filter { $0.key != "title" })
            default: item.fields[field]
            }
        }
    }

    /// The fields a contest of `field` stands for (a `kind` contest: the kind, its settings
    /// and the answer; an `item` contest: every field and the place).
    static func fields(of field: String) -> Set<String> {
        switch field {
        case "kind": Set(bodyFields + ["kind"])
        case "item": Set(Item.fieldOrder + ["position", "item"])
        default: [field]
        }
    }

    /// Whether `leaf`, whose value of `key` is `value`, holds that field as `base` has it:
    /// the same value where the base's is known, and for `position` an item it did not
    /// move (rule 5). An item or field the base does not hold, or holds unknown, counts as
    /// changed.
    static func leftAsInBase(
        _ leaf: SurveyMerge.Leaf, _ base: SurveyMerge.VirtualBase, _ key: FieldKey, _ value: PropertyList?
    ) -> Bool {
        guard let id = key.item else { return !base.isTitleUnknown && value == .string(base.survey.title) }
        let unknown = base.unknown(id)
        guard unknown.isDisjoint(with: fields(of: key.field)),
            let was = base.survey.items.first(where: { $0.id == id })
        else { return false }
        if key.field == "position" { return !base.moved(in: leaf.survey).contains(id) }
        return Holder.value(key.field, of: was) == value
    }

    /// Rule 12, groups: rewrites what the merge decided about a group head in terms of the
    /// heads it stands for, and carries the group's own contests and notes into the merge.
    ///
    /// - A contest that lists a group head lists each of its heads instead: those the
    ///   group's own contest of that field lists, as it lists them, or else each head of
    ///   the group that has the item, with its own value (one that the group did not take
    ///   is `unchanged`, as is every one when the group left the field as in the base). A
    ///   contest the group head won names the head whose value the group took.
    /// - A contest of the group's that the merge did not contest again, on a field whose
    ///   value the group gave (it took the group head's value, or the item's place), is
    ///   carried into the merge, with every other head's value.
    /// - A note naming a group head names its heads concerned; a group's note on an item
    ///   the merge keeps is carried (joined with the merge's own note of that kind).
    ///
    /// - Parameters:
    ///   - merged: The merged items by id.
    ///   - title: The merged title.
    mutating func carryGroups(merged: [UUID: Item], title: String) {
        let groups = heads.indices.filter { heads[$0].group != nil }
        guard !groups.isEmpty else { return }
        var leaves: [String: Holder] = [:]
        for head in groups {
            for leaf in heads[head].group!.leaves { leaves[leaf.label] = Holder(leaf.survey) }
        }
        let holders = heads.map { Holder($0.survey) }
        let byLabel = Dictionary(heads.indices.map { (heads[$0].label, $0) }, uniquingKeysWith: { a, _ in a })

        func own(_ head: Int, _ key: FieldKey) -> SurveyMerge.Contest? {
            heads[head].group?.contested.first { FieldKey($0) == key }
        }
        // The values of a group head's heads, `entry` being the group head's.
        func expand(_ head: Int, _ key: FieldKey, entry: SurveyMerge.HeadValue) -> [SurveyMerge.HeadValue] {
            if let own = own(head, key) {
                return own.values.map { value in
                    var value = value
                    if entry.isUnchanged { value.isUnchanged = true }
                    return value
                }
            }
            // A head of the group that changed the field since the base it was merged from
            // (its own group's; it may have set it back to this merge's base value) made
            // one of the changes. One that did not is unchanged when it also holds this
            // merge's base value, or, for a plain field, a value the group did not take
            // (another head of the group changed it). Without both bases (a two-way
            // merge), or where that would leave no head of a group whose value counts as a
            // change (the field unknown on its side: an item one of its heads removed and
            // another modified, say), a head's value of a plain field that the group did
            // not take is not one of its changes, and every other is.
            let isPlain = !["position", "item", "kind"].contains(key.field)
            let present = heads[head].group!.leaves.compactMap { leaf in
                leaves[leaf.label]!.value(key).map { (leaf: leaf, value: $0.value, option: $0.option) }
            }
            func members(_ unchanged: (SurveyMerge.Leaf, PropertyList?) -> Bool) -> [SurveyMerge.HeadValue] {
                present.map {
                    .init(
                        label: $0.leaf.label, value: $0.value,
                        isUnchanged: entry.isUnchanged || unchanged($0.leaf, $0.value), option: $0.option)
                }
            }
            let plainly = members { _, value in isPlain && value != entry.value }
            guard let virtualBase else { return plainly }
            let byBases = members { leaf, value in
                guard let own = leaf.base else { return isPlain && value != entry.value }
                return Self.leftAsInBase(leaf, own, key, value)
                    && (Self.leftAsInBase(leaf, virtualBase, key, value) || (isPlain && value != entry.value))
            }
            return !entry.isUnchanged && byBases.allSatisfy(\.isUnchanged) ? plainly : byBases
        }
        // Whether `head` left the field as in the base, its value being `value`.
        func isUnchanged(_ head: Int, _ key: FieldKey, _ value: PropertyList?) -> Bool {
            let fields = Self.fields(of: key.field)
            guard let base, let virtualBase else { return false }
            guard let id = key.item else {
                return !virtualBase.isTitleUnknown && sideUnknown[head]?.isTitleUnknown != true
                    && value == .string(base.title)
            }
            guard (sideUnknown[head]?.unknown(id) ?? []).isDisjoint(with: fields) else { return false }
            if key.field == "position" { return !moved[head].contains(id) }
            guard let baseItem = baseItems[id], virtualBase.unknown(id).isDisjoint(with: fields) else {
                return false
            }
            return Holder.value(key.field, of: baseItem) == value
        }
        // Whether the group head's value of the field is the merge's.
        let covered = Set(contested.map(FieldKey.init))
        func stands(_ head: Int, _ key: FieldKey) -> Bool {
            guard let id = key.item else {
                return taken[key].map { $0.contains(heads[head].label) }
                    ?? (title == heads[head].survey.title)
            }
            guard let item = merged[id], let mine = headItems[head][id] else { return false }
            if key.field == "position" { return true }
            if let labels = taken[key], !covered.contains(FieldKey(item: id, field: "item")) {
                return labels.contains(heads[head].label)
            }
            return Holder.value(key.field, of: item) == Holder.value(key.field, of: mine)
        }

        // Contests that list a group head.
        for index in contested.indices {
            var contest = contested[index]
            let key = FieldKey(contest)
            var values: [SurveyMerge.HeadValue] = []
            for entry in contest.values {
                guard let head = byLabel[entry.label], heads[head].group != nil else {
                    values.append(entry)
                    continue
                }
                let members = expand(head, key, entry: entry)
                guard !members.isEmpty else {
                    values.append(entry)
                    continue
                }
                if contest.chosen == entry.label {
                    let chosen =
                        own(head, key)?.chosen ?? (members.first { !$0.isUnchanged } ?? members[0]).label
                    contest.chosen = chosen
                    if key.field == "position", let member = members.first(where: { $0.label == chosen }) {
                        contest.chosenValue = member.value
                    }
                }
                values += members
            }
            contest.values = values
            contested[index] = contest
        }

        // The groups' own contests. One on a field that a contest of this merge stands for
        // (a `kind` contest: the settings and the answer; an `item` contest: every field)
        // is not carried: that contest lists each head of the group with its own value, and
        // a second one would name a value of the field the merge did not take.
        var done = covered
        for key in covered where key.field == "kind" || key.field == "item" {
            for field in Self.fields(of: key.field) { done.insert(FieldKey(item: key.item, field: field)) }
        }
        for group in groups {
            for contest in heads[group].group!.contested {
                let key = FieldKey(contest)
                // A whole item the group took (rule 9) is carried while the merge keeps the
                // item, even where the merge then changed it further: the heads of the group
                // whose item was not taken are listed, never dropped unreported.
                let isWholeItemKept = key.field == "item" && key.item.map { merged[$0] != nil } == true
                guard !done.contains(key), stands(group, key) || isWholeItemKept else { continue }
                done.insert(key)
                var carried = contest
                carried.values = []
                for head in heads.indices {
                    if head == group {
                        carried.values += contest.values
                        continue
                    }
                    guard let (value, option) = holders[head].value(key) else { continue }
                    let entry = SurveyMerge.HeadValue(
                        label: heads[head].label, value: value, isUnchanged: isUnchanged(head, key, value),
                        option: option)
                    carried.values += heads[head].group == nil ? [entry] : expand(head, key, entry: entry)
                }
                carried.itemTitle = key.item.map { merged[$0]?.title ?? contest.itemTitle } ?? title
                contested.append(carried)
            }
        }

        // Notes that name a group head, and the groups' own.
        let order = heads.flatMap { head in head.group?.leaves.map(\.label) ?? [head.label] }
        let rank = Dictionary(order.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
        for index in notes.indices {
            let note = notes[index]
            notes[index].heads = note.heads.flatMap { label -> [String] in
                guard let head = byLabel[label], let group = heads[head].group else { return [label] }
                let having = group.leaves.filter { leaves[$0.label]!.index[note.item] != nil }.map(\.label)
                switch note.kind {
                case .keptDespiteRemoval:
                    return group.leaves.map(\.label).filter { !having.contains($0) }
                case .keptWithoutBase:
                    return having
                case .tookWholeItem:
                    let mine = headItems[head][note.item]
                    let same = group.leaves.first { leaf in
                        leaves[leaf.label]!.index[note.item].map { leaves[leaf.label]!.survey.items[$0] }
                            == mine
                    }
                    return [
                        own(head, FieldKey(item: note.item, field: "item"))?.chosen ?? same?.label ?? having
                            .first ?? label
                    ]
                }
            }
        }
        for group in groups {
            for note in heads[group].group!.notes where merged[note.item] != nil {
                if note.kind == .tookWholeItem && merged[note.item] != headItems[group][note.item] {
                    continue
                }
                if let index = notes.firstIndex(where: { $0.item == note.item && $0.kind == note.kind }) {
                    let heads = Set(notes[index].heads).union(note.heads)
                    notes[index].heads = heads.sorted { (rank[$0] ?? .max, $0) < (rank[$1] ?? .max, $1) }
                } else {
                    notes.append(note)
                }
            }
        }
    }
}
