import Foundation
import Packages
import Versions

extension SurveyStore {
    /// How many packages `importPackages(at:)` writes in one batch, at most: a batch holds
    /// the lock of each of its documents at once, so a process that may open few files
    /// writes smaller ones (see `lockedBatchSize(_:openFileLimit:)`).
    public static let importBatchSize = 256

    /// `preferred`, or fewer when the process may open few files: a batch that holds the
    /// lock of each of its documents at once (a descriptor each) takes at most half of
    /// what the soft limit of open files (`RLIMIT_NOFILE`) leaves after 64, and at least
    /// one document. With Linux's usual 1,024, an import batch is 256 packages and a
    /// migration batch 128 documents; with macOS's 256, 96 of either; at 64 or less, one.
    static func lockedBatchSize(_ preferred: Int, openFileLimit: Int? = SystemCalls.openFileLimit) -> Int {
        guard let openFileLimit else { return preferred }
        return max(1, min(preferred, (openFileLimit - 64) / 2))
    }

    /// Imports many revision packages, each as `importPackage(at:)` does one (the same
    /// checks, the same outcomes: that method is this one with a single path), writing
    /// them in batches: each batch's packages are written together and made durable at
    /// once (see `RevisionStore.writeBatch(_:)` in Versions; a batch of one package is
    /// fsynced file by file), each package still atomic. Each batch decides and writes
    /// while holding the locks of its documents, so that importers running at once add
    /// the same content once.
    ///
    /// Each package is imported whole or not at all: one that cannot be read, or fails a
    /// check (its digest, its format, its content), is reported with its error and leaves
    /// nothing in the store, and the others are imported as if it were not there. The
    /// same package given twice (or two packages with the same content for one document)
    /// is added once; the second is ``ImportOutcome/alreadyPresent(_:_:)``. At any crash
    /// every package is absent or complete; when this returns, every package it reports
    /// added is durable.
    ///
    /// - Parameter paths: The packages, in the order their outcomes are returned.
    /// - Returns: Each package's outcome, or the error that kept it out, in the order of `paths`.
    /// - Throws: `StoreError/readOnly(_:)` for a store opened for reading only,
    ///   `StoreError/documentsFolderBlocked(_:_:)` when a link or a file stands where the
    ///   documents' folder belongs (before anything is locked), and ``OperationError``
    ///   when a batch cannot be written (the packages of earlier batches stay; each
    ///   package of the failed batch is absent or complete).
    public func importPackages(at paths: [String]) throws -> [Result<ImportOutcome, any Error>] {
        try checkWritable()
        // A link or a file where the documents' folder belongs refuses every package
        // before anything is locked.
        try revisions.checkDocumentsFolder()
        var results: [Result<ImportOutcome, any Error>] = []
        results.reserveCapacity(paths.count)
        let batchSize = Self.lockedBatchSize(Self.importBatchSize)
        var start = 0
        while start < paths.count {
            let end = min(start + batchSize, paths.count)
            results += try importBatch(Array(paths[start..<end]))
            start = end
        }
        return results
    }

