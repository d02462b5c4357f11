import CSystemShims
import Crypto
import Foundation
import Packages
import Versions

#if canImport(Glibc)
    import Glibc
#endif

/// The summary cache (`Local.nosync/summaries.cache`, see `docs/FORMAT.md`): for each
/// document, the row `list` shows, and the state of the document's folder it was read
/// from. A row is used only when the folder is provably unchanged since; anything else
/// is read from the revisions themselves.
///
/// What proves a folder unchanged, compared with what was recorded:
/// - the document folder's own status (identity, size, modification and change times),
///   taken through the descriptor that is then listed;
/// - its listing, byte for byte: every name and the kind the file system gives it;
/// - the status of every file the read depended on: each package's metadata file, each
///   content file, each tombstone (identity, type, size, both times).
///
/// Any change the file system makes to one of these (a create, rename, removal, write,
/// truncation, a change of mode) sets its change time (`st_ctim`) to the current time,
/// which nobody can choose. A state is recorded only when every change time in it is
/// older than the moment (the kernel's coarse clock, the one that stamps files) taken
/// before anything was looked at: a change made while or after it was looked at is
/// stamped at least that moment, so it can never leave a recorded state as it was.
/// That holds while the clock does not run backward: the file records the boot and the
/// offset between the real-time clock and the boot-time clock, which only a step of the
/// clock changes, and a file from another boot or after a step is not used.
///
/// Only documents whose read was clean are recorded (every entry a complete package or
/// a tombstone in effect, nothing skipped, the winner's title read): every other
/// document is read in full each time.
final class SummaryCache {
    /// The file's first bytes.
    static let magic = Array("SurveyStore summary cache\n".utf8)
    static let version: UInt32 = 1
    /// How far the offset between the real-time and boot-time clocks may move without
    /// counting as a step: the time between reading the two clocks.
    static let offsetTolerance: Int64 = 2_000_000
    /// The largest document folder listing recorded.
    static let listingCapacity = 65_536

    private let root: String
    private let reader: FileReader
    private let writer: PackageWriter
    private let rootDescriptor: Int32
    private let documentsDescriptor: Int32
    /// The clocks when this pass began, before anything was looked at.
    private let clocks: Clocks
    private let rootStamp: cshim_stamp
    /// The rows of the file read, by document in order, when it could be used.
    private var loaded: [(id: UUID, body: Range<Int>)] = []
    private var loadedBytes = Data()
    private var cursor = 0
    /// The rows of the file to write, in document order: rows of the file read, kept
    /// (copied only if the file is written), and rows recorded now.
    private var rows: [(id: UUID, kept: Range<Int>?, recorded: Data?)] = []
    /// Whether the file to write differs from the file read.
    private var changed = false
    private var listing = [UInt8](repeating: 0, count: SummaryCache.listingCapacity)
    private var path = [CChar](repeating: 0, count: 1024)

