import Foundation
import Packages
import PropertyList

/// A device that saves revisions: a stable id and a name people recognise.
public struct Device: Hashable, Sendable {
    /// The device's stable id, made once per store.
    public var id: String
    /// The name people recognise, such as `Laptop`.
    public var name: String

    /// Creates a device.
    public init(id: String, name: String) {
        self.id = id
        self.name = name
    }
}

/// What a revision's metadata file (``StoreLayout/metadataFile``) says about it. The content itself is opaque
/// bytes to this layer; only its digest is recorded.
public struct RevisionMetadata: Hashable, Sendable {
    /// The document the revision belongs to.
    public var documentID: UUID
    /// The revision's id, computed from this metadata.
    public var id: RevisionID
    /// The revisions this one was made from; none for a first revision, several for a resolution.
    public var parents: [RevisionID]
    /// When it was made, on the hybrid logical clock.
    public var timestamp: HybridTimestamp
    /// The device that made it.
    public var device: Device
    /// The format of its content.
    public var formatVersion: Int
    /// Whether it is a deletion, which has no content.
    public var isDeleted: Bool
    /// The SHA-256 of the content's bytes; `nil` for a deletion.
    public var contentDigest: String?

    /// Makes the metadata of a new revision, computing its generation, timestamp and id.
    ///
    /// - Parameters:
    ///   - documentID: The document.
    ///   - parents: The revisions it is based on (none for a first revision).
    ///   - content: The content's bytes, or `nil` for a deletion.
    ///   - formatVersion: The content's format version.
    ///   - device: The saving device.
    ///   - clock: The device's clock, advanced past the parents.
    ///   - contentDigest: The SHA-256 of `content` in lower-case hex when the caller has
    ///     already computed it (it is not checked); computed here otherwise.
    /// - Throws: ``VersionsError/malformedMetadata(_:_:)`` when a value cannot be written
    ///   as a property list (a device name with a control character) or a number is out
    ///   of range: a revision id is only ever computed from bytes that are written.
    public static func make(
        documentID: UUID, parents: [RevisionMetadata], content: Data?, formatVersion: Int, device: Device,
        clock: inout HybridClock, contentDigest: String? = nil
    ) throws -> RevisionMetadata {
        let generation = try nextGeneration(after: parents.map(\.id))
        var metadata = RevisionMetadata(
            documentID: documentID, id: RevisionID(generation: generation, digest: ""),
            parents: parents.map(\.id).sorted(), timestamp: clock.next(after: parents.map(\.timestamp)),
            device: device,
            formatVersion: formatVersion, isDeleted: content == nil,
            contentDigest: content.map { contentDigest ?? RevisionID.sha256Hex($0) })
        try metadata.checkRanges(file: nil)
        metadata.id = RevisionID(generation: generation, digest: try metadata.computedDigest())
        return metadata
    }

    /// The generation of a revision with `parents`: one more than the largest parent's,
    /// 1 for a first revision.
    static func nextGeneration(after parents: [RevisionID]) throws -> Int {
        let largest = parents.map(\.generation).max() ?? 0
        guard largest < RevisionID.maximumGeneration else {
            throw VersionsError.malformedMetadata(
                nil, "a parent's generation \(largest) is at the limit (\(RevisionID.maximumGeneration))")
        }
        return largest + 1
    }

    /// The ranges every number of a revision's metadata must lie in, so that no
    /// arithmetic on them can overflow: timestamps from 1970 to the end of year 9999,
    /// counters below 2^31, format versions from 1 to 10^6.
    static let millisecondRange: ClosedRange<Int64> = 0...253_402_300_799_999
    static let counterRange: ClosedRange<Int> = 0...Int(Int32.max)
    static let formatVersionRange: ClosedRange<Int> = 1...1_000_000

    /// The format version `metadata` (a package's metadata file, read but not verified)
    /// records, as every reader of a package takes it, whether or not the package
    /// verifies: 1 when `FormatVersion` is absent (an older app's package, whose metadata
    /// may hold only `DocumentUUID`), else an integer in 1...10^6.
    ///
    /// - Throws: ``VersionsError/malformedMetadata(_:_:)`` naming `file` when the value is
    ///   no integer or outside that range.
    public static func formatVersion(of metadata: PropertyList, file: String?) throws -> Int {
        guard let value = metadata[Key.formatVersion] else { return 1 }
        guard case .integer(let number) = value, let version = number.exactly(Int.self) else {
            throw VersionsError.malformedMetadata(file, "'\(Key.formatVersion)' is not an integer")
        }
        guard formatVersionRange.contains(version) else {
            throw VersionsError.malformedMetadata(
                file, "'\(Key.formatVersion)' \(version) is outside \(formatVersionRange)")
        }
        return version
    }

