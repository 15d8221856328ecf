import Foundation
import TestSupport
import Testing

/// Issue #34, one truth wherever it is asked: `status` run in another network namespace than
/// the daemon's (as a container sharing the socket would) shows the daemon's network and power
/// view, labelled as the daemon's (`"viewOf": "daemon"`), not its own uplink. `--watch` gets it
/// pushed over the daemon's change stream: a route change in the daemon's namespace reaches the
/// watch as a line; while the daemon is away the watch falls back to its own view
/// (`"viewOf": "client"`), and goes back to the daemon's when it answers again.
@Suite(
  .blockingIO,
  .enabled(if: getuid() == 0, "needs root to create network namespaces"),
  .timeLimit(.minutes(2)))
struct DaemonStatusViewTests {
  @Test("status and status --watch --json from another namespace: the daemon's view, pushed")
  func daemonViewFromAnotherNamespace() async throws {
    let sandbox = try NamespaceSandbox.create(prefix: "view")
    defer { sandbox.remove() }
    for (link, subnet) in [("vwhot0", 1), ("vwlan0", 2)] {
      try sandbox.ip("link", "add", link, "type", "veth", "peer", "name", link + "p")
      try sandbox.ip("link", "set", link + "p", "up")
      try sandbox.ip("link", "set", link, "up")
      try sandbox.ip("addr", "add", "10.89.\(subnet).2/24", "dev", link)
    }
    try sandbox.ip("route", "add", "default", "via", "10.89.1.1", "dev", "vwhot0")
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    try workspace.writeConfig(
      jobs: """
        [network]
        metered = ["vwhot*"]
        networkmanager = false
        modemmanager = false

        """)
    // The daemon in the sandbox; the clients below run in this process's namespace.
    let harness = try DaemonHarness(workspace: workspace, namespace: sandbox.name)
    defer { harness.cleanUp() }
    let daemon = try harness.startDaemon()
    try await daemonEventually("the daemon to answer", describe: harness.describe()) {
      try await harness.status().raw.contains("\"running\":true") ? true : nil
    }

    func outside(_ arguments: String...) async throws -> String {
      let name = "outside-\(UUID().uuidString)"
      let child = try DaemonChild(
        [harness.binary] + arguments + ["--config", workspace.configPath],
        outputPath: workspace.file(name + ".out"), errorPath: workspace.file(name + ".err"))
      _ = await child.waitForExit(timeout: .seconds(60))
      return child.output
    }
    let text = try await outside("status")
    #expect(
      text.contains("Network (the daemon's view in net:[")
        && text.contains("reachable via vwhot0") && text.contains("Metered: yes")
        && text.contains("Power (the daemon's view): "),
      "\(text)")
    let json = try await outside("status", "--json")
    #expect(
      json.contains("\"viewOf\":\"daemon\"") && json.contains("\"primary\":\"vwhot0\"")
        && json.contains("\"metered\":true"),
      "\(json)")

    let watch = try DaemonChild(
      [harness.binary, "status", "--watch", "--json", "--config", workspace.configPath],
      outputPath: workspace.file("watch.out"), errorPath: workspace.file("watch.err"))
    defer { watch.terminate() }
    func watched() -> String { watch.output + "\n-- stderr:\n" + watch.errorOutput }
    /// The watch's network lines (not task or daemon changes) from the `skip`th on.
    func viewLines(after skip: Int = 0) -> [String] {
      Array(
        watch.output.split(separator: "\n").map(String.init)
          .filter { $0.contains("\"viewOf\":") }.dropFirst(skip))
    }
    try await daemonEventually("the daemon's view on the watch", describe: watched()) {
      viewLines().contains {
        $0.contains("\"viewOf\":\"daemon\"") && $0.contains("\"primary\":\"vwhot0\"")
          && $0.contains("\"metered\":true")
      } ? true : nil
    }
    #expect(
      !viewLines().contains { $0.contains("\"viewOf\":\"client\"") },
      "the daemon answers: its view, not ours: \(watched())")

    // A change in the daemon's namespace reaches the watch as a line.
    let seen = viewLines().count
    try sandbox.ip("route", "replace", "default", "via", "10.89.2.1", "dev", "vwlan0")
    try await daemonEventually("the daemon's route change on the watch", describe: watched()) {
      viewLines(after: seen).contains {
        $0.contains("\"viewOf\":\"daemon\"") && $0.contains("\"primary\":\"vwlan0\"")
          && $0.contains("\"metered\":false")
      } ? true : nil
    }

    // Away: our own view, labelled as ours; back: the daemon's again.
    let stopped = viewLines().count
    daemon.signal(SIGTERM)
    #expect(await daemon.waitForExit(timeout: .seconds(30)) != nil)
    try await daemonEventually("our own view while the daemon is away", describe: watched()) {
      watch.output.contains("\"daemonChange\":\"stopped\"")
        && viewLines(after: stopped).contains { $0.contains("\"viewOf\":\"client\"") }
        ? true : nil
    }
    let away = viewLines().count
    _ = try harness.startDaemon()
    try await daemonEventually("the daemon's view once it answers again", describe: watched()) {
      viewLines(after: away).contains {
        $0.contains("\"viewOf\":\"daemon\"") && $0.contains("\"primary\":\"vwlan0\"")
      } ? true : nil
    }
    #expect(watch.isRunning, "\(watched())")
  }
}
