// swift-tools-version: 6.0
import PackageDescription

// The libFuzzer targets of the property-list reader, the survey decoders, the metadata
// readers and the merge, built by `Fuzz/run reader|survey|metadata|merge` with `swift build
// --sanitize fuzzer --sanitize address` (and `-enable-testing`, so that the targets can
// reach the internal calls they check). They live apart from the main package so that
// their instrumented build never slows down the tests.

/// The target `NAME-fuzzer`, using the main package's `products`. libFuzzer supplies
/// main(); the target only defines LLVMFuzzerTestOneInput.
func fuzzer(_ name: String, _ products: [String]) -> Target {
    .executableTarget(
        name: "\(name)-fuzzer",
        dependencies: products.map { .product(name: $0, package: "SurveyStore") },
        swiftSettings: [.unsafeFlags(["-parse-as-library"])]
    )
}

let package = Package(
    name: "SurveyStoreFuzz",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "SurveyStore", path: "..")
    ],
    targets: [
        fuzzer("reader", ["PropertyList"]),
        fuzzer("survey", ["Surveys", "PropertyList"]),
        fuzzer("metadata", ["Versions"]),
        fuzzer("merge", ["Surveys"]),
    ],
    swiftLanguageModes: [.v6]
)
