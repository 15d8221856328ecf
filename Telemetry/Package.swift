// swift-tools-version: 6.1
import PackageDescription

// The OTLP/HTTP exporter of `[telemetry]`, in a package of its own (as Benchmarks/ and Fuzz/),
// so that building Backgrounder compiles none of swift-otel's dependencies (swift-nio,
// swift-nio-ssl, async-http-client, swift-protobuf). The daemon starts the built
// `backgrounder-otlp-export` as a contained child process when its telemetry outbox holds rows
// (docs/daemon.md, [telemetry]); Scripts/package ships it next to `backgrounder`. From the
// repository root:
//   swift build --package-path Telemetry [-c release]
let package = Package(
  name: "BackgrounderTelemetry",
  platforms: [.macOS(.v15)],
  products: [
    .executable(name: "backgrounder-otlp-export", targets: ["OTLPExport"])
  ],
  dependencies: [
    // OTLP/HTTP only: the OTLPGRPC trait (grpc-swift) stays off.
    .package(url: "https://github.com/swift-otel/swift-otel", exact: "1.6.0", traits: ["OTLPHTTP"])
  ],
  targets: [
    .executableTarget(
      name: "OTLPExport",
      dependencies: [.product(name: "OTel", package: "swift-otel")],
      path: "Sources/OTLPExport"
    )
  ]
)
