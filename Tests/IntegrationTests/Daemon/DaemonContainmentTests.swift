import Foundation
import TestSupport
import Testing

/// The real daemon: what is left of a run killed with the daemon, the job environment, and the
/// reason of a retry.
@Suite(.blockingIO, .timeLimit(.minutes(2)))
struct DaemonContainmentTests {
  @Test("kill -9 mid-run, restart: the old run's processes are gone before the next attempt")
  func leftoversOfAKilledDaemonAreEndedBeforeTheNextAttempt() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    let id = "dev.e2e.leftover"
    let pids = workspace.file("pids")
    let observed = workspace.file("observed")
    // Attempt 0 leaves a SIGTERM-ignoring child and blocks; later attempts report which of
    // those processes are still alive when they start.
    let script = """
      if [ "$BACKGROUNDER_ATTEMPT" != 0 ]; then \
        for p in $(cat \(pids)); do \
          if [ -e /proc/$p ] && ! grep -q ') Z' /proc/$p/stat; then echo alive $p; fi; \
        done >> \(observed); echo checked >> \(observed); exit 0; \
      fi; \
      (trap '' TERM; exec sleep 1000) & echo $! > \(pids).tmp; echo $$ >> \(pids).tmp; \
      mv \(pids).tmp \(pids); exec sleep 1000
      """
    try workspace.writeConfig(
      jobs: daemonShellJob(
        id: id, script: script, schedule: "every = \"1h\"",
        extra: "backoff = { initial = \"10s\" }"))

    let first = try harness.startDaemon()
    let old = try await daemonEventually("the first run to start", describe: harness.describe()) {
      let values = workspace.lines(of: "pids").compactMap { Int32($0) }
      return values.count == 2 ? values : nil
    }
    for pid in old { harness.adoptJobGroup(pid) }
    kill(first.pid, SIGKILL)
    _ = await first.waitForExit(timeout: testEventTimeout)
    #expect(
      old.allSatisfy { daemonProcessAlive($0) },
      "without a cleanup the old run outlives the daemon: \(old)")

    _ = try harness.startDaemon()
    _ = try await harness.cli("trigger", id, "--config", workspace.configPath)
    try await daemonEventually(
      "the next attempt to report", timeout: .seconds(45), describe: harness.describe()
    ) { workspace.lines(of: "observed").contains("checked") ? true : nil }
    #expect(
      workspace.lines(of: "observed") == ["checked"],
      "processes of the old run were alive when the next attempt started")
    #expect(old.allSatisfy { !daemonProcessAlive($0) })
    // The next attempt's own record goes when its run is recorded, a moment after "checked".
    let runsPath = workspace.storePath + ".runs"
    _ = try await daemonEventually(
      "no run record to be left",
      describe: "\(directoryEntries(runsPath)), \(recordsInUse(runsPath))\n\(harness.describe())"
    ) { directoryEntries(runsPath) == ["live"] && recordsInUse(runsPath) == 0 ? true : nil }
  }

  @Test(
    "kill -9 mid-run with run cgroups, restart: a setsid escape is gone before the next attempt")
  func setsidEscapeOfAKilledDaemonIsEndedThroughItsCgroup() async throws {
    guard let hierarchy = try TestCgroup.make() else { return }
    defer { hierarchy.remove() }
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    let id = "dev.e2e.escape"
    let pids = workspace.file("pids")
    let observed = workspace.file("observed")
    let script = """
      if [ "$BACKGROUNDER_ATTEMPT" != 0 ]; then \
        p=$(cat \(pids)); \
        if [ -e /proc/$p ] && ! grep -q ') Z' /proc/$p/stat; then echo alive >> \(observed); fi; \
        echo checked >> \(observed); exit 0; \
      fi; \
      setsid sh -c 'trap "" TERM; echo $$ > \(pids).tmp; mv \(pids).tmp \(pids); exec sleep 1000' \
        </dev/null >/dev/null 2>&1 & exec sleep 1000
      """
    try workspace.writeConfig(
      jobs: daemonShellJob(
        id: id, script: script, schedule: "every = \"1h\"",
        extra: "backoff = { initial = \"10s\" }"))
    var environment = ProcessInfo.processInfo.environment
    environment["BACKGROUNDER_CGROUP"] = hierarchy.root

    let first = try harness.startDaemon(environment: environment)
    let escaped = try await daemonEventually("the escape to start", describe: harness.describe()) {
      workspace.lines(of: "pids").first.flatMap { Int32($0) }
    }
    harness.adoptJobGroup(escaped)
    let cgroups = try String(contentsOfFile: "/proc/\(escaped)/cgroup", encoding: .utf8)
    #expect(cgroups.contains("/runs/"), "the escape is in its run's cgroup: \(cgroups)")
    kill(first.pid, SIGKILL)
    _ = await first.waitForExit(timeout: testEventTimeout)
    #expect(daemonProcessAlive(escaped), "the escape outlives the daemon until the restart")

    _ = try harness.startDaemon(environment: environment)
    _ = try await harness.cli("trigger", id, "--config", workspace.configPath)
    try await daemonEventually(
      "the next attempt to report", timeout: .seconds(45), describe: harness.describe()
    ) { workspace.lines(of: "observed").contains("checked") ? true : nil }
    #expect(workspace.lines(of: "observed") == ["checked"], "the escape was alive")
    #expect(!daemonProcessAlive(escaped))
  }

  @Test("jobs get the allow-list and BACKGROUNDER_*, never NOTIFY_SOCKET or other secrets")
  func jobEnvironmentIsClean() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    let jobs = ["clean", "inherit"].map { name in
      daemonShellJob(
        id: "dev.e2e.env-\(name)", script: "env > \(workspace.file(name))",
        schedule: "once = true",
        extra: name == "inherit"
          ? "inherit-environment = true" : "environment = { JOB_SETTING = \"from-config\" }")
    }
    try workspace.writeConfig(jobs: jobs.joined())
    var environment = ProcessInfo.processInfo.environment
    environment["NOTIFY_SOCKET"] = workspace.file("no-such-notify-socket")
    environment["WATCHDOG_USEC"] = "1000000000"
    environment["INVOCATION_ID"] = "0123456789abcdef"
    environment["DAEMON_SECRET_TOKEN"] = "hunter2"
    environment["LANG"] = "C.UTF-8"
    environment["LC_TIME"] = "C"
    environment["HOME"] = "/root"
    _ = try harness.startDaemon(environment: environment)

    func variables(_ name: String) async throws -> [String: String] {
      try await daemonEventually("the \(name) job's environment", describe: harness.describe()) {
        let lines = workspace.lines(of: name)
        guard lines.contains(where: { $0.hasPrefix("BACKGROUNDER_TASK_ID=") }) else { return nil }
        var result: [String: String] = [:]
        for line in lines {
          guard let equals = line.firstIndex(of: "=") else { continue }
          result[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return result
      }
    }
    let clean = try await variables("clean")
    for name in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "INVOCATION_ID", "DAEMON_SECRET_TOKEN"] {
      #expect(clean[name] == nil, "\(name) reached the job")
    }
    #expect(clean["LANG"] == "C.UTF-8" && clean["LC_TIME"] == "C" && clean["HOME"] == "/root")
    #expect(clean["PATH"] == environment["PATH"])
    #expect(clean["JOB_SETTING"] == "from-config")
    #expect(clean["BACKGROUNDER_TASK_ID"] == "dev.e2e.env-clean")
    #expect(clean["BACKGROUNDER_ATTEMPT"] == "0" && clean["BACKGROUNDER_METERED"] != nil)

    let inherited = try await variables("inherit")
    #expect(inherited["DAEMON_SECRET_TOKEN"] == "hunter2", "inherit-environment restores it")
    #expect(inherited["NOTIFY_SOCKET"] == nil && inherited["WATCHDOG_USEC"] == nil)
    #expect(inherited["BACKGROUNDER_TASK_ID"] == "dev.e2e.env-inherit")
  }

  @Test("exit 75: the last result says retry with the stderr tail")
  func exitTempfailKeepsTheStderrTail() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    let id = "dev.e2e.busy"
    try workspace.writeConfig(
      jobs: daemonShellJob(
        id: id, script: "echo working; printf 'server\\tbusy\\033[0m\\n' >&2; exit 75",
        schedule: "once = true"))
    _ = try harness.startDaemon()
    let task = try await harness.waitForTask(id, "a retry") { $0.lastResult == "retry" }
    #expect(task.lastReason == "exit 75: server\tbusy\\u{1B}[0m", "\(harness.describe())")
    let status = try await harness.cli("status", "--config", workspace.configPath)
    #expect(status.stdout.contains("retry: exit 75: server"), "\(status.stdout)")
  }
}

