import Foundation
import Logging
import TestSupport
import Testing

@testable import BackgrounderDaemon

/// Real processes: whatever a run leaves behind is gone when the run ends.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct RunContainmentTests {
  private let logger = Logger(label: "test.containment")

  init() {
    // The daemon is a child subreaper; so is this test process, so that it must reap.
    #expect(Subreaper.enable())
  }

  @Test func grandchildIgnoringSigtermIsGoneAfterACancelledRun() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let pidFile = scratch.path("grandchild")
    let runner = CommandRunner(gracePeriod: .milliseconds(300), logger: logger)
    // The leader dies on SIGTERM; its child ignores SIGTERM (kept across exec).
    let task = Task {
      await runner.run(
        argv: [
          "/bin/sh", "-c",
          "(trap '' TERM; exec sleep 1000) & echo $! > \(pidFile); while :; do sleep 0.05; done",
        ],
        environment: [:], workingDirectory: nil, jobID: "a.b")
    }
    let grandchild = try await scratch.waitForPid(in: pidFile)
    #expect(isAlive(grandchild))
    task.cancel()
    let outcome = await task.value
    #expect(outcome.termination == .signaled(SIGTERM))
    #expect(!processExists(grandchild), "the grandchild (\(grandchild)) survived the run")
  }

  @Test func processLeftBehindBySuccessfulRunIsGone() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let pidFile = scratch.path("leftover")
    let runner = CommandRunner(gracePeriod: .milliseconds(300), logger: logger)
    let outcome = await runner.run(
      argv: [
        "/bin/sh", "-c",
        "(trap '' TERM; exec sleep 1000) >/dev/null 2>&1 & echo $! > \(pidFile); exit 0",
      ],
      environment: [:], workingDirectory: nil, jobID: "a.b")
    #expect(outcome.termination == .exited(0))
    let leftover = try await scratch.waitForPid(in: pidFile)
    #expect(!processExists(leftover), "the background process (\(leftover)) survived the run")
  }

  @Test func childInItsOwnProcessGroupIsGoneAfterTheRunWithoutACgroup() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let pidFile = scratch.path("own-group")
    let runner = CommandRunner(gracePeriod: .milliseconds(300), logger: logger)
    // `setpgid(0, 0)` takes it out of the run's process group, not out of its session; it
    // ignores SIGTERM, so only the SIGKILL after the grace period ends it.
    let outcome = await runner.run(
      argv: [
        "/bin/sh", "-c",
        "perl -e '$SIG{TERM} = \"IGNORE\"; setpgrp(0, 0); exec \"sleep\", \"1000\"' "
          + "</dev/null >/dev/null 2>&1 & echo $! > \(pidFile); "
          + "while [ \"$(cut -d' ' -f5 /proc/$!/stat)\" != $! ]; do sleep 0.01; done; exit 0",
      ],
      environment: ["PATH": "/usr/bin:/bin"], workingDirectory: nil, jobID: "a.b")
    #expect(outcome.termination == .exited(0), "\(outcome)")
    let child = try await scratch.waitForPid(in: pidFile)
    if let stat = ProcStat.read(pid: child) {
      #expect(stat.processGroup == child, "it left the run's process group")
    }
    #expect(!processExists(child), "the child in its own process group (\(child)) survived")
  }

  @Test func orphanIsAChildOfTheMainThread() async throws {
    // What `ProcessSweep`'s check without a scan of /proc relies on: the kernel hands an orphan
    // to its subreaper's main thread, whichever thread started its parent.
    let scratch = try Scratch()
    defer { scratch.remove() }
    let orphan = try await scratch.detachedSleeper(pidFile: "orphan")
    #expect(orphan.parent == getpid(), "adopted by this process")
    let children = try #require(Subreaper.mainThreadChildren())
    #expect(children.contains(orphan.pid), "\(orphan.pid) is not in \(children)")
    kill(orphan.pid, SIGKILL)
    #expect(await eventually { Subreaper.reap(orphan) ? true : nil } == true)
    #expect(Subreaper.mainThreadChildren()?.contains(orphan.pid) == false)
  }

  @Test func setsidEscapeIsKilledThroughTheRunCgroup() async throws {
    guard let hierarchy = try CgroupMount.make() else { return }
    defer { hierarchy.remove() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    let pidFile = scratch.path("escaped")
    let containment = RunContainment(
      cgroups: try RunCgroups(root: hierarchy.root), registry: nil, logger: logger)
    let runner = CommandRunner(
      gracePeriod: .milliseconds(300), containment: containment, logger: logger)
    let outcome = await runner.run(
      argv: [
        "/bin/sh", "-c",
        "setsid sh -c 'trap \"\" TERM; cut -d\" \" -f6 /proc/$$/stat > \(pidFile).sid; "
          + "echo $$ > \(pidFile); exec sleep 1000' </dev/null >/dev/null 2>&1 & "
          + "while [ ! -s \(pidFile) ]; do sleep 0.01; done; exit 0",
      ],
      environment: ["PATH": "/usr/bin:/bin"], workingDirectory: nil, jobID: "a.b")
    #expect(outcome.termination == .exited(0), "\(outcome)")
    let escaped = try await scratch.waitForPid(in: pidFile)
    let session = try String(contentsOfFile: pidFile + ".sid", encoding: .utf8)
    #expect(pid_t(session.trimmingCharacters(in: .newlines)) == escaped, "it left the session")
    #expect(!processExists(escaped), "the setsid escape (\(escaped)) survived the run")
    let runsLeft = try RunCgroups(root: hierarchy.root).existingRuns()
    #expect(runsLeft.isEmpty, "the run's cgroup was removed: \(runsLeft)")
  }

  @Test func recordedGroupLeftByADeadDaemonIsEndedAndItsRecordRemoved() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let registry = try RunRegistry(storePath: scratch.path("state.sqlite"))
    // Stand-ins for runs of a daemon that was killed: own sessions, ignoring SIGTERM.
    let leftover = try await scratch.detachedSleeper(pidFile: "leftover")
    let bystander = try await scratch.detachedSleeper(pidFile: "bystander")
    defer { kill(bystander.pid, SIGKILL) }
    #expect(leftover.processGroup == leftover.pid && bystander.processGroup == bystander.pid)
    try registry.save(
      RunRecord(
        jobID: "a.b", bootID: ProcStat.bootID(), cgroup: nil, processGroup: leftover.pid,
        leaderStartTime: leftover.startTime),
      runID: "run-1")
    // A record whose leader start time does not match (a reused pid) is not acted on.
    try registry.save(
      RunRecord(
        jobID: "a.c", bootID: ProcStat.bootID(), cgroup: nil, processGroup: bystander.pid,
        leaderStartTime: bystander.startTime - 1),
      runID: "run-2")

    await LeftoverRuns.terminate(
      in: RunContainment(cgroups: nil, registry: registry, logger: logger))
    #expect(!isAlive(leftover.pid), "the recorded run's process group was ended")
    #expect(isAlive(bystander.pid), "a group with another start time is left alone")
    #expect(registry.all().isEmpty, "records are removed")
  }

  @Test func runRecordIsPrivateAndGoneAfterTheRun() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let containment = try RunContainment(
      cgroups: nil, storePath: scratch.path("state.sqlite"), logger: logger)
    let runner = CommandRunner(
      gracePeriod: .milliseconds(300), containment: containment, logger: logger)
    let runs = scratch.path("state.sqlite.runs")
    let marker = scratch.path("seen")
    let copy = scratch.path("live-copy")
    let outcome = await runner.run(
      argv: ["/bin/sh", "-c", "ls -ln \(runs) > \(marker); cat \(runs)/live > \(copy); echo $$"],
      environment: [:], workingDirectory: nil, jobID: "a.b")
    #expect(outcome.termination == .exited(0))
    let listing = try String(contentsOfFile: marker, encoding: .utf8)
    #expect(listing.contains("-rw------- "), "the file of records is 0600: \(listing)")
    var info = stat()
    #expect(stat(runs, &info) == 0 && info.st_mode & 0o777 == 0o700)
    // While it ran, its record named its process group (the shell's pid, printed).
    let pid = pid_t(outcome.outputTail.trimmingCharacters(in: .whitespacesAndNewlines))
    let live = String(decoding: try Data(contentsOf: URL(fileURLWithPath: copy)), as: UTF8.self)
    #expect(pid != nil && live.contains("\"processGroup\":\(pid ?? 0)"), "\(live)")
    #expect(live.contains("\"jobID\":\"a.b\""))
    // After it, no record is left: one file, every slot cleared.
    #expect(try FileManager.default.contentsOfDirectory(atPath: runs) == ["live"])
    #expect(try RunRegistry(storePath: scratch.path("state.sqlite")).all().isEmpty)
  }

  /// Slots are reused: records of runs one after another take the same slot, the file does
  /// not grow, and a slot that does not decode (a record cut short) is cleared.
  /// A run whose cgroup would not freeze is stopped with SIGSTOP; its thaw must send SIGCONT
  /// even when the cgroup's `cgroup.freeze` takes the thaw's `0` (the thaw used to write it and
  /// stop there, leaving the run stopped for good: "frozen 0", and nothing moving). The cgroup
  /// here is a directory whose `cgroup.freeze` is missing at the pause and there at the thaw.
  @Test func aRunStoppedBecauseItsCgroupWouldNotFreezeIsContinuedByItsThaw() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let sleeper = try await scratch.detachedSleeper(pidFile: "stopped")
    defer {
      kill(sleeper.pid, SIGKILL)
      _ = waitpid(sleeper.pid, nil, 0)
    }
    let cgroup = scratch.path("cgroup")
    try FileManager.default.createDirectory(atPath: cgroup, withIntermediateDirectories: false)
    let scope = RunScope(runID: "run", jobID: "a.b", cgroup: cgroup, leader: sleeper)
    let containment = RunContainment(logger: logger)

    let freeze = containment.freeze(scope)
    #expect(freeze == .stopSignal)
    let stopped = await eventually { ProcStat.read(pid: sleeper.pid)?.state == "T" ? true : nil }
    #expect(stopped == true, "\(String(describing: ProcStat.read(pid: sleeper.pid)))")

    #expect(FileManager.default.createFile(atPath: cgroup + "/cgroup.freeze", contents: nil))
    #expect(containment.thaw(scope, frozenBy: freeze) == "SIGCONT")
    let running = await eventually {
      ProcStat.read(pid: sleeper.pid).map { $0.state != "T" ? true : nil } ?? nil
    }
    #expect(running == true, "\(String(describing: ProcStat.read(pid: sleeper.pid)))")
  }

  @Test func runIDsAreVersion4UUIDs() {
    let ids = (0..<100).map { _ in RunContainment.newRunID() }
    #expect(Set(ids).count == 100)
    for id in ids {
      let parsed = UUID(uuidString: id)
      #expect(parsed?.uuidString.lowercased() == id, "\(id)")
      #expect(Array(id)[14] == "4" && "89ab".contains(Array(id)[19]), "\(id)")
    }
  }

  @Test func recordSlotsAreReusedAndGarbageIsCleared() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let registry = try RunRegistry(storePath: scratch.path("state.sqlite"))
    let record = RunRecord(
      jobID: "a.b", bootID: ProcStat.bootID(), cgroup: nil, processGroup: 42,
      leaderStartTime: 7)
    for index in 0..<10 {
      try registry.save(record, runID: "run-\(index)")
      registry.remove(runID: "run-\(index)")
    }
    try registry.save(record, runID: "one")
    try registry.save(record, runID: "two")
    let file = scratch.path("state.sqlite.runs/live")
    var info = stat()
    #expect(stat(file, &info) == 0 && info.st_size == off_t(2 * RunRegistry.slotBytes))
    // A third slot holding garbage, as a write cut short would leave.
    let handle = try #require(FileHandle(forWritingAtPath: file))
    try handle.seek(toOffset: UInt64(2 * RunRegistry.slotBytes))
    try handle.write(contentsOf: Data("three\n{\"jobID\":".utf8))
    try handle.close()
    let reader = try RunRegistry(storePath: scratch.path("state.sqlite"))
    #expect(Set(reader.all().map(\.runID)) == ["one", "two"])
    #expect(reader.all().allSatisfy { $0.record == record })
    reader.remove(runID: "one")
    reader.remove(runID: "two")
    #expect(try RunRegistry(storePath: scratch.path("state.sqlite")).all().isEmpty)
  }
}

