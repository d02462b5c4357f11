import Foundation

/// The comparison table: for each row our figure, the baseline measured in the same
/// run, the ratio, the target and whether it is met.
struct Report {
    var items: Int
    var bytes: Int
    var repetitions: Int
    var rounds: Int
    var results: [BenchmarkCase: ChildResult]
    var byteIdentical: Bool

    struct Row: Encodable {
        var name: String
        var ours: String
        var oursSeconds: Double?
        var baseline: String
        var baselineSeconds: Double?
        var ratio: Double?
        var ratioText: String
        var target: String
        var met: Bool?
    }

    enum Kind { case faster(Double?), withinFloor(Double?), memory, info }

    private func seconds(_ benchmark: BenchmarkCase) -> Double? { results[benchmark]?.timings.median }

    private func describe(_ benchmark: BenchmarkCase) -> String {
        guard let timings = results[benchmark]?.timings else { return "not run" }
        return String(
            format: "%.1f ms (%.1f–%.1f)", timings.median * 1000, timings.minimum * 1000,
            timings.maximum * 1000)
    }

    /// Peak resident memory above the child that only reads the input.
    private func netPeak(_ benchmark: BenchmarkCase) -> Int? {
        guard let peak = results[benchmark]?.peakBytes else { return nil }
        return peak - (results[.readFile]?.peakBytes ?? 0)
    }

    private func speedRow(_ name: String, ours: BenchmarkCase, baseline: BenchmarkCase, kind: Kind) -> Row {
        let a = seconds(ours), b = seconds(baseline)
        var row = Row(
            name: name, ours: describe(ours), oursSeconds: a,
            baseline: "\(baseline.rawValue): \(describe(baseline))",
            baselineSeconds: b, ratio: nil, ratioText: "–", target: "–", met: nil)
        guard let a, let b else { return row }
        switch kind {
        case .faster(let target):
            row.ratio = b / a
            row.ratioText = String(format: "%.2f× faster", b / a)
            if let target {
                row.target = String(format: "≥ %g× faster", target)
                row.met = b / a >= target
            }
        case .withinFloor(let limit):
            row.ratio = a / b
            row.ratioText = String(format: "%.2f× the floor", a / b)
            if let limit {
                row.target = String(format: "≤ %g× the floor", limit)
                row.met = a / b <= limit
            }
        case .memory, .info:
            row.ratio = b / a
            row.ratioText = String(format: "%.2f× faster", b / a)
        }
        return row
    }

    var rows: [Row] {
        var rows = [
            speedRow(
                "decode: PlistDecoder vs PropertyListDecoder", ours: .oursDecode, baseline: .foundationDecode,
                kind: .faster(5)),
            speedRow(
                "decode: PlistDecoder vs bare libxml2 SAX pass", ours: .oursDecode, baseline: .saxFloor,
                kind: .withinFloor(1.6)),
            speedRow(
                "decode (result kept) vs bare libxml2 SAX pass", ours: .oursDecodeKept,
                baseline: .saxFloor, kind: .withinFloor(nil)),
            speedRow(
                "decode: PlistDecoder vs PropertyListSerialization", ours: .oursDecode,
                baseline: .foundationRead, kind: .info),
            speedRow(
                "read: PropertyList(xml:) vs PropertyListSerialization", ours: .oursRead,
                baseline: .foundationRead, kind: .info),
            speedRow(
                "read: reader's scan alone vs bare libxml2 SAX pass", ours: .oursScan, baseline: .saxFloor,
                kind: .withinFloor(2)),
        ]
        if results[.pythonRead] != nil {
            rows.append(
                speedRow(
                    "decode: PlistDecoder vs Python plistlib.loads", ours: .oursDecode, baseline: .pythonRead,
                    kind: .info))
        }
        if let ours = netPeak(.oursDecode), let theirs = netPeak(.foundationDecode) {
            let mb = { (bytes: Int) in String(format: "%.1f MB", Double(bytes) / 1_048_576) }
            rows.append(
                Row(
                    name: "decode: peak memory above reading the file", ours: mb(ours), oursSeconds: nil,
                    baseline: "Foundation-PropertyListDecoder: \(mb(theirs))", baselineSeconds: nil,
                    ratio: Double(ours) / Double(max(theirs, 1)),
                    ratioText: String(format: "%.2f× Foundation's", Double(ours) / Double(max(theirs, 1))),
                    target: "≤ 1× Foundation's", met: ours <= theirs))
        }
        rows += [
            speedRow(
                "encode: PlistEncoder vs PropertyListEncoder", ours: .oursEncode, baseline: .foundationEncode,
                kind: .faster(5)),
            speedRow(
                "write: xmlData() vs PropertyListSerialization", ours: .oursWrite, baseline: .foundationWrite,
                kind: .info),
            Row(
                name: "encode: bytes identical to PropertyListSerialization",
                ours: byteIdentical ? "identical" : "DIFFERENT",
                oursSeconds: nil, baseline: "PropertyListSerialization .xml", baselineSeconds: nil,
                ratio: nil, ratioText: "–",
                target: "identical", met: byteIdentical),
        ]
        return rows
    }

    func table() -> String {
        var lines = [
            String(
                format:
                    "SurveyStore codec benchmark: %d items, %.1f MB of XML; median (min–max) of %d rounds, each case in a fresh process per round, best of %d runs",
                items, Double(bytes) / 1_048_576, rounds, repetitions),
            "",
        ]
        lines += formatTable(rows)
        lines.append("")
        lines.append(
            "Peak memory is each child process's own high-water mark (VmHWM); \"above reading the file\" subtracts the child that only reads the input."
        )
        return lines.joined(separator: "\n")
    }

    struct JSONDocument: Encodable {
        var items: Int
        var bytes: Int
        var repetitions: Int
        var rounds: Int
        var rows: [Row]
        var peakBytes: [String: Int]
    }

    var jsonDocument: JSONDocument {
        let peaks = Dictionary(uniqueKeysWithValues: results.map { ($0.key.rawValue, $0.value.peakBytes) })
        return JSONDocument(
            items: items, bytes: bytes, repetitions: repetitions, rounds: rounds, rows: rows, peakBytes: peaks
        )
    }
}
