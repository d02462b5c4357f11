import Foundation
import Packages
import PropertyList
import Surveys
import Versions

extension SurveyStore {
    /// How many documents a migration writes in one batch, at most (fewer when the
    /// process may open few files: see `lockedBatchSize(_:openFileLimit:)`).
    static let migrationBatch = 128

    /// A migration about to be written: what `RevisionStore.writeMigrations(_:)` takes.
    private typealias PendingMigration = (
        document: UUID, parent: RevisionMetadata, content: Data, formatVersion: Int
    )

    /// One document whose winner `migrate` rewrote (or would rewrite).
    public struct Migration: Sendable, Equatable {
        /// The document.
        public var document: UUID
        /// The winner in the older format.
        public var from: RevisionMetadata
        /// The revision written in the current format; `nil` in a dry run.
        public var to: RevisionMetadata?
    }

    /// A document whose winner `migrate` could not migrate (its content is malformed or
    /// damaged, or does not migrate to a valid survey; its folder holds revisions that
    /// cannot be read yet, one of which may supersede it; or its lock file is a folder, a
    /// link or keeps being replaced): left as it is, and reported.
    public struct MigrationFailure: Sendable {
        /// The document.
        public var document: UUID
        /// The winner in the older format, left as it is.
        public var from: RevisionMetadata
        /// Why it could not be migrated: an error of category `invalidData` (for an invalid
        /// survey, a `SurveyError` naming the item and the rule),
        /// `StoreError/unseenForMigration(_:_:)`, or the `FileSystemError` of a lock file
        /// that cannot be used (`FileSystemError/isUnusableLock`).
        public var error: any CategorizedError
    }

    /// What `migrate` did (or, in a dry run, would do).
    public struct MigrationReport: Sendable {
        /// The documents whose winners were migrated (would be, in a dry run), in the order of
        /// their ids.
        public var migrated: [Migration]
        /// The documents whose winners could not be migrated, in the order of their ids.
        public var notMigrated: [MigrationFailure]
        /// The documents whose winners are in a format newer than this build reads, in the
        /// order of their ids: left as they are (a newer build migrates them, if needed).
        public var newer: [Summary] = []
        /// The documents no revision of which can be read yet (every package in the folder
        /// half-copied, damaged, or something else in its place), each named by its
        /// folder, in the order of their ids: left as they are, since any may hold a
        /// winner in an older format.
        public var unreadable: [StoreIssue] = []
    }

