import Foundation
import Testing

/// What stands in place of a revision's file, rather than damaged bytes: a link, a FIFO, a
/// folder, too large a file. The name says which revision's file belongs there, so it is
/// repaired from a replica like torn bytes; a link is replaced, never followed.
extension SelfHealingTests {
    /// A document's only package on `store`.
    static func package(_ store: String, _ id: String) throws -> String {
        URL(fileURLWithPath: try content(store, id)).deletingLastPathComponent().path
    }

    static func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    static func kind(_ path: String) throws -> FileAttributeType? {
        try FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType
    }

    @Test(
        "A link, FIFO, empty folder or oversized file where a revision's file belongs is repaired from the other replica by sync (it was skipped and 'received' on every run)"
    )
    func entriesRepairedBySync() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (a, b, created) = try Self.replicas(in: directory)
        let fourth = try CommandRunner.run(["new", "--title", "Document 3", "--store", a])
        let ids = created + [fourth.stdout.trimmingCharacters(in: .whitespacesAndNewlines)]
        #expect(try CommandRunner.run(["sync", b, "--store", a]).status == 0)

        // On a: document 0's content a link to a file outside the store holding the very
        // bytes; document 1's metadata a FIFO; document 2's content an empty folder.
        let linked = try Self.content(a, ids[0])
        let outside = directory.appendingPathComponent("outside.plist").path
        let intactContent = try Self.bytes(linked)
        try intactContent.write(to: URL(fileURLWithPath: outside))
        try FileManager.default.removeItem(atPath: linked)
        try FileManager.default.createSymbolicLink(atPath: linked, withDestinationPath: outside)
        let fifo = try Self.package(a, ids[1]) + "/DocumentMetadata.plist"
        let intactMetadata = try Self.bytes(fifo)
        try FileManager.default.removeItem(atPath: fifo)
        #expect(mkfifo(fifo, 0o644) == 0)
        let folder = try Self.content(a, ids[2])
        let intactFolderContent = try Self.bytes(folder)
        try FileManager.default.removeItem(atPath: folder)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        // On b: document 3's metadata a regular file over the 1 MiB limit.
        let large = try Self.package(b, ids[3]) + "/DocumentMetadata.plist"
        let intactLarge = try Self.bytes(large)
        try Data(count: 2 << 20).write(to: URL(fileURLWithPath: large))
        for store in [a, b] { #expect(try CommandRunner.run(["verify", "--store", store]).status == 1) }
        #expect(try CommandRunner.run(["show", ids[0], "--store", a]).status == 65)

        let sync = try CommandRunner.run(["sync", b, "--json", "--store", a])
        #expect(sync.status == 0, "\(sync.stderr)")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(sync.stdout.utf8)) as? [String: Any])
        #expect(Set(report["repaired"] as? [String] ?? []) == [linked, fifo, folder, large], "\(report)")
        #expect(report["sent"] as? Int == 0 && report["received"] as? Int == 0, "\(report)")
        #expect(
            sync.stderr.contains("\(linked): the content was a symbolic link; replaced by"), "\(sync.stderr)")
        #expect(sync.stderr.contains("\(fifo): the metadata was a FIFO, socket or device"), "\(sync.stderr)")
        #expect(sync.stderr.contains("\(folder): the content was a folder"), "\(sync.stderr)")
        #expect(
            sync.stderr.contains("\(large): the metadata was larger than any intact one"), "\(sync.stderr)")
        for (path, intact) in [
            (linked, intactContent), (fifo, intactMetadata), (folder, intactFolderContent),
            (large, intactLarge),
        ] {
            #expect(try Self.kind(path) == .typeRegular, "\(path)")
            #expect(try Self.bytes(path) == intact, "\(path)")
        }
        // The link was replaced, never followed: the file it pointed to is as it was.
        #expect(try Self.bytes(outside) == intactContent)
        for store in [a, b] {
            #expect(try CommandRunner.run(["verify", "--store", store]).status == 0)
            for id in ids { #expect(try CommandRunner.run(["show", id, "--store", store]).status == 0) }
        }
        let again = try CommandRunner.run(["sync", b, "--store", a])
        #expect(
            again.stdout.hasPrefix("sent 0, received 0") && !again.stdout.contains("repaired"),
            "\(again.stdout)")
    }

    @Test(
        "A folder that is not empty where a revision's content belongs is named and left as it is; verify --repair-from replaces a linked tombstone and names what it cannot repair"
    )
    func entriesRepairedByVerify() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (a, b, ids) = try Self.replicas(in: directory)
        let occupied = try Self.content(a, ids[0])
        let intactContent = try Self.bytes(occupied)
        try FileManager.default.removeItem(atPath: occupied)
        try FileManager.default.createDirectory(atPath: occupied, withIntermediateDirectories: false)
        let kept = occupied + "/kept.txt"
        try Data("someone's file".utf8).write(to: URL(fileURLWithPath: kept))

        let sync = try CommandRunner.run(["sync", b, "--json", "--store", a])
        #expect(sync.status == 1, "\(sync.stderr)")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(sync.stdout.utf8)) as? [String: Any])
        #expect(report["damaged"] as? [String] == [occupied], "\(report)")
        #expect(report["received"] as? Int == 0, "\(report)")
        #expect(
            sync.stderr.contains("a folder that is not empty stands where the content belongs"),
            "\(sync.stderr)")
        #expect(try Self.bytes(kept) == Data("someone's file".utf8))

        let verify = try CommandRunner.run(["verify", "--repair-from", b, "--json", "--store", a])
        #expect(verify.status == 1, "\(verify.stderr)")
        let found = try #require(
            try JSONSerialization.jsonObject(with: Data(verify.stdout.utf8)) as? [String: Any])
        let unrepaired = try #require(found["unrepaired"] as? [[String: String]], "\(found)")
        #expect(unrepaired.map { $0["path"] } == [occupied], "\(found)")
        #expect(try Self.bytes(kept) == Data("someone's file".utf8))
        let text = try CommandRunner.run(["verify", "--repair-from", b, "--store", a])
        #expect(
            text.stderr.contains("not repaired: \(occupied): a folder that is not empty"), "\(text.stderr)")

        // Once the folder is moved away the package is only incomplete, and sync completes it.
        try FileManager.default.moveItem(
            atPath: occupied, toPath: directory.appendingPathComponent("moved").path)
        #expect(try CommandRunner.run(["sync", b, "--store", a]).status == 0)
        #expect(try Self.bytes(occupied) == intactContent)
        #expect(try CommandRunner.run(["verify", "--store", a]).status == 0)

        // A tombstone that is a link to a file elsewhere.
        #expect(try CommandRunner.run(["edit", ids[1], "--title", "Edited", "--store", a]).status == 0)
        #expect(try CommandRunner.run(["prune", "--store", a]).status == 0)
        #expect(try CommandRunner.run(["sync", b, "--store", a]).status == 0)
        let documentFolder = a + "/Documents/" + ids[1]
        let name = try #require(
            try FileManager.default.contentsOfDirectory(atPath: documentFolder).first {
                $0.hasSuffix(".pruned")
            })
        let tombstone = documentFolder + "/" + name
        let intactTombstone = try Self.bytes(tombstone)
        let outside = directory.appendingPathComponent("elsewhere").path
        try Data("not the store's".utf8).write(to: URL(fileURLWithPath: outside))
        try FileManager.default.removeItem(atPath: tombstone)
        try FileManager.default.createSymbolicLink(atPath: tombstone, withDestinationPath: outside)
        #expect(try CommandRunner.run(["verify", "--store", a]).status == 1)
        let repaired = try CommandRunner.run(["verify", "--repair-from", b, "--store", a])
        #expect(repaired.status == 0, "\(repaired.stderr)")
        #expect(
            repaired.stderr.contains("repaired: \(tombstone): the tombstone was a symbolic link"),
            "\(repaired.stderr)")
        #expect(try Self.kind(tombstone) == .typeRegular)
        #expect(try Self.bytes(tombstone) == intactTombstone)
        #expect(try Self.bytes(outside) == Data("not the store's".utf8))
    }

    @Test(
        "sync removes a link or FIFO where a document's folder or a revision's package belongs (never following it) and copies the revision in its place, names a regular file there and leaves it, and syncs every other document (one such name stopped the whole sync)"
    )
    func namesTakenBySomethingElse() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (a, b, ids) = try Self.replicas(in: directory)
        func create(_ title: String) throws -> String {
            let created = try CommandRunner.run(["new", "--title", title, "--store", b])
            return created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let linkedDocument = try create("Linked"), fileDocument = try create("File"),
            other = try create("Other")
        // Outside the store: a folder a link points to, and the real package moved away.
        let elsewhere = directory.appendingPathComponent("elsewhere").path
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: false)
        try Data("keep".utf8).write(to: URL(fileURLWithPath: elsewhere + "/kept.txt"))
        try FileManager.default.createSymbolicLink(
            atPath: a + "/Documents/" + linkedDocument, withDestinationPath: elsewhere)
        try Data("a note".utf8).write(to: URL(fileURLWithPath: a + "/Documents/" + fileDocument))
        let linkedPackage = try Self.package(a, ids[0])
        let movedPackage = directory.appendingPathComponent("moved.survey").path
        try FileManager.default.moveItem(atPath: linkedPackage, toPath: movedPackage)
        try FileManager.default.createSymbolicLink(atPath: linkedPackage, withDestinationPath: movedPackage)
        let fifoPackage = try Self.package(a, ids[1])
        try FileManager.default.removeItem(atPath: fifoPackage)
        #expect(mkfifo(fifoPackage, 0o644) == 0)
        let movedFiles = try FileManager.default.contentsOfDirectory(atPath: movedPackage).sorted()

        let sync = try CommandRunner.run(["sync", b, "--json", "--store", a])
        #expect(sync.status == 1, "\(sync.stderr)")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(sync.stdout.utf8)) as? [String: Any])
        #expect(
            Set(report["repaired"] as? [String] ?? [])
                == [a + "/Documents/" + linkedDocument, linkedPackage, fifoPackage], "\(report)")
        #expect(report["damaged"] as? [String] == [a + "/Documents/" + fileDocument], "\(report)")
        #expect(report["received"] as? Int == 4 && report["sent"] as? Int == 0, "\(report)")
        #expect(sync.stderr.contains("a file stands where the document's folder belongs"), "\(sync.stderr)")
        // Nothing outside was followed or changed.
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere) == ["kept.txt"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: movedPackage).sorted() == movedFiles)
        #expect(try Self.bytes(a + "/Documents/" + fileDocument) == Data("a note".utf8))
        for id in ids + [linkedDocument, other] {
            #expect(try CommandRunner.run(["show", id, "--store", a]).status == 0, "\(id)")
        }
        #expect(try CommandRunner.run(["verify", "--store", a]).status == 1)

        try FileManager.default.removeItem(atPath: a + "/Documents/" + fileDocument)
        let again = try CommandRunner.run(["sync", b, "--store", a])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.hasPrefix("sent 0, received 1 "), "\(again.stdout)")
        #expect(try CommandRunner.run(["verify", "--store", a]).status == 0)
    }

    @Test(
        "A regular file where Documents/ belongs: new and sync say a file stands there (they called it a FIFO, socket or device) and exit 65"
    )
    func fileWhereDocumentsBelongs() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (a, b, _) = try Self.replicas(in: directory)
        try FileManager.default.removeItem(atPath: a + "/Documents")
        try Data("a file".utf8).write(to: URL(fileURLWithPath: a + "/Documents"))
        for command in [["new", "--title", "More"], ["sync", b]] {
            let result = try CommandRunner.run(command + ["--store", a])
            #expect(result.status == 65, "\(command): \(result.stderr)")
            #expect(
                result.stderr.contains("\(a)/Documents: a file where the documents' folder belongs"),
                "\(command): \(result.stderr)")
            #expect(try Self.bytes(a + "/Documents") == Data("a file".utf8))
        }
    }

    @Test(
        "What verify says of a file it cannot read names the file once: 'PATH: cannot read: …', not 'PATH: cannot read PATH: …'"
    )
    func unreadableFileNamedOnce() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (a, _, ids) = try Self.replicas(in: directory)
        // A sparse file over the 256 MiB limit for content: refused from its size alone.
        let content = try Self.content(a, ids[0])
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: content))
        try handle.truncate(atOffset: 300 << 20)
        try handle.close()
        let verify = try CommandRunner.run(["verify", "--store", a])
        #expect(verify.status == 1)
        let lines = verify.stderr.split(separator: "\n").filter { $0.hasPrefix(content) }
        #expect(lines.count == 1, "\(verify.stderr)")
        #expect(
            lines.first.map(String.init)
                == "\(content): cannot read: it is larger than the limit of 268435456 bytes for such a file",
            "\(verify.stderr)")
    }

    @Test(
        "delete names the revisions it cannot read and so does not supersede; a repair brings such a revision back as the winner, and a delete after the repair supersedes it"
    )
    func deletionAndUnreadableRevisions() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (a, b, ids) = try Self.replicas(in: directory)
        let id = ids[0]
        let edit = try CommandRunner.run(["edit", id, "--title", "Edited", "--store", a])
        #expect(edit.status == 0, "\(edit.stderr)")
        let edited = edit.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try CommandRunner.run(["sync", b, "--store", a]).status == 0)
        // On a, the edit's metadata is garbled: a reads only the first revision.
        let metadata = a + "/Documents/" + id + "/" + edited + ".survey/DocumentMetadata.plist"
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: metadata))

        let plain = try CommandRunner.run(["delete", ids[1], "--store", a])
        #expect(plain.status == 0 && !plain.stderr.contains("does not supersede"), "\(plain.stderr)")
        let first = try CommandRunner.run(["delete", id, "--store", a])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(
            first.stderr.contains(
                "warning: the deletion does not supersede 1 revision(s) of this document that cannot be read yet (\(edited); half-copied, damaged, or something else in the place of its package)"
            ), "\(first.stderr)")

        // The repair brings the edit back; it wins over the deletion, as the warning said.
        #expect(try CommandRunner.run(["sync", b, "--store", a]).status == 0)
        func winner(_ store: String) throws -> (revision: String, deleted: Bool) {
            let list = try CommandRunner.run(["list", "--json", "--store", store])
            let rows = try #require(
                try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]])
            let row = try #require(rows.first { $0["id"] as? String == id })
            return (row["revision"] as? String ?? "", row["deleted"] as? Bool ?? false)
        }
        #expect(try winner(a) == (edited, false))

        // Deleting again, with everything readable, supersedes it, on both replicas.
        let second = try CommandRunner.run(["delete", id, "--json", "--store", a])
        #expect(second.status == 0 && !second.stderr.contains("does not supersede"), "\(second.stderr)")
        #expect(try CommandRunner.run(["sync", b, "--store", a]).status == 0)
        for store in [a, b] { #expect(try winner(store).deleted, "\(store)") }
    }

    @Test(
        "list names a document none of whose revisions can be read, which it cannot list, and lists the rest")
    func listNamesUnreadableDocument() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (a, _, ids) = try Self.replicas(in: directory)
        let metadata = try Self.package(a, ids[0]) + "/DocumentMetadata.plist"
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: metadata))
        for arguments in [["list"], ["list", "--json"]] {
            let list = try CommandRunner.run(arguments + ["--store", a])
            #expect(list.status == 0, "\(list.stderr)")
            #expect(
                !list.stdout.contains(ids[0]) && list.stdout.contains(ids[1]) && list.stdout.contains(ids[2]))
            #expect(
                list.stderr.contains(
                    "warning: \(a)/Documents/\(ids[0]): no revision of this document can be read, so it is not listed"
                ), "\(list.stderr)")
        }
        // A document that reads, with something skipped beside it, gets no such line.
        try Data("stray".utf8).write(to: URL(fileURLWithPath: a + "/Documents/" + ids[1] + "/notes.txt"))
        let list = try CommandRunner.run(["list", "--store", a])
        #expect(!list.stderr.contains("\(ids[1]): no revision"), "\(list.stderr)")

        // A document whose current content is damaged without a change of size is listed
        // without a title, and named, on every listing (its row is never cached).
        let content = try Self.package(a, ids[2]) + "/Survey.plist"
        var bytes = try Data(contentsOf: URL(fileURLWithPath: content))
        let at = try #require(bytes.lastIndex(of: UInt8(ascii: "<")))
        bytes[at - 1] = bytes[at - 1] == UInt8(ascii: "\n") ? UInt8(ascii: " ") : UInt8(ascii: "\n")
        try bytes.write(to: URL(fileURLWithPath: content))
        for arguments in [["list"], ["list", "--json"], ["list"]] {
            let damaged = try CommandRunner.run(arguments + ["--store", a])
            #expect(damaged.status == 0 && damaged.stdout.contains(ids[2]), "\(damaged.stderr)")
            #expect(
                damaged.stderr.contains(
                    "warning: \(a)/Documents/\(ids[2]): its current revision cannot be read, so it is listed without a title: "
                ) && damaged.stderr.contains("does not match the digest"), "\(damaged.stderr)")
        }
    }

    @Test(
        "verify --repair-from names each name in the way of a document's folder or a revision's package, says whether a sync can clear it, and changes nothing"
    )
    func repairNamesNamesInTheWay() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (a, b, ids) = try Self.replicas(in: directory)
        let only = try CommandRunner.run(["new", "--title", "Only on a", "--store", a])
        let onlyOnA = only.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        // A link where a revision's package belongs, for a revision b has and for one it
        // has not; a regular file where a document's folder belongs.
        var links: [String] = []
        let elsewhere = directory.appendingPathComponent("elsewhere").path
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: false)
        for id in [ids[0], onlyOnA] {
            let package = try Self.package(a, id)
            try FileManager.default.removeItem(atPath: package)
            try FileManager.default.createSymbolicLink(atPath: package, withDestinationPath: elsewhere)
            links.append(package)
        }
        let folder = a + "/Documents/" + ids[1]
        try FileManager.default.removeItem(atPath: folder)
        try Data("a file".utf8).write(to: URL(fileURLWithPath: folder))
        let before = HostileStoreTests.fingerprint(a)

        let repair = try CommandRunner.run(["verify", "--repair-from", b, "--json", "--store", a])
        #expect(repair.status == 1, "\(repair.stderr)")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(repair.stdout.utf8)) as? [String: Any])
        let unrepaired = (report["unrepaired"] as? [[String: String]] ?? []).reduce(into: [String: String]())
        {
            $0[$1["path"] ?? ""] = $1["message"]
        }
        #expect(
            unrepaired[links[0]]
                == "a symbolic link (never followed) stands where the revision's package belongs: a repair copies no revision; a sync with the other store removes it and copies the revision",
            "\(report)")
        #expect(
            unrepaired[links[1]]
                == "a symbolic link (never followed) stands where the revision's package belongs: the other store does not have it either",
            "\(report)")
        #expect(
            unrepaired[folder]
                == "a file stands where the document's folder belongs: move the file away, then sync with the other store to copy the document's revisions",
            "\(report)")
        #expect(unrepaired.count == 3 && (report["repaired"] as? [Any])?.isEmpty == true, "\(report)")
        #expect(HostileStoreTests.fingerprint(a) == before)
        let text = try CommandRunner.run(["verify", "--repair-from", b, "--store", a])
        #expect(text.stderr.contains("not repaired: \(links[0]): a symbolic link"), "\(text.stderr)")

        // The sync the message names clears the link and copies the revision.
        _ = try CommandRunner.run(["sync", b, "--store", a])
        #expect(try Self.kind(links[0]) == .typeDirectory)
        #expect(try CommandRunner.run(["show", ids[0], "--store", a]).status == 0)
    }
}

