import Foundation
import SurveyStore
import Surveys
import Versions

extension StoreBenchmarks {
    /// `mergePlan` of three heads of a `mergeItems`-item survey (each head changes a
    /// different third of the items, one also moves ten items, one inserts ten), against
    /// reading and decoding the same four revisions (the base and the heads) through the
    /// store. Both open the store afresh, as a new `survey` process would.
    func merge() throws -> (ours: Sample, read: Sample, contested: Int) {
        let root = directory + "/merge"
        let store = try SurveyStore.create(at: root, deviceName: "Benchmark")
        let base = try StoreTrees.survey(items: sizes.mergeItems, variant: 0)
        let (id, first) = try store.create(base)
        var revisions = [first]
        for head in 1...3 {
            let variant = try StoreTrees.survey(items: sizes.mergeItems, variant: head)
            var items = base.items.enumerated().map { index, item in
                index % 3 == head - 1 ? variant.items[index] : item
            }
            if head == 2 {
                let moved = Array(items[0..<10])
                items.removeFirst(10)
                items.insert(contentsOf: moved, at: items.count / 2)
            }
            if head == 3 {
                let extra = try StoreTrees.survey(items: 10, variant: 0, seed: 99).items
                items.insert(contentsOf: extra, at: items.count / 3)
            }
            revisions.append(
                try store.save(try Survey(title: base.title, items: items), to: id, base: first.id))
        }
        let check = try store.mergePlan(id)
        guard let result = check?.result, check?.base?.id == first.id,
            result.survey.items.count == sizes.mergeItems + 10
        else {
            throw BenchmarkError("the merge of the benchmark document is not the expected one")
        }
        var ours: [Double] = [], read: [Double] = []
        let repetitions = 5
        for round in 1...rounds {
            log("merge: round \(round) of \(rounds)")
            var oursRound: [Double] = [], readRound: [Double] = []
            for _ in 0..<repetitions {
                let fresh = try SurveyStore.open(at: root)
                var start = now()
                let plan = try fresh.mergePlan(id)
                oursRound.append(seconds(since: start))
                guard plan?.result != nil else { throw BenchmarkError("no merge") }
                let again = try SurveyStore.open(at: root)
                start = now()
                let graph = try again.graph(of: id)
                var count = 0
                for revision in revisions {
                    count += try again.survey(id, graph.revisions[revision.id]!).items.count
                }
                readRound.append(seconds(since: start))
                guard count > 0 else { throw BenchmarkError("nothing read") }
            }
            ours.append(median(oursRound))
            read.append(median(readRound))
        }
        return (Sample(ours), Sample(read), check?.result?.contested.count ?? 0)
    }
}