    /// The cache of the store at `root`, or `nil` when the store's system calls are not
    /// the real ones (a simulated disk): the cache looks at folders with system calls of
    /// its own, so it checks that they see what the store sees.
    init?(root: String, reader: FileReader, writer: PackageWriter) {
        guard let rootStatus = try? reader.status(atPath: root) else { return nil }
        let descriptor = cshim_openat(AT_FDCWD, root, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
        guard descriptor >= 0 else { return nil }
        var stamp = cshim_stamp()
        guard cshim_stamp_fd(descriptor, &stamp) == 0, stamp.device == rootStatus.device,
            stamp.inode == rootStatus.inode
        else {
            _ = Glibc.close(descriptor)
            return nil
        }
        let documents = cshim_openat_beneath(
            descriptor, StoreLayout.documentsFolder, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
        guard documents >= 0, let clocks = Clocks.now() else {
            if documents >= 0 { _ = Glibc.close(documents) }
            _ = Glibc.close(descriptor)
            return nil
        }
        self.root = root
        self.reader = reader
        self.writer = writer
        rootDescriptor = descriptor
        documentsDescriptor = documents
        self.clocks = clocks
        rootStamp = stamp
        load()
    }

    deinit {
        _ = Glibc.close(documentsDescriptor)
        _ = Glibc.close(rootDescriptor)
    }

    // MARK: Reading the file

    /// Reads the file and keeps its rows when it can be trusted: its checksum matches, it
    /// belongs to this store folder, and it was written in this boot with the clock
    /// never stepped since. Anything else (no file, a damaged or foreign one) is ignored.
    private func load() {
        changed = true
        guard
            let data = try? reader.contents(
                atPath: root + "/" + StoreLayout.summaryCacheFile, limit: FileReader.contentLimit),
            data.count >= Self.magic.count + 32
        else { return }
        let body = data.prefix(data.count - 32)
        guard Data(SHA256.hash(data: body)) == data.suffix(32) else { return }
        var input = ByteReader(data: data, end: data.count - 32)
        do {
            guard try input.bytes(Self.magic.count).elementsEqual(Self.magic),
                try input.uint32() == Self.version
            else { return }
            let boot = try input.bytes(36)
            let coarse = try input.int64(), offset = try input.int64()
            let device = try input.uint64(), inode = try input.uint64()
            guard boot.elementsEqual(clocks.boot), clocks.coarse >= coarse,
                abs(clocks.offset - offset) <= Self.offsetTolerance,
                device == rootStamp.device, inode == rootStamp.inode
            else { return }
            let count = Int(try input.uint32())
            var rows: [(id: UUID, body: Range<Int>)] = []
            rows.reserveCapacity(count)
            var previous: UUID?
            for _ in 0..<count {
                let id = try input.uuid()
                let length = Int(try input.uint32())
                let start = input.offset
                _ = try input.bytes(length)
                // Rows are in the order the store lists documents, each once.
                if let previous, !Self.precedes(previous, id) { return }
                previous = id
                rows.append((id, start..<start + length))
            }
            guard input.offset == input.end else { return }
            loaded = rows
            loadedBytes = data
            changed = false
        } catch {
            return
        }
    }

    // MARK: Using a row

    /// The summary recorded for `id` when its folder is provably unchanged since; `nil`
    /// otherwise (the caller reads the document, and may record it).
    func summary(of id: UUID) -> SurveyStore.Summary? {
        while cursor < loaded.count, Self.precedes(loaded[cursor].id, id) {
            cursor += 1
            changed = true  // a document that is gone
        }
        guard cursor < loaded.count, loaded[cursor].id == id else { return nil }
        let body = loaded[cursor].body
        cursor += 1
        guard
            let summary = loadedBytes.withUnsafeBytes({
                check(id, UnsafeRawBufferPointer(rebasing: $0[body]))
            })
        else {
            changed = true
            return nil
        }
        rows.append((id, body, nil))
        return summary
    }

    /// Checks a row against the folder and decodes its summary when every recorded
    /// stamp and the listing are as they were.
    private func check(_ id: UUID, _ row: UnsafeRawBufferPointer) -> SurveyStore.Summary? {
        var input = RawReader(buffer: row)
        guard let folderStamp = input.stamp(), let listingLength = input.uint32().map(Int.init),
            let recordedListing = input.bytes(listingLength)
        else { return nil }
        let folder = cshim_openat_beneath(
            documentsDescriptor, StoreLayout.folderName(of: id), O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
        guard folder >= 0 else { return nil }
        defer { _ = Glibc.close(folder) }
        var stamp = cshim_stamp()
        guard cshim_stamp_fd(folder, &stamp) == 0, Self.same(stamp, folderStamp) else { return nil }
        let length = listing.withUnsafeMutableBufferPointer {
            $0.withMemoryRebound(to: CChar.self) { cshim_listing(folder, $0.baseAddress, UInt($0.count)) }
        }
        guard length == listingLength,
            length == 0
                || listing.withUnsafeBytes({
                    memcmp($0.baseAddress!, recordedListing.baseAddress!, length) == 0
                })
        else { return nil }
        guard let count = input.uint32() else { return nil }
        for _ in 0..<count {
            guard let nameOffset = input.uint32().map(Int.init), let which = input.uint8(),
                let recorded = input.stamp(),
                nameOffset < length, makePath(nameOffset: nameOffset, which: which),
                path.withUnsafeBufferPointer({ cshim_stamp_at(folder, $0.baseAddress, &stamp) }) == 0,
                Self.same(stamp, recorded)
            else { return nil }
        }
        return input.summary(id: id)
    }

    /// Puts into ``path`` the listing's name at `nameOffset`, followed for `which` 1 by
    /// `/` and the metadata file's name, for 2 by `/` and the content file's name.
    private func makePath(nameOffset: Int, which: UInt8) -> Bool {
        let suffix: String
        switch which {
        case 0: suffix = ""
        case 1: suffix = "/" + StoreLayout.metadataFile
        case 2: suffix = "/" + StoreLayout.contentFile
        default: return false
        }
        var used = 0
        while nameOffset + used < listing.count, listing[nameOffset + used] != 0 {
            guard used < path.count - 64 else { return false }
            path[used] = CChar(bitPattern: listing[nameOffset + used])
            used += 1
        }
        for byte in suffix.utf8 {
            path[used] = CChar(bitPattern: byte)
            used += 1
        }
        path[used] = 0
        return true
    }

    /// Whether `a` comes before `b` in the order the store lists documents (by the text
    /// of their ids, which is the order of their bytes: hexadecimal digits in upper case
    /// sort as the values they stand for, and the dashes stand at the same places).
    static func precedes(_ a: UUID, _ b: UUID) -> Bool {
        withUnsafeBytes(of: a.uuid) { left in
            withUnsafeBytes(of: b.uuid) { right in memcmp(left.baseAddress!, right.baseAddress!, 16) < 0 }
        }
    }

    static func same(_ a: cshim_stamp, _ b: cshim_stamp) -> Bool {
        a.device == b.device && a.inode == b.inode && a.mode == b.mode && a.links == b.links
            && a.size == b.size
            && a.modified == b.modified && a.changed == b.changed
    }

    // MARK: Recording a row

    /// The state of a document folder taken before it is read.
    struct Capture {
        var folder: cshim_stamp
        var listing: [UInt8]
        /// Each entry: its name, where it starts in the listing, its kind byte.
        var entries: [(name: String, offset: Int, kind: UInt8)]
        /// Stamps by (entry offset, which); absent files are missing.
        var stamps: [Int: [UInt8: cshim_stamp]]
    }

    /// Looks at `id`'s folder before it is read: its status, listing, and the status of
    /// every file in it that a read depends on. `nil` when it cannot be recorded.
    func capture(_ id: UUID) -> Capture? {
        let folder = cshim_openat_beneath(
            documentsDescriptor, StoreLayout.folderName(of: id), O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
        guard folder >= 0 else { return nil }
        defer { _ = Glibc.close(folder) }
        var stamp = cshim_stamp()
        guard cshim_stamp_fd(folder, &stamp) == 0 else { return nil }
        let length = listing.withUnsafeMutableBufferPointer {
            $0.withMemoryRebound(to: CChar.self) { cshim_listing(folder, $0.baseAddress, UInt($0.count)) }
        }
        guard length >= 0 else { return nil }
        var capture = Capture(folder: stamp, listing: Array(listing[0..<length]), entries: [], stamps: [:])
        var offset = 0
        while offset < length {
            let kind = listing[offset]
            let start = offset + 1
            var end = start
            while listing[end] != 0 { end += 1 }
            guard let name = String(validating: listing[start..<end], as: UTF8.self) else { return nil }
            capture.entries.append((name, start, kind))
            let files: [UInt8] =
                name.hasSuffix(StoreLayout.packageSuffix)
                ? [1, 2] : name.hasSuffix(StoreLayout.tombstoneSuffix) ? [0] : []
            for which in files {
                guard makePath(nameOffset: start, which: which) else { return nil }
                if path.withUnsafeBufferPointer({ cshim_stamp_at(folder, $0.baseAddress, &stamp) }) == 0 {
                    capture.stamps[start, default: [:]][which] = stamp
                }
            }
            offset = end + 1
        }
        return capture
    }

    /// Records `summary`, made by `read` after `capture`, when the read was clean and
    /// the captured state is provably the one it read.
    func record(
        _ id: UUID, capture: Capture?, read: DocumentRead, summary: SurveyStore.Summary, titleRead: Bool
    ) {
        changed = true
        guard let capture, read.skipped.isEmpty, read.incomplete.isEmpty, read.resurrected.isEmpty,
            read.pending.isEmpty,
            titleRead || summary.isDeleted, recordable(capture.folder)
        else { return }
        var refs: [(offset: Int, which: UInt8, stamp: cshim_stamp)] = []
        var packages = 0, tombstones = 0
        for entry in capture.entries {
            if entry.name.hasSuffix(StoreLayout.packageSuffix) {
                guard entry.kind == UInt8(ascii: "d"),
                    let revision = StoreLayout.revision(packageName: entry.name),
                    let metadata = read.live[revision], let stamp = capture.stamps[entry.offset]?[1],
                    recordable(stamp)
                else { return }
                refs.append((entry.offset, 1, stamp))
                if !metadata.isDeleted {
                    guard let content = capture.stamps[entry.offset]?[2], recordable(content) else { return }
                    refs.append((entry.offset, 2, content))
                }
                packages += 1
            } else if entry.name.hasSuffix(StoreLayout.tombstoneSuffix) {
                guard entry.kind == UInt8(ascii: "r"),
                    let revision = RevisionID(String(entry.name.dropLast(StoreLayout.tombstoneSuffix.count))),
                    read.tombstones[revision] != nil, let stamp = capture.stamps[entry.offset]?[0],
                    recordable(stamp)
                else { return }
                refs.append((entry.offset, 0, stamp))
                tombstones += 1
            } else {
                return
            }
        }
        // The read saw exactly the entries captured.
        guard packages == read.live.count, tombstones == read.tombstones.count else { return }
        var body = Data()
        Self.append(capture.folder, to: &body)
        Self.append(UInt32(capture.listing.count), to: &body)
        body.append(contentsOf: capture.listing)
        Self.append(UInt32(refs.count), to: &body)
        for ref in refs {
            Self.append(UInt32(ref.offset), to: &body)
            body.append(ref.which)
            Self.append(ref.stamp, to: &body)
        }
        Self.append(summary, to: &body)
        rows.append((id, nil, body))
    }

    /// Whether a status may be recorded: its change time is known and older than the
    /// moment this pass began.
    private func recordable(_ stamp: cshim_stamp) -> Bool {
        stamp.changed > 0 && stamp.changed < clocks.coarse
    }

    // MARK: Writing the file

    /// Writes the file when it changed, unless the clock was stepped during the pass.
    /// Failures are ignored: the cache only ever saves work.
    func finish() {
        if cursor < loaded.count { changed = true }
        guard changed, let now = Clocks.now(), now.boot == clocks.boot,
            abs(now.offset - clocks.offset) <= Self.offsetTolerance
        else { return }
        var data = Data(Self.magic)
        Self.append(Self.version, to: &data)
        data.append(contentsOf: clocks.boot)
        Self.append(UInt64(bitPattern: clocks.coarse), to: &data)
        Self.append(UInt64(bitPattern: clocks.offset), to: &data)
        Self.append(rootStamp.device, to: &data)
        Self.append(rootStamp.inode, to: &data)
        Self.append(UInt32(rows.count), to: &data)
        for row in rows {
            data.append(contentsOf: Self.uuidBytes(row.id))
            if let kept = row.kept {
                Self.append(UInt32(kept.count), to: &data)
                data.append(
                    loadedBytes[
                        loadedBytes.startIndex + kept.lowerBound..<loadedBytes.startIndex + kept.upperBound])
            } else if let recorded = row.recorded {
                Self.append(UInt32(recorded.count), to: &data)
                data.append(recorded)
            }
        }
        data.append(contentsOf: SHA256.hash(data: data))
        try? writer.replaceFile(data, at: StoreLayout.summaryCacheFile)
    }

    // MARK: Encoding

    static func append<T: FixedWidthInteger>(_ value: T, to data: inout Data) {
        withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
    }

    static func append(_ stamp: cshim_stamp, to data: inout Data) {
        append(stamp.device, to: &data)
        append(stamp.inode, to: &data)
        append(stamp.mode, to: &data)
        append(stamp.links, to: &data)
        append(stamp.size, to: &data)
        append(stamp.modified, to: &data)
        append(stamp.changed, to: &data)
    }

    static func append(_ text: String, to data: inout Data) {
        append(UInt32(text.utf8.count), to: &data)
        data.append(contentsOf: text.utf8)
    }

    static func uuidBytes(_ id: UUID) -> [UInt8] {
        withUnsafeBytes(of: id.uuid) { Array($0) }
    }

    static func append(_ revision: RevisionID, to data: inout Data) {
        append(Int64(revision.generation), to: &data)
        append(revision.digest, to: &data)
    }

    static func append(_ metadata: RevisionMetadata, to data: inout Data) {
        data.append(contentsOf: uuidBytes(metadata.documentID))
        append(metadata.id, to: &data)
        append(UInt32(metadata.parents.count), to: &data)
        for parent in metadata.parents { append(parent, to: &data) }
        append(metadata.timestamp.milliseconds, to: &data)
        append(Int64(metadata.timestamp.counter), to: &data)
        append(metadata.device.id, to: &data)
        append(metadata.device.name, to: &data)
        append(Int64(metadata.formatVersion), to: &data)
        data.append(metadata.isDeleted ? 1 : 0)
        data.append(metadata.contentDigest == nil ? 0 : 1)
        if let digest = metadata.contentDigest { append(digest, to: &data) }
    }

    static func append(_ summary: SurveyStore.Summary, to data: inout Data) {
        append(summary.revision, to: &data)
        append(UInt32(summary.conflictRevisions.count), to: &data)
        for revision in summary.conflictRevisions { append(revision, to: &data) }
        data.append(summary.title == nil ? 0 : 1)
        if let title = summary.title { append(title, to: &data) }
    }
}

/// The clocks a cache file is written and read against.
struct Clocks {
    /// The kernel's coarse real-time clock, which stamps files, in nanoseconds.
    var coarse: Int64
    /// The real-time clock minus the boot-time clock: changed only by a step of the clock.
    var offset: Int64
    /// `/proc/sys/kernel/random/boot_id`: the same until the next boot.
    var boot: [UInt8]

    static func now() -> Clocks? {
        var coarse: Int64 = 0, realtime: Int64 = 0, boottime: Int64 = 0
        cshim_clocks(&coarse, &realtime, &boottime)
        guard let boot = bootID() else { return nil }
        return Clocks(coarse: coarse, offset: realtime - boottime, boot: boot)
    }

    /// The 36 characters of this boot's id.
    private static func bootID() -> [UInt8]? {
        let descriptor = cshim_openat(AT_FDCWD, "/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC, 0)
        guard descriptor >= 0 else { return nil }
        defer { _ = Glibc.close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        guard count >= 36 else { return nil }
        return Array(buffer[0..<36])
    }
}

/// Reads the cache file's values, checking every bound.
private struct ByteReader {
    struct OutOfBounds: Error {}
    let data: Data
    let end: Int
    var offset = 0

    init(data: Data, end: Int) {
        self.data = data
        self.end = end
    }

    mutating func bytes(_ count: Int) throws -> Data.SubSequence {
        guard count >= 0, count <= end - offset else { throw OutOfBounds() }
        defer { offset += count }
        return data[data.startIndex + offset..<data.startIndex + offset + count]
    }

    mutating func integer<T: FixedWidthInteger>(_: T.Type) throws -> T {
        let slice = try bytes(MemoryLayout<T>.size)
        var value: T = 0
        withUnsafeMutableBytes(of: &value) { $0.copyBytes(from: slice) }
        return T(littleEndian: value)
    }

    mutating func uint32() throws -> UInt32 { try integer(UInt32.self) }
    mutating func uint64() throws -> UInt64 { try integer(UInt64.self) }
    mutating func int64() throws -> Int64 { try integer(Int64.self) }

    mutating func uuid() throws -> UUID {
        let slice = try bytes(16)
        var value = UUID().uuid
        withUnsafeMutableBytes(of: &value) { $0.copyBytes(from: slice) }
        return UUID(uuid: value)
    }
}

/// Reads one row of the cache file in place; `nil` for anything out of bounds or
/// malformed.
private struct RawReader {
    let buffer: UnsafeRawBufferPointer
    var offset = 0

    init(buffer: UnsafeRawBufferPointer) { self.buffer = buffer }

    mutating func bytes(_ count: Int) -> UnsafeRawBufferPointer? {
        guard count >= 0, count <= buffer.count - offset else { return nil }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + count])
    }

    mutating func integer<T: FixedWidthInteger>(_: T.Type) -> T? {
        guard let bytes = bytes(MemoryLayout<T>.size) else { return nil }
        return T(littleEndian: bytes.loadUnaligned(as: T.self))
    }

    mutating func uint8() -> UInt8? { integer(UInt8.self) }
    mutating func uint32() -> UInt32? { integer(UInt32.self) }
    mutating func int64() -> Int64? { integer(Int64.self) }

    mutating func stamp() -> cshim_stamp? {
        guard let device = integer(UInt64.self), let inode = integer(UInt64.self),
            let mode = integer(UInt32.self),
            let links = integer(UInt32.self), let size = int64(), let modified = int64(),
            let changed = int64()
        else { return nil }
        return cshim_stamp(
            device: device, inode: inode, mode: mode, links: links, size: size, modified: modified,
            changed: changed)
    }

    mutating func string() -> String? {
        guard let length = uint32(), let bytes = bytes(Int(length)) else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }

    mutating func uuid() -> UUID? {
        guard let bytes = bytes(16) else { return nil }
        var value = UUID().uuid
        withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: bytes) }
        return UUID(uuid: value)
    }

    mutating func revision() -> RevisionID? {
        guard let generation = int64(), let digest = string(), generation >= 1,
            generation <= Int64(RevisionID.maximumGeneration),
            digest.utf8.count == 64
        else { return nil }
        return RevisionID(generation: Int(generation), digest: digest)
    }

    mutating func metadata(document: UUID) -> RevisionMetadata? {
        guard let documentID = uuid(), documentID == document, let id = revision(),
            let parentCount = uint32(),
            Int(parentCount) <= buffer.count - offset
        else { return nil }
        var parents: [RevisionID] = []
        for _ in 0..<parentCount {
            guard let parent = revision() else { return nil }
            parents.append(parent)
        }
        guard let milliseconds = int64(), let counter = int64(), let deviceID = string(),
            let deviceName = string(),
            let formatVersion = int64(), let deleted = uint8(), let hasDigest = uint8()
        else { return nil }
        var contentDigest: String?
        if hasDigest == 1 {
            guard let digest = string() else { return nil }
            contentDigest = digest
        }
        return RevisionMetadata(
            documentID: documentID, id: id, parents: parents,
            timestamp: HybridTimestamp(milliseconds: milliseconds, counter: Int(counter)),
            device: Device(id: deviceID, name: deviceName), formatVersion: Int(formatVersion),
            isDeleted: deleted == 1,
            contentDigest: contentDigest)
    }

    mutating func summary(id: UUID) -> SurveyStore.Summary? {
        guard let winner = metadata(document: id), let count = uint32(), Int(count) <= buffer.count - offset
        else { return nil }
        var conflicts: [RevisionMetadata] = []
        for _ in 0..<count {
            guard let revision = metadata(document: id) else { return nil }
            conflicts.append(revision)
        }
        guard let hasTitle = uint8() else { return nil }
        var title: String?
        if hasTitle == 1 {
            guard let text = string() else { return nil }
            title = text
        }
        guard offset == buffer.count else { return nil }
        return SurveyStore.Summary(
            id: id, title: title, revision: winner, conflicts: conflicts.map(\.id),
            conflictRevisions: conflicts)
    }
}
