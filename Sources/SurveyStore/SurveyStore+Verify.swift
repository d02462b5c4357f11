import Foundation
import Packages
import Versions

extension SurveyStore {
    /// Something `verify` found, with the path it concerns.
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        /// The file or folder concerned.
        public var path: String
        /// What is wrong, in words.
        public var message: String
        /// A note rather than a problem: something harmless that the store handles by
        /// itself (a copy of a pruned revision that the next write removes, a tombstone
        /// that arrived before the revision superseding it). Notes do not make a store
        /// unclean.
        public var isNote: Bool

        /// Creates a problem, or a note.
        public init(path: String, message: String, isNote: Bool = false) {
            self.path = path
            self.message = message
            self.isNote = isNote
        }

        public var description: String {
            isNote ? "\(path): note: \(message)" : StoreIssue(path: path, message: message).description
        }
    }

    /// Checks the whole store: its layout file and folders, every revision's metadata
    /// against its id and its content against its digest, every parent known, links,
    /// special files and anything else that does not belong, stray temporary files,
    /// interrupted prunes, unreadable property lists. Changes nothing, follows no link,
    /// and needs no write access.
    ///
    /// - Returns: The problems and notes found, by path; the store is clean when every
    ///   entry is a note.
    public func verify() -> [Problem] {
        var problems: [Problem] = []
        let reader = FileReader(root: root, calls: calls)
        func report(_ path: String, _ message: String, note: Bool = false) {
            problems.append(Problem(path: path, message: message, isNote: note))
        }
        do {
            try Self.checkLayout(at: root, calls: calls, forWriting: false)
        } catch {
            report(root + "/" + Self.layoutFile, "\(error)")
        }
        // The folders the store itself makes: each a real folder, or absent.
        // (The documents' folder is reported with what is in it, below.)
        for folder in StoreLayout.folders where folder != StoreLayout.documentsFolder {
            let path = root + "/" + folder
            switch (try? reader.status(atPath: path))??.kind {
            case nil, .directory?: break
            case .symbolicLink?:
                report(path, "a symbolic link where the store's folder belongs (never followed)")
            default: report(path, "not a folder")
            }
        }
        let temporary = root + "/" + StoreLayout.temporaryFolder
        for name in ((try? reader.names(atPath: temporary)) ?? []).sorted() {
            report(
                temporary + "/" + name,
                "a temporary file left by an interrupted write (the next command that writes removes it)")
        }
        let pruning = root + "/" + StoreLayout.pruningFolder
        for name in ((try? reader.names(atPath: pruning)) ?? []).sorted() {
            report(pruning + "/" + name, "an interrupted prune (the next command that writes finishes it)")
        }
        let locks = root + "/" + StoreLayout.locksFolder
        for entry in (try? reader.entries(atPath: locks)) ?? []
        where entry.kind != .regular && entry.kind != .unknown {
            report(locks + "/" + entry.name, "not a regular lock file (never opened)")
        }
        for issue in (try? revisions.documentFolderIssues()) ?? [] { report(issue.path, issue.message) }
        let documents: [UUID]
        do {
            documents = try revisions.documentIDs()
        } catch {
            report(root + "/" + StoreLayout.documentsFolder, "\(error)")
            documents = []
        }
        for document in documents {
            let folder = root + "/" + revisions.folder(of: document)
            let read: DocumentRead
            do {
                read = try revisions.read(document)
            } catch {
                report(folder, "\(error)")
                continue
            }
            for issue in read.skipped { report(issue.path, issue.message) }
            for id in read.incomplete {
                let package = folder + "/" + StoreLayout.packageName(id) + "/"
                let missing =
                    reader.exists(package + StoreLayout.metadataFile)
                    ? StoreLayout.contentFile : StoreLayout.metadataFile
                report(
                    package + missing,
                    "missing: the package is incomplete (a copy in progress, or interrupted), not a revision yet"
                )
            }
            for id in read.resurrected {
                report(
                    folder + "/" + StoreLayout.packageName(id),
                    "a copy of a pruned revision (removed by the next command that changes this document, by prune or by sync)",
                    note: true)
            }
            for id in read.pending {
                report(
                    folder + "/" + StoreLayout.tombstoneName(id),
                    "a tombstone that is not in effect yet: no revision here supersedes \(id) (it takes effect when one arrives)",
                    note: true)
            }
            for id in read.live.keys {
                let package = folder + "/" + StoreLayout.packageName(id)
                for entry in (try? reader.entries(atPath: package)) ?? []
                where entry.name != StoreLayout.metadataFile && entry.name != StoreLayout.contentFile {
                    let what =
                        entry.kind == .symbolicLink
                        ? "a symbolic link (never followed)" : "an unexpected file"
                    report(package + "/" + entry.name, "\(what) inside a revision package")
                }
            }
            for revision in read.graph.revisions.values where revisions.isFarAhead(revision.timestamp) {
                let name =
                    read.pruned.contains(revision.id)
                    ? StoreLayout.tombstoneName(revision.id) : StoreLayout.packageName(revision.id)
                report(
                    folder + "/" + name,
                    "stamped \(revision.timestamp) by \(revision.device.name), more than a day ahead of this device's clock: it wins conflicts until a save or resolution supersedes it",
                    note: true)
            }
            var known = read.tombstones
            for (id, metadata) in read.live { known[id] = metadata }
            for revision in read.live.values where !read.pruned.contains(revision.id) && !revision.isDeleted {
                let contentPath =
                    folder + "/" + StoreLayout.packageName(revision.id) + "/" + StoreLayout.contentFile
                do {
                    // Content this build can read is read as a survey too; a newer format is opaque.
                    if revision.formatVersion <= Self.formatVersion {
                        _ = try survey(document, revision)
                    } else {
                        _ = try revisions.content(of: document, revision: revision)
                    }
                } catch let error as FileSystemError where error.code == .permissionDenied {
                    report(contentPath, "cannot be read: \(error.reason)")
                } catch VersionsError.contentMismatch {
                    report(contentPath, "the content does not match the digest in its metadata")
                } catch {
                    report(contentPath, "\(error)")
                }
            }
            for revision in read.graph.revisions.values {
                for parent in revision.parents where known[parent] == nil {
                    let name =
                        read.pruned.contains(revision.id)
                        ? StoreLayout.tombstoneName(revision.id) : StoreLayout.packageName(revision.id)
                    // An imported revision, or one a partial copy brought: it counts as a
                    // first revision here until its history arrives.
                    report(
                        folder + "/" + name,
                        "its parent \(parent) is not in this store (its history was not copied here)",
                        note: true)
                }
            }
        }
        return problems.sorted { ($0.path, $0.message) < ($1.path, $1.message) }
    }
}