    /// Rewrites winners in older formats as new revisions in the current format, each
    /// with the old revision as its parent. Migrations are deterministic, so two replicas
    /// migrating at once write the same revisions, which collapse into one after sync.
    ///
    /// Migrations are written in batches (up to 128 documents each, their locks held until
    /// written; fewer when the process may open few files), each batch made durable at once (a batch of one revision:
    /// its files fsynced one by one), each revision atomic. Each winner is read again once
    /// its document's lock is held: a revision saved, or brought by a sync, since the
    /// first read is never migrated over (which would make a conflict); in an older
    /// format, it is the one migrated. A winner that cannot be
    /// migrated (its content malformed or damaged, or not a valid survey once migrated)
    /// keeps no other document from being migrated: it is left as it is and reported in
    /// ``MigrationReport/notMigrated``, and a dry run reports the same. So is a document
    /// whose folder holds revisions that cannot be read yet (half-copied, damaged), one of
    /// which may supersede the winner, so that its migration would be in conflict with it
    /// once it can be read; and a document no revision of which can be read yet is in
    /// ``MigrationReport/unreadable``. So is a document whose lock file cannot be used (a folder or a link in its place, or one that keeps
    /// being replaced), which only a migration that writes finds.
    ///
    /// - Parameters:
    ///   - dryRun: Only say what would be migrated: nothing is locked or written, so it
    ///     works on a store opened for reading.
    ///   - progress: Called after each batch with the number of documents done and the total.
    ///   - written: Called after each batch is written (never in a dry run) with its
    ///     migrations: what stays migrated when a later batch fails.
    /// - Returns: The documents migrated, those that could not be, and those in a newer
    ///   format.
    /// - Throws: `StoreError` when the store's documents cannot be listed, an error other
    ///   than invalid data (an input/output error) reading a winner, and
    ///   ``OperationError`` when a batch cannot be locked or written (the migrations of
    ///   earlier batches stay, as `written` was told; each revision of the failed batch is
    ///   absent or complete).
    public func migrate(
        dryRun: Bool = false, progress: ((Int, Int) -> Void)? = nil, written: (([Migration]) -> Void)? = nil
    ) throws -> MigrationReport {
        var report = MigrationReport(migrated: [], notMigrated: [])
        let listing = try summariesReport()
        if let unreadable = listing.unreadable.first { throw unreadable }
        report.unreadable = listing.withoutRevision.map { id in
            StoreIssue(
                path: root + "/" + revisions.folder(of: id),
                message:
                    "no revision of this document can be read yet, so it is not migrated (any may be in an older format)",
                remedy: .verifyThenRepair)
        }
        let current = listing.documents.filter { !$0.isDeleted }
        let older = current.filter { $0.revision.formatVersion < Self.formatVersion }
        report.newer = current.filter { $0.revision.formatVersion > Self.formatVersion }
        // In batches: each batch's documents are read, locked (in order), and their
        // migrations written together with one flush to disk.
        let batchSize = Self.lockedBatchSize(Self.migrationBatch)
        var start = 0
        while start < older.count {
            let batch = older[start..<min(start + batchSize, older.count)]
            var locks: [FileLock] = []
            defer { for lock in locks { lock.unlock() } }
            // Read before anything is locked: a winner that cannot be read or migrated is
            // reported, and its document neither locked nor written. The others are
            // decided again once locked (a winner may have changed meanwhile).
            var migrations = try batch.compactMap {
                try pendingMigration(of: $0.id, from: $0.revision, in: revisions.read($0.id), report: &report)
            }
            if !dryRun {
                // A document whose lock file is unusable (a folder, a link, one that keeps
                // being replaced) is left and reported; the others go on.
                migrations = try migrations.filter { migration in
                    do {
                        locks.append(try documentLock(migration.document))
                        return true
                    } catch let error as FileSystemError where error.isUnusableLock {
                        report.notMigrated.append(
                            MigrationFailure(
                                document: migration.document, from: migration.parent, error: error))
                        return false
                    }
                }
                migrations = try decideAgain(migrations, report: &report)
            }
            let revisionsWritten: [RevisionMetadata?] =
                dryRun || migrations.isEmpty
                ? migrations.map { _ in nil }
                : try wrapping(.migrate, nil) { try revisions.writeMigrations(migrations) }
            let done = zip(migrations, revisionsWritten).map {
                Migration(document: $0.document, from: $0.parent, to: $1)
            }
            report.migrated += done
            if !dryRun && !done.isEmpty { written?(done) }
            start += batch.count
            progress?(start, older.count)
        }
        // Failures found under the locks were added after their batch's others.
        let position = Dictionary(uniqueKeysWithValues: older.enumerated().map { ($1.id, $0) })
        report.notMigrated.sort { position[$0.document, default: 0] < position[$1.document, default: 0] }
        return report
    }

    /// The migration of `winner`, document `id`'s winner in an older format, as `read`
    /// found the document: its content read and migrated; `nil`, with the failure added
    /// to `report`, when that content cannot be read or does not migrate to a valid
    /// survey, or when the folder holds revisions that cannot be read yet (one may
    /// supersede the winner).
    ///
    /// - Throws: An error other than invalid data (an input/output error).
    private func pendingMigration(
        of id: UUID, from winner: RevisionMetadata, in read: DocumentRead, report: inout MigrationReport
    ) throws -> PendingMigration? {
        let unseen = Self.unseenLater(in: read)
        guard unseen.isEmpty else {
            report.notMigrated.append(
                MigrationFailure(
                    document: id, from: winner, error: StoreError.unseenForMigration(id, unseen)))
            return nil
        }
        do {
            return (id, winner, try self.survey(id, winner).plistData(), Self.formatVersion)
        } catch let error as any CategorizedError where error.category == .invalidData {
            report.notMigrated.append(MigrationFailure(document: id, from: winner, error: error))
            return nil
        }
    }

    /// The revisions `read` found packages of but could not read (``unseen(in:)``) that may
    /// supersede the winner: every one but those a revision of the graph names as its
    /// parent, since a revision naming it is in the graph, where nothing descends from
    /// the winner, a head.
    static func unseenLater(in read: DocumentRead) -> [RevisionID] {
        let named = Set(read.graph.revisions.values.flatMap(\.parents))
        return unseen(in: read).filter { !named.contains($0) }
    }

