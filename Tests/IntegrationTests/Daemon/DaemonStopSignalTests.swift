import Foundation
import TestSupport
import Testing

/// `stop-signal` and `stop-timeout` against the real daemon: a stopped run gets the job's
/// signal, then SIGKILL after its timeout, and the run record says which ended it.
@Suite(.blockingIO, .timeLimit(.minutes(2)))
struct DaemonStopSignalTests {
  @Test("a stopped run gets its stop signal, or SIGKILL after its stop timeout; history says which")
  func stopSignalAndTimeout() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    let polite = "dev.e2e.stop-int"
    let stubborn = "dev.e2e.stop-ignored"
    let got = workspace.file("got")
    // The pid is written once the trap is set; the loop's `sleep`s share the group's signal.
    try workspace.writeConfig(
      jobs: daemonShellJob(
        id: polite,
        script: "trap 'echo got INT > \(got); exit 0' INT; trap 'echo got TERM > \(got); exit 0' "
          + "TERM; echo $$ > \(workspace.file("polite.pid")); while :; do sleep 0.1; done",
        schedule: "once = true",
        extra: "stop-signal = \"SIGINT\"\nstop-timeout = \"30s\"\nbackoff = { initial = \"1h\" }")
        + daemonShellJob(
          id: stubborn,
          script: "trap '' TERM; echo $$ > \(workspace.file("stubborn.pid")); "
            + "while :; do sleep 0.1; done",
          schedule: "once = true",
          extra: "stop-timeout = \"1s\"\nbackoff = { initial = \"1h\" }"))
    let config = workspace.configPath
    _ = try harness.startDaemon()

    for (id, pidFile) in [(polite, "polite.pid"), (stubborn, "stubborn.pid")] {
      let group = try await daemonEventually("\(id) to start", describe: harness.describe()) {
        workspace.lines(of: pidFile).first.flatMap { Int32($0) }
      }
      harness.adoptJobGroup(group)
      _ = try await harness.waitForTask(id, "\(id) running") { $0.state == "running" }
      let expire = try await harness.cli("expire", id, "--config", config)
      #expect(expire.status == 0, "\(expire)")
      _ = try await harness.waitForTask(id, "the stopped run of \(id) recorded") {
        $0.lastResult == "retry"
      }
      try await daemonEventually("the process group of \(id) to die") {
        daemonProcessGroupAlive(group) ? nil : true
      }
    }

    // The trapping job got SIGINT (not SIGTERM) and ended on it.
    #expect(workspace.lines(of: "got") == ["got INT"], "\(harness.describe())")
    let politeRun = try await harness.lastRun(polite)
    #expect(politeRun.outcome == "expired", "\(politeRun)")
    #expect(politeRun.stop == "stopped with SIGINT", "\(politeRun)")
    let human = try await harness.cli("history", polite, "--config", config)
    #expect(human.stdout.contains("\n    stopped with SIGINT\n"), "\(human)")

    // The job ignoring SIGTERM was killed with SIGKILL after its 1 s.
    let stubbornRun = try await harness.lastRun(stubborn)
    #expect(stubbornRun.outcome == "expired", "\(stubbornRun)")
    // How long after: at least its 1 s (the upper end depends on the machine's load).
    let killed = try #require(stubbornRun.stop, "\(stubbornRun)")
    #expect(killed.hasPrefix("killed with SIGKILL after "), "\(killed)")
    let seconds = killed.split(separator: " ").dropLast().last.flatMap { Double($0) }
    #expect(seconds.map { $0 >= 1 } == true, "\(killed)")
  }

}
