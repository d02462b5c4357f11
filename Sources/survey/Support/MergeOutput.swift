import Foundation
import SurveyStore

/// A field's value in JSON: the interchange form's value, or `null` when absent.
struct JSONFieldValue: Encodable {
    var value: PropertyList?

    func encode(to encoder: any Encoder) throws {
        if let value {
            try JSONPropertyList(value: value, path: "").encode(to: encoder)
        } else {
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        }
    }
}

/// `survey diff --json`: one pair of revisions.
struct DiffJSON: Encodable {
    struct Change: Encodable { var from, to: JSONFieldValue }
    struct Position: Encodable {
        /// `null`, not a missing key, for the side an item is not on.
        @NullIfAbsent var from: Int?
        @NullIfAbsent var to: Int?
    }
    struct Field: Encodable {
        var field: String
        var from, to: JSONFieldValue
        /// A binary answer's option labels; left out for any other value.
        var fromOption, toOption: String?
    }
    struct ItemEntry: Encodable {
        var id, title, change: String
        var position: Position
        var moved: Bool?
        var fields: [Field]
    }
    var from: String
    /// `null` only for a merge not written (`resolve --merge --dry-run`'s `againstWinner`).
    @NullIfAbsent var to: String?
    var title: Change?
    var items: [ItemEntry]

    init(_ pair: SurveyStore.RevisionDiff) {
        self.init(from: pair.from.id.description, to: pair.to.id.description, diff: pair.diff)
    }

    /// The differences `diff` from revision `from` to `to` (`nil`: content that is no
    /// revision, such as a merge not written).
    init(from: String, to: String?, diff: SurveyDiff) {
        self.from = from
        self.to = to
        title = diff.title.map {
            Change(from: JSONFieldValue(value: $0.from), to: JSONFieldValue(value: $0.to))
        }
        items = diff.items.map { item in
            ItemEntry(
                id: item.id.itemID, title: item.title, change: item.change.rawValue,
                position: Position(from: item.from, to: item.to),
                moved: item.change == .modified && item.moved ? true : nil,
                fields: item.fields.map {
                    Field(
                        field: $0.field, from: JSONFieldValue(value: $0.from),
                        to: JSONFieldValue(value: $0.to), fromOption: $0.fromOption, toOption: $0.toOption)
                })
        }
    }
}

/// `survey resolve --merge --json`.
struct MergeJSON: Encodable {
    struct Value: Encodable {
        var revision: String
        var value: JSONFieldValue
        var unchanged: Bool
        /// A binary answer's option label; left out for any other value.
        var option: String?
    }
    struct Contest: Encodable {
        /// `null` for the survey's title.
        @NullIfAbsent var item: String?
        var title, field: String
        var chosen: JSONFieldValue
        /// The option label of a binary answer taken; left out for any other value.
        var chosenOption: String?
        var chosenRevision: String
        var values: [Value]
    }
    struct Note: Encodable {
        var item, title, note: String
        var revisions: [String]
    }
    /// A group of heads merged first (rule 12).
    struct Group: Encodable {
        var heads: [String]
        @NullIfAbsent var base: [String]?
        var twoWay: Bool
        @NullIfAbsent var twoWayReason: String?
    }
    var id: String
    // Absent values are `null`, not missing keys.
    @NullIfAbsent var revision: String?
    @NullIfAbsent var base: [String]?
    var twoWay: Bool
    @NullIfAbsent var twoWayReason: String?
    var heads: [String]
    var groups: [Group]
    var contested: [Contest]
    var notes: [Note]
    var dryRun: Bool
    var refused: Bool
    /// With `--dry-run`: the merge against the winner, as `diff --json` shows a pair (`to`
    /// `null`: the merge is no revision); `null` otherwise.
    @NullIfAbsent var againstWinner: DiffJSON?

    init(
        _ plan: SurveyStore.MergePlan, revision: RevisionMetadata?, dryRun: Bool, refused: Bool,
        againstWinner: SurveyDiff? = nil
    ) {
        id = plan.document.lowercased
        self.revision = revision?.id.description
        base = plan.isTwoWay ? nil : plan.bases.map(\.id.description)
        twoWay = plan.isTwoWay
        twoWayReason = plan.twoWayReason
        heads = plan.heads.map(\.id.description)
        groups = plan.groups.map {
            Group(
                heads: $0.heads.map(\.id.description),
                base: $0.isTwoWay ? nil : $0.bases.map(\.id.description),
                twoWay: $0.isTwoWay, twoWayReason: $0.twoWayReason)
        }
        contested = (plan.result?.contested ?? []).map { contest in
            Contest(
                item: contest.item?.itemID, title: contest.itemTitle, field: contest.field,
                chosen: JSONFieldValue(value: contest.chosenValue), chosenOption: contest.chosenOption,
                chosenRevision: contest.chosen,
                values: contest.values.map {
                    Value(
                        revision: $0.label, value: JSONFieldValue(value: $0.value), unchanged: $0.isUnchanged,
                        option: $0.option)
                })
        }
        notes = (plan.result?.notes ?? []).map {
            Note(item: $0.item.itemID, title: $0.itemTitle, note: $0.kind.rawValue, revisions: $0.heads)
        }
        self.dryRun = dryRun
        self.refused = refused
        if let againstWinner, let winner = plan.heads.first {
            self.againstWinner = DiffJSON(from: winner.id.description, to: nil, diff: againstWinner)
        }
    }
}