    /// The migrations of one batch decided again under its documents' locks, from a read
    /// made there: another process may have saved, or a sync brought a revision, since
    /// the winners were read. A document whose winner is now in the current format (or a
    /// deletion) has nothing left to migrate and is left out; one whose winner is another
    /// revision in an older format has that revision migrated (or, when it cannot be,
    /// is reported in `report`). Each document kept is cleaned (see
    /// `RevisionStore.clean(_:of:)`), as every write that goes ahead cleans it.
    private func decideAgain(_ migrations: [PendingMigration], report: inout MigrationReport) throws
        -> [PendingMigration]
    {
        var kept: [PendingMigration] = []
        for migration in migrations {
            var read = try revisions.read(migration.document)
            guard let winner = read.graph.winner, !winner.isDeleted, winner.formatVersion < Self.formatVersion
            else { continue }
            guard
                let decided =
                    winner.id == migration.parent.id && Self.unseenLater(in: read).isEmpty
                    ? migration
                    : try pendingMigration(of: migration.document, from: winner, in: read, report: &report)
            else { continue }
            try revisions.clean(&read, of: migration.document)
            kept.append(decided)
        }
        return kept
    }
}

/// The format-migration check of `survey check`: over stores, document folders and bare
/// packages, one result per revision.
public enum FormatCheck {
    /// What a revision's format check found.
    public enum Status: String, Sendable, Codable {
        /// In the current format and valid.
        case current
        /// In an older format that migrates to a valid survey.
        case migratable
        /// In a format newer than this build knows: kept, never rewritten.
        case newer
        /// Unreadable or invalid.
        case invalid
    }

    /// One revision's format check.
    public struct Result: Sendable, Codable, Equatable {
        /// The package checked.
        public var path: String
        /// The document the package says it belongs to (`DocumentUUID`), when readable.
        public var document: String?
        /// The package's revision id (`RevisionID`); format 1 packages may have none.
        public var revision: String?
        /// The content's format, when readable.
        public var formatVersion: Int?
        /// What the check found.
        public var status: Status
        /// Why a revision is invalid or newer, in words; for a bare package that passes,
        /// a note (its content was re-encoded, which import mends).
        public var message: String?

