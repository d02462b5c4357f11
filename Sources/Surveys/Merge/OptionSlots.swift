import PropertyList

/// The options of a binary, picker or multiTF item seen as *slots*: the base's options,
/// each of which a head may have renamed in place or moved (rule 11).
///
/// A head's options are read as slots when that can be told: the same distinct labels as
/// the base's in another order (a reorder), or as many distinct labels with every label
/// the base also has at its base place (a rename of the others in place). Options grown,
/// shrunk, or renamed and reordered at once cannot be told apart from other edits.
struct OptionSlots: Equatable {
    /// For each of the head's places, the slot there (a place in the base's options).
    var order: [Int]
    /// For each slot, its label on the head.
    var labels: [String]

    /// The slots of `side`'s options against `base`'s, or `nil` when they cannot be told.
    init?(base: [String], side: [String]) {
        guard base.count == side.count, Set(base).count == base.count, Set(side).count == side.count
        else { return nil }
        var slot: [String: Int] = [:]
        for (offset, label) in base.enumerated() { slot[label] = offset }
        if Set(side) == Set(base) {
            order = side.map { slot[$0]! }
            labels = base
        } else if side.indices.allSatisfy({ place in slot[side[place]].map { $0 == place } ?? true }) {
            order = Array(base.indices)
            labels = side
        } else {
            return nil
        }
    }

    init(order: [Int], labels: [String]) {
        self.order = order
        self.labels = labels
    }

    /// The options in the head's order.
    var options: [String] { order.map { labels[$0] } }

    /// The labels of an option list in the interchange form; `nil` unless it is a list of
    /// strings.
    static func labels(of options: PropertyList?) -> [String]? {
        guard case .array(let elements)? = options else { return nil }
        let labels = elements.compactMap(\.stringValue)
        return labels.count == elements.count ? labels : nil
    }
}

/// The options of the base and every head of one item as slots, merged when each head's
/// reorder and renames can be applied together (rule 11).
struct OptionSlotMerge {
    /// The base's labels, one per slot.
    let base: [String]
    /// Each head's slots, in the order of the heads.
    let sides: [OptionSlots]
    /// The merge: the one reorder made (or the base's order), each slot's one rename (or
    /// its base label).
    let merged: OptionSlots

    /// The merge of `sides`' options from `base`'s, or `nil` when an option list is not
    /// slots (see ``OptionSlots``), two heads reordered differently or renamed one option
    /// differently, or the merged labels are not distinct: the option lists then merge as
    /// one field.
    init?(base: PropertyList?, sides: [PropertyList?]) {
        guard let baseLabels = OptionSlots.labels(of: base) else { return nil }
        var slots: [OptionSlots] = []
        for side in sides {
            guard let labels = OptionSlots.labels(of: side),
                let slot = OptionSlots(base: baseLabels, side: labels)
            else {
                return nil
            }
            slots.append(slot)
        }
        let identity = Array(baseLabels.indices)
        let orders = Set(slots.map(\.order).filter { $0 != identity })
        guard orders.count <= 1 else { return nil }
        var mergedLabels = baseLabels
        for index in baseLabels.indices {
            let renames = Set(slots.map { $0.labels[index] }.filter { $0 != baseLabels[index] })
            guard renames.count <= 1 else { return nil }
            if let rename = renames.first { mergedLabels[index] = rename }
        }
        guard Set(mergedLabels).count == mergedLabels.count else { return nil }
        self.base = baseLabels
        self.sides = slots
        merged = OptionSlots(order: orders.first ?? identity, labels: mergedLabels)
    }

    /// The merged options in the interchange form.
    var options: PropertyList { .array(merged.options.map(PropertyList.string)) }

    /// Head `side`'s answer read against the slots: an index or flags in the base's
    /// order, a picker's label as the base's label of its slot. Any other answer as it is.
    func canonical(_ answer: PropertyList?, side: Int) -> PropertyList? {
        let slots = sides[side]
        switch answer {
        case .integer(let index)?:
            guard let index = index.int64Value, index >= 0, index < slots.order.count else { return answer }
            return .integer(PropertyList.Integer(Int64(slots.order[Int(index)])))
        case .array(let flags)? where flags.count == slots.order.count:
            var canonical = flags
            for (offset, flag) in flags.enumerated() { canonical[slots.order[offset]] = flag }
            return .array(canonical)
        case .string(let label)?:
            guard let place = slots.options.firstIndex(of: label) else { return answer }
            return .string(base[slots.order[place]])
        default:
            return answer
        }
    }

    /// An answer read against the slots (see ``canonical(_:side:)``) put against the
    /// merged options.
    func placed(_ answer: PropertyList?) -> PropertyList? {
        switch answer {
        case .integer(let slot)?:
            guard let slot = slot.int64Value, let place = merged.order.firstIndex(of: Int(slot)) else {
                return answer
            }
            return .integer(PropertyList.Integer(Int64(place)))
        case .array(let flags)? where flags.count == merged.order.count:
            return .array(merged.order.map { flags[$0] })
        case .string(let label)?:
            guard let slot = base.firstIndex(of: label) else { return answer }
            return .string(merged.labels[slot])
        default:
            return answer
        }
    }
}