/// A private temporary directory.
struct Scratch {
  let directory: String

  init() throws {
    directory =
      FileManager.default.temporaryDirectory
      .appendingPathComponent("containment-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(
      atPath: directory, withIntermediateDirectories: false,
      attributes: [.posixPermissions: 0o700])
  }

  func path(_ name: String) -> String { directory + "/" + name }

  /// The pid a child wrote into `file`.
  func waitForPid(in file: String) async throws -> pid_t {
    try #require(
      await eventually {
        (try? String(contentsOfFile: file, encoding: .utf8)).flatMap {
          pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
      })
  }

  func remove() { try? FileManager.default.removeItem(atPath: directory) }

  /// A `sleep` ignoring SIGTERM in its own session, whose parent exited (as a run is after its
  /// daemon was killed); its stat line.
  func detachedSleeper(pidFile name: String) async throws -> ProcStat {
    let file = path(name)
    // Without a cgroup, a `setsid` escape is out of the run's reach: it is left running.
    let starter = CommandRunner(logger: Logger(label: "test.containment"))
    _ = await starter.run(
      argv: [
        "/bin/sh", "-c",
        "setsid sh -c 'trap \"\" TERM; echo $$ > \(file); exec sleep 1000' "
          + "</dev/null >/dev/null 2>&1 & while [ ! -s \(file) ]; do sleep 0.01; done",
      ],
      environment: ["PATH": "/usr/bin:/bin"], workingDirectory: nil, jobID: "a.b")
    let pid = try await waitForPid(in: file)
    return try #require(await eventually { ProcStat.read(pid: pid) })
  }
}

