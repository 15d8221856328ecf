import Foundation
import Logging
import Testing

@testable import BackgrounderDaemon

/// `BACKGROUNDER_CGROUP` (or a delegated cgroup) is used only when it is a cgroup2 directory of
/// the daemon's user reached through trusted directories: never a plain directory, never one
/// of another user.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct CgroupTrustTests {
  private let logger = Logger(label: "test.cgroups")

  init() {
    #expect(Subreaper.enable())
  }

  @Test(.enabled(if: geteuid() == 0, "needs root to chown a directory to another uid"))
  func aPlainDirectoryIsRefusedAndAPidPlantedInItIsNeverSignalled() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let plain = scratch.path("cgroup")
    #expect(mkdir(plain, 0o755) == 0 && chmod(scratch.directory, 0o755) == 0)
    // A bystander of ours (a sleeper in a session of its own, which SIGTERM ends): the
    // "cgroup" owner writes its pid where the run's pids would be.
    let pidFile = scratch.path("bystander")
    _ = await CommandRunner(logger: logger).run(
      argv: [
        "/bin/sh", "-c",
        "setsid sh -c 'echo $$ > \(pidFile); exec sleep 1000' </dev/null >/dev/null 2>&1 & "
          + "while [ ! -s \(pidFile) ]; do sleep 0.01; done",
      ],
      environment: ["PATH": "/usr/bin:/bin"], workingDirectory: nil, jobID: "a.b")
    let bystander = try await scratch.waitForPid(in: pidFile)
    defer { kill(bystander, SIGKILL) }
    #expect(chown(plain, 65534, 65534) == 0)
    let foreign = #expect(throws: (any Error).self) { try RunCgroups(root: plain) }
    #expect("\(foreign.map { "\($0)" } ?? "")".contains("owned by uid 65534"))
    #expect(chown(plain, 0, 0) == 0)
    let notCgroup = #expect(throws: (any Error).self) { try RunCgroups(root: plain) }
    #expect("\(notCgroup.map { "\($0)" } ?? "")".contains("not on a cgroup2 file system"))

    // What the daemon does with it: containment without that cgroup. A job that writes the
    // bystander's pid into every `cgroup.procs` under the directory has no effect.
    let containment = RunContainment(
      cgroups: try? RunCgroups(root: plain), registry: nil, logger: logger)
    let runner = CommandRunner(
      gracePeriod: .milliseconds(200), containment: containment, logger: logger)
    let outcome = await runner.run(
      argv: [
        "/bin/sh", "-c",
        "for f in \(plain)/runs/*/cgroup.procs; do [ -e $f ] && echo \(bystander) >> $f; done; "
          + "exit 0",
      ],
      environment: ["PATH": "/usr/bin:/bin"], workingDirectory: nil, jobID: "a.b")
    #expect(outcome.termination == .exited(0), "\(outcome)")
    #expect(isAlive(bystander), "the bystander was signalled")
    #expect(!FileManager.default.fileExists(atPath: plain + "/runs"), "nothing created in it")
  }

  @Test func aCgroupOfAnotherUserIsRefused() async throws {
    guard let hierarchy = try CgroupMount.make() else { return }
    defer { hierarchy.remove() }
    #expect(chown(hierarchy.root, 65534, 65534) == 0)
    let error = #expect(throws: (any Error).self) { try RunCgroups(root: hierarchy.root) }
    #expect("\(error.map { "\($0)" } ?? "")".contains("owned by uid 65534"))
    #expect(!FileManager.default.fileExists(atPath: hierarchy.root + "/runs"))
    #expect(chown(hierarchy.root, 0, 0) == 0)
    let runs = try RunCgroups(root: hierarchy.root)
    #expect(runs.runsDirectory == hierarchy.root + "/runs")
  }
}
