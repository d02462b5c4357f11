import Foundation
import Packages

extension RevisionStore {
    /// What Syncthing puts in the name of its copy of a file two devices changed at once
    /// (`Survey.sync-conflict-20261125-100000-ABCDEFG.plist`).
    static let syncthingConflictMark = ".sync-conflict-"

    /// What verify says of such a copy inside a revision package.
    static let syncthingConflictCopy =
        "Syncthing's copy of a conflicting change inside a revision package: a revision's files never change, so once the revision verifies the copy holds nothing it needs and can be removed"

    /// Checks everything in the store this layer owns, and changes nothing: the store's
    /// own folders, stray temporary files, interrupted prunes, lock files, the entries of
    /// `Documents/`, and in each document folder every package and tombstone (metadata
    /// against its id, each package complete, nothing unexpected inside a package, every
    /// parent known, timestamps far ahead) and every live revision's content; and, as
    /// notes, each of its folders this process may not write in and each lock file it
    /// may not open.
    ///
    /// Follows no link and needs no write access. The layout file is the layer above's
    /// to check.
    ///
    /// - Parameter checkContent: Reads the content of a live revision that records no
    ///   deletion, and throws what is wrong with it: at least
    ///   ``content(of:revision:)``, which checks the bytes against the metadata's
    ///   digest; the layer above also decodes what it understands.
    /// - Parameter checkIdentity: Reads this device's identity file, at the path given,
    ///   when a regular file is there (anything else in its place, and a failure to look
    ///   at it, this layer names), and says what is wrong with it: `nil` for nothing.
    /// - Returns: The issues and notes found (``StoreIssue/isNote``), sorted by path and
    ///   message.
    public func verify(
        checkingContent checkContent: (UUID, RevisionMetadata) throws -> Void,
        checkingIdentity checkIdentity: (String) -> String? = { _ in nil }
    ) -> [StoreIssue] {
        var issues: [StoreIssue] = []
        func report(_ path: String, _ message: String, note: Bool = false) {
            issues.append(StoreIssue(path: path, message: message, isNote: note))
        }
        let found = verifyFolders(checkingIdentity: checkIdentity, report: report)
        let documents: [UUID]
        var documentsFolderUsable = true
        do {
            let folders = try documentFolders()
            for issue in folders.issues { report(issue.path, issue.message) }
            for path in folders.hidden { report(path, Self.hiddenNote, note: true) }
            documents = folders.ids
        } catch StoreError.documentsFolderBlocked(let path, let kind) {
            report(path, StoreError.blockedDocuments(kind))
            documents = []
            documentsFolderUsable = false
        } catch {
            report(root + "/" + StoreLayout.documentsFolder, "\(error)")
            documents = []
            documentsFolderUsable = false
        }
        for document in documents {
            verifyDocument(document, checkingContent: checkContent, report: report)
        }
        if let found {
            verifyWriteAccess(
                documents: documents, documentsFolderUsable: documentsFolderUsable, found: found,
                report: report)
        }
        return issues.sorted { ($0.path, $0.message) < ($1.path, $1.message) }
    }

    /// What `verify` says of a hidden entry (``StoreLayout/isHidden(_:)``).
    static let hiddenNote =
        "a hidden entry, left by the system or a file-sync engine: not part of the store (ignored, never copied)"

    /// What `look` finds at `path`; a failure (an I/O error) is reported, never taken for
    /// an absent or empty folder, and gives `nil`.
    private static func checked<T>(
        _ path: String, report: (String, String, Bool) -> Void, _ look: () throws -> T?
    ) -> T? {
        do {
            return try look()
        } catch {
            report(path, (error as? FileSystemError)?.failure ?? "\(error)", false)
            return nil
        }
    }

    /// What fails while one of the store's own folders (``StoreLayout/folders``, the
    /// state folder) cannot be used: something else in its place.
    static func failsWithout(_ folder: String) -> String {
        switch folder {
        case StoreLayout.pruningFolder: "prune fails, and so does a sync that brings tombstones"
        case StoreLayout.stateFolder: "per-device state cannot be kept"
        default: "every command that writes fails"
        }
    }

