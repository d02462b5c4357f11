// swift-tools-version: 6.0
import PackageDescription

// The libFuzzer targets of the property-list reader, the survey decoders, the metadata
// readers and the merge, built by `Fuzz/run reader|survey|metadata|merge` with `swift build
// --sanitize fuzzer --sanitize address` (and `-enable-testing`, so that the targets can
// reach the internal calls they check). They live apart from the main package so that
// their instrumented build never slows down the tests.
let package = Package(
    name: "SurveyStoreFuzz",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "SurveyStore", path: "..")
    ],
    targets: [
        .executableTarget(
            name: "reader-fuzzer",
            dependencies: [.product(name: "PropertyList", package: "SurveyStore")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
        .executableTarget(
            name: "survey-fuzzer",
            dependencies: [
                .product(name: "Surveys", package: "SurveyStore"),
                .product(name: "PropertyList", package: "SurveyStore"),
            ],
            // libFuzzer supplies main(); the target only defines LLVMFuzzerTestOneInput.
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
        .executableTarget(
            name: "metadata-fuzzer",
            dependencies: [.product(name: "Versions", package: "SurveyStore")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
        .executableTarget(
            name: "merge-fuzzer",
            dependencies: [.product(name: "Surveys", package: "SurveyStore")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
    ],
    swiftLanguageModes: [.v6]
)
