import Diagnostics
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
    /// The destination is a symbolic link to nothing: a link is written through, never
    /// replaced, and nothing is created through it.
    case danglingLink(String)

    public var description: String {
        switch self {
        case .noSuchFolder(let path):
            "\(ShownText.escaping(path)): no such folder (no folder is created on the way to a file written)"
        case .exists(let path): "\(ShownText.escaping(path)) already exists; give the name of a new folder"
        case .isFolder(let path): "\(ShownText.escaping(path)) is a folder; give the name of a file"
        case .danglingLink(let path):
            "\(ShownText.escaping(path)) is a symbolic link to nothing: a link is written through, never replaced, and nothing is created through it; give the file it should point to, or remove the link"
        }
    }
}

extension SurveyStore {
    /// Copies the package of a document's winner (or `revision`) to `destination`, a
    /// folder that must not exist yet, in a folder that must: a complete, self-describing
    /// document.
    ///
    /// A deleted document (its winner a deletion) has no content to export: without
    /// `revision` it is refused as opening it is. A deletion named by `revision` is
    /// copied as it is stored, its metadata alone, which `importPackage(at:)` takes.
    ///
    /// - Returns: The exported revision.
    ///
    /// The package is written beside `destination` under a temporary name, every file
    /// and the folder fsynced, and renamed into place; an existing `destination` is
    /// refused and a missing parent folder is never created (see `OutputWriter` in the file layer).
    ///
    /// - Throws: ``DocumentDeletedError`` when `revision` is `nil` and the document is
    ///   deleted (nothing is written); ``ExportError`` for a destination that exists or
    ///   whose folder does not, `StoreError`.
    @discardableResult
    public func exportPackage(
        _ id: UUID, revision named: RevisionID? = nil, to destination: String
    ) throws -> RevisionMetadata {
        let revision = try self.revision(id, named)
        if named == nil, revision.isDeleted { throw try deletedError(id, revision) }
        let source = root + "/" + StoreLayout.package(revision.id, of: id)
        let reader = FileReader(root: root, calls: calls)
        guard let metadata = try reader.contents(atPath: source + "/" + StoreLayout.metadataFile) else {
            throw StoreError.noContent(revision.id)
        }
        var files = [PackageFile(name: StoreLayout.metadataFile, contents: metadata)]
        if !revision.isDeleted {
            // Checked against its digest, so that a damaged revision is never exported.
            files.append(
                PackageFile(
                    name: StoreLayout.contentFile, contents: try revisions.content(of: id, revision: revision)
                ))
        }
        let destination = OutputWriter.folderPath(destination)
        try wrapping(.export, id) {
            try Self.reportingExportErrors(destination) {
                try OutputWriter(calls: calls).writePackage(files, at: destination)
            }
        }
        return revision
    }

    /// The forms a document's content is exported in.
    public enum ExportFormat: String, Sendable, CaseIterable {
        /// The JSON interchange form.
        case json
        /// An XML property list: the stored form.
        case plist
    }

    /// What ``exportedContent(_:revision:as:)`` made: the revision and its content.
    public struct ExportedContent: Sendable, Equatable {
        /// The revision exported.
        public var revision: RevisionMetadata
        /// Its content in the form asked for.
        public var data: Data
        /// Every rule for new content that the content breaks, in order (`Survey.problems()`);
        /// empty when none. Stored content keeps only the rules for stored content (a
        /// document written before a rule was added still opens), while `Survey(json:)`,
        /// `Survey(plist:)` and so `survey new --from` and `save --from` take only content
        /// that keeps every rule: they refuse the exported file until each is fixed.
        /// Always empty for content in a newer format.
        public var newContentProblems: [SurveyError] = []

        /// The first of ``newContentProblems``, or `nil`.
        public var newContentProblem: SurveyError? { newContentProblems.first }
    }

