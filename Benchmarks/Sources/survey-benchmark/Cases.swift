import Foundation
@_spi(Benchmarking) import PropertyList

/// One thing to time. Each case runs in a fresh child process so that its peak memory
/// is its own.
enum BenchmarkCase: String, CaseIterable {
    case readFile = "read-file"
    case saxFloor = "libxml2-sax-floor"
    case oursScan = "ours-scan"
    case oursDecode = "ours-PlistDecoder"
    case oursDecodeKept = "ours-PlistDecoder-result-kept"
    case oursRead = "ours-PropertyList(xml:)"
    case foundationDecode = "Foundation-PropertyListDecoder"
    case foundationRead = "Foundation-PropertyListSerialization-read"
    case pythonRead = "python-plistlib-loads"
    case oursEncode = "ours-PlistEncoder"
    case oursWrite = "ours-xmlData"
    case foundationEncode = "Foundation-PropertyListEncoder"
    case foundationWrite = "Foundation-PropertyListSerialization-write"

    /// Prepares inputs outside the timed region and returns the operation to time.
    func prepare(input: Data) throws -> () throws -> Void {
        switch self {
        case .readFile:
            return {}
        case .saxFloor:
            return { _ = input.withUnsafeBytes { XMLBaseline.saxPass($0) } }
        case .oursScan:
            return { _ = try input.withUnsafeBytes { try XMLBaseline.scanPass($0) } }
        case .oursDecode:
            return { _ = try PlistDecoder().decode(BenchSurvey.self, from: input) }
        case .oursDecodeKept:
            // Each result is kept until the child ends, so that freeing it (which the
            // row above times, and the floor has nothing to do of) is outside the timing.
            let kept = Kept()
            return { kept.values.append(try PlistDecoder().decode(BenchSurvey.self, from: input)) }
        case .oursRead:
            return { _ = try PropertyList(xml: input) }
        case .foundationDecode:
            return { _ = try PropertyListDecoder().decode(BenchSurvey.self, from: input) }
        case .foundationRead:
            return { _ = try PropertyListSerialization.propertyList(from: input, options: [], format: nil) }
        case .pythonRead:
            throw BenchmarkError("python runs in its own process")
        case .oursEncode:
            let model = try PlistDecoder().decode(BenchSurvey.self, from: input)
            return { _ = try PlistEncoder().encode(model) }
        case .oursWrite:
            let tree = try PropertyList(xml: input)
            return { _ = try tree.xmlData() }
        case .foundationEncode:
            let model = try PlistDecoder().decode(BenchSurvey.self, from: input)
            return {
                let encoder = PropertyListEncoder()
                encoder.outputFormat = .xml
                _ = try encoder.encode(model)
            }
        case .foundationWrite:
            let tree = try PropertyListSerialization.propertyList(from: input, options: [], format: nil)
            return {
                _ = try PropertyListSerialization.data(fromPropertyList: tree, format: .xml, options: 0)
            }
        }
    }
}

/// Decoded values held past their timing (``BenchmarkCase/oursDecodeKept``).
final class Kept {
    var values: [BenchSurvey] = []
}

struct BenchmarkError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The timed runs of one case, as the child reports them.
struct Timings: Codable {
    var seconds: [Double]
    /// The child's peak resident memory (`VmHWM`), in bytes, when it can tell.
    var peakBytes: Int?

    var median: Double {
        let sorted = seconds.sorted()
        return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
    }
    var minimum: Double { seconds.min() ?? .nan }
    var maximum: Double { seconds.max() ?? .nan }
}

/// Runs `operation` `repetitions` times after one warm-up run.
func time(repetitions: Int, _ operation: () throws -> Void) rethrows -> Timings {
    try operation()
    var seconds: [Double] = []
    for _ in 0..<repetitions {
        let start = ContinuousClock.now
        try operation()
        let elapsed = ContinuousClock.now - start
        seconds.append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
    return Timings(seconds: seconds, peakBytes: ownPeakResidentBytes())
}

/// This process's peak resident set since it started (`VmHWM` in `/proc/self/status`).
///
/// `ru_maxrss` from `wait4` is not used: on Linux a spawned child inherits the parent's
/// high-water mark at `exec`, which would hide the child's own figure.
func ownPeakResidentBytes() -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        let kilobytes = line.split(separator: " ").compactMap { Int($0) }.first
        return kilobytes.map { $0 * 1024 }
    }
    return nil
}

/// The Python side: `plistlib.loads` timed inside Python.
let pythonScript = """
    import json, plistlib, sys, time
    data = open(sys.argv[1], "rb").read()
    plistlib.loads(data)
    seconds = []
    for _ in range(int(sys.argv[2])):
        start = time.perf_counter()
        plistlib.loads(data)
        seconds.append(time.perf_counter() - start)
    peak = None
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            peak = int(line.split()[1]) * 1024
    print(json.dumps({"seconds": seconds, "peakBytes": peak}))
    """
