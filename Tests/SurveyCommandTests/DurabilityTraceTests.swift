import Foundation
import Testing

/// The order of system calls of a real `survey edit`, read from `strace -f -y`.
@Suite("Durable ordering under strace", CommandRunner.needs("strace"))
struct DurabilityTraceTests {
    struct Call {
        var index: Int
        var name: String
        var text: String
    }

    /// The path strace -y prints for the first descriptor argument, `5</path>`.
    static func descriptorPath(_ line: String) -> String? {
        guard let open = line.range(of: "("),
            let start = line.range(of: "<", range: open.upperBound..<line.endIndex),
            let end = line.range(of: ">", range: start.upperBound..<line.endIndex)
        else { return nil }
        return String(line[start.upperBound..<end.lowerBound])
    }

    /// The paths a call names, in order, made whole: a name given relative to a directory
    /// descriptor (`5</store/Documents/x>, "name"`) is joined to the folder strace shows
    /// for the descriptor; a path given from `AT_FDCWD` is taken as it is.
    static func paths(_ line: String) -> [String] {
        let arguments = line.range(of: ") = ").map { String(line[..<$0.lowerBound]) } ?? line
        let pattern = try! NSRegularExpression(pattern: #"(?:(\d+)<([^>]*)>|AT_FDCWD), "([^"]*)""#)
        return pattern.matches(in: arguments, range: NSRange(arguments.startIndex..., in: arguments)).map {
            match in
            let name = String(arguments[Range(match.range(at: 3), in: arguments)!])
            guard let folderRange = Range(match.range(at: 2), in: arguments), !name.hasPrefix("/") else {
                return name
            }
            let folder = String(arguments[folderRange])
            return name == "." ? folder : folder + "/" + name
        }
    }

    /// Whether a call opens a file (`openat`, or `openat2` beneath the store's root).
    static func isOpen(_ call: Call) -> Bool { call.name == "openat" || call.name == "openat2" }

    /// The quoted arguments of a call, in order.
    static func quotedPaths(_ line: String) -> [String] {
        var paths: [String] = []
        var rest = line[...]
        while let start = rest.firstIndex(of: "\"") {
            let after = rest.index(after: start)
            guard let end = rest[after...].firstIndex(of: "\"") else { break }
            paths.append(String(rest[after..<end]))
            rest = rest[rest.index(after: end)...]
        }
        return paths
    }

    @Test(
        "survey edit fsyncs each new file after its last write and before the rename, the package before its rename, and the parent before reporting success"
    )
    func editOrdering() throws {
        guard let strace = CommandRunner.requireTool("strace") else { return }
        let directory = try CommandRunner.temporaryDirectory()
        let store = directory.appendingPathComponent("store").path
        #expect(try CommandRunner.run(["init", "--store", store]).status == 0)
        let sample = directory.appendingPathComponent("s.json")
        try Data(StoreCommandTests.sample.utf8).write(to: sample)
        let created = try CommandRunner.run(["new", "--from", sample.path, "--store", store])
        let id = created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let log = directory.appendingPathComponent("trace").path
        let result = try CommandRunner.run(
            ["edit", id, "--answer", "3=6", "--store", store],
            prefix: [
                strace, "-f", "-y", "-qq", "-s", "256", "-e",
                "trace=openat,openat2,write,fsync,close,rename,renameat,renameat2,mkdirat,mkdir", "-o", log,
            ])
        #expect(result.status == 0, "\(result.stderr)")
        let calls = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").enumerated()
            .compactMap { index, line -> Call? in
                // Lines start with the pid; the call name runs up to the parenthesis.
                let text = String(line)
                guard let paren = text.firstIndex(of: "("), let space = text[..<paren].lastIndex(of: " ")
                else { return nil }
                return Call(index: index, name: String(text[text.index(after: space)..<paren]), text: text)
            }
        let temporary = store + "/Local.nosync/tmp/"
        guard let publish = calls.first(where: { $0.name == "renameat2" && $0.text.contains("/Documents/") })
        else {
            Issue.record("no renameat2 into Documents/ in the trace")
            return
        }
        let paths = Self.paths(publish.text)
        let package = try #require(paths.first { $0.hasPrefix(temporary) })
        let destination = try #require(paths.last)
        #expect(publish.text.contains("RENAME_NOREPLACE"))

        // Each file created in the package: fsynced after its last write, before the rename.
        let createdFiles = calls.filter {
            Self.isOpen($0) && $0.text.contains("O_CREAT")
                && Self.paths($0.text).first?.hasPrefix(package + "/") == true
        }
        #expect(createdFiles.count == 2, "DocumentMetadata.plist and Survey.plist")
        for file in createdFiles {
            let path = Self.paths(file.text)[0]
            let writes = calls.filter { $0.name == "write" && Self.descriptorPath($0.text) == path }
            let fsyncs = calls.filter { $0.name == "fsync" && Self.descriptorPath($0.text) == path }
            #expect(!writes.isEmpty, "\(path) is written")
            guard let lastWrite = writes.last, let fsync = fsyncs.first else {
                Issue.record("\(path) is never fsynced")
                continue
            }
            #expect(fsync.index > lastWrite.index, "\(path): fsync after the last write")
            #expect(fsync.index < publish.index, "\(path): fsync before the rename that publishes it")
        }
        // The package directory itself, before its rename.
        let packageSync = calls.first { $0.name == "fsync" && Self.descriptorPath($0.text) == package }
        #expect(
            packageSync.map { $0.index < publish.index } == true,
            "the package directory is fsynced before its rename")
        // The destination's parent, after the rename and before success is reported.
        let parent = String(destination[..<destination.lastIndex(of: "/")!])
        let parentSync = calls.first {
            $0.name == "fsync" && $0.index > publish.index && Self.descriptorPath($0.text) == parent
        }
        let report = calls.first { $0.name == "write" && $0.text.contains("write(1<") }
        #expect(parentSync != nil, "the parent directory is fsynced after the rename")
        #expect(report != nil, "the new revision is printed")
        if let parentSync, let report {
            #expect(parentSync.index < report.index, "the parent is fsynced before success is reported")
        }
    }
}

