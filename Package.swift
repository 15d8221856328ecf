// swift-tools-version: 6.1
import PackageDescription

let package = Package(
  name: "Backgrounder",
  products: [
    .library(name: "Backgrounder", targets: ["Backgrounder"]),
    .library(name: "BackgrounderTesting", targets: ["BackgrounderTesting"]),
    .library(name: "BackgrounderLinux", targets: ["BackgrounderLinux"]),
    .library(name: "Reachability", targets: ["Reachability"]),
    .library(name: "PowerSource", targets: ["PowerSource"]),
    .executable(name: "backgrounder", targets: ["BackgrounderCLI"]),
    // Not API: modules that are no product of their own, for the packages in Benchmarks/ and
    // Fuzz/ (which depend on this one by path) only. The daemon's declarations are `package`
    // (the CLI and the tests are in this package); only what those packages call is `public`.
    .library(name: "_Netlink", targets: ["Netlink"]),
    .library(name: "_BackgrounderDaemon", targets: ["BackgrounderDaemon"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
    .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
    .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    // Property-based tests only (BackgrounderTests, ReachabilityTests).
    .package(url: "https://github.com/x-sheep/swift-property-based", exact: "2.0.1"),
    // `swift package generate-documentation --target Backgrounder` (Backgrounder.docc).
    .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
  ],
  targets: [
    // ThreadSanitizer's acquire/release hooks, weak (no-ops without TSan); seen by Locking only.
    .target(name: "CThreadSanitizer"),
    // `Lock`: `Synchronization.Mutex` with its acquire and release visible to ThreadSanitizer.
    .target(name: "Locking", dependencies: ["CThreadSanitizer"]),
    // `RecentValues`: what was computed for the last few keys (statuses, their JSON).
    .target(name: "Memo"),
    // `Broadcaster`: the one fan-out of values to subscribers (network, power, mounts,
    // destinations, clock changes, the runtime's events, the test kit's fakes).
    .target(name: "Broadcasting"),
    // libnl-3 / libnl-route-3, seen by the Netlink module only.
    .systemLibrary(
      name: "CNetlink", path: "Sources/Conditions/Network/CNetlink",
      pkgConfig: "libnl-route-3.0",
      providers: [.apt(["libnl-3-dev", "libnl-route-3-dev"])]
    ),
    // Safe Swift wrappers over rtnetlink: sockets, message parsing, pcap capture files.
    .target(
      name: "Netlink",
      dependencies: [
        "CNetlink",
        "CSystemShims",
        "Locking",
        "SystemCalls",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "SystemPackage", package: "swift-system"),
      ], path: "Sources/Conditions/Network/Netlink"
    ),
    // Links, addresses and routes -> reachable / metered / primary; live monitor.
    .target(
      name: "Reachability",
      dependencies: [
        "Broadcasting",
        "Locking",
        "Memo",
        "Netlink",
        "SystemCalls",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "SystemPackage", package: "swift-system"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
      ], path: "Sources/Conditions/Network/Reachability"
    ),
    // libsystemd's sd-bus and sd-journal, imported by DBus, NetworkHints, Logind,
    // BackgrounderDaemon and the integration tests only (the targets that import one of those
    // list it too: Swift needs the C module of a module it imports). Not linked: opened on
    // first use (Sources/CSystemdBus/loader.c says why); its headers come from libsystemd-dev.
    .target(name: "CSystemdBus"),
    // libnl-genl-3 (generic netlink), seen by the Nl80211 module only.
    .systemLibrary(
      name: "CGenericNetlink", path: "Sources/Conditions/WifiIdentity/CGenericNetlink",
      pkgConfig: "libnl-genl-3.0",
      providers: [.apt(["libnl-genl-3-dev"])]
    ),
    // nl80211: message parsing, the SSID of each Wi-Fi interface, the live event socket.
    .target(
      name: "Nl80211",
      dependencies: [
        "CGenericNetlink", "SystemCalls", .product(name: "SystemPackage", package: "swift-system"),
      ], path: "Sources/Conditions/WifiIdentity/Nl80211"
    ),
    // The one sd-bus connection: calls, signals checked against their sender, served on an
    // EventLoop with sd-bus's own deadline.
    .target(
      name: "DBus",
      dependencies: [
        "CSystemdBus", "EventLoops", "SystemCalls",
        .product(name: "SystemPackage", package: "swift-system"),
      ]
    ),
    // Link hints for the monitor: NetworkManager over D-Bus, nl80211 SSIDs, connectivity probe.
    .target(
      name: "NetworkHints",
      dependencies: [
        "CSystemdBus",
        "DBus",
        "EventLoops",
        "Locking",
        "Netlink",
        "Nl80211",
        "Reachability",
        "SystemCalls",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        .product(name: "SystemPackage", package: "swift-system"),
      ], path: "Sources/Conditions/NetworkHints/NetworkHints"
    ),
    // /sys/class/power_supply -> external power, charging, battery level; live probe.
    .target(
      name: "PowerSource",
      dependencies: [
        "Broadcasting",
        "CSystemShims",
        "EventLoops",
        "Locking",
        "SystemCalls",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        .product(name: "SystemPackage", package: "swift-system"),
      ], path: "Sources/Conditions/Power/PowerSource"
    ),
    // The runtime: requests, constraints, backoff, gate, dispatcher, durable store. Knows
    // conditions only through protocols: it builds without libnl or any Linux-only C library.
    .target(
      name: "Backgrounder",
      dependencies: [
        // Every fan-out (runtime events, the test kit's fakes) goes through `Broadcaster`.
        "Broadcasting",
        "Locking",
        // The store is opened only when it is a regular file (`openRegularFile`).
        "SystemCalls",
        .product(name: "DequeModule", package: "swift-collections"),
        .product(name: "HeapModule", package: "swift-collections"),
        .product(name: "GRDB", package: "GRDB.swift"),
        // SQLite's C API: the hot upsert's bindings (Statement+Run) and the `status` task list
        // read column by column (TaskStatusQuery), without GRDB's per-value boxing.
        .product(name: "GRDBSQLite", package: "GRDB.swift"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
      ]
    ),
    // Public test kit: manual clock, fake network and power sources, test driver.
    .target(
      name: "BackgrounderTesting",
      dependencies: ["Backgrounder", "Broadcasting", "Locking"]
    ),
    // /proc/self/mountinfo -> which configured mount points are mounted (`requires-mount`).
    conditionSource("MountTable", in: "Mounts"),
    // TCP checks of the `requires-reachable` destinations, per network.
    conditionSource("DestinationChecks", in: "Destinations", adding: ["Reachability"]),
    // Steps of the wall clock and resumes (a timerfd with TFD_TIMER_CANCEL_ON_SET).
    conditionSource("WallClockChanges", in: "Clock", adding: ["CSystemShims"]),
    // systemd-logind: its bus connection, the user's idle hint (`requires-idle`), and
    // PrepareForSleep/PrepareForShutdown.
    conditionSource("Logind", in: "Logind", adding: ["CSystemdBus", "DBus"]),
    // The live Linux condition sources composed as the runtime's inputs (each condition's own
    // module is under Sources/Conditions; this one wires them and re-exports them).
    .target(
      name: "BackgrounderLinux",
      dependencies: [
        "Backgrounder", "Broadcasting", "DBus", "DestinationChecks", "EventLoops", "Locking",
        "Logind", "MountTable", "NetworkHints", "PowerSource", "Reachability", "SystemCalls",
        "WallClockChanges", "CSystemShims", "CSystemdBus",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        .product(name: "SystemPackage", package: "swift-system"),
      ]
    ),
    // The plain system-call shims: prctl, setns, pidfd_open, waitid(WNOWAIT), mallopt, accept4,
    // thread names, and the epoll/eventfd/timerfd headers Swift's Glibc module lacks.
    .target(
      name: "CSystemShims",
      cSettings: [.define("_GNU_SOURCE")]
    ),
    // The one system-call layer: `systemCall` (EINTR retried, errno -> `SystemCallError`) and the
    // one thread starter.
    .target(
      name: "SystemCalls",
      dependencies: [
        "CSystemShims", "Locking", .product(name: "SystemPackage", package: "swift-system"),
      ]
    ),
    // One epoll loop for low-traffic descriptors: the control socket, the clock-change timer;
    // `LoopServing`, a descriptor served until a graceful shutdown (swift-service-lifecycle).
    .target(
      name: "EventLoops",
      dependencies: [
        "CSystemShims", "Locking", "SystemCalls",
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
      ]),
    // The quiet Swift concurrency executors of `status` and the daemon: no Dispatch, no idle
    // wake-ups (custom-executor SPI, Swift 6.3).
    .target(name: "QuietExecutor", dependencies: ["CSystemShims", "Locking", "SystemCalls"]),
    // TOML 1.0 parser for the config file: a document model with the line and column of every
    // key and value; an error, never a crash, on any input (Fuzz/FuzzConfig, tomllib-checked).
    .target(name: "TOML"),
    // The daemon behind `backgrounder run`: config, command workers, control socket, systemd.
    .target(
      name: "BackgrounderDaemon",
      dependencies: [
        "Backgrounder",
        "BackgrounderLinux",
        "Broadcasting",
        "CSystemShims",
        "CSystemdBus",
        "DBus",
        "EventLoops",
        "Locking",
        "Logind",
        "Netlink",
        "NetworkHints",
        "PowerSource",
        "Reachability",
        "SystemCalls",
        "TOML",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "Prometheus", package: "swift-prometheus"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        .product(name: "SystemPackage", package: "swift-system"),
        .product(name: "UnixSignals", package: "swift-service-lifecycle"),
      ]
    ),
    // The thin `backgrounder` executable: argument parsing and output formatting.
    .executableTarget(
      name: "BackgrounderCLI",
      dependencies: [
        "Backgrounder",
        "BackgrounderDaemon",
        "BackgrounderLinux",
        "Locking",
        "Memo",
        "NetworkHints",
        "PowerSource",
        "QuietExecutor",
        "Reachability",
        "SystemCalls",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
      ]
    ),
    // `.cpuBound` and `.blockingIO`: test traits that run a suite on threads of its own, off
    // the cooperative pool (property and differential tests; integration tests).
    .target(name: "TestSupport", dependencies: ["CTestSupport"], path: "Tests/TestSupport"),
    // `opendir`/`readdir`/`closedir` of the test executable, exported so that Foundation's
    // `Process.run()` reads `/proc/self/fd` through them and cannot read past glibc's buffer
    // (see its file).
    .target(
      name: "CTestSupport", path: "Tests/CTestSupport",
      linkerSettings: [
        .unsafeFlags([
          "-Xlinker", "--export-dynamic-symbol=opendir", "-Xlinker",
          "--export-dynamic-symbol=readdir", "-Xlinker", "--export-dynamic-symbol=closedir",
        ])
      ]),
    .testTarget(name: "MemoTests", dependencies: ["Memo"]),
    .testTarget(name: "BroadcastingTests", dependencies: ["Broadcasting", "Locking"]),
    .testTarget(
      name: "NetlinkTests", dependencies: ["Netlink"],
      path: "Sources/Conditions/Network/Tests/NetlinkTests"),
    .testTarget(
      name: "ReachabilityTests",
      dependencies: [
        "Locking", "Reachability", "SystemCalls", "TestSupport",
        .product(name: "PropertyBased", package: "swift-property-based"),
      ], path: "Sources/Conditions/Network/Tests/ReachabilityTests"
    ),
    .testTarget(
      name: "PowerSourceTests", dependencies: ["Locking", "PowerSource", "TestSupport"],
      path: "Sources/Conditions/Power/Tests/PowerSourceTests"),
    .testTarget(
      name: "Nl80211Tests", dependencies: ["Nl80211"],
      path: "Sources/Conditions/WifiIdentity/Tests/Nl80211Tests"),
    .testTarget(
      name: "NetworkHintsTests",
      dependencies: [
        "DBus", "NetworkHints", "Reachability", "SystemCalls",
        .product(name: "SystemPackage", package: "swift-system"),
      ], path: "Sources/Conditions/NetworkHints/Tests/NetworkHintsTests"),
    .testTarget(
      name: "MountTableTests",
      dependencies: [
        "Backgrounder", "MountTable", .product(name: "Logging", package: "swift-log"),
      ],
      path: "Sources/Conditions/Mounts/Tests/MountTableTests"),
    .testTarget(
      name: "DestinationChecksTests", dependencies: ["Backgrounder", "DestinationChecks"],
      path: "Sources/Conditions/Destinations/Tests/DestinationChecksTests"),
    .testTarget(
      name: "WallClockChangesTests",
      dependencies: [
        "Locking", "WallClockChanges", .product(name: "Logging", package: "swift-log"),
      ],
      path: "Sources/Conditions/Clock/Tests/WallClockChangesTests"),
    .testTarget(
      name: "LogindTests", dependencies: ["Backgrounder", "CSystemdBus", "Logind"],
      path: "Sources/Conditions/Logind/Tests/LogindTests"),
    .testTarget(
      name: "BackgrounderTests",
      dependencies: [
        "Backgrounder", "BackgrounderTesting", "Locking", "TestSupport",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "PropertyBased", package: "swift-property-based"),
      ]
    ),
    .testTarget(name: "TOMLTests", dependencies: ["TOML"]),
    .testTarget(
      name: "QuietExecutorTests", dependencies: ["QuietExecutor", "SystemCalls", "TestSupport"]),
    .testTarget(
      name: "EventLoopsTests",
      dependencies: [
        "CSystemShims", "EventLoops", "Locking", "SystemCalls", "TestSupport",
        "CTestSupport",
      ]),
    .testTarget(
      name: "BackgrounderDaemonTests",
      dependencies: [
        "BackgrounderDaemon", "BackgrounderLinux", "BackgrounderTesting", "Locking",
        "NetworkHints", "SystemCalls", "TestSupport", "TOML",
      ]),
    // The executable's own parts: `status` output encoding (one-shot and
    // `--watch --json` lines).
    .testTarget(name: "BackgrounderCLITests", dependencies: ["BackgrounderCLI"]),
    // Real network namespaces, real child processes, the real `backgrounder` binary.
    .testTarget(
      name: "IntegrationTests",
      dependencies: [
        "Reachability", "PowerSource", "Backgrounder", "BackgrounderLinux", "BackgrounderTesting",
        "BackgrounderDaemon", "EventLoops", "Locking", "NetworkHints", "ResurrectionChild",
        "StallingDaemon", "Netlink", "TestSupport",
        // sd-bus, for BusSignalsTests' own connection.
        "CSystemdBus", "DBus",
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
      ]
    ),
    // Child process of IntegrationTests/ResurrectionTests (killed with SIGKILL mid-run).
    .executableTarget(
      name: "ResurrectionChild",
      dependencies: ["Backgrounder"],
      path: "Tests/ResurrectionChild"
    ),
    // The daemon with a stuck dispatch loop, for IntegrationTests' watchdog test.
    .executableTarget(
      name: "StallingDaemon",
      dependencies: [
        "Backgrounder", "BackgrounderDaemon", "Locking",
        .product(name: "Logging", package: "swift-log"),
      ],
      path: "Tests/StallingDaemon"
    ),
  ]
)

// The shipped binary (`Scripts/package` sets BACKGROUNDER_PACKAGE=1) is linked with the
// toolchain's lld, for the layout flags that script passes (see the script).
if Context.environment["BACKGROUNDER_PACKAGE"] == "1",
  let executable = package.targets.first(where: { $0.name == "BackgrounderCLI" })
{
  executable.linkerSettings = [.unsafeFlags(["-use-ld=lld"])]
}

/// The module of a condition's live source, in Sources/Conditions/FOLDER/NAME: it gives the
/// runtime its values through `Backgrounder`'s source protocol (published by a `Broadcaster`),
/// serves its descriptors on an `EventLoop` and runs as a `Service`.
func conditionSource(
  _ name: String, in folder: String, adding dependencies: [Target.Dependency] = []
) -> Target {
  .target(
    name: name,
    dependencies: [
      "Backgrounder", "Broadcasting", "EventLoops", "Locking", "SystemCalls",
      .product(name: "Logging", package: "swift-log"),
      .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
      .product(name: "SystemPackage", package: "swift-system"),
    ] + dependencies,
    path: "Sources/Conditions/\(folder)/\(name)")
}
