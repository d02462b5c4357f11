import Foundation
import Packages
import Versions

extension SurveyStore {
    /// Something `verify` found wrong, with the path it concerns.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        public var path: String
        public var message: String
        public var description: String { "\(path): \(message)" }
    }

    /// Checks the whole store: every revision's metadata against its id and its content
    /// against its digest, every parent known, no resurrected pruned revision, no stray
    /// temporary file, no interrupted prune, no unreadable property list. Changes nothing.
    ///
    /// - Returns: The problems found; empty when the store is clean.
    public func verify() -> [Problem] {
        var problems: [Problem] = []
        let reader = revisions.reader
        let documents = root + "/Documents"
        let temporary = root + "/Local.nosync/tmp"
        for name in (try? reader.names(atPath: temporary)) ?? [] {
            problems.append(Problem(path: temporary + "/" + name, message: "a temporary file left by an interrupted write"))
        }
        let pruning = root + "/" + RevisionStore.pruningFolder
        for name in (try? reader.names(atPath: pruning)) ?? [] {
            problems.append(Problem(path: pruning + "/" + name, message: "an interrupted prune (the next command finishes it)"))
        }
        for folder in ((try? reader.names(atPath: documents)) ?? []).sorted() {
            let folderPath = documents + "/" + folder
            guard let document = UUID(uuidString: folder), folder == folder.lowercased() else {
                problems.append(Problem(path: folderPath, message: "not a document folder (expected a lower-case UUID)"))
                continue
            }
            var known: [RevisionID: RevisionMetadata] = [:]
            var pruned = Set<RevisionID>()
            let names = ((try? reader.names(atPath: folderPath)) ?? []).sorted()
            for name in names {
                let path = folderPath + "/" + name
                if name.hasSuffix(".pruned") {
                    do {
                        guard let data = try reader.contents(atPath: path) else { continue }
                        let metadata = try RevisionMetadata(plist: data, file: path)
                        if "\(metadata.id).pruned" != name { problems.append(Problem(path: path, message: "the tombstone's name does not match its revision id")) }
                        known[metadata.id] = metadata
                        pruned.insert(metadata.id)
                    } catch {
                        problems.append(Problem(path: path, message: "\(error)"))
                    }
                } else if !name.hasSuffix(".survey") {
                    problems.append(Problem(path: path, message: "an unexpected file in a document folder"))
                }
            }
            for name in names where name.hasSuffix(".survey") {
                let path = folderPath + "/" + name
                if let id = RevisionID(String(name.dropLast(".survey".count))), pruned.contains(id) {
                    problems.append(Problem(path: path, message: "a copy of a pruned revision (the next command removes it)"))
                    continue
                }
                let metadataPath = path + "/" + RevisionStore.metadataFile
                let data: Data
                switch Self.contents(metadataPath, reader) {
                case .success(let contents): data = contents
                case .failure(let problem): problems.append(problem); continue
                }
                let metadata: RevisionMetadata
                do {
                    metadata = try RevisionMetadata(plist: data, file: metadataPath)
                } catch {
                    problems.append(Problem(path: metadataPath, message: "\(error)"))
                    continue
                }
                if "\(metadata.id).survey" != name {
                    problems.append(Problem(path: path, message: "the package's name does not match its revision id \(metadata.id)"))
                }
                if metadata.documentID != document {
                    problems.append(Problem(path: path, message: "the revision belongs to document \(metadata.documentID.uuidString.lowercased())"))
                }
                if pruned.contains(metadata.id) {
                    problems.append(Problem(path: path, message: "a copy of a pruned revision (the next command removes it)"))
                    continue
                }
                known[metadata.id] = metadata
                let contentPath = path + "/" + RevisionStore.contentFile
                if metadata.isDeleted { continue }
                let content: Data
                switch Self.contents(contentPath, reader) {
                case .success(let contents): content = contents
                case .failure(let problem): problems.append(problem); continue
                }
                if RevisionID.sha256Hex(content) != metadata.contentDigest {
                    problems.append(Problem(path: contentPath, message: "the content does not match the digest in its metadata"))
                }
            }
            for revision in known.values {
                for parent in revision.parents where known[parent] == nil {
                    problems.append(Problem(path: folderPath + "/\(revision.id).survey", message: "its parent \(parent) is unknown"))
                }
            }
        }
        return problems.sorted { $0.path < $1.path }
    }

    /// The bytes of the file at `path`, or the problem: `missing` when there is no such
    /// file, else why it cannot be read (permission denied, a folder in its place, …).
    private static func contents(_ path: String, _ reader: FileReader) -> Result<Data, Problem> {
        do {
            guard let data = try reader.contents(atPath: path) else { return .failure(Problem(path: path, message: "missing")) }
            return .success(data)
        } catch {
            let reason = (error as? FileSystemError).map { $0.errno?.description ?? $0.code.description } ?? "\(error)"
            return .failure(Problem(path: path, message: "cannot be read: \(reason)"))
        }
    }
}