/// A cgroup v2 hierarchy mounted in a private directory, with a test cgroup to put runs in.
struct CgroupMount {
  let mountPoint: String
  let root: String

  /// Nil (with the reason recorded as a skip message) when no cgroup v2 can be mounted here.
  static func make() throws -> CgroupMount? {
    guard geteuid() == 0 else {
      print("skipped: mounting a cgroup v2 hierarchy needs root")
      return nil
    }
    let mountPoint = FileManager.default.temporaryDirectory
      .appendingPathComponent("cgroup2-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: false)
    guard mount("none", mountPoint, "cgroup2", 0, nil) == 0 else {
      print("skipped: cannot mount cgroup2: \(String(cString: strerror(errno)))")
      rmdir(mountPoint)
      return nil
    }
    let root = mountPoint + "/backgrounder-test-\(UUID().uuidString.prefix(8))"
    let mounted = CgroupMount(mountPoint: mountPoint, root: root)
    guard mkdir(root, 0o755) == 0, access(root + "/cgroup.kill", F_OK) == 0 else {
      print("skipped: no writable cgroup with cgroup.kill (Linux ≥ 5.14) under \(mountPoint)")
      mounted.remove()
      return nil
    }
    return mounted
  }

  /// Whether ``make(controllers:)`` gives a hierarchy here (mounted and removed again), for
  /// `.enabled(if:)`: a test that needs one is then reported as skipped, not passed.
  static func available(controllers: [String]) -> Bool {
    guard let mounted = try? make(controllers: controllers) else { return false }
    mounted.remove()
    return true
  }

  /// A hierarchy whose root already enables `controllers` for its children (as systemd's
  /// does), or nil (skipped) when it does not: the test never changes the machine's root.
  static func make(controllers: [String]) throws -> CgroupMount? {
    guard let mounted = try make() else { return nil }
    let enabled =
      (try? String(contentsOfFile: mounted.mountPoint + "/cgroup.subtree_control", encoding: .utf8))?
      .split(whereSeparator: \.isWhitespace) ?? []
    guard controllers.allSatisfy({ enabled.contains(Substring($0)) }) else {
      print("skipped: cgroup v2 controllers \(controllers) not enabled at the root (\(enabled))")
      mounted.remove()
      return nil
    }
    return mounted
  }

  func remove() {
    rmdir(root + "/runs")
    rmdir(root)
    // Detached: a descriptor still open on the hierarchy (a runtime's cgroup directory) makes
    // a plain umount fail with EBUSY, and the mount outlived the test run (one a full run).
    umount2(mountPoint, Int32(MNT_DETACH))
    rmdir(mountPoint)
  }
}

/// Whether `pid` exists and has not exited.
func isAlive(_ pid: pid_t) -> Bool {
  guard let stat = ProcStat.read(pid: pid) else { return false }
  return stat.state != "Z"
}

/// Whether `pid` is still in the process table, zombie or not.
func processExists(_ pid: pid_t) -> Bool {
  ProcStat.read(pid: pid) != nil
}
