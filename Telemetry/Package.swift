// swift-tools-version: 6.1
import PackageDescription

// The OTLP/HTTP exporter of `[telemetry]`, `backgrounder-otlp-export`: Debian's libcurl (the
// system CA store, proxies, HTTP/2) and a protobuf encoder of its own for the two messages it
// sends. A package of its own (as Benchmarks/ and Fuzz/) so that the daemon's package does not
// need libcurl's headers; it has no Swift package dependency. The daemon starts the built
// exporter as a contained child process when its telemetry outbox holds rows (docs/daemon.md,
// [telemetry]); Scripts/package ships it next to `backgrounder`. From the repository root:
//   swift build --package-path Telemetry [-c release]
//   swift test --package-path Telemetry       (the encoder's unit tests)
let package = Package(
  name: "BackgrounderTelemetry",
  platforms: [.macOS(.v15)],
  products: [
    .executable(name: "backgrounder-otlp-export", targets: ["OTLPExport"])
  ],
  targets: [
    // One POST with libcurl (C: curl_easy_setopt is variadic, which Swift cannot call).
    .target(
      name: "CCurlPost",
      path: "Sources/CCurlPost",
      linkerSettings: [.linkedLibrary("curl")]
    ),
    // The encoder and the batch model, without libcurl: what the unit tests exercise.
    .target(name: "OTLPEncoding", path: "Sources/OTLPEncoding"),
    .executableTarget(
      name: "OTLPExport",
      dependencies: ["CCurlPost", "OTLPEncoding"],
      path: "Sources/OTLPExport"
    ),
    .testTarget(
      name: "OTLPExportTests",
      dependencies: ["OTLPEncoding"],
      path: "Tests/OTLPExportTests"
    ),
  ]
)