    /// The content of a document's winner (or `revision`) in the interchange form
    /// `format`. Content in a format newer than this build is exported as plist exactly
    /// as it is stored (it cannot be read, so it cannot be converted).
    ///
    /// - Throws: `StoreError/newerFormat(_:_:supported:)` for JSON of content in a newer
    ///   format; ``DocumentDeletedError`` for a deletion; `StoreError`.
    public func exportedContent(
        _ id: UUID, revision: RevisionID? = nil, as format: ExportFormat
    ) throws -> ExportedContent {
        let exported = try self.revision(id, revision)
        if format == .plist, exported.formatVersion > Self.formatVersion {
            return ExportedContent(revision: exported, data: try storedContent(id, exported))
        }
        let survey = try open(id, revision: exported.id).survey
        let data = format == .json ? try survey.jsonData() : try survey.plistData()
        return ExportedContent(revision: exported, data: data, newContentProblems: survey.problems())
    }

    /// Writes exported bytes to `path`, outside the store: a new or regular file is
    /// written atomically and durably; a device, FIFO or link (`/dev/stdout`) is written
    /// through; a folder is refused (see `OutputWriter` in the file layer).
    ///
    /// - Throws: ``ExportError`` when the folder of `path` does not exist or `path` is a
    ///   folder; `FileSystemError`.
    public func writeExport(_ data: Data, to path: String) throws {
        try Self.writeOutput(data, to: path)
    }

    /// Writes `data` to the file at `path`, outside any store, as ``writeExport(_:to:)``
    /// does: durably and atomically, never replacing a folder, a device or a link.
    ///
    /// - Throws: ``ExportError`` when the folder of `path` does not exist or `path` is a
    ///   folder; `FileSystemError`.
    public static func writeOutput(_ data: Data, to path: String) throws {
        try reportingExportErrors(path) { try OutputWriter().writeFile(data, to: path) }
    }

    /// Runs `write`, which ``OutputWriter`` checks: its refusals of the destination
    /// become ``ExportError``s (the one check of an export's destination).
    private static func reportingExportErrors(_ destination: String, _ write: () throws -> Void) throws {
        do {
            try write()
        } catch let error as FileSystemError
            where error.code == .notFound && error.path == destination
            && (try? FileReader(root: "/").status(atPath: destination))??.kind == .symbolicLink
        {
            throw ExportError.danglingLink(destination)
        } catch let error as FileSystemError where error.code == .notFound && error.path != destination {
            throw ExportError.noSuchFolder(error.path)
        } catch let error as FileSystemError where error.errno == .notDirectory {
            // A file where the destination's folder should be.
            let slash = destination.lastIndex(of: "/")
            let parent = slash.map { $0 == destination.startIndex ? "/" : String(destination[..<$0]) }
            throw ExportError.noSuchFolder(parent ?? ".")
        } catch let error as FileSystemError where error.code == .alreadyExists && error.path == destination {
            throw ExportError.exists(destination)
        } catch let error as FileSystemError where error.code == .isDirectory && error.path == destination {
            throw ExportError.isFolder(destination)
        }
    }

    /// What `importPackage(at:)` did.
    public enum ImportOutcome: Sendable, Equatable {
        /// The revision was added as it was, keeping its id.
        case added(UUID, RevisionMetadata)
        /// The store already had this revision.
        case alreadyPresent(UUID, RevisionMetadata)
        /// The package's content became a new revision, with no parents: a new document,
        /// or a new head of a known one (which is then in conflict).
        case newRevision(UUID, RevisionMetadata)
        /// As ``newRevision(_:_:)``, for a package whose metadata is revision `exported`'s
        /// but whose content does not match that revision's digest: edited, or damaged,
        /// since it was exported. Its content, valid as a survey, became a new revision
        /// without parents, which can win over the document's others by its timestamp.
        case changedContent(UUID, RevisionMetadata, exported: RevisionID)
    }