extension SelfHealingTests {
    @Test(
        "A revision named whose package cannot be read (its metadata torn, its content not there yet, a link in its place) is said to be there but unreadable, and why, with what mends it: exit 65, code unreadableRevision (it said 'there is no revision', exit 66); after a sync it opens"
    )
    func unreadableRevisionNamed() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (a, b, ids) = try Self.replicas(in: directory)
        var first: [String] = []
        for id in ids {
            first.append(
                URL(fileURLWithPath: try Self.package(a, id)).deletingPathExtension().lastPathComponent)
            #expect(try CommandRunner.run(["edit", id, "--title", "Edited", "--store", a]).status == 0)
        }
        #expect(try CommandRunner.run(["sync", b, "--store", a]).status == 0)
        let packages = zip(ids, first).map { a + "/Documents/\($0)/\($1).survey" }
        try Self.tear(packages[0] + "/DocumentMetadata.plist", keeping: 40)
        try FileManager.default.removeItem(atPath: packages[1] + "/Survey.plist")
        try FileManager.default.removeItem(atPath: packages[2])
        try FileManager.default.createSymbolicLink(atPath: packages[2], withDestinationPath: "/etc")
        let why = [
            "its package is damaged: \(packages[0]): DocumentMetadata.plist:2:1: the document has no root element",
            "its package, \(packages[1]), is not complete yet (it is still being copied, or its copy was interrupted)",
            "a symbolic link stands where its package, \(packages[2]), belongs",
        ]
        for (index, id) in ids.enumerated() {
            let revision = first[index]
            for command in [
                ["show", id, "--revision", revision],
                ["show", id, "--revision", String(revision.prefix(12))],
                ["export", id, "--revision", revision], ["diff", id, revision],
                ["resolve", id, "--keep", revision], ["edit", id, "--title", "Again", "--base", revision],
                ["delete", id, "--base", revision],
            ] {
                let result = try CommandRunner.run(command + ["--store", a, "--json"])
                #expect(result.status == 65, "\(command): \(result.stdout) \(result.stderr)")
                let error =
                    (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])?[
                        "error"] as? [String: Any]
                #expect(error?["code"] as? String == "unreadableRevision", "\(command): \(result.stdout)")
                #expect(
                    error?["message"] as? String
                        == "revision \(revision) is in the document's folder but cannot be read here: \(why[index]) (`survey verify --store \(a)` names each, and why; `survey sync --store \(a) REPLICA` completes or repairs what another store holds intact)",
                    "\(command): \(result.stdout)")
            }
        }
        // What the advice says mends them.
        #expect(try CommandRunner.run(["sync", b, "--store", a]).status == 0)
        for (id, revision) in zip(ids, first) {
            let shown = try CommandRunner.run(["show", id, "--revision", revision, "--store", a])
            #expect(shown.status == 0 && shown.stdout.contains("Document"), "\(shown.stderr)")
        }
        // A revision that is nowhere is still no revision at all.
        let none = try CommandRunner.run(["show", ids[0], "--revision", "9-00", "--store", a])
        #expect(none.status == 66 && none.stderr.contains("there is no revision 9-00"), "\(none.stderr)")
    }

    @Test(
        "delete of a document whose only revision is half-copied warns that it does not supersede it (it said nothing); once the copy completes the document is back, and deleting again supersedes it"
    )
    func deletionAndHalfCopiedRevision() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (a, b, ids) = try Self.replicas(in: directory)
        let id = ids[0]
        // On a, the document's only package has lost its content: a copy not complete yet.
        let package = try Self.package(a, id)
        let revision = URL(fileURLWithPath: package).deletingPathExtension().lastPathComponent
        try FileManager.default.removeItem(atPath: package + "/Survey.plist")
        let deleted = try CommandRunner.run(["delete", id, "--json", "--store", a])
        #expect(deleted.status == 0, "\(deleted.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(deleted.stdout.utf8)) as? [String: Any]
        #expect(report?["unsuperseded"] as? [String] == [revision], "\(deleted.stdout)")
        #expect(
            deleted.stderr.contains(
                "warning: the deletion does not supersede 1 revision(s) of this document that cannot be read yet (\(revision); "
            ) && deleted.stderr.contains("if a copy under way completes it"), "\(deleted.stderr)")
        // The copy completes (a sync brings the content): the document is back, as warned.
        #expect(try CommandRunner.run(["sync", b, "--store", a]).status == 0)
        for store in [a, b] {
            let shown = try CommandRunner.run(["show", id, "--store", store])
            #expect(shown.status == 0 && shown.stdout.contains("Document 0"), "\(store): \(shown.stderr)")
        }
        let again = try CommandRunner.run(["delete", id, "--store", a])
        #expect(again.status == 0 && !again.stderr.contains("does not supersede"), "\(again.stderr)")
        #expect(try CommandRunner.run(["sync", b, "--store", a]).status == 0)
        for store in [a, b] {
            #expect(try CommandRunner.run(["show", id, "--store", store]).status == 66, "\(store)")
        }
    }
}

