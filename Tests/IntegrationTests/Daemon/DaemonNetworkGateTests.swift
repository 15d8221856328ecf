import Foundation
import TestSupport
import Testing

/// The real daemon inside a network namespace: a job needing the network is deferred by the
/// network gate while no default route exists and runs once one is added.
@Suite(
  .blockingIO,
  .enabled(if: getuid() == 0, "needs root to create network namespaces"),
  .timeLimit(.minutes(2)))
struct DaemonNetworkGateTests {
  @Test("budget 8s: deferred to retry after the 2s gate without a default route; runs with one")
  func gateDefersThenRuns() async throws {
    let sandbox = try NamespaceSandbox.create()
    defer { sandbox.remove() }
    try sandbox.ip("addr", "add", "10.231.0.1/24", "dev", "veth0")
    try sandbox.ip("addr", "add", "10.231.0.2/24", "dev", "veth1")
    try sandbox.ip("link", "set", "veth0", "up")

    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace, namespace: sandbox.name)
    defer { harness.cleanUp() }
    let id = "dev.e2e.gate"
    try workspace.writeConfig(
      jobs: daemonShellJob(
        id: id, script: "echo ran >> \(workspace.file("side-effect"))", schedule: "once = true",
        extra: "network = \"any\"\nbudget = \"8s\""))

    let started = Date()
    let daemon = try harness.startDaemon()
    let deferred = try await harness.waitForTask(id, "deferred by the network gate") {
      $0.lastResult == "retry"
    }
    #expect(deferred.deferrals >= 1, "\(harness.describe())")
    #expect(deferred.attempt == 0, "deferrals use no attempt: \(harness.describe())")
    #expect(
      deferred.predicateKinds.contains("networkRequired")
        || deferred.predicateKinds.contains("waitingForBackoff"), "\(harness.describe())")
    #expect(
      deferred.lastReason?.contains("network gate") == true
        && deferred.lastReason?.contains("within 2 s") == true,
      "gate = min(5 s, budget 8 s / 4): \(harness.describe())")
    let deferral = try #require(
      deferred.recentRuns.first { $0.outcome == "deferred" }, "\(harness.describe())")
    #expect(deferral.startedAt == nil, "the command was never started")
    let deferredAt = try #require(DaemonTaskStatus.date(deferral.endedAt))
    #expect(
      deferredAt.timeIntervalSince(started) >= 2,
      "the gate held the run for 2 s before deferring: \(harness.describe())")
    #expect(
      workspace.lines(of: "side-effect").isEmpty, "the command must not run without a route")
    #expect(daemon.isRunning)

    try sandbox.ip("route", "add", "default", "via", "10.231.0.2", "dev", "veth0")
    try await daemonEventually("the side effect", describe: harness.describe()) {
      workspace.lines(of: "side-effect").isEmpty ? nil : true
    }
    let succeeded = try await harness.waitForTask(id, "success after the route appeared") {
      $0.lastResult == "success"
    }
    #expect(succeeded.state == "succeeded", "\(harness.describe())")
    #expect(workspace.lines(of: "side-effect") == ["ran"])
    #expect(
      succeeded.recentRuns.first?.outcome == "success"
        && succeeded.recentRuns.contains { $0.outcome == "deferred" }, "\(harness.describe())")
  }
}
