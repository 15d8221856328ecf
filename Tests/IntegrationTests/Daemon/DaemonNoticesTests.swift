import Foundation
import TestSupport
import Testing

/// `[notify] desktop = true` with the real daemon and python-dbusmock's notification server on
/// a private session bus: one notice per failure episode and per stale episode, with the job id
/// and the reason (markup escaped); none for a job whose retry succeeds; `doctor` says where
/// notices go.
@Suite(.blockingIO, .timeLimit(.minutes(2)), .enabled(if: NotificationMock.isAvailable))
struct DaemonNoticesTests {
  @Test("one notice per episode for a failing job, none for a retry that succeeds")
  func oneNoticePerEpisode() async throws {
    let bus = try PrivateBus()
    defer { bus.close() }
    let mock = try NotificationMock(bus: bus)
    defer { mock.stop() }
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    let failing = "dev.e2e.notice-fails"
    let retrying = "dev.e2e.notice-retries"
    let failures = workspace.file("failures.log")
    let marker = workspace.file("retried")
    try workspace.writeConfig(
      jobs: """
        [notify]
        desktop = true

        """
          + daemonShellJob(
            id: failing,
            script:
              "echo 'disk full <a href=\"https://x.example/\">fix</a> & <img src=\"file:///etc/shadow\">' >&2; exit 3",
            schedule: "every = \"1h\"",
            extra: """
              alert-after = "3s"
              on-failure = ["/bin/sh", "-c", "echo $BACKGROUNDER_TASK_ID >> \(failures)"]
              """)
          + daemonShellJob(
            id: retrying,
            script: "if [ -e \(marker) ]; then echo done; else touch \(marker); exit 75; fi",
            schedule: "every = \"1h\"", extra: "backoff = { initial = \"10s\" }"))
    let session = ["DBUS_SESSION_BUS_ADDRESS": bus.address]

    let doctor = try DaemonChild(
      [harness.binary, "doctor", "--config", workspace.configPath],
      outputPath: workspace.file("doctor.out"), environment: session)
    _ = await doctor.waitForExit(timeout: .seconds(60))
    #expect(
      doctor.output.contains("ok: notify: desktop notices go to mock-notify test vendor 1.0"),
      "\(doctor.output)")

    _ = try harness.startDaemon(environment: session)
    // The retry succeeds (its first attempt asked for one: exit 75).
    _ = try await harness.waitForTask(retrying, "the retry to succeed", timeout: .seconds(40)) {
      $0.lastResult == "success"
    }
    #expect(FileManager.default.fileExists(atPath: marker), "the first attempt ran")
    // The failing job: one notice for its failure, one when it became stale (3 s).
    let first = try await daemonEventually("two notices", describe: harness.describe()) {
      let calls = try mock.notifyCalls()
      return calls.count >= 2 ? calls : nil
    }
    for call in first {
      #expect(call.contains("string \"backgrounder\""), "app name: \(call)")
      #expect(call.contains(failing), "job id: \(call)")
      #expect(!call.contains(retrying), "no notice for the retry: \(call)")
    }
    // The body is markup to the server: the job's stderr arrives escaped, no link, no image.
    let body =
      "\(failing): exit status 3: disk full &lt;a href=&quot;https://x.example/&quot;&gt;fix"
      + "&lt;/a&gt; &amp; &lt;img src=&quot;file:///etc/shadow&quot;&gt;"
    #expect(first.contains { $0.contains(body) }, "\(first)")
    #expect(first.allSatisfy { !$0.contains("<a href") && !$0.contains("<img") }, "\(first)")
    #expect(first.contains { $0.contains("\(failing): no success for ") }, "\(first)")

    // Two more failures in the same episode: their hooks run, no further notice.
    for _ in 0..<2 {
      let count = workspace.lines(of: "failures.log").count
      let trigger = try await harness.cli("trigger", failing, "--config", workspace.configPath)
      #expect(trigger.status == 0, "\(trigger)")
      try await daemonEventually("the on-failure hook", describe: harness.describe()) {
        workspace.lines(of: "failures.log").count == count + 1 ? true : nil
      }
    }
    // The notices are decided before the hooks are queued: give a wrong one time to arrive.
    try await Task.sleep(for: .seconds(1))
    let all = try mock.notifyCalls()
    #expect(all.count == 2, "\(all)")
    #expect(all.allSatisfy { !$0.contains(retrying) }, "\(all)")
  }

  @Test("doctor notes a session bus without a notification server")
  func doctorWithoutServer() async throws {
    let bus = try PrivateBus()
    defer { bus.close() }
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    try workspace.writeConfig(jobs: "[notify]\ndesktop = true\n")
    let doctor = try DaemonChild(
      [harness.binary, "doctor", "--config", workspace.configPath],
      outputPath: workspace.file("doctor.out"),
      environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
    _ = await doctor.waitForExit(timeout: .seconds(60))
    #expect(
      doctor.output.contains("note: notify: no desktop notification server on the session bus"),
      "\(doctor.output)")
  }
}
