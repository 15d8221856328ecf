// swift-tools-version: 6.1
import PackageDescription

// The code of docs/library.md, built and tested by CI so that the tutorial always compiles:
//   swift build --package-path Tests/LibraryTutorial --build-tests
//   swift test --package-path Tests/LibraryTutorial --skip-build
// In your own package, depend on Backgrounder by URL or by path (see docs/library.md).
let package = Package(
  name: "PhotoSync",
  dependencies: [
    // `name:` makes `package: "Backgrounder"` below work whatever the folder is called: without
    // it, a path dependency's identity is its folder's name.
    .package(name: "Backgrounder", path: "../.."),
    .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
  ],
  targets: [
    .target(
      name: "PhotoSync",
      dependencies: [
        .product(name: "Backgrounder", package: "Backgrounder"),
        .product(name: "BackgrounderLinux", package: "Backgrounder"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
      ]
    ),
    .testTarget(
      name: "PhotoSyncTests",
      dependencies: [
        "PhotoSync",
        .product(name: "Backgrounder", package: "Backgrounder"),
        .product(name: "BackgrounderTesting", package: "Backgrounder"),
      ]
    ),
  ]
)