    /// What fails while the lock file `name` (in the folder of locks) cannot be opened.
    static func failsWithoutLock(_ name: String) -> String {
        if name == PackageWriter.writersLockName { return "every command that writes fails" }
        if StoreLayout.locksFolder + "/" + name == StoreLayout.deviceLock {
            return "a command that must renew this device's identity (in a copied store) fails"
        }
        if name.hasSuffix(".lock"),
            StoreLayout.documentID(folderName: String(name.dropLast(".lock".count))) != nil
        {
            return "a command that writes its document fails (prune and sync pass over the document)"
        }
        return "a command that takes this lock fails"
    }

    /// What `verifyFolders(checkingIdentity:report:)` found of the store's local folders.
    private struct LocalFolders {
        /// The kind of each of the store's own folders in `Local.nosync` (and it), by its
        /// path relative to the root: `nil` for one that is not there. A folder that could
        /// not be looked at (reported) is left out.
        var kinds: [String: SystemCalls.FileKind?] = [:]
        /// The names of the regular files in the folder of locks.
        var lockFiles: [String] = []
    }

    /// The folders the store itself makes (each a real folder, or absent), and what is
    /// left in the temporary, pruning and locks folders; returns what it found, `nil` when
    /// `Local.nosync` is something other than a folder (named once; nothing beneath it is
    /// looked at).
    private func verifyFolders(
        checkingIdentity checkIdentity: (String) -> String?, report: (String, String, Bool) -> Void
    ) -> LocalFolders? {
        var found = LocalFolders()
        func checked<T>(_ path: String, _ look: () throws -> T?) -> T? {
            Self.checked(path, report: report, look)
        }
        // The documents' folder is reported with what is in it, by `documentFolderIssues`.
        var localFolderUsable = true
        for folder in StoreLayout.folders + [StoreLayout.stateFolder]
        where folder != StoreLayout.documentsFolder {
            // Nothing is looked at beneath a `Local.nosync` that is no folder: it is named once.
            if !localFolderUsable { break }
            let path = root + "/" + folder
            let kind: SystemCalls.FileKind?
            do {
                kind = try reader.status(atPath: path)?.kind
            } catch {
                report(path, (error as? FileSystemError)?.failure ?? "\(error)", false)
                continue
            }
            found.kinds[folder] = .some(kind)
            switch kind {
            case nil, .directory?: break
            case .symbolicLink?:
                report(
                    path,
                    "a symbolic link where the store's folder belongs (never followed): \(Self.failsWithout(folder)) until the link is removed",
                    false)
                if folder == StoreLayout.localFolder { localFolderUsable = false }
            default:
                report(path, "not a folder: \(Self.failsWithout(folder)) until it is moved aside", false)
                if folder == StoreLayout.localFolder { localFolderUsable = false }
            }
        }
        guard localFolderUsable else { return nil }
        // The lock files first: a temporary file or a prune note is a write's under way
        // while its lock, a regular file here, is held (no other kind is ever opened).
        let locks = root + "/" + StoreLayout.locksFolder
        for entry in (checked(locks, { try reader.entries(atPath: locks) }) ?? []).sorted(by: {
            $0.name < $1.name
        }) {
            let path = locks + "/" + entry.name
            if entry.kind == .regular { found.lockFiles.append(entry.name) }
            if entry.kind != .regular && entry.kind != .unknown {
                report(
                    path,
                    "not a regular lock file (never opened): \(Self.failsWithoutLock(entry.name)) until it is removed; lock files hold nothing: remove it",
                    false)
            } else if let status = checked(path, { try reader.status(atPath: path) }), status.links > 1 {
                report(
                    path,
                    "a lock file with more than one name (a hard link, as `cp -al` leaves): the next command"
                        + " that takes this lock gives this store a lock file of its own", true)
            }
        }
        /// Whether the lock file `name` is there, a regular file, and held.
        func held(_ name: String) -> Bool {
            guard found.lockFiles.contains(name) else { return false }
            let path = locks + "/" + name
            return checked(path, { try reader.isLockHeld(atPath: path) }) == true
        }
        // A write holds the writers' lock while its temporary file exists, and a prune its
        // document's lock while its note exists: what a write or prune under way has made is
        // a note, and what one finished removed while this looked is not reported at all.
        let temporary = root + "/" + StoreLayout.temporaryFolder
        let leftovers = (checked(temporary, { try reader.names(atPath: temporary) }) ?? []).sorted()
        let writing = !leftovers.isEmpty && held(PackageWriter.writersLockName)
        for name in leftovers {
            let path = temporary + "/" + name
            if writing {
                report(
                    path,
                    "a temporary file of a write under way (a command holds the writers' lock now; were it left by an interrupted write, the next command that writes once none is writing removes it)",
                    true)
            } else if checked(path, { try reader.status(atPath: path) }) != nil {
                report(
                    path,
                    "a temporary file left by an interrupted write (the next command that writes removes it)",
                    false)
            }
        }
        let pruning = root + "/" + StoreLayout.pruningFolder
        for name in (checked(pruning, { try reader.names(atPath: pruning) }) ?? []).sorted() {
            let path = pruning + "/" + name
            // A note names its document as the document's folder does (pruneNotes' rule).
            guard let document = StoreLayout.documentID(folderName: name) else {
                report(
                    path,
                    "not a note of a prune, which names a document's UUID in lower case (the next command that writes removes it)",
                    false)
                continue
            }
            if held(StoreLayout.folderName(of: document) + ".lock") {
                report(
                    path,
                    "a prune under way (its document's lock is held now; were it interrupted, the next command that writes finishes it)",
                    true)
            } else if checked(path, { try reader.status(atPath: path) }) != nil {
                report(
                    path,
                    "an interrupted prune (the next command that writes finishes it; a prune of the document names anything in the way)",
                    false)
            }
        }
        // This device's identity: a file, read by the layer above, or nothing yet.
        let device = root + "/" + StoreLayout.deviceFile
        let kind = checked(device, { try reader.status(atPath: device) })?.kind
        if kind == .regular {
            if let problem = checkIdentity(device) { report(device, problem, false) }
        } else if let kind {
            // A folder's entries: `nil` when they could not be listed (reported).
            let names = kind == .directory ? checked(device, { try reader.names(atPath: device) }) : []
            if names?.isEmpty == false {
                report(
                    device,
                    "a folder that is not empty where this device's identity file belongs: every write fails"
                        + " until it is moved aside", false)
            } else if names != nil {
                report(
                    device,
                    "\(kind.asFound) where this device's identity file belongs: the next command that writes"
                        + " replaces it with a new device identity", false)
            }
        }
        return found
    }