    func checkRanges(file: String?) throws {
        guard Self.millisecondRange.contains(timestamp.milliseconds) else {
            throw VersionsError.malformedMetadata(
                file, "'\(Key.milliseconds)' \(timestamp.milliseconds) is outside \(Self.millisecondRange)")
        }
        guard Self.counterRange.contains(timestamp.counter) else {
            throw VersionsError.malformedMetadata(
                file, "'\(Key.counter)' \(timestamp.counter) is outside \(Self.counterRange)")
        }
        guard Self.formatVersionRange.contains(formatVersion) else {
            throw VersionsError.malformedMetadata(
                file, "'\(Key.formatVersion)' \(formatVersion) is outside \(Self.formatVersionRange)")
        }
    }

    /// Creates metadata from its parts, as they are; ``make(documentID:parents:content:formatVersion:device:clock:contentDigest:)`` makes a new revision's.
    public init(
        documentID: UUID, id: RevisionID, parents: [RevisionID], timestamp: HybridTimestamp, device: Device,
        formatVersion: Int, isDeleted: Bool, contentDigest: String?
    ) {
        self.documentID = documentID
        self.id = id
        self.parents = parents
        self.timestamp = timestamp
        self.device = device
        self.formatVersion = formatVersion
        self.isDeleted = isDeleted
        self.contentDigest = contentDigest
    }

    // MARK: The plist form

    enum Key {
        static let documentID = "DocumentUUID"
        static let revisionID = "RevisionID"
        static let parents = "Parents"
        static let milliseconds = "TimestampMilliseconds"
        static let counter = "TimestampCounter"
        static let modified = "Modified"
        static let deviceID = "DeviceID"
        static let deviceName = "DeviceName"
        static let formatVersion = "FormatVersion"
        static let deleted = "Deleted"
        static let contentDigest = "ContentDigest"
    }

    /// Every key a metadata file may hold.
    static let keys: Set<String> = [
        Key.documentID, Key.revisionID, Key.parents, Key.milliseconds, Key.counter, Key.modified,
        Key.deviceID,
        Key.deviceName, Key.formatVersion, Key.deleted, Key.contentDigest,
    ]

    /// Everything but the revision id: the bytes its digest is computed over.
    var identityEntries: [String: PropertyList] {
        var entries: [String: PropertyList] = [
            Key.documentID: .string(documentID.uuidString),
            Key.parents: .array(parents.map { .string($0.description) }),
            Key.milliseconds: .integer(PropertyList.Integer(timestamp.milliseconds)),
            Key.counter: .integer(PropertyList.Integer(Int64(timestamp.counter))),
            Key.modified: .date(timestamp.date),
            Key.deviceID: .string(device.id),
            Key.deviceName: .string(device.name),
            Key.formatVersion: .integer(PropertyList.Integer(Int64(formatVersion))),
            Key.deleted: .boolean(isDeleted),
        ]
        if let contentDigest { entries[Key.contentDigest] = .string(contentDigest) }
        return entries
    }

    /// The digest of the metadata without its revision id.
    ///
    /// - Throws: ``VersionsError/malformedMetadata(_:_:)`` when the writer refuses a
    ///   value: there are then no bytes to compute it over, and no id is ever made up.
    func computedDigest(file: String? = nil) throws -> String {
        do {
            return RevisionID.sha256Hex(try PropertyList.dictionary(identityEntries).xmlData())
        } catch {
            throw VersionsError.malformedMetadata(
                file, "it cannot be written as a property list (\(error)), so its id cannot be computed")
        }
    }

    /// The bytes of the metadata file.
    ///
    /// - Throws: ``StoreError/revisionTooLarge(_:_:limit:)`` when the file would be larger
    ///   than its readers take (`FileReader.smallFileLimit`, 1 MiB: a device name or a list
    ///   of parents that long), so that no revision is written that cannot be read.
    public func plistData() throws -> Data {
        var entries = identityEntries
        entries[Key.revisionID] = .string(id.description)
        let data = try PropertyList.dictionary(entries).xmlData()
        guard data.count <= FileReader.smallFileLimit else {
            throw StoreError.revisionTooLarge(
                StoreLayout.metadataFile, data.count, limit: FileReader.smallFileLimit)
        }
        return data
    }

