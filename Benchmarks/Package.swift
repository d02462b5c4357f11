// swift-tools-version: 6.0
import PackageDescription

// The benchmark command lives apart from the library so that its dependencies and its
// release-mode build never slow down the main package's tests.
let package = Package(
    name: "SurveyStoreBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "SurveyStore", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        .executableTarget(
            name: "survey-benchmark",
            dependencies: [
                .product(name: "PropertyList", package: "SurveyStore"),
                .product(name: "SurveyStore", package: "SurveyStore"),
                .product(name: "Surveys", package: "SurveyStore"),
                .product(name: "Versions", package: "SurveyStore"),
                .product(name: "Packages", package: "SurveyStore"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
