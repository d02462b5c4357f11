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
/// What a row vouches for: that a read of the folder now would give the same result as
/// the read it was recorded from — the same winner, the same heads in conflict with it
/// (so the same state), the same title, and nothing skipped, incomplete or pending. That
/// read depends on the names and kinds of the folder's entries, on the bytes of every
/// package's metadata file and of every tombstone, on every live package's content file
/// being there as a regular file, and on the bytes of the winner's content file (its
/// title). Nothing else is looked at by a read, so nothing else is recorded.
///
/// What proves that, compared with what was recorded:
/// - the document folder's own status (identity, mode, link count, size, modification
///   and change times), taken with `fstatat` beneath `Documents/` without following a
///   link: an entry created, removed or renamed in the folder (a package or tombstone
///   arriving, a package replaced by a rename, a package turned into a link) sets the
///   folder's change time, so an unchanged status proves the same entries, of the same
///   kinds, naming the same files; the listing itself need not be read again;
/// - the status of every file the read depends on: each package's metadata file, each
///   live package's content file, each tombstone (identity, mode, size, both times).
///   A write or truncation in place, a file renamed over one of them or removed from its
///   package (which sets the package folder's times, not the document folder's) changes
///   the file's own status or makes it absent.
///
/// Any change the file system makes to one of these sets its change time (`st_ctim`) to
/// the current time, which nobody can choose. A state is recorded only when every change
/// time in it is older than the moment (the kernel's coarse clock, the one that stamps
/// files) taken before anything was looked at, truncated to the whole second when the
/// file system stamps in whole seconds (a change time without nanoseconds): a change
/// made while or after it was looked at is stamped at least that moment, so it can never
/// leave a recorded state as it was. That holds on file systems that keep change times
/// as POSIX says (the cache is used only on ext2/3/4, XFS, Btrfs, tmpfs, F2FS, ZFS and
/// overlayfs, never on network, FAT or FUSE mounts), and while the clock does not run
/// backward: the file records the boot and the offset between the real-time clock and
/// the boot-time clock, which only a step of the clock changes, and a file from another
/// boot or after a step is not used.
///
/// Only documents whose read was clean are recorded (every entry a complete package or
/// a tombstone in effect, nothing skipped, the winner's title read): every other
/// document is read in full each time.
final class SummaryCache {
    /// The file's first bytes.
    static let magic = Array("SurveyStore summary cache\n".utf8)
    static let version: UInt32 = 2
    /// How far the offset between the real-time and boot-time clocks may move without
    /// counting as a step: the time between reading the two clocks.
    static let offsetTolerance: Int64 = 2_000_000
    /// The size of the buffer a document folder is first listed into (about 880 entries
    /// of revisions); it grows, four times at a step, for a folder that does not fit.
    static let listingCapacity = 65_536
    /// The largest document folder listing recorded (about 220,000 entries); a folder
    /// with more is read in full each time.
    static let listingLimit = 16 << 20
    /// The file systems whose change times the cache relies on (`f_type` of `fstatfs`):
    /// ext2/3/4, XFS, Btrfs, tmpfs, F2FS, ZFS, overlayfs.
    static let trustedFileSystems: Set<Int64> = [
        0xEF53, 0x5846_5342, 0x9123_683E, 0x0102_1994, 0xF2F5_2010, 0x2FC1_2FC1, 0x794C_7630,
    ]
    /// The bytes of the file names a row's path may end with, by which file of an entry
    /// it names: 0 the entry itself, 1 its metadata file, 2 its content file.
    private static let suffixes: [[UInt8]] = [
        [], Array(("/" + StoreLayout.metadataFile).utf8), Array(("/" + StoreLayout.contentFile).utf8),
    ]
    private static let pathCapacity = 4096

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
    private var loadedBytes: [UInt8] = []
    private var cursor = 0
    /// The rows of the file to write, in document order: rows of the file read, kept
    /// (copied only if the file is written), and rows recorded now.
    private var rows: [(id: UUID, kept: Range<Int>?, recorded: [UInt8]?)] = []
    /// Whether the file to write differs from the file read.
    private var changed = false
    private var listing = [UInt8](repeating: 0, count: SummaryCache.listingCapacity)
    /// A path beneath `Documents/` (or beneath a document folder, while capturing), NUL
    /// terminated.
    private let path = UnsafeMutablePointer<CChar>.allocate(capacity: SummaryCache.pathCapacity)