/// Whether `pid` exists and is not a zombie.
func daemonProcessAlive(_ pid: Int32) -> Bool {
  guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
    let close = stat.lastIndex(of: ")")
  else { return false }
  let state = stat[stat.index(after: close)...].split(separator: " ").first
  return state != "Z" && state != "X"
}

/// A cgroup v2 hierarchy mounted in a private directory, with a test cgroup for the daemon's
/// runs (`BACKGROUNDER_CGROUP`).
struct TestCgroup {
  let mountPoint: String
  let root: String

  /// Nil, with the reason printed, when no cgroup v2 can be mounted here.
  static func make() throws -> TestCgroup? {
    guard geteuid() == 0 else {
      print("skipped: mounting a cgroup v2 hierarchy needs root")
      return nil
    }
    let mountPoint = "/tmp/bgcg-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
    try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: false)
    guard mount("none", mountPoint, "cgroup2", 0, nil) == 0 else {
      print("skipped: cannot mount cgroup2: \(String(cString: strerror(errno)))")
      rmdir(mountPoint)
      return nil
    }
    let cgroup = TestCgroup(mountPoint: mountPoint, root: mountPoint + "/" + UUID().uuidString)
    guard mkdir(cgroup.root, 0o755) == 0, access(cgroup.root + "/cgroup.kill", F_OK) == 0 else {
      print("skipped: no writable cgroup with cgroup.kill (Linux ≥ 5.14) under \(mountPoint)")
      cgroup.remove()
      return nil
    }
    return cgroup
  }

  /// Ends whatever is left in the test cgroup and removes it.
  func remove() {
    try? "1".write(toFile: root + "/cgroup.kill", atomically: false, encoding: .utf8)
    let runs = (try? FileManager.default.contentsOfDirectory(atPath: root + "/runs")) ?? []
    for run in runs where !run.contains(".") { rmdir(root + "/runs/" + run) }
    rmdir(root + "/runs")
    rmdir(root)
    // Detached: a descriptor still open on the hierarchy (a runtime's cgroup directory) makes
    // a plain umount fail with EBUSY, and the mount outlived the test run (one a full run).
    umount2(mountPoint, Int32(MNT_DETACH))
    rmdir(mountPoint)
  }
}

/// The names in `directory`, or none when it cannot be read.
private func directoryEntries(_ directory: String) -> [String] {
  (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
}

/// The run records in the daemon's file of records (`live`: 4 KiB slots, a cleared one starts
/// with a zero byte).
private func recordsInUse(_ directory: String) -> Int {
  guard let data = FileManager.default.contents(atPath: directory + "/live") else { return -1 }
  return stride(from: 0, to: data.count, by: 4096).filter { data[$0] != 0 }.count
}