/// Text a person reads at a glance: each line written out as `Console.row(_:)` writes
/// it (a value keeps to its line, whatever it holds), as `show` writes its rows.
enum MergeText {
    /// `text` in quotes, a quote in it written `\"` and a backslash `\\` (as in a JSON
    /// or Swift string), so that `say "hi"` shows as `"say \"hi\""` and no text can seem
    /// to end the quotes early. Its control characters are written out with the rest of
    /// the line (``Console/row(_:)``), as `show` writes them: a tab and a line feed as
    /// `\u{9}` and `\u{A}`.
    static func quoted(_ text: String) -> String { ShownText.quoted(text) }

    /// A field value: strings quoted, numbers plain, `—` when absent. A dictionary (a
    /// contest of the unit `kind`, or of a whole `item`) is its kind, then its other
    /// fields, a binary answer in it by the label of the option it chooses
    /// (``answer(in:)``).
    static func value(_ value: PropertyList?) -> String {
        guard let value else { return "—" }
        switch value {
        case .string(let text): return quoted(text)
        case .integer(let integer): return integer.int64Value.map(String.init) ?? "\(integer.magnitude)"
        case .real(let real):
            return real.rounded() == real && abs(real) < 1e15 ? String(Int64(real)) : String(real)
        case .boolean(let flag): return flag ? "true" : "false"
        case .date(let date): return date.formatted(.iso8601)
        case .data(let data): return "\(data.count) bytes"
        case .array(let elements):
            if elements.allSatisfy({ if case .boolean = $0 { true } else { false } }) {
                return elements.map { $0 == .boolean(true) ? "T" : "F" }.joined()
            }
            return "[" + elements.map { Self.value($0) }.joined(separator: ", ") + "]"
        case .dictionary(let entries):
            let kind = entries["kind"]?.stringValue ?? "item"
            let rest = Item.displayOrder.filter { $0 != "kind" && entries[$0] != nil }.map {
                "\($0) \($0 == "answer" ? answer(in: entries) : Self.value(entries[$0]))"
            }
            return ([kind] + rest).joined(separator: ", ")
        }
    }

    /// The answer of an item in the interchange form (a contest's unit `kind` or whole
    /// `item`), as `show` prints it (``Item/chosenOption``): a binary answer as the label
    /// of the option it chooses, quoted; any other as ``value(_:)`` writes it.
    static func answer(in entries: [String: PropertyList]) -> String {
        if entries["kind"]?.stringValue == "binary", case .integer(let integer)? = entries["answer"],
            let index = integer.int64Value.flatMap({ Int(exactly: $0) }),
            case .array(let options)? = entries["options"], options.indices.contains(index),
            let label = options[index].stringValue
        {
            return quoted(label)
        }
        return value(entries["answer"])
    }

    /// The lines of one diff.
    static func lines(_ pair: SurveyStore.RevisionDiff) -> [String] {
        ["from \(pair.from.id.description.prefix(14))… to \(pair.to.id.description.prefix(14))…"]
            + lines(pair.diff)
    }

    /// The lines of a diff: one per item, then one per field of a modified item.
    static func lines(_ diff: SurveyDiff) -> [String] {
        var lines: [String] = []
        if diff.isEmpty { lines.append("  no differences") }
        if let title = diff.title { lines.append("  title: \(value(title.from)) → \(value(title.to))") }
        for item in diff.items {
            let name = quoted(item.title)
            switch item.change {
            case .added: lines.append("+ \(item.to!) \(name): added")
            case .removed: lines.append("- \(item.from!) \(name): removed")
            case .moved: lines.append("~ \(item.to!) \(name): moved \(item.from!) → \(item.to!)")
            case .modified:
                let moved = item.moved ? " (moved \(item.from!) → \(item.to!))" : ""
                lines.append("* \(item.to!) \(name)\(moved):")
                // A binary answer by the label of the option it chooses, as `show` prints it.
                for field in item.fields {
                    let from = field.fromOption.map(quoted) ?? value(field.from)
                    let to = field.toOption.map(quoted) ?? value(field.to)
                    lines.append("    \(field.field): \(from) → \(to)")
                }
            }
        }
        return lines.map(Console.row)
    }