        /// Every key, with `null` for what is not known, so that each result has the same
        /// shape.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(path, forKey: .path)
            try container.encode(document, forKey: .document)
            try container.encode(revision, forKey: .revision)
            try container.encode(formatVersion, forKey: .formatVersion)
            try container.encode(status, forKey: .status)
            try container.encode(message, forKey: .message)
        }
    }

    /// Checks every revision package found at `path`: a store, a document folder, or a
    /// package itself.
    ///
    /// A store with no documents gives no result; any other folder holding no package
    /// gives one `invalid` result saying so.
    ///
    /// `path` may be reached through links (it is the caller's choice); beneath it no link
    /// is ever followed, as in a store: a link where a folder or a file belongs is
    /// reported, never read through.
    public static func check(
        _ path: String, calls: SystemCalls = .live, progress: ((Int, Int) -> Void)? = nil
    ) -> [Result] {
        // The path itself as given, links followed; what is beneath it, from its descriptor.
        let reader = FileReader(root: path, calls: calls)
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            // Said as it is: absent, a link that leads nowhere, or a look-up that failed
            // (a name too long, a folder on the way that may not be searched).
            let message: String
            do {
                message =
                    try FileReader(calls: calls).status(atPath: path) == nil
                    ? "no such file or folder"
                    : "it is a symbolic link that leads to nothing (its target is missing, or links lead back to it)"
            } catch {
                message = (error as? FileSystemError)?.failure ?? "cannot look it up: \(error)"
            }
            return [Result(path: path, status: .invalid, message: message)]
        }
        guard isFolder.boolValue else {
            return [
                Result(
                    path: path, status: .invalid,
                    message: "not a folder: give a store, a document folder or a revision package")
            ]
        }
        if reader.exists(path + "/" + StoreLayout.metadataFile) {
            return [checkPackage(path, reader: reader, asRevision: false)]
        }
        var results: [Result] = []
        /// A folder that cannot be listed is a failed check, never one with nothing in it.
        func unlisted(_ folder: String, _ error: any Error) -> Result {
            Result(
                path: folder, status: .invalid,
                message: (error as? FileSystemError)?.failure ?? "cannot list the directory: \(error)")
        }
        let folders: [String]
        let isStore = reader.exists(path + "/" + StoreLayout.layoutFile)
        if isStore {
            // A layout file that is not one fails the check, as it fails every command
            // (a newer layout's store can be read, and is checked).
            do {
                try SurveyStore.checkLayout(at: path, calls: calls, forWriting: false)
            } catch {
                return [
                    Result(
                        path: path + "/" + StoreLayout.layoutFile, status: .invalid,
                        message: "\(error)")
                ]
            }
            let documents = path + "/" + StoreLayout.documentsFolder
            // Something else where the documents' folder belongs: no document can be read.
            do {
                try RevisionStore.checkDocumentsFolder(ofStoreAt: path, reader: reader)
            } catch StoreError.documentsFolderBlocked(_, let kind) {
                return [Result(path: documents, status: .invalid, message: StoreError.blockedDocuments(kind))]
            } catch {}
            // The documents the store reads, as `verify` lists them: an entry it skips (a
            // link or a file where a document's folder belongs, a name that is no document
            // id) fails the check, so that no document passes unchecked.
            let listing: RevisionStore.DocumentListing
            do {
                listing = try RevisionStore.documentListing(ofStoreAt: path, reader: reader)
            } catch {
                return [unlisted(documents, error)]
            }
            for issue in listing.issues {
                results.append(Result(path: issue.path, status: .invalid, message: issue.message))
            }
            folders = listing.ids.map { documents + "/" + StoreLayout.folderName(of: $0) }
        } else {
            folders = [path]
        }
        var tombstoned = Set<String>()
        let packages = folders.flatMap { folder in
            let entries: [SystemCalls.DirectoryEntry]
            do {
                entries = try reader.entries(atPath: folder) ?? []
            } catch {
                results.append(unlisted(folder, error))
                return [(path: String, kind: SystemCalls.FileKind)]()
            }
            for entry in entries where entry.name.hasSuffix(StoreLayout.tombstoneSuffix) {
                tombstoned.insert(folder + "/" + entry.name.dropLast(StoreLayout.tombstoneSuffix.count))
            }
            return entries.filter {
                $0.name.hasSuffix(StoreLayout.packageSuffix) && !StoreLayout.isHidden($0.name)
            }
            .map { (path: folder + "/" + $0.name, kind: $0.kind) }.sorted { $0.path < $1.path }
        }
        for (done, (package, kind)) in packages.enumerated() {
            defer { progress?(done + 1, packages.count) }
            // A link (never followed) or a file where a package belongs: said of the entry
            // itself, as `verify` says it, rather than of a file beneath it.
            if let blocked = RevisionStore.blockedPackage(kind) {
                results.append(
                    Result(path: package, status: .invalid, message: blocked + "; the store skips it"))
                continue
            }
            let result = checkPackage(package, reader: reader, asRevision: isStore)
            // A copy of a pruned revision that is not whole (half-copied, or emptied) is no
            // revision: the store removes it, and `verify` calls it a note.
            if result.status == .invalid,
                tombstoned.contains(String(package.dropLast(StoreLayout.packageSuffix.count))),
                !reader.exists(package + "/" + StoreLayout.metadataFile)
                    || !reader.exists(package + "/" + StoreLayout.contentFile)
            {
                continue
            }
            results.append(result)
        }
        // A store with no documents is a valid store; any other folder without a package
        // is not what was meant.
        if results.isEmpty && !isStore {
            results.append(
                Result(path: path, status: .invalid, message: noPackagesMessage(path, calls: calls)))
        }
        return results
    }

    /// Why a folder that is no store gave no revision to check, and what to give instead:
    /// a store's `Documents` folder holds document folders, not packages, so it names the
    /// store that holds it.
    private static func noPackagesMessage(_ path: String, calls: SystemCalls) -> String {
        var folder = Substring(path)
        while folder.count > 1, folder.hasSuffix("/") { folder = folder.dropLast() }
        let name = folder.split(separator: "/").last.map(String.init) ?? ""
        let parent =
            folder.lastIndex(of: "/").map { String(folder[..<$0]) }.map { $0.isEmpty ? "/" : $0 } ?? "."
        if name == StoreLayout.documentsFolder,
            FileReader(calls: calls).exists(parent + "/" + StoreLayout.layoutFile)
        {
            return
                "no revision packages found: it is the \(StoreLayout.documentsFolder) folder of the store at "
                + "\(ShownText.escaping(parent)); give the store to check every document in it"
        }
        return "no revision packages found: give a store, a document folder or a revision package"
    }

    /// Checks one revision package, never following a link beneath `path`.
    ///
    /// A package whose metadata names its `RevisionID` must verify as a store reads it
    /// (every key, the id the digest of the rest), and content whose metadata names its
    /// `ContentDigest` must match it; a package without them (an older app's, whose
    /// metadata may hold only `DocumentUUID`) is checked for its format and content alone.
    public static func checkPackage(_ path: String, calls: SystemCalls = .live) -> Result {
        checkPackage(path, reader: FileReader(root: path, calls: calls), asRevision: false)
    }

    /// Checks one revision package through `reader`; with `asRevision` (a package in a
    /// store), its metadata must verify as the store reads a revision, named by its id,
    /// whatever keys it has: a package the store skips is `invalid`, never `current`.
    static func checkPackage(_ path: String, reader: FileReader, asRevision: Bool) -> Result {
        let metadataPath = path + "/" + StoreLayout.metadataFile
        let contentPath = path + "/" + StoreLayout.contentFile
        var result = Result(path: path, status: .invalid)
        do {
            guard let metadataData = try reader.contents(atPath: metadataPath) else {
                result.message = "\(metadataPath): missing"
                return result
            }
            let metadata = try PropertyList(xml: metadataData, file: metadataPath)
            guard case .string(let document)? = metadata["DocumentUUID"], UUID(uuidString: document) != nil
            else {
                result.message = "\(metadataPath): 'DocumentUUID' is missing or not a UUID"
                return result
            }
            result.document = document.lowercased()
            result.revision = metadata["RevisionID"]?.stringValue
            // Read as import reads it: absent means 1; anything but an integer in range
            // fails, naming the file.
            let version = try RevisionMetadata.formatVersion(of: metadata, file: metadataPath)
            result.formatVersion = version
            // A revision is what verifies: its id covers the metadata, and through its
            // content digest the content.
            var verified: RevisionMetadata?
            if asRevision || metadata["RevisionID"] != nil {
                let revision = try RevisionMetadata(plist: metadataData, file: metadataPath)
                let name = SafeName.lastComponent(of: path)
                if asRevision, name != StoreLayout.packageName(revision.id) {
                    result.message =
                        "\(path): the package of revision \(revision.id) must be named \(StoreLayout.packageName(revision.id)), not \(name); the store skips it"
                    return result
                }
                verified = revision
            }
            if version > FormatMigrator.current {
                result.status = .newer
                result.message = FormatError.newer(version, supported: FormatMigrator.current).description
                return result
            }
            if metadata["Deleted"]?.booleanValue == true {
                result.status = .current
                return result
            }
            guard let content = try reader.contents(atPath: contentPath, limit: FileReader.contentLimit)
            else {
                result.message = "\(contentPath): missing"
                return result
            }
            if let verified, RevisionID.sha256Hex(content) != verified.contentDigest {
                // A bare package whose content was only re-encoded (line ends, a byte-order
                // mark, UTF-16) is that revision, as import takes it; in a store, where it
                // is read as it is, it fails to open.
                guard !asRevision, SurveyStore.reencoded(content, of: verified, file: contentPath) != nil
                else {
                    throw VersionsError.contentMismatch(contentPath, verified.id)
                }
                result.message =
                    "\(contentPath): re-encoded since it was written (line ends, a byte-order mark or its encoding); import stores it as the store writes content, keeping the revision"
            }
            // A package without its id that names its content's digest is held to it: a
            // fixture edited or damaged since it was made does not pass.
            if verified == nil, let named = metadata["ContentDigest"] {
                guard case .string(let digest) = named else {
                    result.message = "\(metadataPath): 'ContentDigest' is not a string"
                    return result
                }
                if RevisionID.sha256Hex(content) != digest {
                    guard
                        SurveyStore.reencoded(
                            content, digest: digest, formatVersion: version, seed: result.document ?? path,
                            file: contentPath) != nil
                    else {
                        result.message =
                            "\(contentPath): its SHA-256 is not the ContentDigest its \(StoreLayout.metadataFile) names (\(ShownText.escaping(digest))): edited or damaged since the package was made"
                        return result
                    }
                    result.message =
                        "\(contentPath): re-encoded since it was written (line ends, a byte-order mark or its encoding); its content says what the ContentDigest names"
                }
            }
            _ = try FormatMigrator.survey(
                from: content, version: version, seed: result.revision ?? result.document ?? path,
                file: contentPath)
            result.status = version == FormatMigrator.current ? .current : .migratable
        } catch {
            result.message = "\(error)"
        }
        return result
    }
}
