import Foundation
import SurveyStore
import Surveys
import Versions

#if canImport(Glibc)
    import Glibc
#endif

/// Surveys and whole stores for the store rows, made quickly and deterministically.
enum StoreTrees {
    /// A survey of `items` items cycling through the seven kinds, every answerable one
    /// answered; `variant` changes the answers (so that each variant is new content).
    static func survey(items: Int, variant: Int, seed: Int = 0) throws -> Survey {
        var generator = SplitMix(seed: UInt64(seed))
        let base = Date(timeIntervalSince1970: 1_800_000_000)
        let list = (0..<items).map { index -> Item in
            let id = UUID(uuid: generator.uuid())
            let title = "Question \(index + 1)"
            switch index % 7 {
            case 0:
                return Item(
                    id: id, title: title, kind: .binary(options: ["No", "Yes"]),
                    answer: .choice((index + variant) % 2))
            case 1:
                return Item(
                    id: id, title: title, kind: .textOnly(text: "Some explanation for question \(index + 1).")
                )
            case 2:
                return Item(
                    id: id, title: title, kind: .textField(subtitle: "Free text"),
                    answer: .text("answer \(variant)"))
            case 3:
                return Item(
                    id: id, title: title, kind: .datePicker,
                    answer: .date(base.addingTimeInterval(Double(variant * 60))))
            case 4:
                return Item(
                    id: id, title: title, kind: .slider(minimum: 0, maximum: 100, roundToInteger: true),
                    answer: .number(Double((index + variant) % 100)))
            case 5:
                return Item(
                    id: id, title: title, kind: .picker(options: ["Red", "Green", "Blue"]),
                    answer: .text(["Red", "Green", "Blue"][(index + variant) % 3]))
            default:
                return Item(
                    id: id, title: title, kind: .multiTF(options: ["A", "B", "C", "D"]),
                    answer: .flags([true, variant % 2 == 0, false, index % 2 == 0]))
            }
        }
        return try Survey(title: "Benchmark survey \(seed)", items: list)
    }

    /// Writes `count` documents of three revisions each (a chain) under `store`'s
    /// `Documents/`, with plain writes and no fsync: the same bytes a store writes
    /// (metadata made by `RevisionMetadata.make`, so revision ids are valid), but
    /// without durability, which only the setup can afford to skip.
    ///
    /// - Returns: The ids of the documents, in the order written.
    @discardableResult
    static func replicate(into store: String, count: Int, contents: [Data], seed: UInt64) throws -> [UUID] {
        precondition(contents.count == 3)
        var generator = SplitMix(seed: seed)
        let device = Device(id: "benchmark-device", name: "Benchmark")
        var ids: [UUID] = []
        ids.reserveCapacity(count)
        let documents = store + "/Documents"
        for index in 0..<count {
            let id = UUID(uuid: generator.uuid())
            ids.append(id)
            // In the past (November 2023), as a real store's stamps are: a stamp more than
            // a day ahead of the clock is flagged by every command that meets it (`sync`
            // warns of each such revision), which no ordinary store asks of all of them.
            var clock = HybridClock(wallClock: { 1_700_000_000_000 + Int64(index) })
            var parents: [RevisionMetadata] = []
            let folder = documents + "/" + id.uuidString.lowercased()
            try makeDirectory(folder)
            for content in contents {
                let metadata = try RevisionMetadata.make(
                    documentID: id, parents: parents, content: content,
                    formatVersion: SurveyStore.formatVersion, device: device,
                    clock: &clock)
                let package = folder + "/\(metadata.id).survey"
                try makeDirectory(package)
                try writeFile(try metadata.plistData(), to: package + "/" + RevisionStore.metadataFile)
                try writeFile(content, to: package + "/" + RevisionStore.contentFile)
                parents = [metadata]
            }
        }
        return ids
    }

    /// One document whose revisions form a main line with side branches: `revisions`
    /// in all, every tenth one starting a branch of its own that is never merged, so the
    /// document has many heads (one winner, the rest conflicts).
    static func manyRevisions(into store: String, revisions: Int, content: Data) throws -> UUID {
        var generator = SplitMix(seed: 99)
        let id = UUID(uuid: generator.uuid())
        let folder = store + "/Documents/" + id.uuidString.lowercased()
        try makeDirectory(folder)
        var clock = HybridClock(wallClock: { 1_700_000_000_000 })
        var main: RevisionMetadata?
        var written = 0
        while written < revisions {
            let branching = written % 10 == 9 && main != nil
            let device = Device(id: "device-\(written % 4)", name: "Device \(written % 4)")
            // Content differs per revision only through its parents and timestamp, as it
            // may: ids stay unique since the metadata differs.
            let metadata = try RevisionMetadata.make(
                documentID: id, parents: main.map { [$0] } ?? [], content: content,
                formatVersion: SurveyStore.formatVersion,
                device: device, clock: &clock)
            let package = folder + "/\(metadata.id).survey"
            try makeDirectory(package)
            try writeFile(try metadata.plistData(), to: package + "/" + RevisionStore.metadataFile)
            try writeFile(content, to: package + "/" + RevisionStore.contentFile)
            if !branching { main = metadata }
            written += 1
        }
        return id
    }

    static func makeDirectory(_ path: String) throws {
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else {
            throw BenchmarkError("mkdir \(path): \(String(cString: strerror(errno)))")
        }
    }

    static func writeFile(_ data: Data, to path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard descriptor >= 0 else {
            throw BenchmarkError("open \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        try data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw BenchmarkError("write \(path): \(String(cString: strerror(errno)))")
                }
                offset += written
            }
        }
    }
}

/// A small deterministic random generator (SplitMix64), so that every run builds the
/// same trees.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func uuid() -> uuid_t {
        let a = next(), b = next()
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<8 {
            bytes[i] = UInt8(truncatingIfNeeded: a >> (8 * i))
            bytes[8 + i] = UInt8(truncatingIfNeeded: b >> (8 * i))
        }
        bytes[6] = (bytes[6] & 0x0F) | 0x40  // version 4
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 4122 variant
        return (
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
            bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
        )
    }
}
