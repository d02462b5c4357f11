import Foundation

/// A survey-shaped document for the codec benchmarks: the items of the survey model,
/// with their kind-specific settings and answers, as a `Codable` type.
struct BenchSurvey: Codable, Equatable {
    var title: String
    var formatVersion: Int
    var created: Date
    var items: [BenchItem]
}

struct BenchItem: Codable, Equatable {
    var id: String
    var title: String
    var kind: String
    var options: [String]?
    var text: String?
    var subtitle: String?
    var minimum: Double?
    var maximum: Double?
    var roundToInteger: Bool?
    var answerIndex: Int?
    var answerText: String?
    var answerDate: Date?
    var answerNumber: Double?
    var answerFlags: [Bool]?
    var tags: [String]
    var modified: Date
}

/// Generates the same document for the same seed and size on every machine.
enum SurveyGenerator {
    private static let words = [
        "visit", "food", "service", "garden", "museum", "staff", "price", "friendly", "clean", "quiet",
        "room",
        "morning", "evening", "coffee", "music", "guide", "parking", "ticket", "view", "again",
    ]

    static func make(items count: Int, seed: UInt64 = 2026) -> BenchSurvey {
        var random = SplitMix(state: seed)
        func sentence(_ length: Int) -> String {
            (0..<length).map { _ in words[Int(random.next() % UInt64(words.count))] }.joined(separator: " ")
        }
        func uuid() -> String {
            let a = random.next(), b = random.next()
            let hex = String(format: "%016llX%016llX", a, b)
            let chars = Array(hex)
            return String(chars[0..<8]) + "-" + String(chars[8..<12]) + "-" + String(chars[12..<16]) + "-"
                + String(chars[16..<20]) + "-" + String(chars[20..<32])
        }
        let kinds = ["binary", "textOnly", "textField", "datePicker", "slider", "picker", "multiTF"]
        var items: [BenchItem] = []
        items.reserveCapacity(count)
        for index in 0..<count {
            let kind = kinds[index % kinds.count]
            var item = BenchItem(
                id: uuid(), title: "Question \(index + 1): " + sentence(8), kind: kind,
                tags: [sentence(1), sentence(1), sentence(1)],
                modified: Date(timeIntervalSince1970: 1_760_000_000 + Double(random.next() % 10_000_000)))
            switch kind {
            case "binary":
                item.options = ["No", "Yes"]
                item.answerIndex = Int(random.next() % 2)
            case "textOnly":
                item.text = sentence(30)
            case "textField":
                item.subtitle = sentence(4)
                item.answerText = sentence(12)
            case "datePicker":
                item.answerDate = Date(
                    timeIntervalSince1970: 1_700_000_000 + Double(random.next() % 100_000_000))
            case "slider":
                item.minimum = 0
                item.maximum = Double(random.next() % 100) + 0.5
                item.roundToInteger = random.next() % 2 == 0
                item.answerNumber = Double(random.next() % 1000) / 16
            case "picker":
                item.options = (0..<5).map { _ in sentence(2) }
                item.answerText = item.options![Int(random.next() % 5)]
            default:
                item.options = (0..<6).map { _ in sentence(2) }
                item.answerFlags = (0..<6).map { _ in random.next() % 2 == 0 }
            }
            items.append(item)
        }
        return BenchSurvey(
            title: "Generated survey of \(count) items", formatVersion: 2,
            created: Date(timeIntervalSince1970: 1_763_600_000), items: items)
    }

    struct SplitMix {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
}
