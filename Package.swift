// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "SurveyStore",
    platforms: [.macOS(.v13)],
    products: [
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
    ],
    targets: [
        .systemLibrary(
            name: "CLibXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"]), .brew(["libxml2"])]
        ),
        .target(
            name: "PropertyList",
            dependencies: ["CLibXML2"]
        ),
        .target(name: "CSystemShims"),
        // Test support: a simulated disk that loses power at a chosen system call.
        .target(
            name: "PackagesTesting",
            dependencies: ["Packages"]
        ),
        .target(
            name: "Packages",
            dependencies: ["CSystemShims"]
        ),
        .target(
            name: "Versions",
            dependencies: [
                "PropertyList",
                "Packages",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "Surveys",
            dependencies: ["PropertyList", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .target(
            name: "SurveyStore",
            dependencies: ["Surveys", "Versions", "Packages", "PropertyList"]
        ),
        .executableTarget(
            name: "survey",
            dependencies: [
                "PropertyList",
                "SurveyStore",
                "Surveys",
                "Versions",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Shared by the test targets: seeded randomness.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(
            name: "PropertyListTests",
            dependencies: ["PropertyList", "TestSupport"]
        ),
        .testTarget(
            name: "PackagesTests",
            dependencies: ["Packages", "PackagesTesting"]
        ),
        .testTarget(
            name: "VersionsTests",
            dependencies: ["Versions", "Packages"]
        ),
        .testTarget(
            name: "SurveyStoreTests",
            dependencies: ["SurveyStore", "Surveys", "Versions", "Packages", "PackagesTesting", "TestSupport"]
        ),
        .testTarget(
            name: "SurveysTests",
            dependencies: ["Surveys", "TestSupport"]
        ),
        .testTarget(
            name: "SurveyCommandTests",
            dependencies: ["survey", "SurveyStore", "Versions", "Surveys", "PropertyList", "TestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
