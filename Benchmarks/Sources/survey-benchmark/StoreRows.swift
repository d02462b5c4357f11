import Foundation
import SurveyStore
import Surveys
import Synchronization
import Versions

#if canImport(Glibc)
    import Glibc
#endif

/// The sizes of the store rows: the full run, or a quick one for smoke tests.
struct StoreSizes: Encodable {
    var saveItems = 50
    var savesPerRound = 20
    var listSizes = [1_000, 10_000, 100_000]
    var openSample = 1_000
    var syncDocuments = 10_000
    var syncEdits = 100
    var conflictRevisions = 1_000
    var treeItems = 7
    var mergeItems = 1_000

    static let quick = StoreSizes(
        savesPerRound: 10, listSizes: [100, 1_000, 10_000], openSample: 100, syncDocuments: 1_000,
        syncEdits: 10)
}

/// One measured quantity: one figure per round (seconds per unit), reported as the median
/// and the range of the rounds.
typealias Sample = Timings

extension Timings {
    init(_ seconds: [Double]) { self.init(seconds: seconds, peakBytes: nil) }
}

func now() -> ContinuousClock.Instant { ContinuousClock.now }

func seconds(since start: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

/// Runs the store rows (save, list, sync, conflicts) in this process and returns their
/// table rows. Every tree is made under `directory`, which the caller removes.
struct StoreBenchmarks {
    var directory: String
    var sizes: StoreSizes
    var rounds: Int
    var surveyBinary: () throws -> String
    var log: (String) -> Void
    /// With `--fresh-file-systems`: where the sync row puts its source and each timed
    /// command's target, each on a file system of its own made for it.
    var freshFileSystems: FreshFileSystems? = nil

    // MARK: Save

    /// A durable save of a 50-item survey through the library, against the same bytes
    /// written by the bare system calls the design requires (write and fsync of each
    /// file, mkdir, fsync of the package, rename, fsync of the parent), interleaved one
    /// save each in turn. Each save goes to its own document that has one revision.
    func save() throws -> (ours: Sample, floor: Sample, layer: Sample) {
        let root = directory + "/save"
        let store = try SurveyStore.create(at: root + "/store", deviceName: "Benchmark")
        let first = try StoreTrees.survey(items: sizes.saveItems, variant: 0)
        let second = try StoreTrees.survey(items: sizes.saveItems, variant: 1)
        let floorRoot = root + "/floor"
        try StoreTrees.makeDirectory(floorRoot)
        try StoreTrees.makeDirectory(floorRoot + "/tmp")
        try StoreTrees.makeDirectory(floorRoot + "/Documents")
        // The revision layer alone, given the bytes already encoded and hashed.
        let layer = RevisionStore(root: root + "/store", device: store.device)
        let secondBytes = try second.plistData()
        var ours: [Double] = [], floor: [Double] = [], layerTimes: [Double] = []
        for round in 1...rounds {
            log("save: round \(round) of \(rounds)")
            var documents: [UUID] = [], layerDocuments: [(UUID, RevisionMetadata)] = []
            for _ in 0..<sizes.savesPerRound {
                documents.append(try store.create(first).id)
                let (id, revision) = try store.create(first)
                layerDocuments.append((id, revision))
            }
            var oursRound: [Double] = [], floorRound: [Double] = [], layerRound: [Double] = []
            var serial = 0
            for id in documents {
                let start = now()
                let revision = try store.save(second, to: id)
                oursRound.append(seconds(since: start))
                // The same bytes, through the bare calls.
                let package = root + "/store/Documents/\(id.uuidString.lowercased())/\(revision.id).survey/"
                let files = try [RevisionStore.metadataFile, RevisionStore.contentFile].map {
                    ($0, try Data(contentsOf: URL(fileURLWithPath: package + $0)))
                }
                serial += 1
                let folder = floorRoot + "/Documents/doc-\(round)-\(serial)"
                try StoreTrees.makeDirectory(folder)
                let floorStart = now()
                try BareCalls.writePackage(
                    files, temporary: floorRoot + "/tmp/t\(serial)", destination: folder + "/r.survey",
                    parent: folder)
                floorRound.append(seconds(since: floorStart))
                let (layerID, parent) = layerDocuments[serial - 1]
                let layerStart = now()
                _ = try layer.write(
                    document: layerID, parents: [parent], content: secondBytes,
                    formatVersion: SurveyStore.formatVersion)
                layerRound.append(seconds(since: layerStart))
            }
            ours.append(median(oursRound))
            floor.append(median(floorRound))
            layerTimes.append(median(layerRound))
        }
        return (Sample(ours), Sample(floor), Sample(layerTimes))
    }

    // MARK: List and open

    struct ListResult: Encodable {
        var documents: Int
        var listPerDocument: [Double]
        /// `documents()` with no summary cache: a full read, which writes the cache.
        var coldListPerDocument: [Double]
        var conflictsPerDocument: [Double]
        var openPerDocument: [Double]
        var floorPerDocument: [Double]
        var everyFilePerDocument: [Double]
    }

    /// `documents()` (the rows of `survey list`), warm (a listing after another, using
    /// the summary cache it wrote) and cold (the cache removed first, so every document is
    /// read and the cache written, as on a store's first listing), the scan of `survey
    /// conflicts` (`documentsReport()` and the documents in conflict among them, warm) and
    /// `open` of
    /// winners, per document, at each size, with a bare floor: listing `Documents/`,
    /// listing every document folder and reading the winner's metadata file (the package
    /// of the highest generation: every document here is a chain); and, for information,
    /// listing every folder and reading every file in it. Each size is a store of its own;
    /// every round visits all sizes in turn, so
    /// that load on a shared machine falls on all of them alike. Smaller stores are
    /// listed several times per round so that each figure covers at least as many
    /// documents as the smallest pass over a large store. The page cache is warm.
    func list() throws -> [ListResult] {
        let contents = try (0..<3).map {
            try StoreTrees.survey(items: sizes.treeItems, variant: $0).plistData()
        }
        var stores: [(size: Int, store: SurveyStore, root: String, sample: [UUID])] = []
        for size in sizes.listSizes {
            let root = directory + "/list-\(size)"
            let store = try SurveyStore.create(at: root, deviceName: "Benchmark")
            let start = now()
            let ids = try StoreTrees.replicate(
                into: root, count: size, contents: contents, seed: UInt64(size))
            log(String(format: "list: store of %d documents written in %.1f s", size, seconds(since: start)))
            // Listed once as `survey list` does (which also writes the summary cache).
            let listed = try SurveyStore.openForReading(at: root, refreshingSummaryCache: true).documents()
                .count
            guard listed == size else {
                throw BenchmarkError("the generated store does not list \(size) documents")
            }
            // A fixed sample, spread over the whole store.
            let step = max(1, size / sizes.openSample)
            stores.append(
                (
                    size, store, root,
                    stride(from: 0, to: size, by: step).prefix(sizes.openSample).map { ids[$0] }
                ))
        }
        // The kernel's write-back of the new trees must not run during the timings.
        Glibc.sync()
        let covered = sizes.listSizes.count > 1 ? sizes.listSizes[1] : sizes.listSizes[0]
        var results = stores.map {
            ListResult(
                documents: $0.size, listPerDocument: [], coldListPerDocument: [], conflictsPerDocument: [],
                openPerDocument: [],
                floorPerDocument: [],
                everyFilePerDocument: [])
        }
        for round in 1...rounds {
            log("list: round \(round) of \(rounds)")
            for (index, entry) in stores.enumerated() {
                // Each pass opens the store afresh (outside the timing), as a new `survey`
                // process does, so that nothing a store remembers from an earlier pass helps.
                let passes = max(1, covered / entry.size)
                // Cold: the summary cache removed first (outside the timing), as on the first
                // `survey list` of a store; the pass reads every document and writes the cache.
                var coldTime = 0.0
                var coldRows = 0
                for _ in 0..<passes {
                    let cache = entry.root + "/" + StoreLayout.summaryCacheFile
                    guard unlink(cache) == 0 || errno == ENOENT else {
                        throw BenchmarkError("cannot remove \(cache)")
                    }
                    let store = try SurveyStore.openForReading(at: entry.root, refreshingSummaryCache: true)
                    let start = now()
                    coldRows += try store.documents().count
                    coldTime += seconds(since: start)
                }
                results[index].coldListPerDocument.append(coldTime / Double(coldRows))
                // Warm: the second and later listings, each using the cache the one before wrote.
                var listTime = 0.0
                var rows = 0
                for _ in 0..<passes {
                    let store = try SurveyStore.openForReading(at: entry.root, refreshingSummaryCache: true)
                    let start = now()
                    rows += try store.documents().count
                    listTime += seconds(since: start)
                }
                results[index].listPerDocument.append(listTime / Double(rows))
                var conflictsTime = 0.0
                var scanned = 0
                for _ in 0..<passes {
                    let store = try SurveyStore.openForReading(at: entry.root, refreshingSummaryCache: true)
                    let start = now()
                    let (documents, _) = try store.documentsReport()
                    let inConflict = documents.filter { !$0.conflicts.isEmpty }
                    conflictsTime += seconds(since: start)
                    guard inConflict.isEmpty else {
                        throw BenchmarkError("a generated document is in conflict")
                    }
                    scanned += documents.count
                }
                results[index].conflictsPerDocument.append(conflictsTime / Double(scanned))
                var openTime = 0.0
                var opened = 0
                for _ in 0..<max(1, covered / max(entry.size, sizes.openSample)) {
                    let store = try SurveyStore.open(at: entry.root)
                    let start = now()
                    for id in entry.sample { _ = try store.open(id) }
                    openTime += seconds(since: start)
                    opened += entry.sample.count
                }
                results[index].openPerDocument.append(openTime / Double(opened))
                var start = now()
                var read = 0
                for _ in 0..<passes { read += try BareCalls.readWinners(of: entry.root + "/Documents") }
                results[index].floorPerDocument.append(seconds(since: start) / Double(read))
                start = now()
                read = 0
                for _ in 0..<passes { read += try BareCalls.readDocuments(of: entry.root + "/Documents") }
                results[index].everyFilePerDocument.append(seconds(since: start) / Double(read))
            }
        }
        return results
    }

    // MARK: Sync

    struct SyncResult {
        var fresh: (ours: Sample, rsync: Sample, rsyncDurable: Sample, rsyncFsync: Sample)
        var edited: (ours: Sample, rsync: Sample, rsyncDurable: Sample, rsyncFsync: Sample)
        /// The fresh sync again with `SURVEYSTORE_NO_SYNCFS=1`: each file and folder
        /// fsynced where the batch is otherwise flushed by one `syncfs`.
        var freshWithoutSyncfs: Sample
    }

    /// `survey sync` of a store of `syncDocuments` documents into an empty store, and
    /// again after `syncEdits` edits, against `rsync -a` over the same trees; against
    /// `rsync -a --fsync`, which fsyncs each file it writes, as `survey sync` makes every
    /// revision durable before it returns; and, for information, against `rsync -a`
    /// followed by `sync -f` on the copy. The fresh sync is also timed with
    /// `SURVEYSTORE_NO_SYNCFS=1` (the batches' fallback, per-file fsyncs), into a store of its own.
    ///
    /// With `freshFileSystems`, the source is written into a fresh file system of its
    /// own, and in each round each of the five targets is a fresh file system of its own,
    /// made before the round's commands are timed; the sync after the edits goes into the
    /// replica the round's fresh sync made, on the same file system, and every target's
    /// file system is unmounted and deleted at the end of the round (when a command
    /// fails, too).
    func sync() throws -> SyncResult {
        let survey = try surveyBinary()
        guard let rsync = findExecutable("rsync") else {
            throw BenchmarkError("rsync is not installed (apt-get install rsync)")
        }
        let root = directory + "/sync"
        // Where a tree named `name` goes: under `root`, or at the top of a fresh file
        // system of its own.
        var fileSystems: [String] = []
        defer {
            for mountPoint in fileSystems.reversed() { try? freshFileSystems?.remove(mountPoint: mountPoint) }
        }
        let place = { (name: String) throws -> String in
            guard let freshFileSystems else { return root + "/" + name }
            let mountPoint = try freshFileSystems.make(name)
            fileSystems.append(mountPoint)
            return mountPoint + "/" + name
        }
        try StoreTrees.makeDirectory(root)
        let sourcePath = try place("source")
        let source = try SurveyStore.create(at: sourcePath, deviceName: "Source")
        let contents = try (0..<3).map {
            try StoreTrees.survey(items: sizes.treeItems, variant: $0).plistData()
        }
        let start = now()
        let ids = try StoreTrees.replicate(
            into: sourcePath, count: sizes.syncDocuments, contents: contents, seed: 7)
        log(
            String(format: "sync: source of %d documents written in %.1f s", ids.count, seconds(since: start))
        )
        var fresh: [[Double]] = [[], [], [], [], []], edited: [[Double]] = [[], [], [], []]
        var editSerial = 0
        for round in 1...rounds {
            log("sync: round \(round) of \(rounds)")
            let sourceFileSystems = fileSystems.count
            defer {
                // The round's file systems go at its end.
                while fileSystems.count > sourceFileSystems {
                    try? freshFileSystems?.remove(mountPoint: fileSystems.removeLast())
                }
            }
            let ourTarget = try place("ours-\(round)"), rsyncTarget = try place("rsync-\(round)")
            let durableTarget = try place("rsync-sync-\(round)")
            let fsyncTarget = try place("rsync-fsync-\(round)")
            let fallbackTarget = try place("ours-no-syncfs-\(round)")
            _ = try SurveyStore.create(at: ourTarget, deviceName: "Target")
            _ = try SurveyStore.create(at: fallbackTarget, deviceName: "Target")
            try StoreTrees.makeDirectory(rsyncTarget)
            try StoreTrees.makeDirectory(durableTarget)
            try StoreTrees.makeDirectory(fsyncTarget)
            let commands = [
                [survey, "sync", ourTarget, "--store", sourcePath],
                [rsync, "-a", "--exclude=*.nosync", sourcePath + "/", rsyncTarget + "/"],
                [
                    "/bin/sh", "-c", "\"$0\" -a --exclude='*.nosync' \"$1/\" \"$2/\" && sync -f \"$2\"",
                    rsync, sourcePath, durableTarget,
                ],
                [rsync, "-a", "--fsync", "--exclude=*.nosync", sourcePath + "/", fsyncTarget + "/"],
            ]
            let fallback = [
                "/usr/bin/env", "SURVEYSTORE_NO_SYNCFS=1", survey, "sync", fallbackTarget, "--store",
                sourcePath,
            ]
            // Which goes first rotates between rounds.
            for (index, seconds) in try timeInTurn(commands + [fallback], first: round).enumerated() {
                fresh[index].append(seconds)
            }
            if round == 1 { try checkSame(sourcePath, fallbackTarget, survey: survey) }
            // Edits on the source: each a durable save through the library.
            for _ in 0..<sizes.syncEdits {
                let id = ids[(editSerial * 7919) % ids.count]
                editSerial += 1
                let edited = try StoreTrees.survey(items: sizes.treeItems, variant: 3 + editSerial)
                try source.save(edited, to: id)
            }
            for (index, seconds) in try timeInTurn(commands, first: round + 1).enumerated() {
                edited[index].append(seconds)
            }
            if round == 1 { try checkSame(sourcePath, ourTarget, survey: survey) }
        }
        return SyncResult(
            fresh: (Sample(fresh[0]), Sample(fresh[1]), Sample(fresh[2]), Sample(fresh[3])),
            edited: (Sample(edited[0]), Sample(edited[1]), Sample(edited[2]), Sample(edited[3])),
            freshWithoutSyncfs: Sample(fresh[4]))
    }

    /// The synced store must list the same winners and verify clean.
    private func checkSame(_ a: String, _ b: String, survey: String) throws {
        let left = try SurveyStore.open(at: a).documents().map {
            [$0.id.uuidString, $0.revision.id.description]
        }
        let right = try SurveyStore.open(at: b).documents().map {
            [$0.id.uuidString, $0.revision.id.description]
        }
        guard left == right else { throw BenchmarkError("after sync the two stores differ") }
        guard try runQuietly([survey, "verify", "--store", b]) == 0 else {
            throw BenchmarkError("survey verify found problems in \(b)")
        }
    }

    /// Times commands one after the other, starting with the one at `first` modulo their
    /// number, each after flushing pending writes (the setup's, and rsync's, which never
    /// fsyncs), so that none pays for another's. Returns the times in `commands` order.
    private func timeInTurn(_ commands: [[String]], first: Int) throws -> [Double] {
        var times = [Double](repeating: 0, count: commands.count)
        for step in 0..<commands.count {
            let index = (first + step) % commands.count
            Glibc.sync()
            // A second pass writes back what the first left in the loop devices' image
            // files, on the file system that holds them.
            if freshFileSystems != nil { Glibc.sync() }
            times[index] = try timeCommand(commands[index])
        }
        return times
    }

    // MARK: Conflicts

    /// Winner and conflicts of one document with `conflictRevisions` revisions:
    /// `graph(of:)` then `winner` and `conflicts`, against the bare floor of listing the
    /// folder and reading every metadata file; and the computation alone on the graph
    /// in memory.
    func conflicts() throws -> (ours: Sample, floor: Sample, compute: Sample, heads: Int) {
        let root = directory + "/conflicts"
        let store = try SurveyStore.create(at: root, deviceName: "Benchmark")
        let content = try StoreTrees.survey(items: sizes.treeItems, variant: 0).plistData()
        let id = try StoreTrees.manyRevisions(
            into: root, revisions: sizes.conflictRevisions, content: content)
        let folder = root + "/Documents/" + id.uuidString.lowercased()
        Glibc.sync()
        let graph = try store.graph(of: id)
        guard graph.revisions.count == sizes.conflictRevisions else {
            throw BenchmarkError("the generated document has \(graph.revisions.count) revisions")
        }
        let heads = graph.heads.count
        var ours: [Double] = [], floor: [Double] = [], compute: [Double] = []
        let repetitions = 5
        for _ in 1...rounds {
            var oursRound: [Double] = [], floorRound: [Double] = [], computeRound: [Double] = []
            for _ in 0..<repetitions {
                // A store opened afresh each time, as by a new process: nothing remembered.
                let fresh = try SurveyStore.open(at: root)
                var start = now()
                let graph = try fresh.graph(of: id)
                let winner = graph.winner, conflicts = graph.conflicts
                oursRound.append(seconds(since: start))
                guard winner != nil, conflicts.count == heads - 1 else {
                    throw BenchmarkError("unexpected conflicts")
                }
                start = now()
                let bytes = try BareCalls.readMetadata(of: folder)
                floorRound.append(seconds(since: start))
                guard bytes > 0 else { throw BenchmarkError("nothing read") }
                start = now()
                _ = (graph.winner, graph.conflicts, graph.isInConflict)
                computeRound.append(seconds(since: start))
            }
            ours.append(median(oursRound))
            floor.append(median(floorRound))
            compute.append(median(computeRound))
        }
        return (Sample(ours), Sample(floor), Sample(compute), heads)
    }
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
}

func findExecutable(_ name: String) -> String? {
    for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
        let path = "\(directory)/\(name)"
        if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    return nil
}

/// Runs a command with its output discarded and returns its exit status.
func runQuietly(_ arguments: [String]) throws -> Int32 {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    // The child takes the default action on the signals that `--fresh-file-systems`
    // ignores in this process (it handles them on a dispatch queue instead).
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for number in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&defaults, number) }
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))
    var pid: pid_t = 0
    let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    let status = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, environ)
    guard status == 0 else {
        throw BenchmarkError("cannot start \(arguments[0]): \(String(cString: strerror(status)))")
    }
    runningChildren.withLock { _ = $0.insert(pid) }
    defer { runningChildren.withLock { _ = $0.remove(pid) } }
    var exitStatus: Int32 = 0
    while waitpid(pid, &exitStatus, 0) < 0 && errno == EINTR {}
    return exitStatus
}