    /// What a merge decided, for standard error or a dry run.
    static func lines(_ plan: SurveyStore.MergePlan) -> [String] {
        var lines: [String] = []
        func short(_ revisions: [RevisionMetadata]) -> String {
            revisions.map { String($0.id.description.prefix(14)) + "…" }.joined(separator: ", ")
        }
        // Heads that a group merged before are named by that group rather than one by
        // one, so that many heads merged in nested groups take a line each, not a list
        // that grows with every line; at most `shownHeads` more are named (--json lists
        // every one).
        let shownHeads = 6
        var namedGroups: [Set<RevisionID>] = []
        func named(_ revisions: [RevisionMetadata]) -> String {
            let ids = Set(revisions.map(\.id))
            let earlier = namedGroups.filter { $0.isSubset(of: ids) }.max { $0.count < $1.count }
            let rest = revisions.filter { earlier?.contains($0.id) != true }
            var parts = earlier.map { ["the \($0.count) above"] } ?? []
            parts += rest.prefix(shownHeads).map { String($0.id.description.prefix(14)) + "…" }
            if rest.count > shownHeads { parts.append("and \(rest.count - shownHeads) more") }
            return parts.joined(separator: ", ")
        }
        // Groups merged first (rule 12), each as one head in the passes after it.
        for group in plan.groups {
            let merged =
                "\(namedGroups.isEmpty ? "first" : "then") merged \(group.heads.count) heads (\(named(group.heads))), which share history the other heads lack"
            namedGroups.append(Set(group.heads.map(\.id)))
            if let base = group.base {
                lines.append("\(merged), from base \(base.id.description.prefix(14))…")
            } else if group.isVirtualBase {
                lines.append(
                    "\(merged), from a virtual base, the merge of their \(group.bases.count) merge bases (\(short(group.bases)))"
                )
            } else {
                lines.append(
                    "\(merged), two-way: \(group.twoWayReason ?? "no base"); every difference between them is contested"
                )
            }
        }
        let heads = named(plan.heads)
        if let base = plan.base {
            lines.append(
                "merged \(plan.heads.count) heads (\(heads)) from base \(base.id.description.prefix(14))…")
        } else if plan.isVirtualBase {
            let bases = plan.bases.map { String($0.id.description.prefix(14)) + "…" }.joined(separator: ", ")
            lines.append(
                "merged \(plan.heads.count) heads (\(heads)) from a virtual base, the merge of their \(plan.bases.count) merge bases (\(bases)): a field those disagreed on is contested unless the heads agree"
            )
        } else {
            lines.append(
                "two-way merge of \(plan.heads.count) heads (\(heads)): \(plan.twoWayReason ?? "no base"); every difference is contested"
            )
        }
        guard let result = plan.result else {
            return (lines + ["every head is a deletion: the resolution deletes the document"]).map(
                Console.row)
        }
        let positions = Dictionary(
            result.survey.items.enumerated().map { ($1.id, $0 + 1) }, uniquingKeysWith: { a, _ in a })
        lines.append(result.isClean ? "nothing contested" : "\(result.contested.count) contested field(s):")
        for contest in result.contested {
            let subject =
                contest.item.map {
                    "item \(positions[$0].map(String.init) ?? "?") \(quoted(contest.itemTitle))"
                } ?? "survey"
            // A binary answer by the label of the option it chooses, as `show` prints it.
            let values = contest.values.map {
                "\($0.label.prefix(8))… \($0.option.map(quoted) ?? value($0.value))\($0.isUnchanged ? ", unchanged" : "")"
            }.joined(separator: "; ")
            let chosen = contest.chosenOption.map(quoted) ?? value(contest.chosenValue)
            lines.append(
                "  \(subject) \(contest.field): took \(chosen) from \(contest.chosen.prefix(8))… (\(values))"
            )
        }
        for note in result.notes {
            let subject =
                "item \(positions[note.item].map(String.init) ?? "?") \(quoted(note.itemTitle))"
            switch note.kind {
            case .keptDespiteRemoval:
                lines.append(
                    "  \(subject): removed on \(note.heads.map { $0.prefix(8) + "…" }.joined(separator: ", ")) but modified elsewhere: kept"
                )
            case .tookWholeItem:
                lines.append(
                    "  \(subject): the merged fields broke a rule; took the whole item from \(note.heads.first?.prefix(8) ?? "")…"
                )
            case .keptWithoutBase:
                lines.append(
                    "  \(subject): only some heads have it; kept (no base to tell an addition from a removal)"
                )
            }
        }
        return lines.map(Console.row)
    }
}

extension Item {
    /// Fields in display order.
    static let displayOrder = [
        "title", "kind", "options", "text", "subtitle", "minimum", "maximum", "roundToInteger", "answer",
    ]
}
