import Foundation

extension Survey {
    /// Gives the items at `positions`, which came without an `id`, the identity they have
    /// in `base`, the content they are saved on top of, so that a file edited without
    /// ids is compared and merged item by item, not as every item removed and new ones
    /// added.
    ///
    /// Each such item, in order, takes the id of the first item of `base` of the same
    /// kind (`binary`, `slider`, …, whatever its settings) and the same title that no
    /// earlier item has taken and that no item of the survey carries already. An item that
    /// matches none is a new item: its id is derived from `seed` (the base revision's id),
    /// its kind, its title and how many such new items came before it. Two devices that
    /// save the same file on top of the same revision therefore write the same items,
    /// and the same new item added on both is one item to a merge.
    ///
    /// - Parameters:
    ///   - positions: The 1-based positions of the items that came without an `id`, in
    ///     increasing order.
    ///   - base: The content saved on top of; `nil` when there is none to match (a
    ///     deletion, or content that cannot be read).
    ///   - seed: The base revision's id, from which the ids of new items are derived.
    /// - Returns: The survey, its items in the same order with the ids chosen.
    public func adoptingIDs(ofItemsAt positions: [Int], from base: Survey?, seed: String) -> Survey {
        guard !positions.isEmpty else { return self }
        let withoutID = Set(positions)
        // An id the file gives an item explicitly is never given to another.
        var taken = Set(
            items.enumerated().lazy.filter { !withoutID.contains($0.offset + 1) }.map(\.element.id))
        // The base's items by kind and title, in order, and how many of each list have been
        // looked at: the next one not taken is matched.
        var candidates: [MatchKey: [UUID]] = [:]
        for item in base?.items ?? [] {
            candidates[MatchKey(item), default: []].append(item.id)
        }
        var looked: [MatchKey: Int] = [:]
        var newItems: [MatchKey: Int] = [:]
        var adopted = items
        for position in positions where adopted.indices.contains(position - 1) {
            let key = MatchKey(adopted[position - 1])
            var chosen: UUID?
            if let ids = candidates[key] {
                var next = looked[key, default: 0]
                while chosen == nil, next < ids.count {
                    if !taken.contains(ids[next]) { chosen = ids[next] }
                    next += 1
                }
                looked[key] = next
            }
            // A new item; past an id the survey carries already (one copied from a later
            // revision, which derived it the same way), the next occurrence's.
            while chosen == nil || taken.contains(chosen!) {
                let occurrence = newItems[key, default: 0] + 1
                newItems[key] = occurrence
                chosen = FormatMigrator.derivedID(
                    seed: "\(seed)/\(key.kind)/\(key.title)", position: occurrence)
            }
            adopted[position - 1].id = chosen!
            taken.insert(chosen!)
        }
        return Survey(checkedTitle: title, items: adopted)
    }

    /// What an item without an id is matched by: its kind's name and its title.
    private struct MatchKey: Hashable {
        var kind: String
        var title: String

        init(_ item: Item) {
            kind = item.kind.name
            title = item.title
        }
    }
}
