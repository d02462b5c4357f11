import Foundation
import PropertyList
import SurveyStore
import Testing
import Versions

/// A document whose current revision cannot be read: what `survey list` advises, told by
/// whether its content matches the digest in its metadata (then every replica holds the
/// same bytes) or not (damaged here, so a replica's intact copy repairs it).
@Suite("A current revision that cannot be read: what list advises")
struct UnreadableWinnerTests {
    /// A store of four documents whose current revisions cannot be read, written as
    /// another app would, whatever their content: malformed on top of an earlier
    /// revision, a format-1 survey that migrates to one breaking a rule, a conflict whose
    /// winner is malformed and whose other head reads, and readable content damaged in
    /// place (no longer matching its digest).
    struct Fixture {
        let directory: URL
        let store: String
        let revisions: RevisionStore
        let edited = UUID(uuidString: "00000001-0000-4000-8000-000000000000")!
        let old = UUID(uuidString: "00000002-0000-4000-8000-000000000000")!
        let conflicted = UUID(uuidString: "00000003-0000-4000-8000-000000000000")!
        let damaged = UUID(uuidString: "00000004-0000-4000-8000-000000000000")!
        /// `edited`'s readable revision, and the malformed one on top of it.
        let earlier, malformedRevision: RevisionMetadata
        /// `conflicted`'s head that reads.
        let readableHead: RevisionMetadata

        static let good = try! PropertyList.dictionary(["title": "Good", "items": []]).xmlData()
        static let malformed = Data("<plist><dict><key>title</key><string>t</strin></dict></plist>\n".utf8)

        init() throws {
            directory = try CommandRunner.temporaryDirectory()
            store = directory.appendingPathComponent("store").path
            _ = try SurveyStore.create(at: store, deviceName: "here")
            revisions = RevisionStore(
                root: store, device: Device(id: "other-app-1", name: "other app"),
                wallClock: { 1_560_000_000_000 })
            earlier = try revisions.write(document: edited, parents: [], content: Self.good, formatVersion: 2)
            malformedRevision = try revisions.write(
                document: edited, parents: [earlier], content: Self.malformed, formatVersion: 2)
            // A format-1 binary item answered 2: it migrates to a survey that breaks a rule.
            let invalidFormatOne = try PropertyList.dictionary([
                "title": "Old",
                "items": [
                    ["title": "b", "type": "Binary", "value1": "n", "value2": "y", "result": ["text": "2"]]
                ],
            ]).xmlData()
            _ = try revisions.write(document: old, parents: [], content: invalidFormatOne, formatVersion: 1)
            // The winner (written last, so stamped later) malformed, the other head readable.
            let base = try revisions.write(
                document: conflicted, parents: [], content: Self.good, formatVersion: 2)
            readableHead = try revisions.write(
                document: conflicted, parents: [base],
                content: try PropertyList.dictionary(["title": "Other head", "items": []]).xmlData(),
                formatVersion: 2)
            _ = try revisions.write(
                document: conflicted, parents: [base], content: Self.malformed, formatVersion: 2)
            let intact = try revisions.write(
                document: damaged, parents: [], content: Self.good, formatVersion: 2)
            let damagedFile =
                store + "/Documents/" + damaged.uuidString.lowercased() + "/" + intact.id.description
                + ".survey/Survey.plist"
            var bytes = try Data(contentsOf: URL(fileURLWithPath: damagedFile))
            let at = try #require(bytes.range(of: Data("Good".utf8))).lowerBound
            bytes[at] = UInt8(ascii: "F")
            try bytes.write(to: URL(fileURLWithPath: damagedFile))
        }
    }

