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
        try writer.writeEntry("items", depth: 1) { writer in
            guard try writer.beginArray(isEmpty: items.isEmpty, depth: 1) else { return }
            for (index, item) in items.enumerated() {
                try writer.writeElement(index) { writer in try item.writeInterchange(to: &writer, depth: 2) }
            }
            writer.endContainer("</array>\n", depth: 1)
        }
        try writer.writeEntry("title", depth: 1) { writer in try writer.writeString(title, depth: 1) }
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
            try writer.writeEntry("answer", depth: inner) { writer in
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
        try writer.writeEntry("id", depth: inner) { writer in
            try writer.writeString(id.uuidString, depth: inner)
        }
        try writer.writeEntry("kind", depth: inner) { writer in
            try writer.writeString(kind.name, depth: inner)
        }
        switch kind {
        case .slider(let minimum, let maximum, let roundToInteger):
            try writer.writeEntry("maximum", depth: inner) { writer in writer.writeReal(maximum, depth: inner)
            }
            try writer.writeEntry("minimum", depth: inner) { writer in writer.writeReal(minimum, depth: inner)
            }
            try writer.writeEntry("roundToInteger", depth: inner) { writer in
                writer.writeBoolean(roundToInteger, depth: inner)
            }
        case .binary(let options), .picker(let options), .multiTF(let options):
            try writer.writeEntry("options", depth: inner) { writer in
                guard try writer.beginArray(isEmpty: options.isEmpty, depth: inner) else { return }
                for (index, option) in options.enumerated() {
                    try writer.writeElement(index) { writer in
                        try writer.writeString(option, depth: inner + 1)
                    }
                }
                writer.endContainer("</array>\n", depth: inner)
            }
        case .textField(let subtitle?):
            try writer.writeEntry("subtitle", depth: inner) { writer in
                try writer.writeString(subtitle, depth: inner)
            }
        case .textOnly(let text?):
            try writer.writeEntry("text", depth: inner) { writer in try writer.writeString(text, depth: inner)
            }
        case .textField(nil), .textOnly(nil), .datePicker:
            break
        }
        try writer.writeEntry("title", depth: inner) { writer in try writer.writeString(title, depth: inner) }
        writer.endContainer("</dict>\n", depth: depth)
    }
}
