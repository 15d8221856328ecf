import Foundation
import TestSupport
import Testing

/// `alert-after`, `on-stale` and `history` with the real daemon and binary: real runs of a
/// failing command in a real store.
@Suite(.blockingIO, .timeLimit(.minutes(2)))
struct DaemonAlertsTests {
  @Test("a failing job goes stale: hook, doctor, status and metrics say so; history shows its runs")
  func staleJobAndHistory() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    let id = "dev.e2e.stale"
    let metrics = workspace.file("backgrounder.prom")
    let staleEnvironment = workspace.file("stale.env")
    let failures = workspace.file("failures.log")
    try workspace.writeConfig(
      jobs: """
        [metrics]
        file = "\(metrics)"
        [daemon]
        on-failure = ["/bin/sh", "-c", "echo $BACKGROUNDER_RESULT $BACKGROUNDER_TASK_ID >> \(failures)"]

        """
          + daemonShellJob(
            id: id, script: "echo starting; echo disk full >&2; exit 3", schedule: "every = \"1h\"",
            extra: """
              alert-after = "5s"
              on-stale = ["/bin/sh", "-c", "/usr/bin/env > \(staleEnvironment)"]
              """))
    let config = workspace.configPath
    let notify = try NotifySocketListener(directory: workspace.directory)
    defer { notify.stop() }
    _ = try harness.startDaemon(environment: ["NOTIFY_SOCKET": notify.path])
    _ = try await harness.waitForTask(id, "the first run to fail") { $0.lastResult == "failure" }

