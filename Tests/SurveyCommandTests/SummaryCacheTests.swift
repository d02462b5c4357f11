import Foundation
import Surveys
import TestSupport
import Testing
import Versions

@testable import SurveyStore

/// The summary cache behind `survey list` and `survey conflicts` never shows anything an
/// uncached read of the same folder would not: under real concurrent writers, rsync
/// copies (half-copied packages, temporary files renamed into place, files replaced
/// with other bytes), changes that keep a file's size and modification time, and damaged,
/// foreign or stale cache files.
@Suite("Summary cache", .serialized)
struct SummaryCacheTests {
    /// The rows as `survey list --json` prints them, in a form to compare.
    static func rows(_ summaries: [SurveyStore.Summary]) -> [String] {
        summaries.map { summary in
            [
                summary.id.uuidString.lowercased(), summary.revision.id.description,
                summary.title ?? "<none>",
                summary.revision.device.name, String(summary.revision.formatVersion),
                String(summary.conflicts.count),
                summary.isDeleted ? "deleted" : "-",
            ].joined(separator: " | ")
        }
    }

    static func rows(json: String) throws -> [String] {
        let list = try JSONSerialization.jsonObject(with: Data(json.utf8)) as! [[String: Any]]
        return list.map { row in
            [
                row["id"] as! String, row["revision"] as! String, (row["title"] as? String) ?? "<none>",
                row["device"] as! String,
                String(row["formatVersion"] as! Int), String(row["conflicts"] as! Int),
                (row["deleted"] as! Bool) ? "deleted" : "-",
            ].joined(separator: " | ")
        }
    }

    /// The rows of an uncached read, straight from the revisions.
    static func uncached(_ store: String) throws -> [SurveyStore.Summary] {
        try SurveyStore.openForReading(at: store).summariesReport(usingCache: false).documents
    }

