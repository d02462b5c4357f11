// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "SurveyStore",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "Diagnostics", targets: ["Diagnostics"]),
        .library(name: "PropertyList", targets: ["PropertyList"]),
        .library(name: "Surveys", targets: ["Surveys"]),
        .library(name: "Packages", targets: ["Packages"]),
        .library(name: "Versions", targets: ["Versions"]),
        .library(name: "SurveyStore", targets: ["SurveyStore"]),
        .executable(name: "survey", targets: ["survey"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        // `swift package generate-documentation`, which CI runs with warnings as errors.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CLibXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"]), .brew(["libxml2"])]
        ),
        // The one error shape every module's errors conform to.
        .target(name: "Diagnostics"),
        .target(
            name: "PropertyList",
            dependencies: ["CLibXML2", "Diagnostics"]
        ),
        .target(name: "CSystemShims"),
        // Test support: a simulated disk that loses power at a chosen system call.
        .target(
            name: "PackagesTesting",
            dependencies: ["Packages"]
        ),
        .target(
            name: "Packages",
            dependencies: ["CSystemShims", "Diagnostics"]
        ),
        .target(
            name: "Versions",
            dependencies: [
                "Diagnostics",
                "PropertyList",
                "Packages",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "Surveys",
            dependencies: ["Diagnostics", "PropertyList", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .target(
            name: "SurveyStore",
            dependencies: ["Diagnostics", "Surveys", "Versions", "Packages", "PropertyList"]
        ),
        .executableTarget(
            name: "survey",
            dependencies: [
                "SurveyStore", "Packages", "CSystemShims",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The app README's "Using the library" tells, built with warnings as errors so that
        // every snippet compiles under Swift 6 strict concurrency without a warning.
        .executableTarget(
            name: "ExampleApp",
            dependencies: ["SurveyStore", "PropertyList"],
            path: "Examples/ExampleApp",
            swiftSettings: [.unsafeFlags(["-warnings-as-errors"])]
        ),
        // Shared by every test target: seeded randomness, the process runner, tools on PATH.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(
            name: "PropertyListTests",
            dependencies: ["PropertyList", "TestSupport"]
        ),
        .testTarget(
            name: "PackagesTests",
            dependencies: ["Packages", "PackagesTesting", "TestSupport"]
        ),
        .testTarget(
            name: "VersionsTests",
            dependencies: ["Versions", "Packages", "TestSupport"]
        ),
        .testTarget(
            name: "SurveyStoreTests",
            dependencies: [
                "SurveyStore", "Surveys", "Versions", "Packages", "PackagesTesting", "TestSupport",
            ]
        ),
        .testTarget(
            name: "SurveysTests",
            dependencies: ["Surveys", "TestSupport"]
        ),
        .testTarget(
            name: "SurveyCommandTests",
            dependencies: [
                "survey", "SurveyStore", "Versions", "Packages", "Surveys", "PropertyList", "TestSupport",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
