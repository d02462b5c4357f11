import Foundation

/// The store rows' results, turned into table rows.
struct StoreReport {
    var sizes: StoreSizes
    var save: (ours: Sample, floor: Sample, layer: Sample)?
    var list: [StoreBenchmarks.ListResult]?
    var sync: StoreBenchmarks.SyncResult?
    var conflicts: (ours: Sample, floor: Sample, compute: Sample, heads: Int)?
    var merge: (ours: Sample, read: Sample, contested: Int)?

    private static func duration(_ seconds: Double) -> String {
        switch seconds {
        case ..<1e-3: String(format: "%.1f µs", seconds * 1e6)
        case ..<1: String(format: "%.2f ms", seconds * 1e3)
        default: String(format: "%.2f s", seconds)
        }
    }

    /// "median (min–max)" of a sample.
    static func describe(_ sample: Sample) -> String {
        "\(duration(sample.median)) (\(duration(sample.minimum))–\(duration(sample.maximum)))"
    }

    /// A row whose ratio is ours over the baseline, with an upper limit as the target
    /// (or none, for a row given for information).
    static func ratioRow(
        _ name: String, ours: Sample, baselineName: String, baseline: Sample, limit: Double?, unit: String
    ) -> Report.Row {
        let ratio = ours.median / baseline.median
        return Report.Row(
            name: name, ours: describe(ours), oursSeconds: ours.median,
            baseline: "\(baselineName): \(describe(baseline))",
            baselineSeconds: baseline.median, ratio: ratio,
            ratioText: String(format: "%.2f× %@", ratio, unit),
            target: limit.map { String(format: "≤ %.2f× %@", $0, unit) } ?? "–",
            met: limit.map { ratio <= $0 })
    }

