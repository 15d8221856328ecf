import Foundation
import TestSupport
import Testing

/// The real daemon inside a network namespace with two links: `interfaces` follows the primary
/// link (the one with the default route), and moving the default route to a link that is not
/// allowed stops the run (a retry, no attempt used).
@Suite(
  .blockingIO,
  .enabled(if: getuid() == 0, "needs root to create network namespaces"),
  .timeLimit(.minutes(2)))
struct DaemonInterfaceAllowListTests {
  @Test("a job runs on an allowed primary link, waits on another, and is stopped by a switch")
  func followsThePrimaryLink() async throws {
    let sandbox = try NamespaceSandbox.create()
    defer { sandbox.remove() }
    try sandbox.ip("addr", "add", "10.232.0.1/24", "dev", "veth0")
    try sandbox.ip("addr", "add", "10.232.0.2/24", "dev", "veth1")
    try sandbox.ip("link", "set", "veth0", "up")
    try sandbox.ip("route", "add", "default", "via", "10.232.0.2", "dev", "veth0")

    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace, namespace: sandbox.name)
    defer { harness.cleanUp() }
    try workspace.writeConfig(
      jobs: daemonShellJob(
        id: "dev.e2e.iface.long",
        script: "echo start >> \(workspace.file("long")) && exec sleep 60", schedule: "once = true",
        extra: "network = \"any\"\ninterfaces = [\"veth0\"]\nbudget = \"2m\"")
        + daemonShellJob(
          id: "dev.e2e.iface.other", script: "echo ran >> \(workspace.file("other"))",
          schedule: "once = true", extra: "interfaces = [\"eth*\", \"veth1\"]\nbudget = \"8s\""))
    let daemon = try harness.startDaemon()

    try await daemonEventually("the allowed job's start", describe: harness.describe()) {
      workspace.lines(of: "long").isEmpty ? nil : true
    }
    let waiting = try await harness.waitForTask("dev.e2e.iface.other", "waiting for its interface")
    {
      $0.lastResult == "retry" && $0.predicateKinds.contains("networkInterface")
    }
    #expect(waiting.lastReason?.contains("interface eth*, veth1 (now: veth0)") == true)
    #expect(workspace.lines(of: "other").isEmpty)

    // The default route moves to veth1 at once: the first job loses its network, the second runs.
    // One change (`replace`), so the run never sees an offline moment in between.
    try sandbox.ip("route", "replace", "default", "via", "10.232.0.1", "dev", "veth1")
    let stopped = try await harness.waitForTask("dev.e2e.iface.long", "stopped by the switch") {
      $0.lastReason == "stopped: networkNotAllowed"
    }
    #expect(stopped.attempt == 0, "a stop for a lost condition uses no attempt")
    #expect(
      stopped.recentRuns.contains { $0.outcome == "stopped" && $0.reason == "networkNotAllowed" })
    try await daemonEventually("the other job", describe: harness.describe()) {
      workspace.lines(of: "other").isEmpty ? nil : true
    }
    #expect(workspace.lines(of: "long") == ["start"], "not started again on veth1")
    #expect(daemon.isRunning)
  }
}