    /// Reads a metadata file.
    ///
    /// - Throws: ``VersionsError`` when a key is missing or malformed, or the revision
    ///   id does not match the metadata.
    public init(plist data: Data, file: String? = nil) throws {
        let digestWithoutID: String?
        if let (metadata, digest) = CanonicalMetadata.read(data) {
            self = metadata
            digestWithoutID = digest
        } else {
            self = try Self.parsed(data, file: file)
            digestWithoutID = nil
        }
        try checkRanges(file: file)
        guard parents.count < 2 || Set(parents).count == parents.count, !parents.contains(id) else {
            throw VersionsError.malformedMetadata(
                file, "'\(Key.parents)' names a revision twice, or the revision itself")
        }
        // One more than the largest parent's: a revision is always newer than its
        // parents, so the parents of a graph can never form a cycle.
        guard id.generation == (try Self.nextGeneration(after: parents)) else {
            throw VersionsError.malformedMetadata(
                file,
                "the generation of \(id) is not one more than its largest parent's (\(parents.map(\.generation).max() ?? 0))"
            )
        }
        // The id's digest is that of the bytes the writer makes of the rest: a file in the
        // writer's form is those bytes (around the id's entry); any other is written again.
        guard try (digestWithoutID ?? computedDigest(file: file)) == id.digest else {
            throw VersionsError.digestMismatch(file, id)
        }
    }

    /// A metadata file's values as the XML parser reads them, every key checked for
    /// its type and no other key allowed; ``CanonicalMetadata`` reads the writer's form
    /// without it.
    static func parsed(_ data: Data, file: String?) throws -> RevisionMetadata {
        let value = try PropertyList(xml: data, file: file)
        guard case .dictionary(let entries) = value else {
            throw VersionsError.malformedMetadata(file, "it is not a dictionary")
        }
        func string(_ key: String) throws -> String {
            guard case .string(let text) = entries[key] else {
                throw VersionsError.malformedMetadata(file, "'\(key)' is missing or not a string")
            }
            return text
        }
        func integer(_ key: String) throws -> Int64 {
            guard case .integer(let number) = entries[key], let value = number.int64Value else {
                throw VersionsError.malformedMetadata(file, "'\(key)' is missing or not an integer")
            }
            return value
        }
        guard let documentID = UUID.parsing(try string(Key.documentID)) else {
            throw VersionsError.malformedMetadata(file, "'\(Key.documentID)' is not a UUID")
        }
        guard let id = RevisionID(try string(Key.revisionID)) else {
            throw VersionsError.malformedMetadata(file, "'\(Key.revisionID)' is malformed")
        }
        guard case .array(let parentValues) = entries[Key.parents] else {
            throw VersionsError.malformedMetadata(file, "'\(Key.parents)' is missing")
        }
        let parents = try parentValues.map { value -> RevisionID in
            guard case .string(let text) = value, let parent = RevisionID(text) else {
                throw VersionsError.malformedMetadata(file, "a parent revision id is malformed")
            }
            return parent
        }
        guard case .boolean(let deleted) = entries[Key.deleted] else {
            throw VersionsError.malformedMetadata(file, "'\(Key.deleted)' is missing")
        }
        var digest: String?
        if entries[Key.contentDigest] != nil { digest = try string(Key.contentDigest) }
        let metadata = RevisionMetadata(
            documentID: documentID, id: id, parents: parents,
            timestamp: HybridTimestamp(
                milliseconds: try integer(Key.milliseconds), counter: Int(try integer(Key.counter))),
            device: Device(id: try string(Key.deviceID), name: try string(Key.deviceName)),
            formatVersion: Int(try integer(Key.formatVersion)), isDeleted: deleted, contentDigest: digest)
        if let unknown = entries.keys.first(where: { !Self.keys.contains($0) }) {
            throw VersionsError.malformedMetadata(file, "unknown key '\(unknown)'")
        }
        return metadata
    }
}

/// Errors of the versions layer.
public enum VersionsError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A metadata file that is not valid: the file, and why.
    case malformedMetadata(String?, String)
    /// A metadata file whose bytes do not give its revision's id.
    case digestMismatch(String?, RevisionID)
    /// A revision whose content (the file, when known) does not match the digest its
    /// metadata records.
    case contentMismatch(String?, RevisionID)

    public var description: String {
        switch self {
        case .malformedMetadata(let file, let why): "\(file ?? "metadata"): \(why)"
        case .digestMismatch(let file, let id):
            "\(file ?? "metadata"): the metadata does not match its revision id \(id)"
        case .contentMismatch(let file?, let id):
            "\(file): the content does not match the digest in the metadata of revision \(id)"
        case .contentMismatch(nil, let id): "revision \(id): the content does not match its digest"
        }
    }
}
