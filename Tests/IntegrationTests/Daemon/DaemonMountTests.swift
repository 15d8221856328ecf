import Foundation
import TestSupport
import Testing

/// The real daemon in a private mount namespace (`unshare -m --propagation private`): jobs with
/// `requires-mount` follow what the test mounts and unmounts in that namespace (`nsenter -m`),
/// seen through `/proc/self/mountinfo`. What each step does:
/// - a tmpfs mounted at the path: the path is a mount point, the held job runs;
/// - a bind mount at the path: a mount point too (mountinfo lists it), the job runs;
/// - the path replaced by a symbolic link to a mounted directory: not mounted (mountinfo lists
///   the target, and the path is compared as written, no link followed);
/// - `umount -l` while the job's working directory keeps the mount busy: the mount leaves the
///   namespace's table at once, so the path is not mounted and the running job is stopped
///   (a retry, no attempt used) even though the detached file system lives on until released.
@Suite(
  .blockingIO,
  .enabled(
    if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")
      && FileManager.default.isExecutableFile(atPath: "/usr/bin/nsenter"),
    "needs root, unshare and nsenter to make a private mount namespace"),
  .timeLimit(.minutes(2)))
struct DaemonMountTests {
  @Test("held until mounted (tmpfs, bind), not for a symlink; a lazy unmount stops the run")
  func followsTheMountTable() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(
      workspace: workspace, daemonWrapper: ["/usr/bin/unshare", "-m", "--propagation", "private"])
    defer { harness.cleanUp() }
    let backup = workspace.file("backup")
    let elsewhere = workspace.file("elsewhere")
    let bound = workspace.file("bound")
    for directory in [backup, elsewhere, bound] {
      try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
    }
    func job(_ id: String, _ path: String, _ script: String) -> String {
      daemonShellJob(
        id: id, script: script, schedule: "once = true",
        extra: "requires-mount = \"\(path)\"\nbudget = \"2m\"")
    }
    try workspace.writeConfig(
      jobs: job("dev.e2e.mount.held", backup, "echo ran >> \(workspace.file("held"))")
        + job(
          "dev.e2e.mount.long", backup,
          "cd \(backup) && echo start >> \(workspace.file("long")) && exec sleep 60")
        + job("dev.e2e.mount.barrier", elsewhere, "echo ran >> \(workspace.file("barrier"))")
        + job("dev.e2e.mount.bind", bound, "echo ran >> \(workspace.file("bind"))"))
    let daemon = try harness.startDaemon()
    func inNamespace(_ arguments: String...) throws {
      try run(["/usr/bin/nsenter", "-t", "\(daemon.pid)", "-m", "--"] + arguments)
    }

    let held = try await harness.waitForTask("dev.e2e.mount.held", "held for the mount") {
      $0.state == "blocked" && $0.predicateKinds == ["mounted"]
    }
    #expect(held.attempt == 0)

    // The path replaced by a symlink to a mounted directory: still not mounted. The barrier
    // job (waiting for that directory) running shows the daemon read the changed table.
    try FileManager.default.removeItem(atPath: backup)
    try FileManager.default.createSymbolicLink(atPath: backup, withDestinationPath: elsewhere)
    try inNamespace("/usr/bin/mount", "-t", "tmpfs", "tmpfs", elsewhere)
    try await daemonEventually("the barrier job", describe: harness.describe()) {
      workspace.lines(of: "barrier").isEmpty ? nil : true
    }
    #expect(workspace.lines(of: "held").isEmpty, "a symlink is not a mount point")
    #expect(try await harness.status().task("dev.e2e.mount.held")?.state == "blocked")

    // A bind mount is a mount point.
    try inNamespace("/usr/bin/mount", "--bind", elsewhere, bound)
    try await daemonEventually("the bind job", describe: harness.describe()) {
      workspace.lines(of: "bind").isEmpty ? nil : true
    }

    // A tmpfs at the path: both jobs waiting for it run.
    try FileManager.default.removeItem(atPath: backup)
    try FileManager.default.createDirectory(atPath: backup, withIntermediateDirectories: false)
    let mountedAt = Date()
    try inNamespace("/usr/bin/mount", "-t", "tmpfs", "tmpfs", backup)
    let ran = try await harness.waitForTask("dev.e2e.mount.held", "ran once mounted") {
      $0.lastResult == "success"
    }
    #expect(workspace.lines(of: "held") == ["ran"])
    if let started = ran.recentRuns.first(where: { $0.startedAt != nil })?.startedAt
      .flatMap(DaemonTaskStatus.date)
    {
      // From before `nsenter mount` was spawned: an upper bound (logged, not asserted).
      print("mount → run started: \(Int(started.timeIntervalSince(mountedAt) * 1000)) ms")
    }
    try await daemonEventually("the long job's start", describe: harness.describe()) {
      workspace.lines(of: "long").isEmpty ? nil : true
    }

    // A lazy unmount of the busy mount: not mounted any more, the run is stopped (retry).
    try inNamespace("/usr/bin/umount", "-l", backup)
    let stopped = try await harness.waitForTask("dev.e2e.mount.long", "stopped by the unmount") {
      $0.lastReason == "stopped: unmounted" && $0.predicateKinds == ["mounted"]
    }
    #expect(stopped.attempt == 0, "a stop for a lost condition uses no attempt")
    #expect(stopped.lastResult == "retry")
    #expect(stopped.recentRuns.contains { $0.outcome == "stopped" && $0.reason == "unmounted" })

    // Mounted again: the job runs again.
    try inNamespace("/usr/bin/mount", "-t", "tmpfs", "tmpfs", backup)
    try await daemonEventually("the second start", describe: harness.describe()) {
      workspace.lines(of: "long").count == 2 ? true : nil
    }
    #expect(daemon.isRunning)
  }

  private func run(_ arguments: [String]) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: arguments[0])
    process.arguments = Array(arguments.dropFirst())
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
      let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      throw DaemonHarnessError("`\(arguments.joined(separator: " "))` failed: \(output)")
    }
  }
}
