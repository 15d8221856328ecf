import Foundation
import TestSupport
import Testing

/// The real daemon with `[network] connectivity-check` behind a captive portal (a server that
/// answers the wrong body): a due `any` job is held, `status` reports the daemon's probe
/// verdict (it does not probe itself), and the job runs once, told `full`, when the check
/// answers right.
@Suite(
  .blockingIO,
  .serialized,
  .enabled(if: getuid() == 0, "needs root to create network namespaces"),
  .timeLimit(.minutes(2)))
struct DaemonConnectivityProbeTests {
  @Test func portalHoldsAnyJobAndStatusShowsTheDaemonsVerdict() async throws {
    let network = try ConnectivityProbeTests.Network(body: "login here\n")
    defer { network.remove() }
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let id = "dev.e2e.portal"
    try workspace.writeConfig(
      jobs: """
        [network]
        networkmanager = false
        connectivity-check = { url = "http://192.0.2.254/check", expect = "backgrounder-ok" }

        """
          + daemonShellJob(
            id: id,
            script: "echo \"$BACKGROUNDER_CONNECTIVITY\" >> \(workspace.file("side-effect"))",
            schedule: "once = true", extra: "network = \"any\"\nbudget = \"8s\""))
    let harness = try DaemonHarness(workspace: workspace, namespace: network.client.name)
    defer { harness.cleanUp() }
    _ = try harness.startDaemon()

    let held = try await harness.waitForTask(id, "held behind the portal") {
      $0.lastResult == "retry"
    }
    #expect(workspace.lines(of: "side-effect").isEmpty, "ran behind a captive portal")
    #expect(held.attempt == 0)
    #expect(held.lastReason?.contains("captive portal") == true, "\(String(describing: held))")
    let status = try await harness.status()
    #expect(status.raw.contains("\"connectivity\":\"portal\""), "\(status.raw)")
    #expect(status.raw.contains("\"connectivitySource\":\"probe\""), "\(status.raw)")

    try network.setBody("backgrounder-ok\n")  // the probe retries after 10 s
    try await daemonEventually("the job ran", timeout: .seconds(45), describe: harness.describe()) {
      workspace.lines(of: "side-effect").isEmpty ? nil : true
    }
    _ = try await harness.waitForTask(id, "succeeded") { $0.lastResult == "success" }
    #expect(workspace.lines(of: "side-effect") == ["full"], "ran once, told full")
  }
}