    /// Reads and checks every package of a batch, then, holding the locks of all its
    /// documents (taken in one order, so that importers cannot wait on each other),
    /// decides each one's outcome and writes those to add. Deciding and writing under the
    /// same locks is what keeps two importers of the same content from both adding it.
    /// The packages to add are written as one batch (`RevisionStore.writeBatch(_:)`),
    /// which writes a single package as a save does (its files fsynced one by one).
    private func importBatch(_ paths: [String]) throws -> [Result<ImportOutcome, any Error>] {
        var read: [ImportedPackage?] = []
        var results: [Result<ImportOutcome, any Error>?] = []
        for path in paths {
            do {
                read.append(try readImport(at: path))
                results.append(nil)
            } catch {
                read.append(nil)
                results.append(.failure(error))
            }
        }
        let documents = Set(read.compactMap { $0?.document }).sorted { $0.uuidString < $1.uuidString }
        if !hasLocalState {
            // A store without local state yet (see `hasLocalState`) first decides without
            // the locks: when nothing is to be added, nothing is locked or made.
            var decided = results
            for document in documents {
                let members = read.indices.filter { read[$0]?.document == document }
                do {
                    let (outcomes, added, _) = try decide(members.map { read[$0]! }, of: document)
                    guard added.isEmpty else { break }
                    for (index, outcome) in zip(members, outcomes) { decided[index] = .success(outcome) }
                } catch {
                    for index in members { decided[index] = .failure(error) }
                }
            }
            if !decided.contains(where: { $0 == nil }) { return decided.map { $0! } }
        }
        var locks: [FileLock] = []
        defer { for lock in locks.reversed() { lock.unlock() } }
        var writes: [(document: UUID, revision: RevisionID, files: [PackageFile])] = []
        for document in documents {
            let members = read.indices.filter { read[$0]?.document == document }
            do {
                locks.append(try documentLock(document))
                let (outcomes, added, documentRead) = try decide(members.map { read[$0]! }, of: document)
                // Cleaned, on the read it decided on, only when something is added (adding
                // nothing removes nothing), and only a document already here.
                if !added.isEmpty, var documentRead { try revisions.clean(&documentRead, of: document) }
                for (index, outcome) in zip(members, outcomes) { results[index] = .success(outcome) }
                writes += added
            } catch {
                for index in members { results[index] = .failure(error) }
            }
        }
        try wrapping(.import, writes.count == 1 ? writes[0].document : nil) {
            try revisions.writeBatch(writes)
        }
        return results.map { $0! }
    }

    /// The outcomes of `packages`, all of `document`, decided against the revisions it has
    /// and those added before them in this call; and the packages to write. The caller
    /// holds the document's lock until they are written (or decides without it, to learn
    /// whether anything is to be written); the read removes nothing, and is returned for
    /// the caller to clean (`nil` when the document has no folder here).
    private func decide(_ packages: [ImportedPackage], of document: UUID) throws
        -> (
            outcomes: [ImportOutcome], writes: [(document: UUID, revision: RevisionID, files: [PackageFile])],
            read: DocumentRead?
        )
    {
        // The store's revisions and those this batch adds, so that a package given twice
        // is added once, and each new revision's clock is past every one seen.
        // No folder: a new document. Any other failure is thrown: an empty graph would take
        // content already here for new, and make a needless head of it.
        let read: DocumentRead?
        do {
            read = try revisions.read(document)
        } catch StoreError.noSuchDocument {
            read = nil
        }
        var known = read?.graph ?? RevisionGraph()
        var outcomes: [ImportOutcome] = []
        var writes: [(document: UUID, revision: RevisionID, files: [PackageFile])] = []
        for package in packages {
            switch package {
            case .verbatim(let id, let metadata, let files):
                if let present = known.revisions[metadata.id] {
                    outcomes.append(.alreadyPresent(id, present))
                } else if let same = Self.revision(withContent: metadata.contentDigest, in: known) {
                    outcomes.append(.alreadyPresent(id, same))
                } else {
                    known.insert(metadata)
                    writes.append((id, metadata.id, files))
                    outcomes.append(.added(id, metadata))
                }
            case .content(let id, let bytes, let exported):
                let digest = RevisionID.sha256Hex(bytes)
                if let same = Self.revision(withContent: digest, in: known) {
                    outcomes.append(.alreadyPresent(id, same))
                } else {
                    let (metadata, files) = try revisions.newRevision(
                        document: id, parents: [], content: bytes, formatVersion: Self.formatVersion,
                        known: known, contentDigest: digest)
                    known.insert(metadata)
                    writes.append((id, metadata.id, files))
                    outcomes.append(
                        exported.map { .changedContent(id, metadata, exported: $0) }
                            ?? .newRevision(id, metadata))
                }
            }
        }
        return (outcomes, writes, read)
    }
}

extension SurveyStore.ImportedPackage {
    /// The document the package belongs to.
    var document: UUID {
        switch self {
        case .verbatim(let id, _, _), .content(let id, _, _): id
        }
    }
}