    /// Adds a revision package, of any format this build reads or keeps.
    ///
    /// A package whose metadata verifies against its revision id is added exactly as it
    /// is, keeping its id (its parents need not be here: a later sync with a store that
    /// has them fills in the history), so importing the same package twice, or on two
    /// replicas, gives one revision; its content must be a valid survey, unless its
    /// format is newer than this build's, when it is kept as it is, unread, as a sync
    /// keeps it. So is one whose content was only re-encoded (line
    /// ends, a byte-order mark, UTF-16): when that content, written again as the store
    /// writes content, has the digest its metadata records, the revision is added with
    /// those bytes. Any other package with readable content (one whose
    /// content no longer matches the digest in its metadata, too, and an older app's
    /// package whose metadata holds only `DocumentUUID`) is added as a new revision
    /// without parents of the document its metadata names, in the current format (an
    /// older format's content migrated). A package whose
    /// revision, or whose content, the document already has adds nothing
    /// (``ImportOutcome/alreadyPresent(_:_:)``).
    ///
    /// - Throws: `StoreError/noSuchPackage(_:)` when nothing is at `path`,
    ///   `StoreError/unimportablePackage(_:_:)` when it is no folder holding a metadata
    ///   file, or a link, FIFO, folder or oversized file stands where a file of it
    ///   belongs, or its content is missing, or it is in a newer format and does not
    ///   verify (it can be neither kept nor read); `StoreError`, `VersionsError`,
    ///   `SurveyError` or a `PropertyListError` when the package cannot be read.
    public func importPackage(at path: String) throws -> ImportOutcome {
        try importPackages(at: [path])[0].get()
    }

    /// What a package to import holds, read and checked, before the store is looked at.
    enum ImportedPackage {
        /// A revision whose metadata verifies (and whose content matches its digest, as
        /// it is or written again as the store writes content): kept as it is, with that
        /// content.
        case verbatim(UUID, RevisionMetadata, [PackageFile])
        /// Content in the current format, to become a new revision without parents; with
        /// the revision the package's metadata verifies as, when its content does not match
        /// that revision's digest.
        case content(UUID, Data, exported: RevisionID?)
    }

    /// Reads the package at `path` and checks it (its digest, its format, its content a
    /// valid survey); nothing of the store is read or written.
    func readImport(at path: String) throws -> ImportedPackage {
        let metadataPath = path + "/" + StoreLayout.metadataFile
        let contentPath = path + "/" + StoreLayout.contentFile
        // The package is read like a store: no link inside it is followed, only regular
        // files within the size limits are read, and anything else that stands where a
        // file belongs is refused as bad input, naming that file.
        let reader = FileReader(root: path, calls: calls)
        let metadataData: Data
        let content: Data?
        do {
            guard let bytes = try reader.contents(atPath: metadataPath) else {
                throw try Self.notAPackage(path, reader: FileReader(calls: calls))
            }
            metadataData = bytes
            content = try reader.contents(atPath: contentPath, limit: FileReader.contentLimit)
        } catch let error as FileSystemError where error.isAboutTheEntry {
            throw StoreError.unimportablePackage(error.path, error.reason)
        }
        let metadata = try? RevisionMetadata(plist: metadataData, file: metadataPath)
        if let metadata, metadata.isDeleted || content.map(RevisionID.sha256Hex) == metadata.contentDigest {
            // Content this build can read must be a valid survey; a newer format is kept
            // as it is, opaque, never rewritten.
            if let content, metadata.formatVersion <= Self.formatVersion {
                _ = try Self.decode(content, of: metadata, file: contentPath)
            }
            var files = [PackageFile(name: StoreLayout.metadataFile, contents: metadataData)]
            if let content { files.append(PackageFile(name: StoreLayout.contentFile, contents: content)) }
            return .verbatim(metadata.documentID, metadata, files)
        }
        // Content re-encoded since it was exported, kept with the bytes its digest names.
        if let metadata, let content, let rewritten = Self.reencoded(content, of: metadata, file: contentPath)
        {
            return .verbatim(
                metadata.documentID, metadata,
                [
                    PackageFile(name: StoreLayout.metadataFile, contents: metadataData),
                    PackageFile(name: StoreLayout.contentFile, contents: rewritten),
                ])
        }
        // Not a verifiable revision of this store's kind (its content edited since it was
        // exported, say): take its content as new, which the outcome says.
        let document = try DocumentIdentity.read(metadataData, file: metadataPath)
        guard document.formatVersion <= Self.formatVersion else {
            throw StoreError.unimportablePackage(
                path,
                "it is no revision this build can verify, and its \(FormatError.newer(document.formatVersion, supported: Self.formatVersion)): it can be neither kept as it is nor read"
            )
        }
        guard let content else {
            throw StoreError.unimportablePackage(
                contentPath, "it is missing, and the package's \(StoreLayout.metadataFile) records content")
        }
        // Older formats are migrated; their item ids derive from the package's content.
        let survey = try FormatMigrator.survey(
            from: content, version: document.formatVersion,
            seed: RevisionID.sha256Hex(metadataData + content), file: contentPath)
        return .content(document.id, try survey.plistData(), exported: metadata?.id)
    }

