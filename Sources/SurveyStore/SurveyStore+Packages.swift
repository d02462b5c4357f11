import Foundation
import Packages
import PropertyList
import Surveys
import Versions

/// A place an export cannot write to.
public enum ExportError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The folder that should hold the export does not exist (it is never created).
    case noSuchFolder(String)
    /// The new folder of a package export exists already.
    case exists(String)
    /// The destination is a folder, where a file was to be written.
    case isFolder(String)

    public var description: String {
        switch self {
        case .noSuchFolder(let path): "\(path): no such folder (an export creates no folders on the way)"
        case .exists(let path): "\(path) already exists; give the name of a new folder"
        case .isFolder(let path): "\(path) is a folder; give the name of a file"
        }
    }
}

extension SurveyStore {
    /// Checks that an export can be written at `path` without creating anything on the
    /// way: the folder it goes into exists, and `path` itself does not (a package) or is
    /// not a folder (a file, which `replacing` allows to be replaced).
    ///
    /// - Throws: ``ExportError``.
    public static func checkExportDestination(_ path: String, replacing: Bool) throws {
        let reader = FileReader()
        // The folder part of `path` (Foundation's `deletingLastPathComponent` traps on
        // some relative paths).
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        let parent = trimmed.lastIndex(of: "/").map { $0 == trimmed.startIndex ? "/" : String(trimmed[..<$0]) } ?? "."
        if ((try? reader.status(atPath: parent)) ?? nil)?.isDirectory != true {
            throw ExportError.noSuchFolder(parent)
        }
        guard let status = (try? reader.status(atPath: path)) ?? nil else { return }
        if !replacing { throw ExportError.exists(path) }
        if status.isDirectory { throw ExportError.isFolder(path) }
    }

    /// Copies the package of a document's winner (or `revision`) to `destination`, a
    /// folder that must not exist yet, in a folder that must: a complete, self-describing
    /// document.
    ///
    /// - Returns: The exported revision.
    /// - Throws: ``ExportError`` for a destination that exists or whose folder does not,
    ///   ``StoreError``.
    @discardableResult
    public func exportPackage(_ id: UUID, revision text: String? = nil, to destination: String) throws -> RevisionMetadata {
        let revision = try revision(id, text)
        try Self.checkExportDestination(destination, replacing: false)
        let source = root + "/Documents/\(id.uuidString.lowercased())/\(revision.id).survey"
        guard revisions.reader.exists(source + "/" + RevisionStore.contentFile) || revision.isDeleted else {
            throw StoreError.noContent(revision.id)
        }
        try FileManager.default.copyItem(atPath: source, toPath: destination)
        return revision
    }

    /// What ``importPackage(at:)`` did.
    public enum ImportOutcome: Sendable, Equatable {
        /// The revision was added as it was, keeping its id.
        case added(UUID, RevisionMetadata)
        /// The store already had this revision.
        case alreadyPresent(UUID, RevisionMetadata)
        /// The package's content became a new revision, with no parents: a new document,
        /// or a new head of a known one (which is then in conflict).
        case newRevision(UUID, RevisionMetadata)
    }

    /// Adds a revision package in the current format.
    ///
    /// A package whose metadata verifies against its revision id and whose parents are
    /// all known here (or which has none) is added exactly as it is, so importing the
    /// same package twice, or on two replicas, gives one revision. Any other package with
    /// readable content is added as a new revision without parents of the document its
    /// metadata names.
    ///
    /// - Throws: ``StoreError``, ``VersionsError``, ``SurveyError`` or a
    ///   `PropertyListError` when the package cannot be read.
    public func importPackage(at path: String) throws -> ImportOutcome {
        let metadataPath = path + "/" + RevisionStore.metadataFile
        let contentPath = path + "/" + RevisionStore.contentFile
        guard let metadataData = try revisions.reader.contents(atPath: metadataPath) else {
            throw StoreError.noSuchRevision(metadataPath)
        }
        let content = try revisions.reader.contents(atPath: contentPath)
        if let metadata = try? RevisionMetadata(plist: metadataData, file: metadataPath),
            metadata.isDeleted || content.map(RevisionID.sha256Hex) == metadata.contentDigest
        {
            // A revision in a newer format is kept as it is, never rewritten.
            let id = metadata.documentID
            let known = (try? revisions.graph(of: id).graph) ?? RevisionGraph()
            if known.revisions[metadata.id] != nil { return .alreadyPresent(id, metadata) }
            if metadata.parents.allSatisfy({ known.revisions[$0] != nil }) {
                var files = [PackageFile(name: RevisionStore.metadataFile, contents: metadataData)]
                if let content { files.append(PackageFile(name: RevisionStore.contentFile, contents: content)) }
                try revisions.writer.createDirectory("Documents")
                try revisions.writer.createDirectory(revisions.folder(of: id))
                let path = revisions.folder(of: id) + "/\(metadata.id).survey"
                if try revisions.writer.writePackage(files, at: path) == .alreadyExists {
                    try revisions.writer.completePackage(files, at: path)
                }
                return .added(id, metadata)
            }
        }
        // Not a verifiable revision of this store's kind: take its content as new.
        let document = try DocumentIdentity.read(metadataData, file: metadataPath)
        guard document.formatVersion <= Self.formatVersion else {
            throw StoreError.newerFormat(document.formatVersion, supported: Self.formatVersion)
        }
        guard let content else { throw StoreError.noSuchRevision(contentPath) }
        // Older formats are migrated; their item ids derive from the package's content.
        let survey = try FormatMigrator.survey(
            from: content, version: document.formatVersion, seed: RevisionID.sha256Hex(metadataData + content), file: contentPath)
        let metadata = try revisions.write(document: document.id, parents: [], content: try survey.plistData(), formatVersion: Self.formatVersion)
        return .newRevision(document.id, metadata)
    }
}

/// The two keys every format's `DocumentMetadata.plist` has: `DocumentUUID` and
/// `FormatVersion` (absent means 1).
enum DocumentIdentity {
    static func read(_ data: Data, file: String) throws -> (id: UUID, formatVersion: Int) {
        let value = try PropertyList(xml: data, file: file)
        guard case .string(let text)? = value["DocumentUUID"], let id = UUID(uuidString: text) else {
            throw VersionsError.malformedMetadata(file, "'DocumentUUID' is missing or not a UUID")
        }
        var version = 1
        if case .integer(let number)? = value["FormatVersion"], let exact = number.exactly(Int.self) { version = exact }
        return (id, version)
    }
}
