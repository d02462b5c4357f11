// swift-tools-version: 6.0
import PackageDescription

// The survey decoders', the metadata readers' and the merge's libFuzzer targets, built by
// `Fuzz/run survey`, `Fuzz/run metadata` and `Fuzz/run merge` with `swift build
// --sanitize fuzzer --sanitize address` (and `-enable-testing`, so that the targets can
// reach the internal calls they check). They live apart from the main package so that their
// instrumented build never slows down the tests. (The reader's target,
// ReaderFuzzer.swift, is built by swiftc directly from the PropertyList sources.)
let package = Package(
    name: "SurveyStoreFuzz",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "SurveyStore", path: "..")
    ],
    targets: [
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