    /// `content`, which does not match `metadata`'s digest, written again as the store
    /// writes content, when that matches it: content re-encoded on the way (its line ends,
    /// a byte-order mark, its encoding) but saying the same, so it is that revision, kept
    /// with the bytes its digest names. `nil` otherwise (edited, damaged, a deletion, or
    /// another format than the current one).
    static func reencoded(_ content: Data, of metadata: RevisionMetadata, file: String) -> Data? {
        guard !metadata.isDeleted, let digest = metadata.contentDigest else { return nil }
        return reencoded(
            content, digest: digest, formatVersion: metadata.formatVersion, seed: metadata.id.description,
            file: file)
    }

    /// `content` written again as the store writes content when that matches `digest`:
    /// ``reencoded(_:of:file:)`` for content of `formatVersion` whose item ids derive from
    /// `seed`, without a revision's metadata (a bare package that names only its digest).
    static func reencoded(_ content: Data, digest: String, formatVersion: Int, seed: String, file: String)
        -> Data?
    {
        guard formatVersion == Self.formatVersion,
            let survey = try? FormatMigrator.survey(
                from: content, version: formatVersion, seed: seed, file: file),
            let rewritten = try? survey.plistData(),
            RevisionID.sha256Hex(rewritten) == digest
        else { return nil }
        return rewritten
    }

    /// Why `path`, which holds no metadata file, is no package: nothing is there, a link
    /// to nothing, no folder, or a folder without the file. `reader` has no root: `path`
    /// is the root of the package's own reader.
    private static func notAPackage(_ path: String, reader: FileReader) throws -> StoreError {
        switch try reader.status(atPath: path)?.kind {
        case nil: .noSuchPackage(path)
        case .directory?:
            .unimportablePackage(
                path, "it holds no \(StoreLayout.metadataFile), so it is not a revision package")
        case .symbolicLink?: .unimportablePackage(path, "it is a symbolic link to nothing")
        default:
            .unimportablePackage(
                path, "it is not a folder; a revision package is a folder holding \(StoreLayout.metadataFile)"
            )
        }
    }

    /// A revision of `graph` (not a deletion) whose content has `digest`: importing the
    /// same content again adds nothing.
    static func revision(withContent digest: String?, in graph: RevisionGraph) -> RevisionMetadata? {
        guard let digest else { return nil }
        return graph.revisions.values.filter { !$0.isDeleted && $0.contentDigest == digest }.sorted(
            by: RevisionGraph.precedes
        ).first
    }
}

/// The two keys every format's metadata file has: `DocumentUUID` and
/// `FormatVersion` (absent means 1; see `RevisionMetadata.formatVersion(of:file:)`).
enum DocumentIdentity {
    /// - Throws: `PropertyListError` for a file that is no property list;
    ///   `VersionsError/malformedMetadata(_:_:)` naming `file` for a `DocumentUUID` that is
    ///   missing or no UUID, or a `FormatVersion` that is no integer in 1...10^6.
    static func read(_ data: Data, file: String) throws -> (id: UUID, formatVersion: Int) {
        let value = try PropertyList(xml: data, file: file)
        guard case .string(let text)? = value["DocumentUUID"], let id = UUID(uuidString: text) else {
            throw VersionsError.malformedMetadata(file, "'DocumentUUID' is missing or not a UUID")
        }
        return (id, try RevisionMetadata.formatVersion(of: value, file: file))
    }
}
