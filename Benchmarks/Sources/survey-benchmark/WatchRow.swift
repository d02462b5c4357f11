import Foundation
import SurveyStore
import Versions

#if canImport(Glibc)
    import Glibc
#endif

/// The `watch` rows: how soon `store.changes()` reports a revision renamed into place,
/// against a bare inotify watch on the same folder in the same run; and what watching a
/// large store costs to start, in time and memory, against listing it.
struct WatchBenchmarks {
    var directory: String
    var renames: Int
    var documents: Int
    var rounds: Int
    var executable: String
    var log: (String) -> Void

    struct Result {
        /// The consumer on the watch's own thread (`changes.executor`), and the bare watch
        /// timed alongside it.
        var ours: Sample
        var bare: Sample
        /// The consumer on the global concurrent executor (a plain `Task`), and the bare
        /// watch timed alongside it.
        var oursPool: Sample
        var barePool: Sample
        var startup: Sample
        var list: Sample
        var watchPeak: Int
        var listPeak: Int
    }

    func run() throws -> Result {
        let (ours, bare) = try latency(onWatchThread: true)
        let (oursPool, barePool) = try latency(onWatchThread: false)
        let (startup, list, watchPeak, listPeak) = try cost()
        return Result(
            ours: ours, bare: bare, oursPool: oursPool, barePool: barePool, startup: startup, list: list,
            watchPeak: watchPeak, listPeak: listPeak)
    }

