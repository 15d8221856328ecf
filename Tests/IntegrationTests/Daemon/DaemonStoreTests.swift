import Foundation
import TestSupport
import Testing

extension DaemonHardeningTests {
  /// Store write failures, concurrent offline edits and the `daemon` section of `status`, with
  /// the real binary.
  @Suite(.timeLimit(.minutes(3)))
  struct DaemonStoreTests {
    /// The `daemon` section of `status --json`.
    struct DaemonSection: Decodable {
      var running: Bool
      var pid: Int32?
      var since: String?
      var version: String?
      var storeError: String?
    }

    struct Document: Decodable {
      var daemon: DaemonSection
    }

    static func daemonSection(_ harness: DaemonHarness) async throws -> DaemonSection {
      let status = try await harness.status()
      return try JSONDecoder().decode(Document.self, from: Data(status.raw.utf8)).daemon
    }

    @Test("50 concurrent offline schedules all succeed")
    func concurrentOfflineSchedules() async throws {
      let workspace = try DaemonWorkspace()
      defer { workspace.remove() }
      let harness = try DaemonHarness(workspace: workspace)
      try workspace.writeConfig(jobs: "")
      // One shell starts all 50 at once (at the lowest CPU priority) and exits; each records
      // its exit status. The test process itself spawns one child, not fifty.
      let script = """
        for i in $(seq 0 49); do
          (nice -n 19 "$0" schedule dev.e2e.job$i --once --delay 1h --config "$1" \\
            --command /bin/true > "$2/schedule-$i.log" 2>&1; echo $? > "$2/status-$i") &
        done
        """
      let shell = try DaemonChild(
        ["/bin/sh", "-c", script, harness.binary, workspace.configPath, workspace.directory],
        outputPath: workspace.file("schedules.log"))
      #expect(await shell.waitForExit(timeout: .seconds(30)) == 0, "\(shell.output)")
      try await daemonEventually("50 exit statuses", timeout: .seconds(120)) {
        (0..<50).allSatisfy { !workspace.lines(of: "status-\($0)").isEmpty } ? true : nil
      }
      let failures = (0..<50).filter { workspace.lines(of: "status-\($0)") != ["0"] }
      let example = failures.first.map { workspace.lines(of: "schedule-\($0).log") } ?? []
      #expect(failures.isEmpty, "\(failures.count) failed, e.g. \(example)")
      let status = try await harness.status()
      #expect(status.tasks?.count == 50)
    }

    @Test(
      "status says whether a daemon serves the store; without one a running task is interrupted")
    func statusReportsTheDaemon() async throws {
      let workspace = try DaemonWorkspace()
      defer { workspace.remove() }
      let harness = try DaemonHarness(workspace: workspace)
      defer { harness.cleanUp() }
      let id = "dev.e2e.long"
      let pidFile = workspace.file("pid")
      try workspace.writeConfig(
        jobs: daemonShellJob(
          id: id, script: "echo $$ > \(pidFile); exec sleep 30", schedule: "once = true"))
      let before = try await Self.daemonSection(harness)
      #expect(!before.running && before.pid == nil)

      let daemon = try harness.startDaemon()
      let group = try await daemonEventually("the job to start", describe: harness.describe()) {
        workspace.lines(of: "pid").first.flatMap { Int32($0) }
      }
      harness.adoptJobGroup(group)
      _ = try await harness.waitForTask(id, "running") { $0.state == "running" }
      let during = try await Self.daemonSection(harness)
      #expect(during.running && during.pid == daemon.pid, "\(harness.describe())")
      #expect(during.version?.isEmpty == false && during.since != nil)
      #expect(during.storeError == nil)

      daemon.signal(SIGKILL)
      _ = await daemon.waitForExit(timeout: testEventTimeout)
      let after = try await Self.daemonSection(harness)
      #expect(!after.running)
      #expect(try await harness.status().task(id)?.state == "interrupted")
      let human = try await harness.cli("status", "--config", workspace.configPath)
      #expect(human.stdout.contains("Daemon: not running"), "\(human)")
    }

