// swift-tools-version: 6.1
import PackageDescription

// The benchmarks, in a package of their own (as swift-nio keeps its `Benchmarks/`), so that
// building Backgrounder compiles none of them. From the repository root:
//   swift run --package-path Benchmarks -c release NAME [ARGUMENTS]
// (the benchmarks look for `.build/release/backgrounder` and `Fixtures/` from there). Measured
// figures: BENCHMARKS.md; every earlier one: Benchmarks/HISTORY.md.
let package = Package(
  name: "BackgrounderBenchmarks",
  dependencies: [
    .package(name: "Backgrounder", path: ".."),
    .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
  ],
  targets: [
    // What the `status --watch` benchmarks share: the watched child, namespaces, strace counts.
    .target(name: "BenchmarkSupport", path: "BenchmarkSupport"),
    .executableTarget(
      name: "ReachabilityBenchmark",
      dependencies: [
        "BenchmarkSupport",
        .product(name: "Reachability", package: "Backgrounder"),
        .product(name: "_Netlink", package: "Backgrounder"),
      ],
      path: "ReachabilityBenchmark"
    ),
    .executableTarget(
      name: "NetworkManagerBenchmark",
      dependencies: ["BenchmarkSupport"],
      path: "NetworkManagerBenchmark"
    ),
    .executableTarget(
      name: "PowerBenchmark",
      dependencies: [
        .product(name: "PowerSource", package: "Backgrounder"),
        .product(name: "Logging", package: "swift-log"),
      ],
      path: "PowerBenchmark"
    ),
    .executableTarget(
      name: "ConfigBenchmark",
      dependencies: [.product(name: "_BackgrounderDaemon", package: "Backgrounder")],
      path: "ConfigBenchmark"
    ),
    .executableTarget(
      name: "StoreBenchmark",
      dependencies: [
        .product(name: "Backgrounder", package: "Backgrounder"),
        .product(name: "BackgrounderTesting", package: "Backgrounder"),
      ],
      path: "StoreBenchmark"
    ),
  ]
)