    /// Notes each folder of the store that this process may not write in, and each lock
    /// file it may not open, with the commands that fail for it: nothing is damaged, so
    /// each is a note, but without one `verify` would call clean a store where every
    /// save fails. A read-only file system is one note, on the store. `found`: what
    /// `verifyFolders(checkingIdentity:report:)` found of the local folders, which are not
    /// looked at again (only real folders are asked about); `documentsFolderUsable`: whether
    /// `Documents/` is a folder (or absent) that could be listed.
    private func verifyWriteAccess(
        documents: [UUID], documentsFolderUsable: Bool, found: LocalFolders,
        report: (String, String, Bool) -> Void
    ) {
        // What each folder of the store is written for, the store's local folder first.
        let roles: [(folder: String, fails: String)] = [
            (
                StoreLayout.localFolder,
                "a command that writes fails while a file or folder it needs here is missing (this device's identity file, the folders below) or the identity must be renewed"
            ),
            (
                StoreLayout.temporaryFolder,
                "every command that writes fails, since each write is made here first"
            ),
            (
                StoreLayout.locksFolder,
                "a command that writes a document whose lock file is not here yet fails"
            ),
            (StoreLayout.pruningFolder, "prune fails, and so does a sync that brings tombstones"),
            (
                StoreLayout.stateFolder,
                "per-device state cannot be saved, and a document's stays once its content is gone"
            ),
            (
                StoreLayout.documentsFolder,
                "no document can be added here (new, import, and a sync that brings one fail)"
            ),
        ]
        func denial(_ path: String, writingFile: Bool = false) -> Errno? {
            Self.checked(path, report: report) {
                try reader.writeDenial(atPath: path, writingFile: writingFile)
            }
        }
        func unwritable(_ errno: Errno) -> String { "this user may not write here (\(errno)): " }
        var localFolderMissing = false
        for (folder, fails) in roles {
            let path = root + "/" + folder
            let kind: SystemCalls.FileKind?
            if folder == StoreLayout.documentsFolder {
                guard documentsFolderUsable else { continue }
                kind = .directory  // or absent, which the question answers
            } else {
                // Looked at once, by `verifyFolders`: a failure to look was reported there.
                guard let looked = found.kinds[folder] else { continue }
                kind = looked
            }
            let inLocalFolder = folder != StoreLayout.localFolder && folder != StoreLayout.documentsFolder
            if kind == nil {
                // Made by the first command that needs it, in the folder above it: that one
                // must let this user make it. A missing local folder stands for all in it.
                if inLocalFolder && localFolderMissing { continue }
                let parent = inLocalFolder ? root + "/" + StoreLayout.localFolder : root
                if folder == StoreLayout.localFolder { localFolderMissing = true }
                guard let errno = denial(parent) else { continue }
                if errno == .readOnlyFileSystem {
                    report(
                        root, "on a read-only file system: every command that writes fails (reading works)",
                        true)
                    return
                }
                report(
                    path,
                    "missing, and this user may not make it (\(errno)): "
                        + (folder == StoreLayout.localFolder ? "every command that writes fails" : fails),
                    true)
                continue
            }
            // Something other than a folder there is a problem of its own, named already.
            guard kind == .directory, let errno = denial(path) else { continue }
            if errno == .readOnlyFileSystem {
                report(
                    root, "on a read-only file system: every command that writes fails (reading works)", true)
                return
            }
            report(path, unwritable(errno) + fails, true)
        }
        for document in documents {
            let path = root + "/" + folder(of: document)
            if let errno = denial(path) {
                report(
                    path,
                    unwritable(errno)
                        + "no revision of this document can be added (edit, save, delete, resolve, and a sync that brings one fail), nor pruned",
                    true)
            }
        }
        let locks = root + "/" + StoreLayout.locksFolder
        for name in found.lockFiles {
            let path = locks + "/" + name
            if let errno = denial(path, writingFile: true) {
                report(
                    path,
                    "this user may not open this lock file (\(errno)): \(Self.failsWithoutLock(name))"
                        + "; lock files hold nothing: remove it while nothing uses the store (lock files are made again as needed)",
                    true)
            }
        }
    }