/// The children `runQuietly` is waiting for, which `--fresh-file-systems` stops on a
/// signal before it unmounts the file systems they may be writing to.
let runningChildren = Mutex<Set<pid_t>>([])

/// The wall-clock time of a command that must succeed.
func timeCommand(_ arguments: [String]) throws -> Double {
    let start = now()
    let status = try runQuietly(arguments)
    let elapsed = seconds(since: start)
    guard status == 0 else {
        throw BenchmarkError("\(arguments.joined(separator: " ")) failed with status \(status)")
    }
    return elapsed
}

/// The floors, written with the system calls directly.
enum BareCalls {
    /// Writes `files` into a new folder `temporary` (each written and fsynced), fsyncs
    /// it, renames it to `destination` and fsyncs `parent`: the durable save's floor.
    static func writePackage(
        _ files: [(String, Data)], temporary: String, destination: String, parent: String
    ) throws {
        guard mkdir(temporary, 0o755) == 0 else {
            throw BenchmarkError("mkdir \(temporary): \(String(cString: strerror(errno)))")
        }
        for (name, contents) in files {
            let path = temporary + "/" + name
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o644)
            guard descriptor >= 0 else {
                throw BenchmarkError("open \(path): \(String(cString: strerror(errno)))")
            }
            let written = contents.withUnsafeBytes { write(descriptor, $0.baseAddress!, $0.count) }
            guard written == contents.count, fsync(descriptor) == 0 else {
                throw BenchmarkError("write \(path) failed")
            }
            close(descriptor)
        }
        try fsyncDirectory(temporary)
        guard rename(temporary, destination) == 0 else {
            throw BenchmarkError("rename \(destination): \(String(cString: strerror(errno)))")
        }
        try fsyncDirectory(parent)
    }

    static func fsyncDirectory(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY)
        guard descriptor >= 0 else {
            throw BenchmarkError("open \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else {
            throw BenchmarkError("fsync \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Lists every document folder under `documents` and reads both files of every
    /// package in it: the floor of listing a store. Returns the documents visited.
    static func readDocuments(of documents: String) throws -> Int {
        var count = 0
        var buffer = [UInt8](repeating: 0, count: 65_536)
        for document in try names(in: documents) {
            let folder = documents + "/" + document
            for package in try names(in: folder) where package.hasSuffix(".survey") {
                for file in ["DocumentMetadata.plist", "Survey.plist"] {
                    let descriptor = open(folder + "/" + package + "/" + file, O_RDONLY)
                    guard descriptor >= 0 else { continue }
                    while buffer.withUnsafeMutableBytes({ read(descriptor, $0.baseAddress!, $0.count) }) > 0 {
                    }
                    close(descriptor)
                }
            }
            count += 1
        }
        return count
    }

    /// Lists `Documents/` and every document folder in it, and reads the metadata file of
    /// each document's winner (the package of the highest generation; every generated
    /// document is a chain): the floor of `survey list`. Returns the documents visited.
    static func readWinners(of documents: String) throws -> Int {
        var count = 0
        var buffer = [UInt8](repeating: 0, count: 65_536)
        for document in try names(in: documents) {
            let folder = documents + "/" + document
            var winner: (generation: Int, name: String)?
            for package in try names(in: folder) where package.hasSuffix(".survey") {
                let generation = Int(package.prefix { $0 != "-" }) ?? 0
                if winner == nil || generation > winner!.generation { winner = (generation, package) }
            }
            guard let winner else { continue }
            let descriptor = open(folder + "/" + winner.name + "/DocumentMetadata.plist", O_RDONLY)
            guard descriptor >= 0 else { throw BenchmarkError("cannot open the winner of \(folder)") }
            while buffer.withUnsafeMutableBytes({ read(descriptor, $0.baseAddress!, $0.count) }) > 0 {}
            close(descriptor)
            count += 1
        }
        return count
    }

    /// The names in a folder, without `.` and `..`.
    static func names(in folder: String) throws -> [String] {
        guard let directory = opendir(folder) else { throw BenchmarkError("opendir \(folder)") }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(cString: $0.bindMemory(to: CChar.self).baseAddress!)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Lists `folder` and reads the metadata file of every package in it; returns the
    /// bytes read.
    static func readMetadata(of folder: String) throws -> Int {
        guard let directory = opendir(folder) else { throw BenchmarkError("opendir \(folder)") }
        defer { closedir(directory) }
        var total = 0
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(cString: $0.bindMemory(to: CChar.self).baseAddress!)
            }
            guard name.hasSuffix(".survey") else { continue }
            let descriptor = open(folder + "/" + name + "/DocumentMetadata.plist", O_RDONLY)
            guard descriptor >= 0 else { continue }
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
                if count <= 0 { break }
                total += count
            }
            close(descriptor)
        }
        return total
    }
}
