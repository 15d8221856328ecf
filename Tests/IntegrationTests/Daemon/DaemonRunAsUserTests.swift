import Foundation
import TestSupport
import Testing

/// `user = "nobody"` against the real daemon running as root: the job runs as uid 65534 (the
/// files it creates are owned by it, its environment names it), while its output still reaches
/// the daemon's store through the daemon's pipe.
@Suite(.blockingIO, .timeLimit(.minutes(2)))
struct DaemonRunAsUserTests {
  /// `nobody`'s uid on Debian and most distributions.
  static let nobody: uid_t = 65534

  static var canSwitch: Bool { geteuid() == 0 && getpwnam("nobody")?.pointee.pw_uid == nobody }

  @Test(
    "a job with user = nobody runs as uid 65534 with its HOME, USER and LOGNAME",
    .enabled(if: canSwitch, "needs root and a `nobody` user with uid 65534"))
  func runsAsTheUser() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    // A directory only uid 65534 may write: the job's files go there.
    let drop = workspace.file("drop")
    try FileManager.default.createDirectory(atPath: drop, withIntermediateDirectories: false)
    #expect(chown(drop, Self.nobody, gid_t(Self.nobody)) == 0 && chmod(drop, 0o700) == 0)
    let home = String(cString: try #require(getpwnam("nobody")?.pointee.pw_dir))
    let id = "dev.e2e.as-nobody"
    try workspace.writeConfig(
      jobs: daemonShellJob(
        id: id,
        script: "id -u > \(drop)/ids; id -g >> \(drop)/ids; "
          + "printf 'HOME=%s\\nUSER=%s\\nLOGNAME=%s\\n' \"$HOME\" \"$USER\" \"$LOGNAME\" "
          + "> \(drop)/env; echo written as $(id -un)",
        schedule: "once = true", extra: "user = \"nobody\"\ngroup = \"65534\""))
    let config = workspace.configPath
    _ = try harness.startDaemon(environment: ["HOME": "/root", "USER": "root", "LOGNAME": "root"])
    let task = try await harness.waitForTask(id, "the run to end") { $0.lastResult != nil }
    #expect(task.lastResult == "success", "\(harness.describe())")

    var info = stat()
    #expect(stat(drop + "/ids", &info) == 0, "the job wrote its file")
    #expect(info.st_uid == Self.nobody && info.st_gid == gid_t(Self.nobody), "\(info)")
    #expect(workspace.lines(of: "drop/ids") == ["65534", "65534"])
    #expect(
      workspace.lines(of: "drop/env") == ["HOME=\(home)", "USER=nobody", "LOGNAME=nobody"])

    // The output went through the daemon's pipe into the store, as for any run.
    let history = try await harness.cli("history", id, "--json", "--config", config)
    #expect(history.stdout.contains("written as nobody"), "\(history)")
  }

  @Test(
    "a job whose user does not exist is a config error naming it; the daemon does not start",
    .enabled(if: geteuid() == 0, "the daemon runs as root here"))
  func unknownUserIsRefused() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    try workspace.writeConfig(
      jobs: daemonShellJob(
        id: "dev.e2e.ghost", script: "true", schedule: "once = true",
        extra: "user = \"bg-no-such-user\""))
    let check = try await harness.cli("doctor", "--config", workspace.configPath)
    #expect(check.status != 0, "\(check)")
    #expect(
      (check.stdout + check.stderr).contains("user \"bg-no-such-user\" does not exist"),
      "\(check)")
  }
}