    @Test("status --watch prints the daemon's task changes next to the network lines")
    func watchPrintsTaskChanges() async throws {
      let workspace = try DaemonWorkspace()
      defer { workspace.remove() }
      let harness = try DaemonHarness(workspace: workspace)
      defer { harness.cleanUp() }
      let id = "dev.e2e.watched"
      try workspace.writeConfig(
        jobs: daemonShellJob(id: id, script: "true", schedule: "once = true\ndelay = \"1h\""))
      _ = try harness.startDaemon()
      _ = try await harness.waitForTask(id, "in the store") { $0.state == "pending" }
      let watcher = try DaemonChild(
        [harness.binary, "status", "--watch", "--json", "--config", workspace.configPath],
        outputPath: workspace.file("watch.out"), errorPath: workspace.file("watch.err"))
      defer { watcher.terminate() }
      try await daemonEventually("the first network line", describe: watcher.output) {
        watcher.output.contains("\"network\"") ? true : nil
      }
      // The subscription is made right after start; give it a moment, then trigger.
      try await Task.sleep(for: .seconds(1))
      let trigger = try await harness.cli("trigger", id, "--config", workspace.configPath)
      #expect(trigger.status == 0, "\(trigger)")
      let lines = try await daemonEventually(
        "started and finished lines", describe: watcher.output + watcher.errorOutput
      ) { () -> [String]? in
        let lines = watcher.output.split(separator: "\n").map(String.init)
          .filter { $0.contains("\"taskChange\"") && $0.contains(id) }
        let started = lines.contains { $0.contains("\"change\":\"started\"") }
        let finished = lines.contains { $0.contains("\"change\":\"finished\"") }
        return started && finished ? lines : nil
      }
      #expect(!lines.isEmpty)
    }

    @Test(
      "a full disk: trigger and schedule fail and say why, status shows it, space returns",
      .enabled(if: geteuid() == 0, "needs root to mount a tmpfs"))
    func fullDiskIsReportedAndRecovers() async throws {
      let workspace = try DaemonWorkspace()
      defer { workspace.remove() }
      let disk = workspace.file("disk")
      #expect(mkdir(disk, 0o700) == 0)
      let mount = try await DaemonSecurityTests.run(
        ["/bin/mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", disk], in: workspace)
      try #require(mount.0 == 0, "mount failed: \(mount.1)")
      defer { Self.unmount(disk) }
      let harness = try DaemonHarness(workspace: workspace)
      defer { harness.cleanUp() }
      let id = "dev.e2e.full"
      try workspace.writeRawConfig(
        """
        [store]
        path = "\(disk)/state.sqlite"
        [control]
        socket = "\(workspace.socketPath)"

        \(daemonShellJob(id: id, script: "echo ran >> \(workspace.file("ran"))", schedule: "once = true\ndelay = \"1h\""))
        """)
      let daemon = try harness.startDaemon()
      _ = try await harness.waitForTask(id, "in the store") { $0.state == "pending" }

      try Self.fill(disk + "/filler")
      let trigger = try await harness.cli("trigger", id, "--config", workspace.configPath)
      #expect(trigger.status != 0, "\(trigger)")
      #expect(
        trigger.stderr.contains("not started") && trigger.stderr.contains("full"), "\(trigger)")
      #expect(!trigger.stdout.contains("triggered"), "\(trigger)")
      let schedule = try await harness.cli(
        "schedule", "dev.e2e.other", "--once", "--config", workspace.configPath, "--command",
        "/bin/true")
      #expect(schedule.status != 0 && schedule.stderr.contains("full"), "\(schedule)")
      let section = try await Self.daemonSection(harness)
      #expect(section.storeError?.contains("full") == true, "\(section)")
      #expect(workspace.lines(of: "ran").isEmpty)
      #expect(!daemon.output.contains("run started"), "a start was reported: \(daemon.output)")

      #expect(unlink(disk + "/filler") == 0)
      try await daemonEventually("the job to run once space returned", describe: harness.describe())
      {
        workspace.lines(of: "ran").isEmpty ? nil : true
      }
      let again = try await harness.cli(
        "schedule", "dev.e2e.other", "--once", "--delay", "1h", "--config", workspace.configPath,
        "--command", "/bin/true")
      #expect(again.status == 0, "\(again)")
      #expect(try await Self.daemonSection(harness).storeError == nil)
    }

    static func unmount(_ path: String) {
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/bin/umount")
      process.arguments = ["-l", path]
      try? process.run()
      process.waitUntilExit()
    }

    /// Writes `path` until the file system is full.
    static func fill(_ path: String) throws {
      let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
      guard fd >= 0 else { throw DaemonHarnessError("cannot create \(path)") }
      defer { close(fd) }
      let chunk = [UInt8](repeating: 0x55, count: 4096)
      while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
      guard errno == ENOSPC else { throw DaemonHarnessError("filling \(path): errno \(errno)") }
    }
  }
}