    /// Renames `renames` prepared revision packages into one document's folder, one at a
    /// time, and times each until `store.changes()` reports it and until a bare inotify
    /// watch on the folder (`IN_MOVED_TO`, read on its own thread) sees it.
    ///
    /// - Parameter onWatchThread: Whether the consumer task prefers the watch's own thread
    ///   (`changes.executor`) or runs on the global concurrent executor.
    private func latency(onWatchThread: Bool) throws -> (ours: Sample, bare: Sample) {
        let root = directory + "/watch-latency-" + (onWatchThread ? "thread" : "pool")
        let store = try SurveyStore.create(at: root, deviceName: "Benchmark")
        let content = try StoreTrees.survey(items: 7, variant: 0).plistData()
        let (id, first) = try store.create(try StoreTrees.survey(items: 7, variant: 1))
        let folder = root + "/" + StoreLayout.folder(of: id)
        // The packages, written beforehand next to the store (same file system), each a
        // child of the one before.
        let staging = directory + "/watch-staging-" + (onWatchThread ? "thread" : "pool")
        try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: true)
        var clock = HybridClock(wallClock: { 1_900_000_000_000 })
        var parent = first
        var names: [String] = []
        for _ in 0..<(renames * rounds) {
            let metadata = try RevisionMetadata.make(
                documentID: id, parents: [parent], content: content, formatVersion: SurveyStore.formatVersion,
                device: store.device,
                clock: &clock)
            let name = StoreLayout.packageName(metadata.id)
            try FileManager.default.createDirectory(
                atPath: staging + "/" + name, withIntermediateDirectories: false)
            try metadata.plistData().write(
                to: URL(fileURLWithPath: staging + "/" + name + "/" + StoreLayout.metadataFile))
            try content.write(to: URL(fileURLWithPath: staging + "/" + name + "/" + StoreLayout.contentFile))
            names.append(name)
            parent = metadata
        }
        Glibc.sync()
        let seen = Arrivals()
        // Ours.
        let changes = try store.changes()
        let consume = { @Sendable () async in
            do {
                for try await change in changes where change.kind == .revisionAdded {
                    seen.record(ours: StoreLayout.packageName(change.revision!))
                }
            } catch {}
        }
        let consumer =
            onWatchThread
            ? Task(executorPreference: changes.executor, operation: consume) : Task(operation: consume)
        // The bare watch.
        let notify = inotify_init1(Int32(IN_CLOEXEC))
        guard notify >= 0, inotify_add_watch(notify, folder, UInt32(IN_MOVED_TO)) >= 0 else {
            throw BenchmarkError("cannot set up the bare inotify watch")
        }
        let bare = Thread {
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(notify, $0.baseAddress, $0.count) }
                if count <= 0 { return }
                let arrived = ContinuousClock.now
                let stop = buffer.withUnsafeBytes { bytes -> Bool in
                    var offset = 0
                    let header = MemoryLayout<inotify_event>.size
                    while offset + header <= count {
                        let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                        let name = bytes[(offset + header)..<(offset + header + length)].prefix { $0 != 0 }
                        offset += header + length
                        let text = String(decoding: name, as: UTF8.self)
                        if text == "stop" { return true }
                        seen.record(bare: text, at: arrived)
                    }
                    return false
                }
                if stop { return }
            }
        }
        bare.start()
        // The watch's thread names itself once it runs.
        var cpuBefore = Self.feedCPUNanoseconds()
        for _ in 0..<100 where cpuBefore == nil {
            usleep(10_000)
            cpuBefore = Self.feedCPUNanoseconds()
        }
        var oursPerRound: [Double] = []
        var barePerRound: [Double] = []
        for round in 0..<rounds {
            log(
                "watch: latency round \(round + 1) of \(rounds), \(renames) renames, consumer on "
                    + (onWatchThread ? "the watch's thread" : "the global executor"))
            var oursTimes: [Double] = []
            var bareTimes: [Double] = []
            for name in names[(round * renames)..<((round + 1) * renames)] {
                let start = ContinuousClock.now
                guard rename(staging + "/" + name, folder + "/" + name) == 0 else {
                    throw BenchmarkError("cannot rename \(name) into place")
                }
                let (oursAt, bareAt) = try seen.wait(for: name)
                oursTimes.append(Self.seconds(oursAt - start))
                bareTimes.append(Self.seconds(bareAt - start))
                usleep(2_000)
            }
            oursPerRound.append(Sample(oursTimes).median)
            barePerRound.append(Sample(bareTimes).median)
        }
        if let before = cpuBefore, let after = Self.feedCPUNanoseconds() {
            log(
                String(
                    format: "watch: the watch's thread ran %.1f µs per rename",
                    Double(after - before) / 1e3
                        / Double(renames * rounds)))
        }
        consumer.cancel()
        // Ends the bare thread: a name it stops at.
        _ = mkdir(staging + "/stop", 0o755)
        _ = rename(staging + "/stop", folder + "/stop")
        while !bare.isFinished { usleep(1_000) }
        close(notify)
        return (Sample(oursPerRound), Sample(barePerRound))
    }

    /// Starts a watch of a store of `documents` documents in a child process, and lists
    /// the same store in another: the time of each, and each child's peak memory.
    private func cost() throws -> (startup: Sample, list: Sample, watchPeak: Int, listPeak: Int) {
        let root = directory + "/watch-\(documents)"
        _ = try SurveyStore.create(at: root, deviceName: "Benchmark")
        let contents = try (0..<3).map { try StoreTrees.survey(items: 7, variant: $0).plistData() }
        let start = ContinuousClock.now
        _ = try StoreTrees.replicate(
            into: root, count: documents, contents: contents, seed: UInt64(documents) + 7)
        log(
            String(
                format: "watch: store of %d documents written in %.1f s", documents,
                Self.seconds(ContinuousClock.now - start)))
        Glibc.sync()
        var startup: [Double] = []
        var list: [Double] = []
        var watchPeaks: [Int] = []
        var listPeaks: [Int] = []
        for round in 1...rounds {
            log("watch: start-up round \(round) of \(rounds)")
            let watched = try runChild([executable, "--watch-child", "watch", "--input", root])
            startup += watched.timings.seconds
            watchPeaks.append(watched.peakBytes)
            let listed = try runChild([executable, "--watch-child", "list", "--input", root])
            list += listed.timings.seconds
            listPeaks.append(listed.peakBytes)
        }
        return (
            Sample(startup), Sample(list), watchPeaks.sorted()[watchPeaks.count / 2],
            listPeaks.sorted()[listPeaks.count / 2]
        )
    }

    /// In a child: opens the store at `path`, then either starts watching it (`watch`)
    /// or lists it (`list`), and prints the time taken and the peak memory as one line.
    static func child(_ mode: String, path: String) throws {
        let store = try SurveyStore.openForReading(at: path)
        let start = ContinuousClock.now
        var keep: StoreChanges?
        switch mode {
        case "watch": keep = try store.changes()
        case "list": _ = try store.documents()
        default: throw BenchmarkError("unknown watch child \(mode)")
        }
        let elapsed = seconds(ContinuousClock.now - start)
        let timings = Timings(seconds: [elapsed], peakBytes: ownPeakResidentBytes())
        print(String(decoding: try JSONEncoder().encode(timings), as: UTF8.self))
        _ = keep
    }

    /// The CPU time of this process's `store-changes` thread so far (the first field of
    /// its `/proc/self/task/TID/schedstat`); `nil` when there is not exactly one.
    static func feedCPUNanoseconds() -> Int? {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        let feeds = tasks.filter {
            (try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) == "store-changes"
        }
        guard feeds.count == 1,
            let line = try? String(contentsOfFile: "/proc/self/task/\(feeds[0])/schedstat", encoding: .utf8)
        else { return nil }
        return line.split(separator: " ").first.flatMap { Int($0) }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// When each package name was seen by each watcher; the waiting thread sleeps on a
/// condition (not a polling loop), so that it takes no CPU from the watchers it times.
private final class Arrivals: @unchecked Sendable {
    private let condition = NSCondition()
    private var ours: [String: ContinuousClock.Instant] = [:]
    private var bare: [String: ContinuousClock.Instant] = [:]

    func record(ours name: String) {
        let now = ContinuousClock.now
        condition.withLock {
            ours[name] = now
            condition.signal()
        }
    }

    func record(bare name: String, at instant: ContinuousClock.Instant) {
        condition.withLock {
            bare[name] = instant
            condition.signal()
        }
    }

    /// Both arrivals of `name`; fails after ten seconds.
    func wait(for name: String) throws -> (ours: ContinuousClock.Instant, bare: ContinuousClock.Instant) {
        let deadline = Date().addingTimeInterval(10)
        return try condition.withLock {
            while true {
                if let a = ours[name], let b = bare[name] { return (a, b) }
                guard condition.wait(until: deadline) else {
                    throw BenchmarkError("\(name) was not reported within ten seconds")
                }
            }
        }
    }
}
