import Foundation
import PropertyList

// The interchange form written straight to XML, without building its `PropertyList`
// tree: the same bytes `interchange.xmlData()` writes (a test compares the two on
// surveys of every kind), in under half the time. Each dictionary's keys are written in
// the order the tree writer sorts them, byte order for these ASCII keys; a failure (a
// text XML cannot carry) names the value's path as the tree writer does.

extension Survey {
    /// Writes the survey's interchange form, `{items, title}`, at depth 0.
    func writeInterchange(to writer: inout XMLPlistWriter) throws {
        _ = try writer.beginDictionary(isEmpty: false, depth: 0)
        try entry("items", of: &writer) { writer in
            try writer.writeKey("items", depth: 1)
            guard try writer.beginArray(isEmpty: items.isEmpty, depth: 1) else { return }
            for (index, item) in items.enumerated() {
                do {
                    try item.writeInterchange(to: &writer, depth: 2)
                } catch {
                    throw XMLPlistWriter.rethrow(error, at: XMLPlistWriter.indexComponent(index))
                }
            }
            writer.endContainer("</array>\n", depth: 1)
        }
        try entry("title", of: &writer) { writer in
            try writer.writeKey("title", depth: 1)
            try writer.writeString(title, depth: 1)
        }
        writer.endContainer("</dict>\n", depth: 0)
    }
}

extension Item {
    /// Writes the item's interchange form at `depth`: its keys in sorted order, `answer`,
    /// `id`, `kind`, `maximum`, `minimum`, `options`, `roundToInteger`, `subtitle`,
    /// `text`, `title`, each only where ``interchange`` has it.
    func writeInterchange(to writer: inout XMLPlistWriter, depth: Int) throws {
        let inner = depth + 1
        _ = try writer.beginDictionary(isEmpty: false, depth: depth)
        if let answer {
            try entry("answer", of: &writer) { writer in
                try writer.writeKey("answer", depth: inner)
                switch answer {
                case .choice(let index):
                    writer.writeInteger(
                        isNegative: index < 0, magnitude: UInt64(index.magnitude), depth: inner)
                case .text(let text): try writer.writeString(text, depth: inner)
                case .date(let date): try writer.writeDate(date, depth: inner)
                case .number(let number): writer.writeReal(number, depth: inner)
                case .flags(let flags):
                    guard try writer.beginArray(isEmpty: flags.isEmpty, depth: inner) else { return }
                    for flag in flags { writer.writeBoolean(flag, depth: inner + 1) }
                    writer.endContainer("</array>\n", depth: inner)
                }
            }
        }
        try entry("id", of: &writer) { writer in
            try writer.writeKey("id", depth: inner)
            try writer.writeString(id.uuidString, depth: inner)
        }
        try entry("kind", of: &writer) { writer in
            try writer.writeKey("kind", depth: inner)
            try writer.writeString(kind.name, depth: inner)
        }
        switch kind {
        case .slider(let minimum, let maximum, let roundToInteger):
            try entry("maximum", of: &writer) { writer in
                try writer.writeKey("maximum", depth: inner)
                writer.writeReal(maximum, depth: inner)
            }
            try entry("minimum", of: &writer) { writer in
                try writer.writeKey("minimum", depth: inner)
                writer.writeReal(minimum, depth: inner)
            }
            try entry("roundToInteger", of: &writer) { writer in
                try writer.writeKey("roundToInteger", depth: inner)
                writer.writeBoolean(roundToInteger, depth: inner)
            }
        case .binary(let options), .picker(let options), .multiTF(let options):
            try entry("options", of: &writer) { writer in
                try writer.writeKey("options", depth: inner)
                guard try writer.beginArray(isEmpty: options.isEmpty, depth: inner) else { return }
                for (index, option) in options.enumerated() {
                    do {
                        try writer.writeString(option, depth: inner + 1)
                    } catch {
                        throw XMLPlistWriter.rethrow(error, at: XMLPlistWriter.indexComponent(index))
                    }
                }
                writer.endContainer("</array>\n", depth: inner)
            }
        case .textField(let subtitle?):
            try entry("subtitle", of: &writer) { writer in
                try writer.writeKey("subtitle", depth: inner)
                try writer.writeString(subtitle, depth: inner)
            }
        case .textOnly(let text?):
            try entry("text", of: &writer) { writer in
                try writer.writeKey("text", depth: inner)
                try writer.writeString(text, depth: inner)
            }
        case .textField(nil), .textOnly(nil), .datePicker:
            break
        }
        try entry("title", of: &writer) { writer in
            try writer.writeKey("title", depth: inner)
            try writer.writeString(title, depth: inner)
        }
        writer.endContainer("</dict>\n", depth: depth)
    }
}

/// Writes one dictionary entry with `body`, naming `key` in the path of a failure.
private func entry(
    _ key: String, of writer: inout XMLPlistWriter, _ body: (inout XMLPlistWriter) throws -> Void
) throws {
    do {
        try body(&writer)
    } catch {
        throw XMLPlistWriter.rethrow(error, at: XMLPlistWriter.keyComponent(key))
    }
}
