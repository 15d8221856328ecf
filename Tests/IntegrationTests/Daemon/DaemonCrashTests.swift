import Foundation
import TestSupport
import Testing

/// The real daemon killed with SIGKILL mid-job and stopped with SIGTERM.
@Suite(.blockingIO, .timeLimit(.minutes(2)))
struct DaemonCrashTests {
  @Test("SIGKILL mid-job, restart: the cycle completes exactly once, the interrupted run counted")
  func sigkillMidJob() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    let id = "dev.e2e.crash"
    let log = workspace.file("runs")
    // A run finishes only once `release` exists, which the test creates after the first run's
    // daemon and process group are dead: the killed run can never write `done`, however slow
    // the machine, and the retry finishes at once.
    let release = workspace.file("release")
    try workspace.writeConfig(
      jobs: daemonShellJob(
        id: id,
        script: "echo \"started $BACKGROUNDER_ATTEMPT $$\" >> \(log); "
          + "while [ ! -e \(release) ]; do sleep 0.05; done; echo done >> \(log)",
        schedule: "every = \"1h\"", extra: "backoff = { initial = \"10s\" }"))

    let first = try harness.startDaemon()
    let startedLine = try await daemonEventually(
      "the first run to start", describe: harness.describe()
    ) { workspace.lines(of: "runs").first }
    let fields = startedLine.split(separator: " ")
    let group = try #require(fields.count == 3 ? Int32(fields[2]) : nil, "line: \(startedLine)")
    harness.adoptJobGroup(group)
    #expect(fields[1] == "0", "the first run is attempt 0")

    kill(first.pid, SIGKILL)
    let firstExit = await first.waitForExit(timeout: testEventTimeout)
    #expect(firstExit == SIGKILL && first.process.terminationReason == .uncaughtSignal)
    // The job runs in its own session, so it outlives the daemon; systemd's
    // KillMode=control-group would kill it with the daemon. Do the same.
    #expect(daemonProcessGroupAlive(group), "the job is still running after the daemon died")
    kill(-group, SIGKILL)
    try await daemonEventually("the job's process group to die") {
      daemonProcessGroupAlive(group) ? nil : true
    }
    #expect(workspace.lines(of: "runs").count == 1, "no `done` from the killed run")
    #expect(FileManager.default.createFile(atPath: release, contents: nil))

    _ = try harness.startDaemon()
    let succeeded = try await harness.waitForTask(
      id, "the retried run to succeed", timeout: .seconds(45)
    ) { $0.lastResult == "success" }
    let lines = workspace.lines(of: "runs")
    let starts = lines.filter { $0.hasPrefix("started ") }
    #expect(starts.count == 2, "the interrupted run and one retry: \(lines)")
    #expect(starts.last?.hasPrefix("started 1 ") == true, "the retry is attempt 1: \(lines)")
    #expect(lines.filter { $0 == "done" }.count == 1, "exactly one completion: \(lines)")
    #expect(lines.last == "done", "\(lines)")

    let runs = succeeded.recentRuns.map { "\($0.attempt):\($0.outcome)" }
    #expect(
      Array(runs.prefix(2)) == ["1:success", "0:interrupted"],
      "newest first: \(harness.describe())")
    #expect(succeeded.state == "pending" && succeeded.attempt == 0, "\(harness.describe())")
    let nextRun = try #require(succeeded.nextRunDate, "\(harness.describe())")
    #expect(
      nextRun.timeIntervalSinceNow > 55 * 60, "the next cycle is an hour away: \(nextRun)")

    // Nothing else runs in this cycle: a short window later the file and history are unchanged.
    try await Task.sleep(for: .seconds(2))
    let later = try await harness.status()
    #expect(workspace.lines(of: "runs") == lines)
    #expect(
      later.task(id)?.lastRunStartedAt == succeeded.lastRunStartedAt
        && later.task(id)?.recentRuns.count == succeeded.recentRuns.count,
      "\(harness.describe())")
  }

  @Test("SIGTERM: exit 0 within 10 s, the job's process group gone, the run recorded as retry")
  func sigtermCancelsRunningJob() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    let id = "dev.e2e.sigterm"
    let pidFile = workspace.file("pid")
    try workspace.writeConfig(
      jobs: daemonShellJob(
        id: id, script: "echo $$ > \(pidFile); exec sleep 30", schedule: "once = true"))

    let daemon = try harness.startDaemon()
    let group = try await daemonEventually("the job to start", describe: harness.describe()) {
      workspace.lines(of: "pid").first.flatMap { Int32($0) }
    }
    harness.adoptJobGroup(group)
    _ = try await harness.waitForTask(id, "running") { $0.state == "running" }
    #expect(daemonProcessGroupAlive(group))

    daemon.signal(SIGTERM)
    let exitStatus = await daemon.waitForExit(timeout: testEventTimeout)
    #expect(exitStatus != nil, "the daemon did not exit: \(harness.describe())")
    #expect(
      exitStatus == 0 && daemon.process.terminationReason == .exit, "\(harness.describe())")
    #expect(!daemonProcessGroupAlive(group), "the job's process group outlived the daemon")

    let stopped = try #require(try await harness.status().task(id), "\(harness.describe())")
    #expect(stopped.lastResult == "retry", "\(harness.describe())")
    #expect(stopped.state == "backoff" || stopped.state == "pending", "\(harness.describe())")
    let run = try #require(stopped.recentRuns.first, "\(harness.describe())")
    #expect(
      run.startedAt != nil && run.outcome == "stopped" && run.reason == "shutdown",
      "\(harness.describe())")
  }

  @Test(
    "SIGTERM: a job group that ignores SIGTERM is killed after the grace; the daemon exits with 0")
  func sigtermKillsStubbornJobGroup() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    let id = "dev.e2e.stubborn"
    let pidFile = workspace.file("pid")
    // The shell and its background child both ignore SIGTERM (inherited across exec).
    try workspace.writeConfig(
      jobs: daemonShellJob(
        id: id, script: "trap '' TERM; sleep 60 & echo $$ > \(pidFile); wait",
        schedule: "once = true"))

    // A 5 s grace instead of the default 10 s (the job's default stop-timeout).
    let daemon = try harness.startDaemon(arguments: ["--kill-grace", "5s"])
    let group = try await daemonEventually("the job to start", describe: harness.describe()) {
      workspace.lines(of: "pid").first.flatMap { Int32($0) }
    }
    harness.adoptJobGroup(group)
    _ = try await harness.waitForTask(id, "running") { $0.state == "running" }

    daemon.signal(SIGTERM)
    let exitStatus = await daemon.waitForExit(timeout: testEventTimeout)
    #expect(exitStatus == 0, "exit status 0: \(harness.describe())")
    #expect(!daemonProcessGroupAlive(group), "the job's process group outlived the daemon")
    // The run's record says when the daemon sent SIGKILL after its SIGTERM, by its own clock:
    // after the 5 s grace, and before the default 10 s would have ended.
    let killed = try #require(try await harness.lastRun(id).stop, "\(harness.describe())")
    let seconds = killed.split(separator: " ").dropLast().last.flatMap { Double($0) }
    #expect(killed.hasPrefix("killed with SIGKILL after "), "\(killed)")
    #expect(seconds.map { $0 >= 5 && $0 < 10 } == true, "\(killed)")
    let stopped = try #require(try await harness.status().task(id), "\(harness.describe())")
    #expect(stopped.lastResult == "retry", "\(harness.describe())")
  }
}