extension SelfHealingTests {
    @Test(
        "resolve warns of a head whose copy has not completed, which the resolution cannot supersede (it said nothing); once the copy completes the document is in conflict again, as warned"
    )
    func resolutionAndHalfCopiedHead() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (a, b, ids) = try Self.replicas(in: directory)
        let id = ids[0]
        let base = URL(fileURLWithPath: try Self.package(a, id)).deletingPathExtension().lastPathComponent
        var heads: [String] = []
        for title in ["One", "Two", "Three"] {
            let edit = try CommandRunner.run(["edit", id, "--title", title, "--base", base, "--store", a])
            #expect(edit.status == 0, "\(edit.stderr)")
            heads.append(edit.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        #expect(try CommandRunner.run(["sync", b, "--store", a]).status == 0)
        // On a, the third head's content has not arrived yet.
        try FileManager.default.removeItem(atPath: a + "/Documents/\(id)/\(heads[2]).survey/Survey.plist")
        let resolved = try CommandRunner.run(["resolve", id, "--accept", "--json", "--store", a])
        #expect(resolved.status == 0, "\(resolved.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(resolved.stdout.utf8)) as? [String: Any]
        #expect(report?["unsuperseded"] as? [String] == [heads[2]], "\(resolved.stdout)")
        #expect(
            resolved.stderr.contains(
                "warning: the resolution does not supersede 1 revision(s) of this document that cannot be read yet (\(heads[2]); "
            ) && resolved.stderr.contains("the document may be in conflict again"), "\(resolved.stderr)")
        // The copy completes: the document is in conflict again, as warned.
        #expect(try CommandRunner.run(["sync", b, "--store", a]).status == 0)
        let conflicts = try CommandRunner.run(["conflicts", "--json", "--store", a])
        #expect(conflicts.stdout.contains(heads[2]), "\(conflicts.stdout)")
        // With every head readable, a resolution warns of nothing.
        let again = try CommandRunner.run(["resolve", id, "--accept", "--json", "--store", a])
        #expect(again.status == 0 && !again.stderr.contains("does not supersede"), "\(again.stderr)")
        let none = try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any]
        #expect(none?["unsuperseded"] as? [String] == [], "\(again.stdout)")
    }
}