    /// The cache of the store at `root`, or `nil` when the store's system calls are not
    /// the real ones (a simulated disk): the cache looks at folders with system calls of
    /// its own, so it checks that they see what the store sees; `nil` too on a file
    /// system whose change times it does not rely on.
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
        guard documents >= 0, Self.trustedFileSystems.contains(cshim_file_system_type(documents)),
            let clocks = Clocks.now()
        else {
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
        path.deallocate()
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
        let bytes = [UInt8](data)
        let valid = bytes.withUnsafeBytes { buffer -> [(id: UUID, body: Range<Int>)]? in
            let body = UnsafeRawBufferPointer(rebasing: buffer[0..<buffer.count - 32])
            guard SHA256.hash(data: body).elementsEqual(buffer[(buffer.count - 32)...]) else { return nil }
            return rows(of: body)
        }
        guard let valid else { return }
        loaded = valid
        loadedBytes = bytes
        changed = false
    }

    /// The rows of the file's body (without its checksum), or `nil` when its header does
    /// not match this store, this boot and this clock, or its layout is wrong.
    private func rows(of body: UnsafeRawBufferPointer) -> [(id: UUID, body: Range<Int>)]? {
        var input = RawReader(buffer: body)
        guard let magic = input.bytes(Self.magic.count), magic.elementsEqual(Self.magic),
            input.uint32() == Self.version,
            let boot = input.bytes(36), boot.elementsEqual(clocks.boot),
            let coarse = input.int64(), let offset = input.int64(),
            let device = input.integer(UInt64.self), let inode = input.integer(UInt64.self),
            clocks.coarse >= coarse, abs(clocks.offset - offset) <= Self.offsetTolerance,
            device == rootStamp.device, inode == rootStamp.inode,
            let count = input.uint32().map(Int.init), count <= body.count
        else { return nil }
        var rows: [(id: UUID, body: Range<Int>)] = []
        rows.reserveCapacity(count)
        var previous: UUID?
        for _ in 0..<count {
            guard let id = input.uuid(), let length = input.uint32().map(Int.init) else { return nil }
            let start = input.offset
            guard input.bytes(length) != nil else { return nil }
            // Rows are in the order the store lists documents, each once.
            if let previous, !Self.precedes(previous, id) { return nil }
            previous = id
            rows.append((id, start..<start + length))
        }
        return input.offset == body.count ? rows : nil
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

    /// Checks a row against the folder and decodes its summary when the folder's status
    /// and that of every recorded file are as they were: one `fstatat` for the folder and
    /// one for each file, each beneath `Documents/`, none following a link at its last
    /// name (the names before it are the folder, and packages whose kinds the folder's
    /// unchanged status vouches for).
    private func check(_ id: UUID, _ row: UnsafeRawBufferPointer) -> SurveyStore.Summary? {
        var input = RawReader(buffer: row)
        guard let folderStamp = input.stamp() else { return nil }
        StoreLayout.writeFolderName(of: id, into: UnsafeMutableRawBufferPointer(start: path, count: 36))
        path[36] = 0
        var stamp = cshim_stamp()
        guard cshim_stamp_at(documentsDescriptor, path, &stamp) == 0, Self.same(stamp, folderStamp),
            let entries = input.uint32()
        else { return nil }
        path[36] = CChar(bitPattern: UInt8(ascii: "/"))
        for _ in 0..<entries {
            guard let nameLength = input.uint8().map(Int.init), let name = input.bytes(nameLength),
                let files = input.uint8()
            else { return nil }
            UnsafeMutableRawBufferPointer(start: path + 37, count: nameLength).copyMemory(from: name)
            for _ in 0..<files {
                guard let which = input.uint8(), Int(which) < Self.suffixes.count,
                    let recorded = input.stamp()
                else { return nil }
                let end = 37 + nameLength
                Self.suffixes[Int(which)].withUnsafeBytes {
                    UnsafeMutableRawBufferPointer(start: path + end, count: $0.count).copyMemory(from: $0)
                    path[end + $0.count] = 0
                }
                guard cshim_stamp_at(documentsDescriptor, path, &stamp) == 0, Self.same(stamp, recorded)
                else { return nil }
            }
        }
        return input.summary(id: id)
    }

    /// Whether `a` comes before `b` in the order the store lists documents (by the text
    /// of their ids, which is the order of their bytes: hexadecimal digits in lower case
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
        /// Each entry: its name, its kind byte, and the status of each of its files
        /// (by which: 0 itself, 1 metadata, 2 content) that was there.
        var entries: [(name: String, kind: UInt8, stamps: [UInt8: cshim_stamp])]
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
        func list() -> Int {
            listing.withUnsafeMutableBufferPointer {
                $0.withMemoryRebound(to: CChar.self) { cshim_listing(folder, $0.baseAddress, UInt($0.count)) }
            }
        }
        var length = list()
        // A long history (a tombstone for each pruned revision) does not fit at first.
        while length < 0, errno == ERANGE, listing.count < Self.listingLimit,
            lseek(folder, 0, SEEK_SET) == 0
        {
            listing = [UInt8](repeating: 0, count: min(listing.count * 4, Self.listingLimit))
            length = list()
        }
        guard length >= 0 else { return nil }
        var capture = Capture(folder: stamp, entries: [])
        var offset = 0
        while offset < length {
            let kind = listing[offset]
            let start = offset + 1
            var end = start
            while listing[end] != 0 { end += 1 }
            guard let name = String(validating: listing[start..<end], as: UTF8.self) else { return nil }
            var stamps: [UInt8: cshim_stamp] = [:]
            let files: [UInt8] =
                StoreLayout.isHidden(name)
                ? []
                : name.hasSuffix(StoreLayout.packageSuffix)
                    ? [1, 2] : name.hasSuffix(StoreLayout.tombstoneSuffix) ? [0] : []
            for which in files {
                let suffix = Self.suffixes[Int(which)]
                guard end - start + suffix.count < Self.pathCapacity else { return nil }
                listing.withUnsafeBytes {
                    UnsafeMutableRawBufferPointer(start: path, count: end - start).copyMemory(
                        from: UnsafeRawBufferPointer(rebasing: $0[start..<end]))
                }
                suffix.withUnsafeBytes {
                    UnsafeMutableRawBufferPointer(start: path + (end - start), count: $0.count).copyMemory(
                        from: $0)
                }
                path[end - start + suffix.count] = 0
                if cshim_stamp_at(folder, path, &stamp) == 0 { stamps[which] = stamp }
            }
            capture.entries.append((name, kind, stamps))
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
        var entries: [(name: String, stamps: [(which: UInt8, stamp: cshim_stamp)])] = []
        var packages = 0, tombstones = 0
        for entry in capture.entries {
            // A hidden entry is no part of the document; the folder's own status vouches
            // that none was added, removed or renamed since.
            if StoreLayout.isHidden(entry.name) { continue }
            guard entry.name.utf8.count <= Int(UInt8.max) else { return }
            if entry.name.hasSuffix(StoreLayout.packageSuffix) {
                guard entry.kind == UInt8(ascii: "d"),
                    let revision = StoreLayout.revision(packageName: entry.name),
                    let metadata = read.live[revision], let stamp = entry.stamps[1], recordable(stamp)
                else { return }
                var stamps = [(UInt8(1), stamp)]
                if !metadata.isDeleted {
                    guard let content = entry.stamps[2], recordable(content) else { return }
                    stamps.append((2, content))
                }
                entries.append((entry.name, stamps))
                packages += 1
            } else if entry.name.hasSuffix(StoreLayout.tombstoneSuffix) {
                guard entry.kind == UInt8(ascii: "r"),
                    let revision = StoreLayout.revision(tombstoneName: entry.name),
                    read.tombstones[revision] != nil, let stamp = entry.stamps[0], recordable(stamp)
                else { return }
                entries.append((entry.name, [(0, stamp)]))
                tombstones += 1
            } else {
                return
            }
        }
        // The read saw exactly the entries captured.
        guard packages == read.live.count, tombstones == read.tombstones.count else { return }
        var body: [UInt8] = []
        Self.append(capture.folder, to: &body)
        Self.append(UInt32(entries.count), to: &body)
        for entry in entries {
            body.append(UInt8(entry.name.utf8.count))
            body.append(contentsOf: entry.name.utf8)
            body.append(UInt8(entry.stamps.count))
            for (which, stamp) in entry.stamps {
                body.append(which)
                Self.append(stamp, to: &body)
            }
        }
        Self.append(summary, to: &body)
        rows.append((id, nil, body))
    }

    /// Whether a status may be recorded: its change time is known and older than the
    /// moment this pass began — older than that moment's whole second when the change
    /// time has no nanoseconds, as on a file system that stamps in whole seconds, where a
    /// change made after the moment can be stamped with the same second.
    func recordable(_ stamp: cshim_stamp) -> Bool {
        Self.recordable(changed: stamp.changed, moment: clocks.coarse)
    }

    /// ``recordable(_:)`` for a change time and the moment a pass began, in nanoseconds.
    static func recordable(changed: Int64, moment: Int64) -> Bool {
        let second: Int64 = 1_000_000_000
        guard changed > 0 else { return false }
        if changed % second == 0 { return changed < moment - moment % second }
        return changed < moment
    }

    // MARK: Writing the file

    /// Writes the file when it changed, unless the clock was stepped during the pass.
    /// Failures are ignored: the cache only ever saves work.
    func finish() {
        if cursor < loaded.count { changed = true }
        guard changed, let now = Clocks.now(), now.boot == clocks.boot,
            abs(now.offset - clocks.offset) <= Self.offsetTolerance
        else { return }
        var data = Self.magic
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
                data.append(contentsOf: loadedBytes[kept])
            } else if let recorded = row.recorded {
                Self.append(UInt32(recorded.count), to: &data)
                data.append(contentsOf: recorded)
            }
        }
        data.append(contentsOf: SHA256.hash(data: data))
        try? writer.replaceFile(Data(data), at: StoreLayout.summaryCacheFile)
    }

    // MARK: Encoding

    static func append<T: FixedWidthInteger>(_ value: T, to data: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
    }

    static func append(_ stamp: cshim_stamp, to data: inout [UInt8]) {
        append(stamp.device, to: &data)
        append(stamp.inode, to: &data)
        append(stamp.mode, to: &data)
        append(stamp.links, to: &data)
        append(stamp.size, to: &data)
        append(stamp.modified, to: &data)
        append(stamp.changed, to: &data)
    }

    static func append(_ text: String, to data: inout [UInt8]) {
        append(UInt32(text.utf8.count), to: &data)
        data.append(contentsOf: text.utf8)
    }

    static func uuidBytes(_ id: UUID) -> [UInt8] {
        withUnsafeBytes(of: id.uuid) { Array($0) }
    }

    static func append(_ revision: RevisionID, to data: inout [UInt8]) {
        append(Int64(revision.generation), to: &data)
        append(revision.digest, to: &data)
    }

    static func append(_ metadata: RevisionMetadata, to data: inout [UInt8]) {
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

    static func append(_ summary: SurveyStore.Summary, to data: inout [UInt8]) {
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

/// Reads the cache file, or one row of it, in place; `nil` for anything out of bounds or
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
        // Not `UUID().uuid` as a buffer: that draws 16 random bytes from the kernel.
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
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
