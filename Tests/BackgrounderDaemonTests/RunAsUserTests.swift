import Foundation
import Locking
import Logging
import Testing

@testable import BackgrounderDaemon

/// The `user` and `group` keys of a `[[job]]`: a user or group that does not exist is a config
/// error naming it, a daemon not running as root refuses any user but its own, and a real run
/// as `nobody` (uid 65534) is that user, in the run's cgroup when there is one.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct RunAsUserTests {
  static let nobody: uid_t = 65534
  static var canSwitch: Bool { geteuid() == 0 && getpwnam("nobody")?.pointee.pw_uid == nobody }

  private func error(_ jobKeys: String, daemonUserID: uid_t = 0) -> ConfigurationError? {
    RunIdentity.$daemonUserID.withValue(daemonUserID) { () -> ConfigurationError? in
      do {
        _ = try parseJob(id: "dev.example.backup", jobKeys)
        return nil
      } catch {
        return error as? ConfigurationError
      }
    }
  }

  @Test func readsUserAndGroup() throws {
    // As a root daemon reads it, whoever runs the test.
    try RunIdentity.$daemonUserID.withValue(0) {
      let job = try #require(try parseJob(id: "dev.example.backup", "user = \"nobody\""))
      #expect(job.user == "nobody" && job.group == nil)
      let grouped = try #require(
        try parseJob(id: "dev.example.backup", "user = \"root\"\ngroup = \"root\""))
      #expect(grouped.user == "root" && grouped.group == "root")
      try storedWithTheRequest(grouped)
    }
  }

  private func storedWithTheRequest(_ grouped: JobDefinition) throws {
    // Accepted for a request, stored with it and read back by the worker.
    _ = try JobRequests.request(for: grouped, origin: .config)
    let stored = try #require(StoredJob.decode(try StoredJob.input(for: grouped, origin: .config)))
    #expect(stored.job.user == "root" && stored.job.group == "root")
  }

  @Test func anUnknownUserOrGroupIsAnErrorNamingIt() throws {
    let user = try #require(error("user = \"bg-no-such-user\""))
    #expect(user.key == "job[0].user", "\(user)")
    #expect(user.job == "dev.example.backup", "\(user)")
    #expect(user.message == "user \"bg-no-such-user\" does not exist", "\(user)")
    #expect(user.line == 5, "\(user)")
    let group = try #require(error("user = \"nobody\"\ngroup = \"bg-no-such-group\""))
    #expect(group.key == "job[0].group", "\(group)")
    #expect(group.message == "group \"bg-no-such-group\" does not exist", "\(group)")
    let alone = try #require(error("group = \"root\""))
    #expect(alone.key == "job[0].group" && alone.message.contains("needs `user`"), "\(alone)")
  }

  @Test func everyJobsUnknownUserIsReportedAtOnce() throws {
    let text = """
      [[job]]
      id = "dev.example.a"
      command = ["true"]
      every = "1h"
      user = "bg-ghost-a"

      [[job]]
      id = "dev.example.b"
      command = ["true"]
      every = "1h"
      user = "bg-ghost-b"
      """
    let locations = DefaultLocations(
      configPath: "/cfg/config.toml", storePath: "/state/default.sqlite",
      controlSocketPath: "/run/test/control.sock")
    do {
      _ = try ConfigurationLoader.parse(text, path: "jobs.toml", locations: locations)
      Issue.record("unknown users were accepted")
    } catch {
      let lines = error.problems.map(\.description)
      #expect(
        lines == [
          "jobs.toml:5: job \"dev.example.a\": user: user \"bg-ghost-a\" does not exist",
          "jobs.toml:11: job \"dev.example.b\": user: user \"bg-ghost-b\" does not exist",
        ], "\(error)")
    }
  }

  @Test func aDaemonNotRunningAsRootRefusesAnotherUser() throws {
    let refused = try #require(error("user = \"root\"", daemonUserID: 1234))
    #expect(refused.key == "job[0].user", "\(refused)")
    #expect(refused.message.contains("not root"), "\(refused)")
    #expect(refused.message.contains("\"root\""), "\(refused)")
    // Its own user is fine: nothing to switch.
    #expect(error("user = \"root\"", daemonUserID: 0) == nil)
    #expect(error("user = \"nobody\"", daemonUserID: Self.nobody) == nil)
    // A job sent over the control socket is checked by the daemon too.
    var job = JobDefinition(id: "dev.example.cli", command: ["true"], schedule: .once(delay: .zero))
    job.user = "root"
    #expect(throws: InvalidJobDefinition.self) {
      try RunIdentity.$daemonUserID.withValue(1234) {
        _ = try JobRequests.request(for: job, origin: .cli)
      }
    }
  }

  @Test func doctorReportsTheRefusal() throws {
    let directory = try Scratch()
    defer { directory.remove() }
    let config = directory.path("config.toml")
    try """
    [[job]]
    id = "dev.example.backup"
    command = ["/bin/true"]
    every = "1h"
    user = "root"
    """.write(toFile: config, atomically: true, encoding: .utf8)
    let findings = RunIdentity.$daemonUserID.withValue(1234) {
      Doctor(configPath: config, unitPaths: []).run()
    }
    let problem = findings.first { $0.subject == "config" && $0.severity == .problem }
    #expect(problem?.message.contains("not root") == true, "\(findings)")
  }

  @Test func theUsersVariablesReplaceTheDaemons() throws {
    let runtime = try Scratch()
    defer { runtime.remove() }
    let identity = try RunIdentity.resolve(user: "nobody", group: nil).get()
    #expect(identity.environment(runtimeRoot: runtime.directory)["XDG_RUNTIME_DIR"] == nil)
    try FileManager.default.createDirectory(
      atPath: runtime.path("\(identity.userID)"), withIntermediateDirectories: false)
    let variables = identity.environment(runtimeRoot: runtime.directory)
    #expect(variables["XDG_RUNTIME_DIR"] == runtime.path("\(identity.userID)"))
    let environment = JobEnvironment.build(
      daemon: [
        "HOME": "/root", "USER": "root", "LOGNAME": "root", "XDG_CONFIG_HOME": "/root/.config",
        "PATH": "/usr/bin:/bin",
      ], inherit: false, job: ["LOGNAME": "custom"], backgrounder: [:], user: variables)
    #expect(environment["HOME"] == identity.home && environment["USER"] == "nobody")
    #expect(environment["LOGNAME"] == "custom", "the job's own environment wins")
    #expect(environment["XDG_CONFIG_HOME"] == nil && environment["PATH"] == "/usr/bin:/bin")
  }

  @Test(
    "a run as nobody is uid and gid 65534, its output still the daemon's, in its run cgroup",
    .enabled(if: canSwitch, "needs root and a `nobody` user with uid 65534"))
  func aRealRunIsTheUser() async throws {
    let hierarchy = try CgroupMount.make()
    defer { hierarchy?.remove() }
    let logger = Logger(label: "test.run-as-user")
    let containment = RunContainment(
      cgroups: try hierarchy.map { try RunCgroups(root: $0.root) }, registry: nil, logger: logger)
    let runner = CommandRunner(
      gracePeriod: .milliseconds(300), containment: containment, logger: logger)
    let identity = try RunIdentity.resolve(user: "nobody", group: nil).get()
    // The 0700 scratch directory is the daemon's: the working directory is entered before the
    // switch, and the output reaches the daemon through its pipe.
    let scratch = try Scratch()
    defer { scratch.remove() }
    let outcome = await runner.run(
      argv: [
        "/bin/sh", "-c",
        "id -u; id -g; id -G; cat /proc/self/cgroup; touch x 2>/dev/null || echo denied",
      ],
      environment: ["PATH": "/usr/bin:/bin"], workingDirectory: scratch.directory,
      jobID: "dev.example.nobody", identity: identity)
    #expect(outcome.termination == .exited(0), "\(outcome)")
    let lines = outcome.outputTail.split(separator: "\n").map(String.init)
    #expect(lines.prefix(3) == ["65534", "65534", "65534"], "\(outcome.outputTail)")
    #expect(lines.last == "denied", "uid 65534 cannot write the daemon's directory")
    if hierarchy != nil {
      #expect(lines.contains { $0.hasPrefix("0::") && $0.contains("/runs/") }, "\(lines)")
    }
  }
  @Test(
    "runs as another user start while the daemon creates threads: no child waits before its exec",
    .enabled(if: canSwitch, "needs root and a `nobody` user with uid 65534"))
  func switchingUsersRacesThreadCreation() async throws {
    let logger = Logger(label: "test.run-as-user")
    let runner = CommandRunner(
      gracePeriod: .milliseconds(300), containment: RunContainment(logger: logger), logger: logger)
    let identity = try RunIdentity.resolve(user: "nobody", group: nil).get()
    // Another thread creates and joins threads without pause, as the daemon's executor and
    // event loops do now and then: most spawns happen while one is being created.
    let stop = Lock(false)
    let churn = Thread {
      while !stop.withLock({ $0 }) {
        var thread = pthread_t()
        guard pthread_create(&thread, nil, { _ in nil }, nil) == 0 else { continue }
        pthread_join(thread, nil)
      }
    }
    churn.start()
    defer { stop.withLock { $0 = true } }
    let rounds = 40
    // The runs that started and ended as they should, or nil when the time ran out first.
    let started: Int? = await withTaskGroup(of: Int?.self) { group in
      group.addTask {
        for round in 0..<rounds {
          let outcome = await runner.run(
            argv: ["/bin/sh", "-c", "id -u"], environment: ["PATH": "/usr/bin:/bin"],
            workingDirectory: nil, jobID: "dev.example.nobody", identity: identity)
          guard outcome.termination == .exited(0), outcome.outputTail == "65534" else {
            Issue.record("run \(round): \(outcome)")
            return round
          }
        }
        return rounds
      }
      group.addTask {
        // A child stuck before its exec is this test binary, never the shell: end it, so
        // that the spawn waiting for it returns and the test reports instead of hanging.
        for _ in 0..<200 {
          try? await Task.sleep(for: .milliseconds(100))
          if Task.isCancelled { return 0 }
        }
        Self.killChildrenStuckBeforeExec()
        return nil
      }
      let first = await group.next() ?? nil
      group.cancelAll()
      return first
    }
    #expect(started == rounds, "runs that started within 20 s: \(String(describing: started))")
  }

  /// SIGKILLs this process's children that still run its own executable.
  private static func killChildrenStuckBeforeExec() {
    let me = getpid()
    let ownExecutable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
      guard let pid = pid_t(entry), pid != me,
        let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
      else { continue }
      let fields = stat[stat.index(after: close)...].split(separator: " ")
      guard fields.count > 2, pid_t(fields[2]) == me,
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe"))
          == ownExecutable
      else { continue }
      kill(pid, SIGKILL)
    }
  }
}