    /// One document folder: what reading it skipped or left out, its notes, stray files
    /// inside packages, and each live revision's content.
    private func verifyDocument(
        _ document: UUID, checkingContent checkContent: (UUID, RevisionMetadata) throws -> Void,
        report: (String, String, Bool) -> Void
    ) {
        let folder = root + "/" + self.folder(of: document)
        let read: DocumentRead
        do {
            read = try self.read(document)
        } catch {
            // Named once: the folder, then what failed beneath it and why.
            report(folder, Self.reason(error, file: folder), false)
            return
        }
        for issue in read.skipped { report(issue.path, issue.message, false) }
        for path in read.hidden { report(path, Self.hiddenNote, true) }
        for id in read.incomplete {
            let package = folder + "/" + StoreLayout.packageName(id) + "/"
            let missing =
                reader.exists(package + StoreLayout.metadataFile)
                ? StoreLayout.contentFile : StoreLayout.metadataFile
            report(
                package + missing,
                "missing: the package is incomplete (a copy in progress, or interrupted), not a revision yet",
                false)
        }
        for id in read.resurrected {
            let package = folder + "/" + StoreLayout.packageName(id)
            // A link, a FIFO or a file in the package's place is named as what it is.
            let kind = (try? reader.status(atPath: package))?.kind
            let what =
                kind == nil || kind == .directory
                ? "a copy of a pruned revision"
                : "\(Self.stray(kind!)) where a pruned revision's package belonged"
            report(
                package,
                "\(what) (removed by the next command that changes this document, by prune or by sync)",
                true)
        }
        for id in read.pending {
            report(
                folder + "/" + StoreLayout.tombstoneName(id),
                "a tombstone that is not in effect yet: no revision here supersedes \(id) (it takes effect when one arrives)",
                true)
        }
        for id in read.live.keys {
            let package = folder + "/" + StoreLayout.packageName(id)
            // What else is inside the package; a listing that fails (an input/output error)
            // is reported, never taken for a package holding nothing else.
            guard
                let entries = Self.checked(
                    package, report: report, { try reader.entries(atPath: package) ?? [] })
            else { continue }
            for entry in entries
            where entry.name != StoreLayout.metadataFile && entry.name != StoreLayout.contentFile {
                if StoreLayout.isHidden(entry.name) {
                    report(package + "/" + entry.name, Self.hiddenNote, true)
                    continue
                }
                if entry.kind == .regular, entry.name.contains(Self.syncthingConflictMark) {
                    report(package + "/" + entry.name, Self.syncthingConflictCopy, false)
                    continue
                }
                report(
                    package + "/" + entry.name, "\(Self.stray(entry.kind)) inside a revision package", false)
            }
        }
        func entryName(_ revision: RevisionMetadata) -> String {
            read.pruned.contains(revision.id)
                ? StoreLayout.tombstoneName(revision.id) : StoreLayout.packageName(revision.id)
        }
        for revision in read.graph.revisions.values where isFarAhead(revision.timestamp) {
            report(
                folder + "/" + entryName(revision),
                "stamped \(revision.timestamp) by \(revision.device.name), more than a day ahead of this device's clock: it wins conflicts until a save or resolution supersedes it",
                true)
        }
        for revision in read.live.values where !read.pruned.contains(revision.id) && !revision.isDeleted {
            let contentPath =
                folder + "/" + StoreLayout.packageName(revision.id) + "/" + StoreLayout.contentFile
            do {
                try checkContent(document, revision)
            } catch StoreError.noContent
                where Self.checked(
                    folder, report: report,
                    {
                        try reader.status(atPath: folder + "/" + StoreLayout.tombstoneName(revision.id))
                    }) != nil
            {
                // Pruned by a command at work while this looked: its tombstone is there now.
                continue
            } catch let error as FileSystemError where error.code == .permissionDenied {
                report(contentPath, "cannot be read: \(error.reason)", false)
            } catch VersionsError.contentMismatch {
                report(contentPath, "the content does not match the digest in its metadata", false)
            } catch {
                report(contentPath, Self.reason(error, file: contentPath), false)
            }
        }
        var known = read.tombstones
        for (id, metadata) in read.live { known[id] = metadata }
        for revision in read.graph.revisions.values {
            // An imported revision, or one a partial copy brought: it counts as a first
            // revision here until its history arrives.
            for parent in revision.parents where known[parent] == nil {
                // A parent whose package is here but cannot be read (damaged, or something
                // else in its place) has its own problem reported above.
                let here = read.unseen.contains(parent) || read.damagedTombstones.contains(parent)
                report(
                    folder + "/" + entryName(revision),
                    here
                        ? "its parent \(parent) cannot be read here (see what is said of its package)"
                        : "its parent \(parent) is not in this store (its history was not copied here)", true)
            }
        }
    }
}
