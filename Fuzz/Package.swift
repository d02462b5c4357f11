// swift-tools-version: 6.0
import PackageDescription

// The survey decoder's libFuzzer target, built by `Fuzz/run survey` with
// `swift build --sanitize fuzzer --sanitize address`. It lives apart from the main
// package so that its instrumented build never slows down the tests. (The reader's
// target, ReaderFuzzer.swift, is built by swiftc directly from the PropertyList sources.)
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
        )
    ],
    swiftLanguageModes: [.v6]
)
