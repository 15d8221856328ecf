import Backgrounder
import Foundation
import TestSupport
import Testing

/// `requires-idle` against python-dbusmock's logind on a private bus, with a real daemon: the
/// job waits (and `status` says why) while logind's `IdleHint` is false, runs once the hint
/// has been true for `requires-idle`, and `on-user-return = "stop"` stops the run when the
/// hint turns false again (a retry, no attempt used; it waits for the user again), while
/// `on-user-return = "pause"` freezes its run and thaws it once the user is idle long enough
/// again; `doctor` reports whether logind answers.
@Suite(
  .blockingIO,
  .serialized,
  .enabled(if: LogindMock.isAvailable, "needs dbus-daemon, dbus-send and python3-dbusmock"),
  .timeLimit(.minutes(2)))
struct DaemonUserIdleTests {
  @Test func waitsForTheIdleUserAndStopsWhenTheUserReturns() async throws {
    let setup = try LogindDaemonSetup()
    defer { setup.remove() }
    let (logind, workspace) = (setup.logind, setup.workspace)
    let runs = workspace.file("runs")
    let job = "dev.e2e.idle"
    let pausing = "dev.e2e.idle-pause"
    try workspace.writeConfig(
      jobs: daemonShellJob(
        id: job,
        script: "echo $$ > \(workspace.file("pid")); echo $BACKGROUNDER_ATTEMPT >> \(runs); "
          + "while [ ! -e \(workspace.file("release")) ]; do sleep 0.05; done",
        schedule: "once = true",
        extra: "requires-idle = \"1s\"\non-user-return = \"stop\"")
        + daemonShellJob(
          id: pausing,
          script: "echo $$ > \(workspace.file("pausing.pid")); "
            + "while [ ! -e \(workspace.file("release")) ]; do sleep 0.05; done",
          schedule: "once = true",
          extra: "requires-idle = \"1s\"\non-user-return = \"pause\""))
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    _ = try harness.startDaemon(environment: setup.systemBus)

    // The user is active (the template's IdleHint is false): it waits, and says why.
    let waiting = try await harness.waitForTask(job, "waiting for the idle user") {
      $0.predicateKinds == ["userIdle"] && $0.state == "blocked"
    }
    #expect(waiting.attempt == 0)
    let text = try await harness.cli("status", "--config", workspace.configPath).stdout
    #expect(text.contains("the user idle for 1 s (the user is active)"), "\(text)")
    #expect(!FileManager.default.fileExists(atPath: runs), "it ran with the user active")

    // Idle from now: it runs once the hint has been true for 1 s (the daemon's timer).
    try logind.setIdle(true, sinceMonotonic: LogindMock.monotonicMicroseconds())
    try await daemonEventually("the run to start", describe: harness.describe()) {
      FileManager.default.fileExists(atPath: runs) ? true : nil
    }
    let group = try #require(workspace.lines(of: "pid").first.flatMap { Int32($0) })
    harness.adoptJobGroup(group)
    _ = try await harness.waitForTask(job, "running") { $0.state == "running" }
    let pausingGroup = try await daemonEventually("the pausing job to start") {
      workspace.lines(of: "pausing.pid").first.flatMap { Int32($0) }
    }
    harness.adoptJobGroup(pausingGroup)
    #expect(try String(contentsOfFile: runs, encoding: .utf8) == "0\n")
    try await daemonEventually("the pausing run's sleep lock", describe: harness.describe()) {
      try logind.inhibitors().contains("\"running \(pausing)\"") ? true : nil
    }

    // The user comes back: the run is stopped (its stop signal), as a retry, no attempt used.
    try logind.setIdle(false, sinceMonotonic: LogindMock.monotonicMicroseconds())
    let retried = try await harness.waitForTask(job, "stopped for the user's return") {
      $0.lastResult == "retry"
    }
    #expect(retried.lastReason == "stopped: userReturned", "\(harness.describe())")
    #expect(retried.attempt == 0, "no attempt used: \(harness.describe())")
    #expect(
      retried.recentRuns.contains { $0.outcome == "stopped" && $0.reason == "userReturned" },
      "\(harness.describe())")
    try await daemonEventually("the run's processes to end", describe: harness.describe()) {
      daemonProcessGroupAlive(group) ? nil : true
    }
    let stops = try await harness.cli("history", job, "--json", "--config", workspace.configPath)
    #expect(stops.stdout.contains("\"stop\":\"stopped with SIGTERM\""), "\(stops)")
    // It waits for the idle user again, and ran once.
    _ = try await harness.waitForTask(job, "waiting again") {
      $0.predicateKinds == ["userIdle"] && $0.state == "blocked"
    }
    #expect(try String(contentsOfFile: runs, encoding: .utf8) == "0\n")
    // The pausing job's run is frozen instead (same processes), for the user's return.
    _ = try await harness.waitForTask(pausing, "paused") { $0.state == "paused" }
    let json = try await harness.cli("status", "--json", "--config", workspace.configPath)
    #expect(json.stdout.contains("\"pauseReason\":\"userReturned\""), "\(json.stdout)")
    #expect(daemonProcessGroupAlive(pausingGroup))
    // While paused the run holds no sleep lock; thawed, it takes one again.
    try await daemonEventually("the paused run's lock to go", describe: harness.describe()) {
      try logind.inhibitors().contains("\"running \(pausing)\"") ? nil : true
    }

    // Idle again: after 1 s the paused run is thawed and the stopped one runs again.
    try logind.setIdle(true, sinceMonotonic: LogindMock.monotonicMicroseconds())
    _ = try await harness.waitForTask(pausing, "thawed") { $0.state == "running" }
    try await daemonEventually("the thawed run's lock", describe: harness.describe()) {
      try logind.inhibitors().contains("\"running \(pausing)\"") ? true : nil
    }
    try await daemonEventually("the stopped job's second run", describe: harness.describe()) {
      workspace.lines(of: "runs") == ["0", "0"] ? true : nil
    }
    try Data().write(to: URL(fileURLWithPath: workspace.file("release")))
    for id in [job, pausing] {
      _ = try await harness.waitForTask(id, "finished") { $0.lastResult == "success" }
    }
    let history = try await harness.cli(
      "history", pausing, "--json", "--config", workspace.configPath)
    #expect(
      history.stdout.contains("\"outcome\":\"paused\"")
        && history.stdout.contains("\"outcome\":\"resumed\""), "\(history.stdout)")
    #expect(workspace.lines(of: "pausing.pid").count == 1, "one run, the same processes")

    // doctor asks logind for the hint: an answer is fine, no logind is a problem naming the job.
    let config = ["doctor", "--config", workspace.configPath]
    let answered = try await harness.cli(
      config, environment: setup.systemBus)
    #expect(
      answered.stdout.contains("ok: user idle: systemd-logind tells whether the user is idle"),
      "\(answered)")
    let absent = try await harness.cli(
      config,
      environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(workspace.file("no-bus"))"])
    #expect(absent.status != 0, "\(absent)")
    #expect(
      absent.stdout.contains("problem: user idle: systemd-logind is not available")
        && absent.stdout.contains("\(job), \(pausing) (requires-idle) never run"), "\(absent)")
  }
}
