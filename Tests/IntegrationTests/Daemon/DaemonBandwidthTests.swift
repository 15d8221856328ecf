import BackgrounderDaemon
import Foundation
import TestSupport
import Testing

/// A daemon that cannot enforce bandwidth caps stays correct (the real binary, no namespace
/// needed): a capped job runs uncapped, a `bandwidth-required` one does not start and says why,
/// and `status` (human and JSON) and `doctor` say the caps cannot be enforced. Runs where the
/// daemon could enforce them (a `net_prio` hierarchy mounted) skip it.
@Suite(
  .blockingIO,
  .enabled(
    if: RunShaping.detect(creating: false).unavailableReason != nil,
    "this machine can enforce caps (net_prio mounted, CAP_NET_ADMIN)"),
  .timeLimit(.minutes(2)))
struct DaemonBandwidthTests {
  @Test("caps that cannot be enforced: uncapped run, held required run, status and doctor say so")
  func unenforceableCaps() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    let capped = "dev.e2e.bandwidth.capped"
    let required = "dev.e2e.bandwidth.required"
    try workspace.writeConfig(
      jobs: daemonShellJob(
        id: capped, script: "echo run >> \(workspace.file("capped"))", schedule: "once = true",
        extra: "bandwidth = \"1Mbit\"")
        + daemonShellJob(
          id: required, script: "echo run >> \(workspace.file("required"))",
          schedule: "once = true",
          extra: """
            bandwidth = "1Mbit"
            metered-bandwidth = "500kbit"
            bandwidth-required = true
            backoff = { policy = "linear", initial = "1h" }
            """))
    _ = try harness.startDaemon()

    _ = try await harness.waitForTask(capped, "the uncapped run") { $0.lastResult == "success" }
    #expect(workspace.lines(of: "capped") == ["run"])
    let held = try await harness.waitForTask(required, "the held run") { $0.lastReason != nil }
    #expect(
      held.lastReason?.hasPrefix("bandwidth-required: the cap cannot be enforced (") == true,
      "\(held)")
    #expect(workspace.lines(of: "required").isEmpty, "the required job's command never ran")
    // Declined, not retried: no attempt used (a job with max-attempts would otherwise fail).
    #expect(held.attempt == 0 && held.deferrals >= 1, "\(held)")
    #expect(held.recentRuns.first?.outcome == "deferred", "\(held)")

    let status = try await harness.status()
    #expect(status.raw.contains("\"bandwidthUnenforced\""), "\(status.raw)")
    let human = try await harness.cli("status", "--config", workspace.configPath)
    #expect(
      human.stdout.contains("bandwidth caps cannot be enforced: ")
        && human.stdout.contains("\(capped) run uncapped")
        && human.stdout.contains("\(required) do not start (bandwidth-required)"),
      "\(human.stdout)")
    let doctor = try await harness.cli("doctor", "--config", workspace.configPath)
    #expect(
      doctor.stdout.contains("the bandwidth cap (1Mbit, 500kbit on metered links) cannot be "),
      "\(doctor.stdout)")
  }
}

/// A cap enforced by the kernel, end to end: the real daemon in a network namespace whose link,
/// a veth pair into a second namespace, leads to a receiver that times each upload; runs get a
/// cgroup v2 each (a private cgroup2 mount, `BACKGROUNDER_CGROUP`), so the run's packets are put
/// in its HTB class by the BPF classifier on its cgroup. A capped and an uncapped job send the
/// same payload, one after the other: the capped upload's rate is within ±15 % of the cap, the
/// uncapped one is far above it, and the class is gone once the run ended.
@Suite(
  .blockingIO,
  .enabled(if: getuid() == 0, "needs root to create network namespaces and mount cgroup2"),
  .timeLimit(.minutes(2)))
struct DaemonBandwidthEnforcedTests {
  static let payload = 500_000
  static let cap: Double = 2_000_000

  @Test(
    "bandwidth = \"2Mbit\" on a run cgroup: the upload runs at 2 Mbit/s ±15 %, then the class goes")
  func capOnRunCgroupHoldsTheRate() async throws {
    guard let hierarchy = try TestCgroup.make() else { return }
    defer { hierarchy.remove() }
    let rig = try await UploadRig.make(prefix: "bwcap", subnet: 238, port: 4462)
    defer { rig.remove() }
    let (workspace, harness) = (rig.workspace, rig.harness)
    let send = rig.upload("\(Self.payload)")
    let capped = "dev.e2e.bandwidth.enforced"
    let uncapped = "dev.e2e.bandwidth.free"
    // The uncapped job runs once the capped one succeeded (a file it waits for).
    let cappedDone = workspace.file("capped-done")
    try workspace.writeConfig(
      jobs: """
        [network]
        networkmanager = false
        modemmanager = false

        """
          + daemonShellJob(
            id: capped, script: "/usr/bin/python3 -c '\(send)' && touch \(cappedDone)",
            schedule: "once = true",
            extra: """
              network = "any"
              bandwidth = "2Mbit"
              bandwidth-required = true
              """)
          + daemonShellJob(
            id: uncapped,
            script:
              "while [ ! -e \(cappedDone) ]; do sleep 0.05; done; /usr/bin/python3 -c '\(send)'",
            schedule: "once = true", extra: "network = \"any\""))
    var environment = ProcessInfo.processInfo.environment
    environment["BACKGROUNDER_CGROUP"] = hierarchy.root
    _ = try harness.startDaemon(environment: environment)

    for id in [capped, uncapped] {
      _ = try await harness.waitForTask(id, "\(id) to succeed", timeout: .seconds(30)) {
        $0.lastResult == "success"
      }
    }
    let uploads = rig.uploads
    try #require(uploads.count == 2, "\(uploads)")
    let rates = uploads.map { fields in
      Double(fields[0])! * 8 / max(Double(fields[1])!, 0.000_001)
    }
    print(
      "bandwidth e2e: cap 2 Mbit/s; capped upload "
        + String(format: "%.3f Mbit/s (%+.1f %%)", rates[0] / 1e6, (rates[0] / Self.cap - 1) * 100)
        + String(format: ", uncapped %.1f Mbit/s", rates[1] / 1e6))
    #expect(uploads.allSatisfy { Int($0[0]) == Self.payload }, "\(uploads)")
    #expect(abs(rates[0] / Self.cap - 1) <= 0.15, "capped rate \(rates[0]) bit/s")
    #expect(rates[1] > 5 * Self.cap, "the uncapped upload is not held to the cap: \(rates[1])")
    // The run's class (and the daemon's qdisc with it) went with the run.
    let classes = try tcOutput(rig.client.name, "class", "show", "dev", "veth0")
    #expect(!classes.contains("6267:"), "\(classes)")
    let qdiscs = try tcOutput(rig.client.name, "qdisc", "show", "dev", "veth0")
    #expect(!qdiscs.contains("6267:"), "\(qdiscs)")
    let journal = harness.describe()
    #expect(journal.contains("run's egress capped"), "\(journal)")
  }

  /// `tc ARGS…` in namespace `namespace`: its output.
  private func tcOutput(_ namespace: String, _ arguments: String...) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
    process.arguments = ["netns", "exec", namespace, "tc"] + arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return output
  }
}