    /// Checks that `survey list` (which uses and refreshes the cache), `survey conflicts`
    /// and a cached read in this process all give what an uncached read gives; returns
    /// how many rows the in-process read took from the cache.
    @discardableResult
    static func checkAgainstUncached(_ store: String, _ context: String) throws -> Int {
        let expected = try uncached(store)
        // First a cached read that writes nothing, to count what it took from the cache.
        let cached = try SurveyStore.openForReading(at: store).summariesReport()
        #expect(cached.documents == expected, "\(context): a cached read differs from an uncached one")
        let list = try CommandRunner.run(["list", "--json", "--store", store])
        #expect(list.status == 0, "\(context): list: \(list.stderr)")
        #expect(
            try rows(json: list.stdout) == rows(expected),
            "\(context): survey list differs from an uncached read")
        let conflicts = try CommandRunner.run(["conflicts", "--json", "--store", store])
        #expect(conflicts.status == 0, "\(context): conflicts: \(conflicts.stderr)")
        let conflicted =
            (try JSONSerialization.jsonObject(with: Data(conflicts.stdout.utf8)) as! [[String: Any]])
            .map {
                "\($0["id"] as! String) \($0["current"] as! String) \(($0["conflicts"] as! [String]).joined(separator: ","))"
            }
        #expect(
            conflicted
                == expected.filter { !$0.conflicts.isEmpty }.map {
                    "\($0.id.uuidString.lowercased()) \($0.revision.id) \($0.conflicts.map(\.description).joined(separator: ","))"
                }, "\(context): survey conflicts differs from an uncached read")
        return cached.fromCache
    }

    static func cacheFile(_ store: String) -> String { store + "/" + StoreLayout.summaryCacheFile }

    // MARK: Concurrent writers

    @Test(
        "Real processes saving, creating and deleting while survey list runs over and over: every pause, cached equals uncached"
    )
    func concurrentWriters() throws {
        let seed = SeededRandom.seed(fallback: UInt64(Date().timeIntervalSince1970))
        print("SummaryCacheTests.concurrentWriters: SURVEYSTORE_SEED=\(seed)")
        var random = SeededRandom(seed: seed)
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("store").path
        let library = try SurveyStore.create(at: store, deviceName: "test")
        var ids: [String] = []
        for index in 0..<12 {
            ids.append(
                try library.create(try Survey(title: "document \(index)", items: [])).id.uuidString
                    .lowercased())
        }
        let pause = directory.appendingPathComponent("pause").path
        let survey = CommandRunner.binary.path
        var writers: [Process] = []
        let writerCount = 3, operations = 40
        for writer in 0..<writerCount {
            var lines: [String] = []
            for step in 0..<operations {
                lines.append(
                    "if [ -e '\(pause)' ]; then touch '\(pause)-\(writer)'; while [ -e '\(pause)' ]; do sleep 0.01; done; rm -f '\(pause)-\(writer)'; fi"
                )
                let id = ids[Int(random.next() % UInt64(ids.count))]
                switch random.next() % 10 {
                case 0:
                    lines.append(
                        "'\(survey)' new --title 'new \(writer)-\(step)' --store '\(store)' >/dev/null")
                case 1: lines.append("'\(survey)' delete \(id) --store '\(store)' >/dev/null")
                case 2: lines.append("'\(survey)' prune \(id) --store '\(store)' >/dev/null 2>&1")
                default:
                    lines.append(
                        "'\(survey)' edit \(id) --title 'writer \(writer) step \(step)' --store '\(store)' >/dev/null"
                    )
                }
            }
            lines.append("touch '\(pause)-\(writer)-done'")
            let shell = Process()
            shell.executableURL = URL(fileURLWithPath: "/bin/sh")
            shell.arguments = ["-c", lines.joined(separator: "\n")]
            shell.standardError = FileHandle.nullDevice
            writers.append(shell)
        }
        for writer in writers { try writer.run() }
        var checks = 0, hits = 0, lists = 0
        func done() -> Bool {
            (0..<writerCount).allSatisfy { FileManager.default.fileExists(atPath: "\(pause)-\($0)-done") }
        }
        while !done() {
            // survey list while the writers run: it records what it can, racing with them.
            let list = try CommandRunner.run(["list", "--json", "--store", store])
            #expect(list.status == 0, "list during writes: \(list.stderr)")
            lists += 1
            if lists % 4 == 0 {
                try #require(FileManager.default.createFile(atPath: pause, contents: nil))
                // Every writer is between two commands (or finished).
                while !(0..<writerCount).allSatisfy({
                    FileManager.default.fileExists(atPath: "\(pause)-\($0)")
                        || FileManager.default.fileExists(atPath: "\(pause)-\($0)-done")
                }) { usleep(2_000) }
                hits += try Self.checkAgainstUncached(store, "pause \(checks) (seed \(seed))")
                checks += 1
                try FileManager.default.removeItem(atPath: pause)
            }
        }
        for writer in writers { writer.waitUntilExit() }
        hits += try Self.checkAgainstUncached(store, "after the writers (seed \(seed))")
        print(
            "SummaryCacheTests.concurrentWriters: \(lists) lists during writes, \(checks) pauses, \(hits) rows from the cache"
        )
        #expect(checks > 0)
        #expect(hits > 0, "the cache was never used")
    }

    // MARK: rsync

    /// Every file under `Documents/` of `store`, relative to the store.
    static func files(under store: String) -> [String] {
        var result: [String] = []
        let enumerator = FileManager.default.enumerator(atPath: store + "/Documents")
        while let relative = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(
                atPath: store + "/Documents/" + relative, isDirectory: &isDirectory), !isDirectory.boolValue
            {
                result.append("Documents/" + relative)
            }
        }
        return result.sorted()
    }

    static func rsync(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandRunner.requireTool("rsync")!)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "rsync \(arguments)")
    }

    @Test(
        "rsync copies into the store, whole, in random halves, and replacing files with other bytes: cached equals uncached",
        CommandRunner.needs("rsync"))
    func rsyncCopies() throws {
        guard CommandRunner.requireTool("rsync") != nil else { return }
        let seed = SeededRandom.seed(fallback: UInt64(Date().timeIntervalSince1970))
        print("SummaryCacheTests.rsyncCopies: SURVEYSTORE_SEED=\(seed)")
        var random = SeededRandom(seed: seed)
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sourcePath = directory.appendingPathComponent("source").path,
            target = directory.appendingPathComponent("target").path
        let source = try SurveyStore.create(at: sourcePath, deviceName: "source")
        _ = try SurveyStore.create(at: target, deviceName: "target")
        var ids: [UUID] = []
        var hits = 0
        for round in 0..<10 {
            // Changes on the source: new documents, saves, deletions, prunes.
            for _ in 0..<6 {
                switch ids.isEmpty ? 0 : random.next() % 6 {
                case 0:
                    ids.append(
                        try source.create(
                            try Survey(title: "round \(round) \(random.next() % 1000)", items: [])
                        ).id)
                case 1: _ = try? source.delete(ids[Int(random.next() % UInt64(ids.count))])
                case 2: _ = try source.prune(ids[Int(random.next() % UInt64(ids.count))])
                default:
                    let id = ids[Int(random.next() % UInt64(ids.count))]
                    if var document = try? source.open(id) {
                        document.survey.title = "saved in round \(round) \(random.next() % 1000)"
                        _ = try? source.save(document)
                    }
                }
            }
            // Half a copy: a random half of the files, so packages arrive without their
            // content, or content without metadata, or tombstones before their successor.
            let files = Self.files(under: sourcePath).filter { _ in random.next() % 2 == 0 }
            let list = directory.appendingPathComponent("files-\(round)").path
            try files.joined(separator: "\n").write(toFile: list, atomically: true, encoding: .utf8)
            try Self.rsync(["-a", "--files-from=" + list, sourcePath + "/", target + "/"])
            hits += try Self.checkAgainstUncached(target, "round \(round), half copied (seed \(seed))")
            hits += try Self.checkAgainstUncached(target, "round \(round), half copied, again (seed \(seed))")
            // The rest: each file written under a temporary name and renamed into place.
            try Self.rsync(["-a", "--exclude=*.nosync", sourcePath + "/", target + "/"])
            hits += try Self.checkAgainstUncached(target, "round \(round), copied (seed \(seed))")
            // A winner's content replaced by other bytes of the same size, by rename
            // (rsync --checksum sees the difference that size and time do not show).
            if round % 3 == 2,
                let victim = Self.files(under: sourcePath).filter({
                    $0.hasSuffix("/" + StoreLayout.contentFile)
                }).last
            {
                let path = sourcePath + "/" + victim
                let original = try Data(contentsOf: URL(fileURLWithPath: path))
                let attributes = try FileManager.default.attributesOfItem(atPath: path)
                try Data(repeating: UInt8(ascii: "x"), count: original.count).write(
                    to: URL(fileURLWithPath: path))
                try FileManager.default.setAttributes(
                    [.modificationDate: attributes[.modificationDate]!], ofItemAtPath: path)
                try Self.rsync(["-a", "--checksum", "--exclude=*.nosync", sourcePath + "/", target + "/"])
                hits += try Self.checkAgainstUncached(
                    target, "round \(round), content replaced by rsync (seed \(seed))")
                try original.write(to: URL(fileURLWithPath: path))
                try FileManager.default.setAttributes(
                    [.modificationDate: attributes[.modificationDate]!], ofItemAtPath: path)
                try Self.rsync(["-a", "--checksum", "--exclude=*.nosync", sourcePath + "/", target + "/"])
                hits += try Self.checkAgainstUncached(
                    target, "round \(round), content restored by rsync (seed \(seed))")
            }
        }
        print("SummaryCacheTests.rsyncCopies: \(hits) rows from the cache")
        #expect(hits > 0, "the cache was never used")
    }

    // MARK: Changes that keep size and time

    /// Overwrites `path` in place with `bytes` and puts its modification time back.
    static func overwriteKeepingTime(_ path: String, with bytes: Data) throws {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seek(toOffset: 0)
        try handle.write(contentsOf: bytes)
        try handle.truncate(atOffset: UInt64(bytes.count))
        try handle.close()
        try FileManager.default.setAttributes(
            [.modificationDate: attributes[.modificationDate]!], ofItemAtPath: path)
    }

    @Test(
        "A document with a long history (its folder's listing larger than the first buffer) is recorded and taken from the cache, and a new revision still sets it aside"
    )
    func longHistory() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("store").path
        let library = try SurveyStore.create(at: store, deviceName: "test")
        let long = try library.create(try Survey(title: "edit 0", items: [])).id
        _ = try library.create(try Survey(title: "short", items: []))
        var document = try library.open(long)
        // Each name is about 76 bytes: 1,000 of them overflow the first 64 KiB.
        for edit in 1...1_000 {
            document.survey.title = "edit \(edit)"
            document = try library.save(document)
        }
        #expect(try library.prune(long).count == 1_000)
        let listing = try FileManager.default.contentsOfDirectory(
            atPath: store + "/" + StoreLayout.folder(of: long))
        #expect(listing.map { $0.utf8.count + 2 }.reduce(0, +) > SummaryCache.listingCapacity)
        usleep(20_000)
        try Self.checkAgainstUncached(store, "first list")
        #expect(try Self.checkAgainstUncached(store, "second list") == 2, "both documents from the cache")
        document.survey.title = "edit 1001"
        document = try library.save(document)
        #expect(
            try Self.checkAgainstUncached(store, "after a new revision") == 1,
            "the long document read anew, the other from the cache")
        #expect(try Self.uncached(store).first { $0.id == long }?.title == "edit 1001")
        usleep(20_000)
        try Self.checkAgainstUncached(store, "recorded again")
        #expect(try Self.checkAgainstUncached(store, "from the cache again") == 2)
    }

    @Test(
        "Files changed in place with their size and modification time kept, truncated, or completed later: cached equals uncached"
    )
    func changesInPlace() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("store").path
        let library = try SurveyStore.create(at: store, deviceName: "test")
        var ids: [UUID] = []
        for index in 0..<4 {
            ids.append(try library.create(try Survey(title: "document \(index)", items: [])).id)
        }
        var document = try library.open(ids[0])
        document.survey.title = "saved"
        _ = try library.save(document)
        usleep(20_000)
        try Self.checkAgainstUncached(store, "first list")
        #expect(
            try Self.checkAgainstUncached(store, "second list") == ids.count, "every document from the cache")

        func package(_ id: UUID) throws -> String {
            let winner = try library.graph(of: id).winner!.id
            return store + "/" + StoreLayout.package(winner, of: id)
        }
        // The winner's content: other bytes, same size, same modification time.
        let content = try package(ids[0]) + "/" + StoreLayout.contentFile
        let original = try Data(contentsOf: URL(fileURLWithPath: content))
        try Self.overwriteKeepingTime(
            content, with: Data(repeating: UInt8(ascii: " "), count: original.count))
        try Self.checkAgainstUncached(store, "content changed in place")
        #expect(
            try Self.uncached(store).first { $0.id == ids[0] }?.title == nil, "damaged content has no title")
        try Self.overwriteKeepingTime(content, with: original)
        try Self.checkAgainstUncached(store, "content restored in place")
        // Truncated under its final name.
        try Self.overwriteKeepingTime(content, with: Data())
        try Self.checkAgainstUncached(store, "content truncated")
        try Self.overwriteKeepingTime(content, with: original)
        // A superseded revision's metadata damaged in place (it then no longer verifies).
        let graph = try library.graph(of: ids[0])
        let superseded = graph.revisions.values.first { $0.id != graph.winner!.id }!
        let metadata =
            store + "/" + StoreLayout.package(superseded.id, of: ids[0]) + "/" + StoreLayout.metadataFile
        let metadataBytes = try Data(contentsOf: URL(fileURLWithPath: metadata))
        try Self.overwriteKeepingTime(
            metadata, with: Data(repeating: UInt8(ascii: " "), count: metadataBytes.count))
        try Self.checkAgainstUncached(store, "metadata changed in place")
        try Self.overwriteKeepingTime(metadata, with: metadataBytes)
        try Self.checkAgainstUncached(store, "metadata restored")
        // A superseded revision's content taken away (the package becomes incomplete, so
        // its parent becomes a head), then put back.
        let supersededContent =
            store + "/" + StoreLayout.package(superseded.id, of: ids[0]) + "/" + StoreLayout.contentFile
        let moved = directory.appendingPathComponent("moved").path
        try FileManager.default.moveItem(atPath: supersededContent, toPath: moved)
        try Self.checkAgainstUncached(store, "content taken away")
        try FileManager.default.moveItem(atPath: moved, toPath: supersededContent)
        try Self.checkAgainstUncached(store, "content put back")
        // A package replaced by a link to a copy of itself.
        let winnerPackage = try package(ids[1])
        try FileManager.default.moveItem(atPath: winnerPackage, toPath: moved)
        try FileManager.default.createSymbolicLink(atPath: winnerPackage, withDestinationPath: moved)
        try Self.checkAgainstUncached(store, "package replaced by a link")
        try FileManager.default.removeItem(atPath: winnerPackage)
        try FileManager.default.moveItem(atPath: moved, toPath: winnerPackage)
        try Self.checkAgainstUncached(store, "package back")
    }

    // MARK: What an unchanged folder vouches for

    /// Copies `source` to `destination` with `cp -a` (times and modes kept).
    static func copyKeepingTimes(_ source: String, _ destination: String) throws {
        let copy = try ChildProcess.run("/bin/cp", ["-a", source, destination])
        #expect(copy.status == 0, "cp -a: \(copy.stderr)")
    }

    @Test(
        "A package replaced by a rename, a content file renamed over inside a package, changes in the tick after a listing: cached equals uncached"
    )
    func replacementsAndSameTick() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("store").path
        let library = try SurveyStore.create(at: store, deviceName: "test")
        var ids: [UUID] = []
        for index in 0..<4 {
            ids.append(try library.create(try Survey(title: "document \(index)", items: [])).id)
            var document = try library.open(ids[index])
            document.survey.title = "saved \(index)"
            _ = try library.save(document)
        }
        usleep(20_000)
        try Self.checkAgainstUncached(store, "first list")
        #expect(try Self.checkAgainstUncached(store, "second list") == ids.count)
        func winner(_ id: UUID) throws -> String {
            store + "/" + StoreLayout.package(try library.graph(of: id).winner!.id, of: id)
        }
        let spare = directory.appendingPathComponent("spare").path

        // A package replaced by a rename: the same bytes, times and name, another inode.
        let package = try winner(ids[0])
        try Self.copyKeepingTimes(package, spare)
        try FileManager.default.removeItem(atPath: package)
        #expect(rename(spare, package) == 0)
        #expect(
            try Self.checkAgainstUncached(store, "package replaced by a rename") == ids.count - 1,
            "the replaced package's document was taken from the cache")
        usleep(20_000)
        try Self.checkAgainstUncached(store, "after the replacement")
        #expect(try Self.checkAgainstUncached(store, "replacement recorded") == ids.count)

        // The winner's content renamed over by a copy with other bytes of the same size and
        // the same modification time: the document folder is untouched (only the package
        // folder changes), the content file is another inode.
        let content = try winner(ids[1]) + "/" + StoreLayout.contentFile
        let original = try Data(contentsOf: URL(fileURLWithPath: content))
        try Self.copyKeepingTimes(content, spare)
        try Self.overwriteKeepingTime(spare, with: Data(repeating: UInt8(ascii: " "), count: original.count))
        #expect(rename(spare, content) == 0)
        #expect(
            try Self.checkAgainstUncached(store, "content renamed over") == ids.count - 1,
            "a content file renamed over was not noticed")
        #expect(try Self.uncached(store).first { $0.id == ids[1] }?.title == nil)
        try Self.overwriteKeepingTime(content, with: original)

        // Changes in the same clock tick as the listing before them, no pause in between:
        // recorded change times are older than the listing's start, these are not.
        for (index, id) in ids.enumerated() {
            usleep(20_000)
            try Self.checkAgainstUncached(store, "before the same-tick change \(index)")
            let package = try winner(id)
            switch index % 3 {
            case 0:
                // The winner's content truncated in place.
                try Self.overwriteKeepingTime(package + "/" + StoreLayout.contentFile, with: Data())
            case 1:
                // The winner taken out of the folder: its parent wins again.
                try FileManager.default.moveItem(atPath: package, toPath: spare + "-\(index)")
            default:
                // The winner's metadata damaged in place.
                let metadata = package + "/" + StoreLayout.metadataFile
                let bytes = try Data(contentsOf: URL(fileURLWithPath: metadata))
                try Self.overwriteKeepingTime(metadata, with: bytes.prefix(bytes.count / 2))
            }
            try Self.checkAgainstUncached(store, "same-tick change \(index)")
        }
    }

    @Test("A change time in whole seconds is recorded only when older than the listing's whole second")
    func wholeSecondStamps() {
        let second: Int64 = 1_000_000_000
        let moment = 1_800_000_000 * second + 400_000_000
        // A file system that stamps in nanoseconds: anything older than the moment.
        #expect(SummaryCache.recordable(changed: moment - 1, moment: moment))
        #expect(!SummaryCache.recordable(changed: moment, moment: moment))
        // One that stamps in whole seconds: a change made after the moment, within its
        // second, is stamped with the second the moment falls in.
        #expect(!SummaryCache.recordable(changed: 1_800_000_000 * second, moment: moment))
        #expect(SummaryCache.recordable(changed: 1_799_999_999 * second, moment: moment))
        #expect(!SummaryCache.recordable(changed: 0, moment: moment))
    }

    // MARK: The cache file itself

    @Test(
        "A damaged, foreign, stale or misplaced cache file is ignored and rebuilt; a read-only open writes none"
    )
    func damagedCacheFile() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("store").path
        let library = try SurveyStore.create(at: store, deviceName: "test")
        for index in 0..<5 { try library.create(try Survey(title: "document \(index)", items: [])) }
        usleep(20_000)
        // Opened for reading only (the library's default): nothing is written.
        _ = try SurveyStore.openForReading(at: store).documentsReport()
        #expect(
            !FileManager.default.fileExists(atPath: Self.cacheFile(store)), "a read-only open wrote the cache"
        )
        try Self.checkAgainstUncached(store, "first")
        let good = try Data(contentsOf: URL(fileURLWithPath: Self.cacheFile(store)))
        #expect(try Self.checkAgainstUncached(store, "with the cache") == 5)

        /// Puts `bytes` in place of the cache, with the checksum made right when asked.
        func replace(_ bytes: Data, checksum: Bool) throws {
            var data = bytes
            if checksum {
                data = data.prefix(data.count - 32)
                let hex = Array(RevisionID.sha256Hex(data).utf8)
                data.append(
                    contentsOf: stride(from: 0, to: 64, by: 2).map {
                        UInt8(String(decoding: hex[$0..<$0 + 2], as: UTF8.self), radix: 16)!
                    })
            }
            try? FileManager.default.removeItem(atPath: Self.cacheFile(store))
            try data.write(to: URL(fileURLWithPath: Self.cacheFile(store)))
        }
        var flipped = good
        flipped[good.count / 2] ^= 0x40
        // The header: magic (26 bytes), version (4), boot id (36), coarse time (8), clock offset (8).
        var stepped = good
        stepped[77] ^= 0x01  // the offset between the clocks moved by 16.7 ms: a step
        var otherBoot = good
        otherBoot[30] ^= 0x01
        // Written an hour "later" than now: the clock was set back since.
        var ahead = good
        let written = good[66..<74].withUnsafeBytes { Int64(littleEndian: $0.loadUnaligned(as: Int64.self)) }
        withUnsafeBytes(of: (written + 3_600_000_000_000).littleEndian) {
            ahead.replaceSubrange(66..<74, with: $0)
        }
        let damages: [(String, Data, Bool)] = [
            ("empty", Data(), false), ("truncated", good.prefix(good.count / 2), false),
            ("a flipped byte", flipped, false),
            ("garbage", Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7) }), false),
            ("a clock step", stepped, true), ("another boot", otherBoot, true),
            ("a clock set back", ahead, true),
        ]
        for (name, bytes, checksum) in damages {
            try replace(bytes, checksum: checksum)
            #expect(try Self.checkAgainstUncached(store, name) == 0, "\(name): the cache was used")
            #expect(
                try Self.checkAgainstUncached(store, "\(name), rebuilt") == 5,
                "\(name): the cache was not rebuilt")
        }
        // A copy of the whole store: the copy's cache names the original's folders.
        let copy = directory.appendingPathComponent("copy").path
        try FileManager.default.copyItem(atPath: store, toPath: copy)
        #expect(try Self.checkAgainstUncached(copy, "a copied store") == 0, "a foreign cache was used")
        // Not a regular file: a folder, a link, a FIFO.
        try FileManager.default.removeItem(atPath: Self.cacheFile(store))
        try FileManager.default.createDirectory(
            atPath: Self.cacheFile(store), withIntermediateDirectories: false)
        try Self.checkAgainstUncached(store, "a folder")
        try FileManager.default.removeItem(atPath: Self.cacheFile(store))
        try FileManager.default.createSymbolicLink(
            atPath: Self.cacheFile(store), withDestinationPath: copy + "/" + StoreLayout.summaryCacheFile)
        #expect(try Self.checkAgainstUncached(store, "a link") == 0)
        try FileManager.default.removeItem(atPath: Self.cacheFile(store))
        #expect(mkfifo(Self.cacheFile(store), 0o644) == 0)
        try Self.checkAgainstUncached(store, "a FIFO")
    }
}
