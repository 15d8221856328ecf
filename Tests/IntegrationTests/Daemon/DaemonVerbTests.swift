import Foundation
import TestSupport
import Testing

/// The operator verbs against the real daemon (through its control socket) and, with no daemon,
/// against the store directly.
@Suite(.blockingIO, .timeLimit(.minutes(2)))
struct DaemonVerbTests {
  @Test("trigger, schedule, cancel and expire reach the running daemon; unknown ids fail")
  func verbsWithDaemon() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    let periodic = "dev.e2e.periodic"
    try workspace.writeConfig(
      jobs: daemonShellJob(
        id: periodic, script: "echo run >> \(workspace.file("periodic"))",
        schedule: "every = \"1h\""))
    let config = workspace.configPath
    let daemon = try harness.startDaemon()

    // The first cycle runs at start; `trigger` runs it again at once.
    _ = try await harness.waitForTask(periodic, "the first run") { $0.lastResult == "success" }
    #expect(workspace.lines(of: "periodic").count == 1)
    let trigger = try await harness.cli("trigger", periodic, "--config", config)
    #expect(trigger.status == 0, "\(trigger)")
    try await daemonEventually("the triggered run", describe: harness.describe()) {
      workspace.lines(of: "periodic").count == 2 ? true : nil
    }

    // `schedule` adds a one-time job that runs.
    let adhoc = "dev.e2e.adhoc"
    let schedule = try await harness.cli(
      "schedule", adhoc, "--once", "--config", config, "--command", "/bin/sh", "-c",
      "echo adhoc >> \(workspace.file("adhoc"))")
    #expect(schedule.status == 0, "\(schedule)")
    let finished = try await harness.waitForTask(adhoc, "the scheduled job to succeed") {
      $0.state == "succeeded"
    }
    #expect(finished.lastResult == "success")
    #expect(workspace.lines(of: "adhoc") == ["adhoc"])

    // `cancel` removes a job that has not run yet.
    let later = "dev.e2e.later"
    let scheduleLater = try await harness.cli(
      "schedule", later, "--once", "--delay", "1h", "--config", config, "--command", "/bin/true")
    #expect(scheduleLater.status == 0, "\(scheduleLater)")
    _ = try await harness.waitForTask(later, "the delayed job in the store") { _ in true }
    let cancel = try await harness.cli("cancel", later, "--config", config)
    #expect(cancel.status == 0, "\(cancel)")
    try await daemonEventually("the cancelled job to leave status", describe: harness.describe()) {
      try await harness.status().task(later) == nil ? true : nil
    }

    // `expire` on a running job: the run is cancelled and recorded as a retry.
    let long = "dev.e2e.long"
    let pidFile = workspace.file("long.pid")
    let scheduleLong = try await harness.cli(
      "schedule", long, "--once", "--config", config, "--command", "/bin/sh", "-c",
      "echo $$ > \(pidFile); exec sleep 60")
    #expect(scheduleLong.status == 0, "\(scheduleLong)")
    let group = try await daemonEventually("the long job to start", describe: harness.describe()) {
      workspace.lines(of: "long.pid").first.flatMap { Int32($0) }
    }
    harness.adoptJobGroup(group)
    _ = try await harness.waitForTask(long, "running") { $0.state == "running" }
    let expire = try await harness.cli("expire", long, "--config", config)
    #expect(expire.status == 0, "\(expire)")
    let expired = try await harness.waitForTask(long, "the expired run recorded") {
      $0.lastResult == "retry"
    }
    #expect(
      expired.lastReason?.localizedCaseInsensitiveContains("expire") == true,
      "\(harness.describe())")
    #expect(expired.state == "backoff", "\(harness.describe())")
    try await daemonEventually("the expired job's process group to die") {
      daemonProcessGroupAlive(group) ? nil : true
    }
    let expireIdle = try await harness.cli("expire", long, "--config", config)
    #expect(expireIdle.status != 0, "expire needs a running attempt: \(expireIdle)")

    // Unknown and invalid ids are refused.
    for verb in ["trigger", "cancel", "expire"] {
      let unknown = try await harness.cli(verb, "dev.e2e.nope", "--config", config)
      #expect(unknown.status != 0, "\(unknown)")
      #expect(unknown.stderr.contains("dev.e2e.nope"), "\(unknown)")
      let invalid = try await harness.cli(verb, "no-dots", "--config", config)
      #expect(invalid.status != 0, "\(invalid)")
    }
    #expect(daemon.isRunning, "\(harness.describe())")
    #expect(workspace.lines(of: "periodic").count == 2, "nothing ran the periodic job again")
  }

  @Test("without a daemon: schedule edits the store, trigger fails with a clear message")
  func verbsWithoutDaemon() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    try workspace.writeConfig(jobs: "")
    let config = workspace.configPath
    let id = "dev.e2e.offline"

    let schedule = try await harness.cli(
      "schedule", id, "--once", "--config", config, "--command", "/bin/sh", "-c",
      "echo offline >> \(workspace.file("offline"))")
    #expect(schedule.status == 0, "\(schedule)")
    #expect(schedule.stdout.contains("no daemon running"), "\(schedule)")
    let stored = try #require(try await harness.status().task(id), "\(harness.describe())")
    #expect(stored.kind == "oneTime" && stored.state == "pending", "\(harness.describe())")
    #expect(stored.lastResult == nil && stored.recentRuns.isEmpty)
    #expect(workspace.lines(of: "offline").isEmpty, "nothing runs without a daemon")

    let trigger = try await harness.cli("trigger", id, "--config", config)
    #expect(trigger.status != 0, "\(trigger)")
    #expect(trigger.stderr.contains("no daemon is running"), "\(trigger)")

    // The stored job runs when the daemon starts.
    _ = try harness.startDaemon()
    let ran = try await harness.waitForTask(id, "the offline-scheduled job to run") {
      $0.state == "succeeded"
    }
    #expect(ran.lastResult == "success")
    #expect(workspace.lines(of: "offline") == ["offline"])
  }
}
