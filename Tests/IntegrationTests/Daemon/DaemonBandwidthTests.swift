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