extension DurabilityTraceTests {
    /// Checks the durability rules for everything a traced command published into the
    /// store; returns how many publications it checked.
    static func checkRules(_ calls: [Call], store: String, command: String) -> Int {
        let temporary = store + "/Local.nosync/tmp/"
        let report = calls.last { $0.name == "write" && $0.text.contains("write(1<") }
        // A batch is flushed by one syncfs between its writes and its renames.
        let flushes = calls.filter { $0.name == "syncfs" && $0.text.contains(") = 0") }
        func flush(after start: Int, before end: Int) -> Call? {
            flushes.first { $0.index > start && $0.index < end }
        }
        var checked = 0
        for publish in calls where publish.name == "renameat2" {
            let named = paths(publish.text)
            guard named.count == 2, named[0].hasPrefix(temporary), named[1].hasPrefix(store + "/") else {
                continue
            }
            let (source, destination) = (named[0], named[1])
            checked += 1
            #expect(
                publish.text.contains("RENAME_NOREPLACE"),
                "\(command): \(destination) published without RENAME_NOREPLACE")
            let created = calls.filter {
                $0.index < publish.index && isOpen($0) && $0.text.contains("O_CREAT")
                    && (paths($0.text).first.map { $0 == source || $0.hasPrefix(source + "/") } ?? false)
            }
            #expect(!created.isEmpty, "\(command): nothing was written before publishing \(destination)")
            for file in created {
                let path = paths(file.text)[0]
                let lastWrite = calls.last {
                    $0.index < publish.index && $0.name == "write" && descriptorPath($0.text) == path
                }
                let fsync = calls.first {
                    $0.index < publish.index && $0.name == "fsync" && descriptorPath($0.text) == path
                }
                let flushed = flush(after: lastWrite?.index ?? file.index, before: publish.index)
                #expect(
                    fsync != nil || flushed != nil,
                    "\(command): \(path) neither fsynced nor flushed by syncfs before its rename")
                if let lastWrite, let fsync, flushed == nil {
                    #expect(
                        fsync.index > lastWrite.index, "\(command): \(path) fsynced before its last write")
                }
            }
            if created.contains(where: { paths($0.text)[0] != source }) {
                let directorySync = calls.first {
                    $0.index < publish.index && $0.name == "fsync" && descriptorPath($0.text) == source
                }
                let lastCreated = created.map(\.index).max() ?? 0
                #expect(
                    directorySync != nil || flush(after: lastCreated, before: publish.index) != nil,
                    "\(command): package \(source) neither fsynced nor flushed by syncfs before its rename")
            }
            // The parent, fsynced after the rename, or flushed by a syncfs after it (a batch).
            let parent = String(destination[..<destination.lastIndex(of: "/")!])
            let parentSync =
                calls.first {
                    $0.index > publish.index && $0.name == "fsync" && descriptorPath($0.text) == parent
                } ?? flushes.first { $0.index > publish.index }
            #expect(
                parentSync != nil,
                "\(command): parent of \(destination) neither fsynced nor flushed by syncfs after the rename")
            if let parentSync, let report {
                #expect(
                    parentSync.index < report.index,
                    "\(command): success reported before the parent's fsync or flush")
            }
        }
        // Nothing of a pruned package is removed before its tombstone is durable.
        for removal in calls
        where removal.name == "unlinkat" && removal.text.contains("/Documents/")
            && removal.text.contains(".survey")
        {
            guard
                let package = paths(removal.text).first.flatMap({ path -> String? in
                    guard let range = path.range(of: ".survey") else { return nil }
                    return String(path[..<range.upperBound])
                })
            else { continue }
            let tombstone = String(package.dropLast(".survey".count)) + ".pruned"
            let published = calls.first { $0.name == "renameat2" && paths($0.text).last == tombstone }
            #expect(
                published.map { $0.index < removal.index } == true,
                "\(command): \(package) removed before its tombstone was published")
            if let published {
                let parent = String(tombstone[..<tombstone.lastIndex(of: "/")!])
                let sync = calls.first {
                    $0.index > published.index && $0.name == "fsync" && descriptorPath($0.text) == parent
                }
                #expect(
                    sync.map { $0.index < removal.index } == true,
                    "\(command): \(package) removed before the tombstone's folder was fsynced")
            }
        }
        return checked
    }

    static func trace(
        _ arguments: [String], strace: String, directory: URL, environment: [String: String] = [:]
    ) throws -> [Call] {
        let log = directory.appendingPathComponent("trace-\(UUID().uuidString)").path
        let result = try CommandRunner.run(
            arguments, environment: environment,
            prefix: [
                strace, "-f", "-y", "-qq", "-s", "256", "-e",
                "trace=openat,openat2,write,fsync,syncfs,close,renameat2,unlinkat,mkdirat", "-o", log,
            ])
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").enumerated().compactMap
        { index, line in
            let text = String(line)
            guard let paren = text.firstIndex(of: "("), let space = text[..<paren].lastIndex(of: " ") else {
                return nil
            }
            return Call(index: index, name: String(text[text.index(after: space)..<paren]), text: text)
        }
    }

    @Test("Every mutating command follows the durability rules under strace")
    func everyMutatingCommand() throws {
        guard let strace = CommandRunner.requireTool("strace") else { return }
        let directory = try CommandRunner.temporaryDirectory()
        let store = directory.appendingPathComponent("store").path,
            other = directory.appendingPathComponent("other").path
        let sample = directory.appendingPathComponent("s.json")
        try Data(StoreCommandTests.sample.utf8).write(to: sample)
        let edited = directory.appendingPathComponent("e.json")
        try Data(StoreCommandTests.edited(rating: 3).utf8).write(to: edited)
        let formatOne = directory.appendingPathComponent("old").path
        try FileManager.default.copyItem(
            atPath: FormatCommandTests.fixtures + "/stores/format1-store", toPath: formatOne)
        #expect(try CommandRunner.run(["init", "--store", other]).status == 0)

        func run(_ arguments: [String], expectPublications: Bool = true, publishingInto: String? = nil) throws
            -> String
        {
            let calls = try Self.trace(arguments, strace: strace, directory: directory)
            let storePath = publishingInto ?? arguments[arguments.firstIndex(of: "--store")! + 1]
            let checked = Self.checkRules(calls, store: storePath, command: arguments[0])
            if expectPublications { #expect(checked > 0, "\(arguments[0]) published nothing") }
            return calls.last { $0.name == "write" && $0.text.contains("write(1<") }.map {
                Self.quotedPaths($0.text).first ?? ""
            } ?? ""
        }
        _ = try run(["init", "--store", store])
        let id = try run(["new", "--from", sample.path, "--store", store]).replacingOccurrences(
            of: "\\n", with: "")
        let base = try CommandRunner.run(["list", "--json", "--store", store]).stdout
            .components(separatedBy: "\"revision\" : \"")[1].components(separatedBy: "\"")[0]
        _ = try run(["edit", id, "--answer", "3=7", "--store", store])
        _ = try run(["save", id, "--from", edited.path, "--base", base, "--store", store])
        _ = try run(["resolve", id, "--accept", "--store", store])
        _ = try run(["prune", id, "--store", store])
        _ = try run(["sync", other, "--store", store], publishingInto: other)
        let package = directory.appendingPathComponent("exported.survey").path
        #expect(try CommandRunner.run(["export", id, "--package", package, "--store", store]).status == 0)
        _ = try run(["import", package, "--store", other], expectPublications: false)
        _ = try run(["migrate", "--store", formatOne])
        _ = try run(["delete", id, "--store", store])
    }

    @Test(
        "With SURVEYSTORE_NO_SYNCFS=1, sync never calls syncfs and fsyncs each file and package of the batch before its rename"
    )
    func batchedSyncWithoutSyncfs() throws {
        guard let strace = CommandRunner.requireTool("strace") else { return }
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("store").path,
            other = directory.appendingPathComponent("other").path
        #expect(try CommandRunner.run(["init", "--store", store]).status == 0)
        #expect(try CommandRunner.run(["init", "--store", other]).status == 0)
        let sample = directory.appendingPathComponent("s.json")
        try Data(StoreCommandTests.sample.utf8).write(to: sample)
        for _ in 0..<4 {
            #expect(try CommandRunner.run(["new", "--from", sample.path, "--store", store]).status == 0)
        }
        let calls = try Self.trace(
            ["sync", other, "--store", store], strace: strace, directory: directory,
            environment: ["SURVEYSTORE_NO_SYNCFS": "1"])
        #expect(!calls.contains { $0.name == "syncfs" }, "the knob keeps syncfs from being called")
        // Every package published, each file fsynced before its rename (the rules).
        #expect(Self.checkRules(calls, store: other, command: "sync") == 4)
        let temporary = other + "/Local.nosync/tmp/"
        let fsyncs = calls.filter {
            $0.name == "fsync" && Self.descriptorPath($0.text)?.hasPrefix(temporary) == true
        }
        #expect(fsyncs.count == 12, "two files and the folder of each of four packages: \(fsyncs.count)")
        #expect(try CommandRunner.run(["verify", "--store", other]).status == 0)
    }

    /// Checks that `calls` published exactly one package into `store`, made durable item
    /// by item as a single save is: no `syncfs`; each of its two files fsynced after its
    /// last write and before the rename (the rules, with no flush to stand in), the
    /// package folder too, and nothing else under the temporary folder; the destination's
    /// parent fsynced after the rename and before the report.
    static func expectOnePackageItemByItem(_ calls: [Call], store: String, command: String) {
        #expect(!calls.contains { $0.name == "syncfs" }, "\(command): a batch of one calls no syncfs")
        #expect(checkRules(calls, store: store, command: command) == 1, "\(command): one package published")
        let temporary = store + "/Local.nosync/tmp/"
        let fsyncs = calls.filter {
            $0.name == "fsync" && descriptorPath($0.text)?.hasPrefix(temporary) == true
        }
        #expect(fsyncs.count == 3, "\(command): two files and the package folder: \(fsyncs.map(\.text))")
        guard
            let publish = calls.first(where: {
                $0.name == "renameat2" && paths($0.text).first?.hasPrefix(temporary) == true
            })
        else { return }
        #expect(
            fsyncs.allSatisfy { $0.index < publish.index },
            "\(command): every fsync of the package before its rename")
        let destination = paths(publish.text).last!
        let parent = String(destination[..<destination.lastIndex(of: "/")!])
        #expect(
            calls.contains {
                $0.index > publish.index && $0.name == "fsync" && descriptorPath($0.text) == parent
            },
            "\(command): \(parent) fsynced after the rename")
    }

    @Test(
        "A sync of one package, into a new document folder and into an existing one, fsyncs its files and folder before the rename and the parent after it, with no syncfs"
    )
    func onePackageSyncOrdering() throws {
        guard let strace = CommandRunner.requireTool("strace") else { return }
        let (directory, store, other, sample) = try CommandRunner.twoStores()
        let id = try CommandRunner.run(["new", "--from", sample.path, "--store", store]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let fresh = try Self.trace(["sync", other, "--store", store], strace: strace, directory: directory)
        Self.expectOnePackageItemByItem(fresh, store: other, command: "sync into a new document folder")
        #expect(try CommandRunner.run(["edit", id, "--answer", "3=6", "--store", store]).status == 0)
        let edited = try Self.trace(["sync", other, "--store", store], strace: strace, directory: directory)
        Self.expectOnePackageItemByItem(
            edited, store: other, command: "sync into an existing document folder")
        #expect(try CommandRunner.run(["verify", "--store", other]).status == 0)
    }

    @Test(
        "An import of one package fsyncs its files and folder before the rename and the parent after it, with no syncfs"
    )
    func onePackageImportOrdering() throws {
        guard let strace = CommandRunner.requireTool("strace") else { return }
        let (directory, store, other, sample) = try CommandRunner.twoStores()
        let id = try CommandRunner.run(["new", "--from", sample.path, "--store", store]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let package = directory.appendingPathComponent("exported.survey").path
        #expect(try CommandRunner.run(["export", id, "--package", package, "--store", store]).status == 0)
        let calls = try Self.trace(
            ["import", package, "--store", other], strace: strace, directory: directory)
        Self.expectOnePackageItemByItem(calls, store: other, command: "import")
        #expect(try CommandRunner.run(["verify", "--store", other]).status == 0)
    }

    @Test(
        "sync writes a batch, flushes it with one syncfs, renames each package, then flushes the renames with a second syncfs, before reporting",
        arguments: [2, 4])
    func batchedSyncOrdering(documents: Int) throws {
        guard let strace = CommandRunner.requireTool("strace") else { return }
        let (directory, store, other, sample) = try CommandRunner.twoStores()
        for _ in 0..<documents {
            #expect(try CommandRunner.run(["new", "--from", sample.path, "--store", store]).status == 0)
        }
        let calls = try Self.trace(["sync", other, "--store", store], strace: strace, directory: directory)
        #expect(Self.checkRules(calls, store: other, command: "sync") == documents)
        let temporary = other + "/Local.nosync/tmp/"
        let publications = calls.filter {
            $0.name == "renameat2" && Self.paths($0.text).first?.hasPrefix(temporary) == true
        }
        let flushes = calls.filter { $0.name == "syncfs" }
        #expect(flushes.count == 2, "one flush for the batch's files, one for its renames")
        guard flushes.count == 2, let firstRename = publications.first, let lastRename = publications.last
        else {
            Issue.record("no two syncfs or no publication in the trace")
            return
        }
        let (flush, renamesFlush) = (flushes[0], flushes[1])
        // Writes, then syncfs, then renames, then syncfs again, then the report.
        let writes = calls.filter { call in
            call.name == "write" && Self.descriptorPath(call.text)?.hasPrefix(temporary) == true
        }
        #expect(writes.count == 2 * documents, "two files for each package")
        #expect(writes.allSatisfy { $0.index < flush.index }, "every write of the batch precedes the syncfs")
        #expect(flush.index < firstRename.index, "the syncfs precedes every rename")
        #expect(lastRename.index < renamesFlush.index, "the second syncfs follows every rename")
        #expect(
            !calls.contains {
                $0.name == "fsync" && Self.descriptorPath($0.text)?.hasPrefix(temporary) == true
            },
            "no file of the batch is fsynced on its own")
        let parents = Set(
            publications.map { call -> String in
                let destination = Self.paths(call.text).last!
                return String(destination[..<destination.lastIndex(of: "/")!])
            })
        #expect(
            !calls.contains { $0.name == "fsync" && parents.contains(Self.descriptorPath($0.text) ?? "") },
            "no parent is fsynced on its own: the second syncfs flushes them all")
        let report = calls.last { $0.name == "write" && $0.text.contains("write(1<") }
        #expect(
            report.map { renamesFlush.index < $0.index } == true, "the renames are flushed before the report")
    }
}
