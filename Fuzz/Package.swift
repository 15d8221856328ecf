// swift-tools-version: 6.1
import PackageDescription

// The libFuzzer targets, in a package of their own so that building Backgrounder compiles none
// of them. Built by `Fuzz/run` with `-sanitize=fuzzer,address` (which reaches the Backgrounder
// modules they test too): `swift build --package-path Fuzz -c release --product TARGET
// -Xswiftc -sanitize=fuzzer,address`.
let backgrounder = "Backgrounder"
let reachability = Target.Dependency.product(name: "Reachability", package: backgrounder)
let targets: [(name: String, dependencies: [Target.Dependency])] = [
  ("FuzzRtnetlink", [.product(name: "_Netlink", package: backgrounder), reachability]),
  ("FuzzCapture", [.product(name: "_Netlink", package: backgrounder), reachability]),
  ("FuzzUevent", [.product(name: "PowerSource", package: backgrounder)]),
  ("FuzzConfig", [.product(name: "_BackgrounderDaemon", package: backgrounder)]),
  (
    "FuzzControl",
    [
      .product(name: "Backgrounder", package: backgrounder),
      .product(name: "_BackgrounderDaemon", package: backgrounder),
    ]
  ),
]

let package = Package(
  name: "BackgrounderFuzz",
  dependencies: [.package(name: backgrounder, path: "..")],
  targets: [.target(name: "FuzzSupport", path: "FuzzSupport")]
    + targets.map { target in
      .executableTarget(
        name: target.name, dependencies: target.dependencies + ["FuzzSupport"], path: target.name,
        swiftSettings: [.unsafeFlags(["-parse-as-library"])])
    }
)
