import Foundation
import PropertyList

/// The differences between two surveys, item by item (matched by id).
///
/// A field is a key of the interchange form other than `id`: `title`, `kind`, a setting
/// of the kind (`options`, `text`, `subtitle`, `minimum`, `maximum`, `roundToInteger`)
/// or `answer`. An absent field (no answer, no subtitle) is `nil`.
///
/// An item is *moved* when its place among the items both surveys have changed: the
/// items that keep their relative order form the longest run in the same order in both,
/// and every other common item counts as moved. Items shifted by an insertion or a
/// removal elsewhere are not moved.
public struct SurveyDiff: Sendable, Equatable {
    /// One field that differs, with the value on each side (`nil`: absent).
    public struct FieldChange: Sendable, Equatable {
        /// The field's name in the interchange form.
        public var field: String
        /// The value in the older survey.
        public var from: PropertyList?
        /// The value in the newer survey.
        public var to: PropertyList?
        /// For a binary answer in the older survey, the label of the option it chooses
        /// there (``Item/chosenOption``); `nil` for any other value.
        public var fromOption: String?
        /// For a binary answer in the newer survey, the label of the option it chooses
        /// there; `nil` for any other value.
        public var toOption: String?

        /// Creates a change of `field`.
        ///
        /// - Parameters:
        ///   - field: The field's name in the interchange form.
        ///   - from: The value in the older survey (`nil`: absent).
        ///   - to: The value in the newer survey (`nil`: absent).
        ///   - fromOption: For a binary answer, the label it chooses in the older survey.
        ///   - toOption: For a binary answer, the label it chooses in the newer survey.
        public init(
            field: String, from: PropertyList?, to: PropertyList?, fromOption: String? = nil,
            toOption: String? = nil
        ) {
            self.field = field
            self.from = from
            self.to = to
            self.fromOption = fromOption
            self.toOption = toOption
        }
    }

    /// What happened to an item.
    public enum Change: String, Sendable, Equatable {
        /// Only in the newer survey.
        case added
        /// Only in the older survey.
        case removed
        /// Fields differ (the item may have moved too: see ``ItemChange/moved``).
        case modified
        /// Only its place among the other items changed.
        case moved
    }

    /// One item that differs.
    public struct ItemChange: Sendable, Equatable {
        /// The item's id.
        public var id: UUID
        /// Its title in the newer survey (in the older one when removed).
        public var title: String
        /// What happened to it.
        public var change: Change
        /// Its 1-based position in the older survey (`nil` when added).
        public var from: Int?
        /// Its 1-based position in the newer survey (`nil` when removed).
        public var to: Int?
        /// Whether its place among the common items changed (also for a modified item).
        public var moved: Bool
        /// The fields that differ, in the interchange form's order.
        public var fields: [FieldChange]
    }

    /// The survey title's change, if it changed.
    public var title: FieldChange?
    /// The items that differ, by position in the newer survey (removed ones at their
    /// old position).
    public var items: [ItemChange]

    /// Whether the two surveys are the same.
    public var isEmpty: Bool { title == nil && items.isEmpty }

    /// Compares `old` with `new`.
    ///
    /// - Parameters:
    ///   - old: The survey changes are counted from.
    ///   - new: The survey changes lead to.
    public init(from old: Survey, to new: Survey) {
        title =
            old.title == new.title
            ? nil : FieldChange(field: "title", from: .string(old.title), to: .string(new.title))
        let oldPositions = Dictionary(
            old.items.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { first, _ in first })
        let newPositions = Dictionary(
            new.items.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { first, _ in first })
        let stable = OrderMatching.stableItems(base: old.items.map(\.id), side: new.items.map(\.id))
        var changes: [(key: Int, change: ItemChange)] = []
        for (offset, item) in new.items.enumerated() {
            guard let oldOffset = oldPositions[item.id] else {
                changes.append(
                    (
                        2 * offset,
                        ItemChange(
                            id: item.id, title: item.title, change: .added, from: nil, to: offset + 1,
                            moved: false,
                            fields: Item.fieldChanges(from: nil, to: item))
                    ))
                continue
            }
            let fields = Item.fieldChanges(from: old.items[oldOffset], to: item)
            let moved = !stable.contains(item.id)
            guard moved || !fields.isEmpty else { continue }
            changes.append(
                (
                    2 * offset,
                    ItemChange(
                        id: item.id, title: item.title, change: fields.isEmpty ? .moved : .modified,
                        from: oldOffset + 1, to: offset + 1,
                        moved: moved, fields: fields)
                ))
        }
        for (offset, item) in old.items.enumerated() where newPositions[item.id] == nil {
            changes.append(
                (
                    2 * offset + 1,
                    ItemChange(
                        id: item.id, title: item.title, change: .removed, from: offset + 1, to: nil,
                        moved: false,
                        fields: Item.fieldChanges(from: item, to: nil))
                ))
        }
        items = changes.enumerated().sorted { ($0.element.key, $0.offset) < ($1.element.key, $1.offset) }.map(
            \.element.change)
    }
}

extension Item {
    /// The fields of the interchange form in their display order.
    static let fieldOrder = [
        "title", "kind", "options", "text", "subtitle", "minimum", "maximum", "roundToInteger", "answer",
    ]

    /// The item's fields (its interchange form without `id`).
    var fields: [String: PropertyList] {
        guard case .dictionary(var entries) = interchange else { return [:] }
        entries["id"] = nil
        return entries
    }

    /// The fields that differ between two versions of an item (`nil`: no such item).
    static func fieldChanges(from old: Item?, to new: Item?) -> [SurveyDiff.FieldChange] {
        let before = old?.fields ?? [:]
        let after = new?.fields ?? [:]
        return fieldOrder.compactMap { name in
            guard before[name] != after[name] else { return nil }
            // A binary answer is a position: its label too, as `survey show` names it.
            let answer = name == "answer"
            return SurveyDiff.FieldChange(
                field: name, from: before[name], to: after[name],
                fromOption: answer ? old?.chosenOption : nil, toOption: answer ? new?.chosenOption : nil)
        }
    }
}

/// Which items keep their relative order between two sequences of ids.
enum OrderMatching {
    /// The ids common to `base` and `side` that are not moved: the longest subsequence of
    /// the common ids in the same order in both (ties broken the same way every time).
    static func stableItems(base: [UUID], side: [UUID]) -> Set<UUID> {
        var basePosition: [UUID: Int] = [:]
        for (offset, id) in base.enumerated() where basePosition[id] == nil { basePosition[id] = offset }
        let common = side.filter { basePosition[$0] != nil }
        let keys = common.map { basePosition[$0]! }
        // Longest strictly increasing subsequence of base positions, in O(n log n).
        var tails: [Int] = []  // index into keys of the smallest tail of each length
        var previous = [Int](repeating: -1, count: keys.count)
        for (index, key) in keys.enumerated() {
            var low = 0
            var high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if keys[tails[middle]] < key { low = middle + 1 } else { high = middle }
            }
            if low > 0 { previous[index] = tails[low - 1] }
            if low == tails.count { tails.append(index) } else { tails[low] = index }
        }
        var result = Set<UUID>()
        var cursor = tails.last ?? -1
        while cursor >= 0 {
            result.insert(common[cursor])
            cursor = previous[cursor]
        }
        return result
    }
}