    @Test(
        "Content intact but malformed or breaking a rule is given a save on top, or another head kept; only damaged content is sent to verify --repair-from (it was advised for all of them)"
    )
    func listAdvice() throws {
        let fixture = try Fixture()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let (directory, store) = (fixture.directory, fixture.store)
        let (edited, earlier, old) = (fixture.edited, fixture.earlier, fixture.old)
        let (conflicted, readableHead, damaged) = (fixture.conflicted, fixture.readableHead, fixture.damaged)

        func warning(_ id: UUID, in stderr: String) -> String? {
            stderr.split(separator: "\n").map(String.init).first {
                $0.hasPrefix("warning: \(store)/Documents/\(id.uuidString.lowercased()): ")
            }
        }
        let list = try CommandRunner.run(["list", "--store", store])
        #expect(list.status == 0, "\(list.stderr)")
        let intactAdvice =
            "its content matches the digest in its metadata, so every replica holds these same bytes and no repair mends them; save new content on top"
        for id in [edited, old, conflicted] {
            let line = try #require(warning(id, in: list.stderr), "\(list.stderr)")
            let document = id.uuidString.lowercased()
            #expect(
                line.contains("its current revision cannot be read, so it is listed without a title: "),
                "\(line)")
            // In a conflict, content saved on top of every head resolves it too.
            let save =
                id == conflicted
                ? " of every head with `survey resolve --store \(store) "
                : " with `survey save --store \(store) "
            #expect(line.contains(intactAdvice + save + document + " --from FILE`"), "\(line)")
            #expect(!line.contains("--repair-from"), "\(line)")
        }
        let editedLine = warning(edited, in: list.stderr) ?? ""
        #expect(editedLine.contains("Opening and ending tag mismatch"), "\(editedLine)")
        #expect(
            editedLine.hasSuffix(
                ", such as an earlier revision's content, which `survey export --store \(store) \(edited.uuidString.lowercased()) --revision REV -o FILE` writes)"
            ), "\(editedLine)")
        let oldLine = warning(old, in: list.stderr) ?? ""
        #expect(oldLine.contains("[answerOutOfRange]") && oldLine.hasSuffix(" --from FILE`)"), "\(oldLine)")
        let conflictedLine = warning(conflicted, in: list.stderr) ?? ""
        #expect(
            conflictedLine.hasSuffix(
                ", or keep the other head with `survey resolve --store \(store) \(conflicted.uuidString.lowercased()) --keep \(readableHead.id)`)"
            ), "\(conflictedLine)")
        let damagedLine = try #require(warning(damaged, in: list.stderr), "\(list.stderr)")
        #expect(
            damagedLine.contains("does not match the digest")
                && damagedLine.hasSuffix(
                    " (`survey verify --store \(store) --repair-from OTHER_STORE` repairs it from a replica that has it intact)"
                ),
            "\(damagedLine)")

        // What the advice says mends each.
        let exported = directory.appendingPathComponent("earlier.json").path
        let export = try CommandRunner.run([
            "export", edited.uuidString, "--revision", earlier.id.description, "-o", exported, "--store",
            store,
        ])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(
            try CommandRunner.run(["save", edited.uuidString, "--from", exported, "--store", store]).status
                == 0)
        let file = directory.appendingPathComponent("fixed.json").path
        try Data(#"{"title": "Fixed", "items": []}"#.utf8).write(to: URL(fileURLWithPath: file))
        #expect(
            try CommandRunner.run(["save", old.uuidString, "--from", file, "--store", store]).status == 0)
        let keep = try CommandRunner.run([
            "resolve", conflicted.uuidString, "--keep", readableHead.id.description, "--store", store,
        ])
        #expect(keep.status == 0, "\(keep.stderr)")
        let after = try CommandRunner.run(["list", "--store", store])
        for id in [edited, old, conflicted] {
            #expect(warning(id, in: after.stderr) == nil, "\(after.stderr)")
        }
        #expect(
            after.stdout.contains("Good") && after.stdout.contains("Fixed")
                && after.stdout.contains("Other head"))
    }

    @Test(
        "show, edit and export of a winner whose content is intact but unreadable give list's advice (they said only why); damaged content is still sent to a repair, and an earlier revision gets no advice"
    )
    func openingAdvice() throws {
        let fixture = try Fixture()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let store = fixture.store
        let (edited, malformedRevision) = (fixture.edited, fixture.malformedRevision)
        let (conflicted, readableHead, damaged) = (fixture.conflicted, fixture.readableHead, fixture.damaged)

        let advice =
            " (its content matches the digest in its metadata, so every replica holds these same bytes and no repair mends them; save new content on top with `survey save --store \(store) "
        let document = edited.uuidString.lowercased()
        let list = try CommandRunner.run(["list", "--store", store])
        for command in [["show"], ["show", "--json"], ["edit", "--title", "New"], ["export"]] {
            let result = try CommandRunner.run(
                [command[0], document] + command.dropFirst() + ["--store", store])
            #expect(result.status == 65, "\(command): \(result.stderr)")
            let line = result.stderr.split(separator: "\n").first.map(String.init) ?? ""
            #expect(line.contains("Opening and ending tag mismatch"), "\(command): \(line)")
            let remedy =
                advice + document
                + " --from FILE`, such as an earlier revision's content, which `survey export --store \(store) \(document) --revision REV -o FILE` writes)"
            #expect(line.hasSuffix(remedy), "\(command): \(line)")
            #expect(list.stderr.contains(remedy), "\(list.stderr)")
            if command.contains("--json") {
                let error =
                    (try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])?[
                        "error"]
                    as? [String: Any]
                #expect((error?["message"] as? String)?.hasSuffix(remedy) == true, "\(result.stdout)")
            }
        }
        // In a conflict: keep the other head.
        let other = try CommandRunner.run(["show", conflicted.uuidString, "--store", store])
        #expect(
            other.status == 65
                && other.stderr.hasSuffix(
                    ", or keep the other head with `survey resolve --store \(store) \(conflicted.uuidString.lowercased()) --keep \(readableHead.id)`)\n"
                ), "\(other.stderr)")
        // Damaged: a repair, as before, and no save on top.
        let repair = try CommandRunner.run(["show", damaged.uuidString, "--store", store])
        #expect(
            repair.status == 65 && repair.stderr.contains("--repair-from") && !repair.stderr.contains(advice),
            "\(repair.stderr)")
        // A revision that is not the winner: nothing a save on top would mend.
        _ = try fixture.revisions.write(
            document: edited, parents: [malformedRevision], content: Fixture.good, formatVersion: 2)
        let named = try CommandRunner.run([
            "show", document, "--revision", malformedRevision.id.description, "--store", store,
        ])
        #expect(
            named.status == 65 && named.stderr.contains("Opening and ending tag mismatch")
                && !named.stderr.contains(advice), "\(named.stderr)")
        #expect(try CommandRunner.run(["show", document, "--store", store]).status == 0)
    }

    @Test(
        "A head that is no valid survey: resolve --accept and --keep of it refuse (exit 65, nothing written; --accept wrote a revision carrying it), and diff and resolve --merge (one document or --all) give list's advice, naming the head to keep (they said only why)"
    )
    func conflictAdvice() throws {
        let fixture = try Fixture()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let store = fixture.store
        let (conflicted, readableHead) = (fixture.conflicted, fixture.readableHead)
        let document = conflicted.uuidString.lowercased()
        func heads(_ id: UUID) throws -> Set<RevisionID> {
            Set(try SurveyStore.openForReading(at: store).graph(of: id).heads.map(\.id))
        }
        func advice(keeping head: RevisionID, of document: String) -> String {
            " (its content matches the digest in its metadata, so every replica holds these same bytes and no repair mends them; save new content on top of every head with `survey resolve --store \(store) \(document) --from FILE`, or keep the other head with `survey resolve --store \(store) \(document) --keep \(head)`)"
        }
        let before = try heads(conflicted)
        let winner = try #require(try SurveyStore.openForReading(at: store).graph(of: conflicted).winner)
        #expect(winner.id != readableHead.id)
        let winnerAdvice = advice(keeping: readableHead.id, of: document)
        for command in [
            ["resolve", document, "--accept"], ["resolve", document, "--keep", winner.id.description],
            ["resolve", document, "--merge"], ["resolve", document, "--merge", "--dry-run"],
            ["diff", document],
            ["diff", document, readableHead.id.description],
            ["diff", document, readableHead.id.description, winner.id.description],
        ] {
            let result = try CommandRunner.run(command + ["--store", store])
            #expect(result.status == 65, "\(command): \(result.stderr)")
            #expect(result.stderr.contains("Opening and ending tag mismatch"), "\(command): \(result.stderr)")
            #expect(result.stderr.hasSuffix(winnerAdvice + "\n"), "\(command): \(result.stderr)")
            #expect(try heads(conflicted) == before, "\(command) writes nothing")
        }
        let all = try CommandRunner.run(["resolve", "--all", "--merge", "--json", "--store", store])
        #expect(all.status == 75, "\(all.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(all.stdout.utf8)) as? [String: Any]
        let left = (report?["unresolved"] as? [[String: Any]])?.first { $0["id"] as? String == document }
        #expect((left?["reason"] as? String)?.hasSuffix(winnerAdvice) == true, "\(all.stdout)")
        #expect(try heads(conflicted) == before)

        // The other way round: the winner reads, the other head does not.
        let loserFirst = UUID(uuidString: "00000005-0000-4000-8000-000000000000")!
        let base = try fixture.revisions.write(
            document: loserFirst, parents: [], content: Fixture.good, formatVersion: 2)
        let malformed = try fixture.revisions.write(
            document: loserFirst, parents: [base], content: Fixture.malformed, formatVersion: 2)
        let good = try fixture.revisions.write(
            document: loserFirst, parents: [base],
            content: try PropertyList.dictionary(["title": "Winner", "items": []]).xmlData(), formatVersion: 2
        )
        let other = loserFirst.uuidString.lowercased()
        #expect(try SurveyStore.openForReading(at: store).graph(of: loserFirst).winner?.id == good.id)
        let loserAdvice = advice(keeping: good.id, of: other)
        for command in [
            ["resolve", other, "--keep", malformed.id.description], ["resolve", other, "--merge"],
            ["diff", other, malformed.id.description],
        ] {
            let result = try CommandRunner.run(command + ["--store", store])
            #expect(result.status == 65, "\(command): \(result.stderr)")
            #expect(result.stderr.hasSuffix(loserAdvice + "\n"), "\(command): \(result.stderr)")
        }
        // diff with no revision names the head it leaves out, and fails with the advice.
        let diff = try CommandRunner.run(["diff", other, "--store", store])
        #expect(
            diff.status == 65
                && diff.stderr.contains("warning: \(malformed.id): not compared with the winner"))
        #expect(diff.stderr.hasSuffix(loserAdvice + "\n"), "\(diff.stderr)")

        // Two heads neither of which reads: no head is offered, only new content on top of
        // both (each used to offer the other, and pasting either failed); and with a third
        // head that reads, that one is offered.
        let neither = UUID(uuidString: "00000006-0000-4000-8000-000000000000")!
        let neitherBase = try fixture.revisions.write(
            document: neither, parents: [], content: Fixture.good, formatVersion: 2)
        for _ in 0..<2 {
            _ = try fixture.revisions.write(
                document: neither, parents: [neitherBase], content: Fixture.malformed, formatVersion: 2)
        }
        let both = neither.uuidString.lowercased()
        let newContent =
            " (its content matches the digest in its metadata, so every replica holds these same bytes and no repair mends them; save new content on top of every head with `survey resolve --store \(store) \(both) --from FILE`, such as an earlier revision's content, which `survey export --store \(store) \(both) --revision REV -o FILE` writes)\n"
        for command in [["diff", both], ["resolve", both, "--merge"], ["resolve", both, "--accept"]] {
            let result = try CommandRunner.run(command + ["--store", store])
            #expect(
                result.status == 65 && result.stderr.hasSuffix(newContent), "\(command): \(result.stderr)")
        }
        let third = try fixture.revisions.write(
            document: neither, parents: [neitherBase],
            content: try PropertyList.dictionary(["title": "Third", "items": []]).xmlData(), formatVersion: 2)
        let offered = try CommandRunner.run(["resolve", both, "--merge", "--store", store])
        #expect(
            offered.status == 65 && offered.stderr.hasSuffix(" --keep \(third.id)`)\n"), "\(offered.stderr)")
        let file = fixture.directory.appendingPathComponent("new.json").path
        try Data(#"{"title": "New", "items": []}"#.utf8).write(to: URL(fileURLWithPath: file))
        #expect(try CommandRunner.run(["resolve", both, "--from", file, "--store", store]).status == 0)
        #expect(try CommandRunner.run(["show", both, "--store", store]).stdout.contains("New"))

        // What the advice says mends each: the other head kept, which --accept now keeps.
        let kept = try CommandRunner.run([
            "resolve", document, "--keep", readableHead.id.description, "--store", store,
        ])
        #expect(kept.status == 0, "\(kept.stderr)")
        let accepted = try CommandRunner.run(["resolve", other, "--accept", "--store", store])
        #expect(accepted.status == 0, "\(accepted.stderr)")
        for id in [conflicted, loserFirst] {
            #expect(try SurveyStore.openForReading(at: store).graph(of: id).heads.count == 1)
            #expect(try CommandRunner.run(["show", id.uuidString, "--store", store]).status == 0)
        }
    }
}