    var rows: [Report.Row] {
        var rows: [Report.Row] = []
        if let save {
            rows.append(
                Self.ratioRow(
                    "save: durable save, \(sizes.saveItems) items, SurveyStore.save", ours: save.ours,
                    baselineName: "bare write+fsync, mkdir, rename, dir fsync", baseline: save.floor,
                    limit: 1.25, unit: "the floor"))
            rows.append(
                Self.ratioRow(
                    "save: the revision layer alone (bytes already encoded)", ours: save.layer,
                    baselineName: "the same floor", baseline: save.floor, limit: nil, unit: "the floor"))
        }
        if let list, let smallest = list.first {
            for result in list.dropFirst() {
                let limit = result.documents == list.last?.documents ? 1.3 : nil
                rows.append(
                    Self.ratioRow(
                        "list: per document at \(result.documents.formatted()) documents",
                        ours: Sample(result.listPerDocument),
                        baselineName: "at \(smallest.documents.formatted())",
                        baseline: Sample(smallest.listPerDocument), limit: limit,
                        unit: "at \(smallest.documents.formatted())"))
            }
            for result in list.dropFirst() {
                let limit = result.documents == list.last?.documents ? 1.3 : nil
                rows.append(
                    Self.ratioRow(
                        "open winner: per document at \(result.documents.formatted())",
                        ours: Sample(result.openPerDocument),
                        baselineName: "at \(smallest.documents.formatted())",
                        baseline: Sample(smallest.openPerDocument), limit: limit,
                        unit: "at \(smallest.documents.formatted())"))
            }
            for result in list.dropFirst() {
                rows.append(
                    Self.ratioRow(
                        "floor (readdirs + winner's metadata): per document at \(result.documents.formatted())",
                        ours: Sample(result.floorPerDocument),
                        baselineName: "at \(smallest.documents.formatted())",
                        baseline: Sample(smallest.floorPerDocument), limit: nil,
                        unit: "at \(smallest.documents.formatted())"))
            }
            // Against the floor, each kind of pass at every size; the target holds at 1,000
            // documents and above (the quick run's 100 is shown too).
            let floorRows: [(label: String, ours: (StoreBenchmarks.ListResult) -> [Double], limit: Double?)] =
                [
                    ("list (warm)", \.listPerDocument, 1.5),
                    ("list, cold (no summary cache; writes it)", \.coldListPerDocument, nil),
                    ("conflicts scan (warm)", \.conflictsPerDocument, 1.5),
                ]
            for row in floorRows {
                for result in list {
                    rows.append(
                        Self.ratioRow(
                            "\(row.label) vs the floor at \(result.documents.formatted())",
                            ours: Sample(row.ours(result)), baselineName: "readdirs + winner's metadata",
                            baseline: Sample(result.floorPerDocument),
                            limit: result.documents >= 1_000 ? row.limit : nil, unit: "the floor"))
                }
            }
            for result in list {
                rows.append(
                    Self.ratioRow(
                        "list vs reading every file at \(result.documents.formatted())",
                        ours: Sample(result.listPerDocument),
                        baselineName: "readdirs + read every file",
                        baseline: Sample(result.everyFilePerDocument), limit: nil,
                        unit: "of it"))
            }
        }
        if let sync {
            rows.append(
                Self.ratioRow(
                    "sync: \(sizes.syncDocuments.formatted()) documents into an empty store, survey sync",
                    ours: sync.fresh.ours,
                    baselineName: "rsync -a", baseline: sync.fresh.rsync, limit: 1, unit: "rsync"))
            rows.append(
                Self.ratioRow(
                    "sync: \(sizes.syncDocuments.formatted()) documents into an empty store, survey sync",
                    ours: sync.fresh.ours,
                    baselineName: "rsync -a --fsync", baseline: sync.fresh.rsyncFsync, limit: 0.5,
                    unit: "rsync --fsync"))
            rows.append(
                Self.ratioRow(
                    "sync: again after \(sizes.syncEdits) edits, survey sync", ours: sync.edited.ours,
                    baselineName: "rsync -a", baseline: sync.edited.rsync, limit: 0.5, unit: "rsync"))
            rows.append(
                Self.ratioRow(
                    "sync: again after \(sizes.syncEdits) edits, survey sync", ours: sync.edited.ours,
                    baselineName: "rsync -a --fsync", baseline: sync.edited.rsyncFsync, limit: nil,
                    unit: "rsync --fsync"))
            rows.append(
                Self.ratioRow(
                    "sync: \(sizes.syncDocuments.formatted()) documents into an empty store, survey sync",
                    ours: sync.fresh.ours,
                    baselineName: "rsync -a then sync -f", baseline: sync.fresh.rsyncDurable, limit: nil,
                    unit: "rsync+sync"))
            rows.append(
                Self.ratioRow(
                    "sync: again after \(sizes.syncEdits) edits, survey sync", ours: sync.edited.ours,
                    baselineName: "rsync -a then sync -f", baseline: sync.edited.rsyncDurable, limit: nil,
                    unit: "rsync+sync"))
            rows.append(
                Self.ratioRow(
                    "syncfs: \(sizes.syncDocuments.formatted()) documents into an empty store, survey sync (syncfs)",
                    ours: sync.fresh.ours,
                    baselineName: "the same, SURVEYSTORE_NO_SYNCFS=1 (per-file fsyncs)",
                    baseline: sync.freshWithoutSyncfs, limit: nil, unit: "per-file fsyncs"))
        }
        if let conflicts {
            rows.append(
                Self.ratioRow(
                    "conflicts: \(sizes.conflictRevisions.formatted()) revisions (\(conflicts.heads) heads), graph+winner+conflicts",
                    ours: conflicts.ours, baselineName: "bare readdir + read of every metadata file",
                    baseline: conflicts.floor, limit: nil,
                    unit: "the floor"))
            rows.append(
                Self.ratioRow(
                    "conflicts: winner and conflicts alone, graph in memory", ours: conflicts.compute,
                    baselineName: "the full row above", baseline: conflicts.ours, limit: nil, unit: "of it"))
        }
        if let merge {
            rows.append(
                Self.ratioRow(
                    "merge: 3 heads of a \(sizes.mergeItems.formatted())-item survey (base, read, merge)",
                    ours: merge.ours,
                    baselineName: "reading those 4 revisions' content", baseline: merge.read, limit: 1.5,
                    unit: "the read"))
        }
        return rows
    }
}

/// Formats rows as the command's table.
func formatTable(_ rows: [Report.Row]) -> [String] {
    let header = ["row", "ours", "baseline (same run)", "ratio", "target", "met"]
    let body = rows.map { row in
        [
            row.name, row.ours, row.baseline, row.ratioText, row.target,
            row.met.map { $0 ? "met" : "MISSED" } ?? "",
        ]
    }
    let widths = header.indices.map { column in ([header] + body).map { $0[column].count }.max() ?? 0 }
    func format(_ cells: [String]) -> String {
        zip(cells, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(
            separator: " | ")
    }
    return [format(header), widths.map { String(repeating: "-", count: $0) }.joined(separator: "-|-")]
        + body.map(format)
}