    // Stale 5 s after its creation: the hook ran with the job's id and why (the failure's
    // reason: with 2 s, a machine loaded by a whole test run started the first run later, and
    // the hook said "it has not run yet").
    let environment = try await daemonEventually("the on-stale hook", describe: harness.describe())
    {
      let lines = workspace.lines(of: "stale.env")
      return lines.contains("BACKGROUNDER_RESULT=stale") ? lines : nil
    }
    #expect(environment.contains("BACKGROUNDER_TASK_ID=\(id)"))
    #expect(
      environment.contains {
        $0.hasPrefix("BACKGROUNDER_REASON=no success for ") && $0.contains("disk full")
      },
      "\(environment)")
    let doctor = try await harness.cli("doctor", "--config", config)
    #expect(doctor.status == 1, "\(doctor)")
    #expect(
      doctor.stdout.contains("problem: health: jobStale (\(id)): no success for"), "\(doctor)")
    try await daemonEventually("STATUS= naming the stale job", describe: harness.describe()) {
      notify.received("STATUS=1 stale job(s): \(id)").isEmpty ? nil : true
    }
    let status = try await harness.status()
    #expect(status.raw.contains("\"kind\":\"jobStale\""), "\(status.raw)")
    // The textfile is rewritten within a second of a change.
    _ = try await daemonEventually("the stale gauge in the textfile", describe: harness.describe())
    {
      let text = (try? String(contentsOfFile: metrics, encoding: .utf8)) ?? ""
      return text.contains("backgrounder_job_stale{job=\"\(id)\"} 1") ? true : nil
    }

    // The [daemon] on-failure hook ran for the failure of the first run, right at start.
    try await daemonEventually("the on-failure hook", describe: harness.describe()) {
      workspace.lines(of: "failures.log") == ["failure \(id)"] ? true : nil
    }

    // history: the stored runs, newest first, with their reasons; -n bounds them.
    let trigger = try await harness.cli("trigger", id, "--config", config)
    #expect(trigger.status == 0, "\(trigger)")
    // Two failed runs. A run given back at start, before its command started, because the
    // network conditions changed meanwhile (the sources answering), is kept as "deferred".
    let history = try await daemonEventually(
      "two failed runs in history", describe: harness.describe()
    ) {
      let result = try await harness.cli("history", id, "--json", "--config", config)
      let document = try JSONDecoder().decode(DaemonHistory.self, from: Data(result.stdout.utf8))
      return document.runs.filter { $0.outcome == "failure" }.count == 2 ? document : nil
    }
    #expect(history.id == id)
    try await daemonEventually("the second on-failure hook", describe: harness.describe()) {
      workspace.lines(of: "failures.log").count == 2 ? true : nil
    }
    for run in history.runs where run.outcome != "deferred" {
      #expect(run.outcome == "failure")
      #expect(run.reason?.hasPrefix("exit status 3: disk full") == true, "\(run)")
      #expect(run.startedAt != nil && (run.durationSeconds ?? -1) >= 0, "\(run)")
    }
    #expect(
      zip(history.runs, history.runs.dropFirst()).allSatisfy { $0.endedAt >= $1.endedAt },
      "newest first")
    let one = try await harness.cli("history", id, "-n", "1", "--json", "--config", config)
    #expect(
      try JSONDecoder().decode(DaemonHistory.self, from: Data(one.stdout.utf8)).runs.count == 1)
    let human = try await harness.cli("history", id, "--config", config)
    #expect(human.status == 0 && human.stdout.contains("failure  attempt 0"), "\(human)")
    let unknown = try await harness.cli("history", "dev.e2e.nothing", "--config", config)
    #expect(unknown.status != 0 && unknown.stderr.contains("no such job"), "\(unknown)")
  }

  @Test("a stale episode's hook runs once, across a daemon restart")
  func staleEpisodeOutlivesARestart() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    let id = "dev.e2e.stale-restart"
    let stale = workspace.file("stale.log")
    let failures = workspace.file("failures.log")
    try workspace.writeConfig(
      jobs: daemonShellJob(
        id: id, script: "exit 3", schedule: "every = \"1h\"",
        extra: """
          alert-after = "2s"
          on-stale = ["/bin/sh", "-c", "echo $BACKGROUNDER_TASK_ID >> \(stale)"]
          on-failure = ["/bin/sh", "-c", "echo $BACKGROUNDER_TASK_ID >> \(failures)"]
          """))
    let first = try harness.startDaemon()
    try await daemonEventually("the on-stale hook", describe: harness.describe()) {
      workspace.lines(of: "stale.log") == [id] ? true : nil
    }
    first.signal(SIGTERM)
    #expect(await first.waitForExit(timeout: .seconds(30)) != nil)

    let notify = try NotifySocketListener(directory: workspace.directory)
    defer { notify.stop() }
    _ = try harness.startDaemon(environment: ["NOTIFY_SOCKET": notify.path])
    try await daemonEventually("STATUS= naming the stale job", describe: harness.describe()) {
      notify.received("STATUS=1 stale job(s): \(id)").isEmpty ? nil : true
    }
    // A job's hooks run one at a time, in order: once the hook of a failure made after the
    // restart has run, a stale hook from the restart's first look would have run before it.
    let failuresBefore = workspace.lines(of: "failures.log").count
    let trigger = try await harness.cli("trigger", id, "--config", workspace.configPath)
    #expect(trigger.status == 0, "\(trigger)")
    try await daemonEventually(
      "the on-failure hook after the restart", describe: harness.describe()
    ) {
      workspace.lines(of: "failures.log").count > failuresBefore ? true : nil
    }
    #expect(workspace.lines(of: "stale.log") == [id], "the on-stale hook ran again")
  }

  @Test(
    "logs without a systemd journal says so and points to history",
    .enabled(if: !FileManager.default.fileExists(atPath: "/run/systemd/journal/socket")))
  func logsWithoutJournal() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    let result = try await harness.cli("logs", "dev.e2e.any")
    #expect(result.status != 0, "\(result)")
    #expect(
      result.stderr.contains("no systemd journal")
        && result.stderr.contains("`backgrounder history dev.e2e.any`"),
      "\(result)")
  }

}
