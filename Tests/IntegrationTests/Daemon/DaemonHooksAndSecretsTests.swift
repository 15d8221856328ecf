import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Issue 40 with the real daemon: hooks that cannot starve each other or the shutdown
/// (findings 8, 9), and secrets kept out of a readable config (finding 2). One daemon.
@Suite(.blockingIO, .timeLimit(.minutes(2)))
struct DaemonHooksAndSecretsTests {
  @Test("hooks bounded, environment-file trusted, a readable config with secrets reported")
  func hooksAndSecrets() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    // Whatever happens, the 5-minute hooks do not outlive the test.
    defer {
      for name in ["flaky.pids", "other.pids"] {
        for pid in workspace.lines(of: name).compactMap({ Int32($0) }) where pid > 1 {
          kill(-pid, SIGKILL)
        }
      }
    }
    let flaky = "dev.e2e.flaky"
    let other = "dev.e2e.other"
    // A hook that records its pid (kept by `exec`), then runs for 5 minutes.
    func slowHook(_ name: String) -> String {
      """
      on-failure = ["/bin/sh", "-c", "echo $$ >> \(workspace.file(name + ".pids")); \
      echo $BACKGROUNDER_TASK_ID >> \(workspace.file(name + ".log")); exec sleep 300"]
      """
    }
    let secret = workspace.file("secret.env")
    try "API_TOKEN=s3cr3t-token\n".write(toFile: secret, atomically: false, encoding: .utf8)
    chmod(secret, 0o600)
    let shared = workspace.file("shared.env")
    try "API_TOKEN=planted\n".write(toFile: shared, atomically: false, encoding: .utf8)
    chmod(shared, 0o620)
    let link = workspace.file("link.env")
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: secret)
    try workspace.writeConfig(
      jobs: daemonShellJob(
        id: flaky, script: "exit 1", schedule: "calendar = \"*-*-* *:*:*\"",
        extra: slowHook("flaky"))
        + daemonShellJob(
          id: other, script: "exit 2", schedule: "every = \"1h\"", extra: slowHook("other"))
        + daemonShellJob(
          id: "dev.e2e.envfile",
          script: "echo \"$API_TOKEN $PLAIN\" > \(workspace.file("envfile.out"))",
          schedule: "every = \"1h\"",
          extra: """
            environment-file = "\(secret)"
            environment = { PLAIN = "inline" }
            """)
        + daemonShellJob(
          id: "dev.e2e.shared", script: "echo \"$API_TOKEN\" > \(workspace.file("shared.out"))",
          schedule: "every = \"1h\"", extra: "environment-file = \"\(shared)\"")
        + daemonShellJob(
          id: "dev.e2e.link", script: "echo \"$API_TOKEN\" > \(workspace.file("link.out"))",
          schedule: "every = \"1h\"", extra: "environment-file = \"\(link)\""))
    let config = workspace.configPath
    chmod(config, 0o644)

    // doctor: the readable config holding an `environment` is a problem naming file, mode, key.
    let exposed = "\(config) is mode 0644 (readable by other users) and holds secrets: "
    let doctor = try await harness.cli("doctor", "--config", config)
    #expect(doctor.status == 1, "\(doctor)")
    #expect(doctor.stdout.contains(exposed + "job \"dev.e2e.envfile\" environment"), "\(doctor)")
    #expect(doctor.stdout.contains("writable by group or others"), "\(doctor)")

    let daemon = try harness.startDaemon()
    // The daemon says it at start too.
    try await daemonEventually("the start warning", describe: harness.describe()) {
      daemon.output.contains(exposed) ? true : nil
    }

    // The flaky job's hook runs (and keeps running); the other job's hook runs beside it.
    let flakyPid = try await daemonEventually(
      "the flaky job's hook", describe: harness.describe()
    ) { workspace.lines(of: "flaky.pids").first.flatMap { Int32($0) } }
    harness.adoptJobGroup(flakyPid)
    let otherPid = try await daemonEventually(
      "the other job's hook beside the flaky one's", describe: harness.describe()
    ) { workspace.lines(of: "other.pids").first.flatMap { Int32($0) } }
    harness.adoptJobGroup(otherPid)
    #expect(workspace.lines(of: "other.log") == [other])
    // The flaky job keeps failing meanwhile: its failures wait as one hook.
    try await daemonEventually("coalesced failures", describe: harness.describe()) {
      daemon.output.contains("events coalesced") ? true : nil
    }
    #expect(workspace.lines(of: "flaky.pids").count == 1, "one flaky hook at a time")

    // environment-file: read at the run; inline `environment` beside it.
    try await daemonEventually("the environment-file job's output", describe: harness.describe()) {
      workspace.lines(of: "envfile.out") == ["s3cr3t-token inline"] ? true : nil
    }
    // Group-writable or a symlink: refused, the run fails naming why, the command never runs.
    let sharedRun = try await harness.waitForTask("dev.e2e.shared", "refused") {
      $0.lastResult == "failure"
    }
    #expect(
      sharedRun.lastReason?.contains("refusing to use \(shared): it is writable by group") == true,
      "\(String(describing: sharedRun.lastReason))")
    let linkRun = try await harness.waitForTask("dev.e2e.link", "refused") {
      $0.lastResult == "failure"
    }
    #expect(
      linkRun.lastReason?.contains(
        "refusing to use \(link): it is a symlink, not a regular file") == true,
      "\(String(describing: linkRun.lastReason))")
    #expect(workspace.lines(of: "shared.out").isEmpty && workspace.lines(of: "link.out").isEmpty)

    // SIGTERM with both hooks running: the daemon exits, the hooks' processes are gone.
    daemon.signal(SIGTERM)
    let status = await daemon.waitForExit(timeout: .seconds(30))
    #expect(status == 0, "\(harness.describe())")
    for pid in [flakyPid, otherPid] {
      #expect(kill(pid, 0) == -1 && errno == ESRCH, "hook \(pid) still there")
    }
    #expect(daemon.output.contains("stopping: hooks cancelled"), "\(harness.describe())")

    // A private config: no such problem.
    chmod(config, 0o600)
    let quiet = try await harness.cli("doctor", "--config", config)
    #expect(!quiet.stdout.contains("holds secrets"), "\(quiet)")
  }
}
