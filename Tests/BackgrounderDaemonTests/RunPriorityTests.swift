import Backgrounder
import Foundation
import Logging
import TOML
import Testing

@testable import BackgrounderDaemon

/// The priority keys of a `[[job]]` (`nice`, `io-class`, `cpu-weight`, `io-weight`,
/// `memory-max`, and `inhibit`), and a real run's process and cgroup at that priority.
@Suite struct RunPriorityTests {
  private let locations = DefaultLocations(
    configPath: "/cfg/config.toml", storePath: "/state/default.sqlite",
    controlSocketPath: "/run/test/control.sock")
  private let runner = CommandRunner(
    gracePeriod: .milliseconds(300), logger: Logger(label: "test.run-priority"))

  private func job(_ jobKeys: String) throws(ConfigurationError) -> JobDefinition {
    let text = """
      [[job]]
      id = "dev.example.backup"
      command = ["restic", "backup"]
      every = "1h"
      \(jobKeys)
      """
    return try ConfigurationLoader.parse(text, path: "jobs.toml", locations: locations).jobs[0]
  }

  private func error(_ jobKeys: String) -> ConfigurationError? {
    do {
      _ = try job(jobKeys)
      return nil
    } catch {
      return error
    }
  }

  @Test func readsEveryKey() throws {
    let definition = try job(
      """
      nice = -5
      io-class = "best-effort"
      cpu-weight = 300
      io-weight = 1
      memory-max = "2G"
      inhibit = "block"
      wake-system = true
      """)
    let priority = try #require(definition.priority)
    #expect(priority.nice == -5 && priority.ioClass == .bestEffort)
    #expect(priority.cpuWeight == 300 && priority.ioWeight == 1)
    #expect(priority.memoryMax == 2 << 30)
    #expect(definition.inhibit == .block)
    #expect(definition.wakeSystem)
    let defaults = try job("")
    #expect(defaults.priority == nil && defaults.inhibit == nil && !defaults.wakeSystem)
    #expect(try job("nice = 3").priority?.ioClass == .idle)
  }

  @Test(
    "inhibit becomes the request's inhibit policy, delay without it",
    arguments: [
      ("inhibit = \"block\"", InhibitPolicy.block), ("inhibit = \"none\"", .none),
      ("inhibit = \"delay\"", .delay), ("", .delay),
    ])
  func inhibitIsTheRequestsPolicy(key: String, policy: InhibitPolicy) throws {
    for schedule in ["every = \"1h\"", "once = true", "calendar = \"daily\""] {
      let text = """
        [[job]]
        id = "dev.example.backup"
        command = ["restic", "backup"]
        \(schedule)
        \(key)
        """
      let definition = try ConfigurationLoader.parse(text, path: "jobs.toml", locations: locations)
        .jobs[0]
      let request = try JobRequests.request(for: definition, origin: .config)
      #expect(request.inhibitPolicy == policy, "\(schedule) \(key)")
    }
  }

  @Test func mistakesNameFileLineAndKey() throws {
    for (keys, key, part) in [
      ("nice = 20", "nice", "-20 and 19"),
      ("io-class = \"realtime\"", "io-class", "\"realtime\""),
      ("cpu-weight = 0", "cpu-weight", "1 and 10000"),
      ("io-weight = 10001", "io-weight", "1 and 10000"),
      ("memory-max = \"2 GB\"", "memory-max", "\"2 GB\""),
      ("memory-max = 2", "memory-max", "string"),
      ("inhibit = \"always\"", "inhibit", "\"always\""),
      ("wake-system = \"yes\"", "wake-system", "true or false"),
    ] {
      let problem = try #require(error(keys), "\(keys) is refused")
      #expect(problem.file == "jobs.toml")
      #expect(problem.line == 5, "\(keys)")
      #expect(problem.key == "job[0].\(key)")
      #expect(problem.message.contains(part), "\(problem.message)")
    }
  }

  @Test func memorySizes() {
    #expect(PrioritySettingsReader.memorySize("512M") == 512 << 20)
    #expect(PrioritySettingsReader.memorySize("4096") == 4096)
    #expect(PrioritySettingsReader.memorySize("1k") == 1024)
    #expect(PrioritySettingsReader.memorySize("0") == nil)
    #expect(PrioritySettingsReader.memorySize("G") == nil)
    #expect(PrioritySettingsReader.memorySize("99999999999T") == nil)
  }

  @Test func doctorSaysWhatCannotBeEnforced() throws {
    var doctor = Doctor(configPath: "/nonexistent", unitPaths: [])
    doctor.cgroupRoot = nil
    let limited = try job("memory-max = \"1G\"\ncpu-weight = 50")
    let findings = doctor.checkPriority(of: limited)
    #expect(findings.count == 1)
    #expect(findings.first?.message.contains("memory-max, cpu-weight") == true)
    #expect(findings.first?.message.contains("cannot be enforced") == true)
    #expect(doctor.checkPriority(of: try job("nice = 19")).isEmpty)
    let raised = doctor.checkPriority(of: try job("nice = -1"))
    // Raising the priority is a problem exactly when this process may not do it.
    #expect(raised.isEmpty == Doctor.hasCapability(Doctor.capabilitySysNice))
  }

  /// The job's own process reports its nice value (`/proc/PID/stat` field 19) and I/O class
  /// (`ionice -p`) as the kernel has them.
  private func observedPriority(_ priority: RunPriority?) async throws -> (
    nice: Int, ioClass: String
  ) {
    let argv = ["/bin/sh", "-c", "cat /proc/$$/stat; ionice -p $$"]
    let outcome =
      if let priority {
        await runner.run(
          argv: argv, environment: ["PATH": "/usr/bin:/bin"], workingDirectory: nil,
          jobID: "a.b", priority: priority)
      } else {
        await runner.run(
          argv: argv, environment: ["PATH": "/usr/bin:/bin"], workingDirectory: nil,
          jobID: "a.b")
      }
    #expect(outcome.termination == .exited(0), "\(outcome.errorTail)")
    let lines = outcome.outputTail.split(separator: "\n").map(String.init)
    let stat = try #require(lines.first)
    let fields = stat[stat.index(after: try #require(stat.lastIndex(of: ")")))...]
      .split(separator: " ")
    let nice = try #require(Int(fields[16]), "field 19 of \(stat)")
    return (nice, try #require(lines.last))
  }

  @Test func everyRunStartsAtBackgroundPriority() async throws {
    let observed = try await observedPriority(nil)
    #expect(observed.nice == 10)
    #expect(observed.ioClass == "idle")
  }

  @Test func perJobPriorityIsHonoured() async throws {
    var priority = RunPriority()
    priority.nice = 15
    priority.ioClass = .bestEffort
    let observed = try await observedPriority(priority)
    #expect(observed.nice == 15)
    #expect(observed.ioClass == "best-effort: prio 4")
    if geteuid() == 0 {
      priority.nice = -5
      #expect(try await observedPriority(priority).nice == -5)
    }
  }

  @Test(
    .enabled(
      if: CgroupMount.available(controllers: ["cpu", "io", "memory"]),
      "needs root and a cgroup2 hierarchy with the cpu, io and memory controllers enabled"))
  func runCgroupGetsWeightsAndMemoryLimit() async throws {
    let hierarchy = try #require(try CgroupMount.make(controllers: ["cpu", "io", "memory"]))
    defer { hierarchy.remove() }
    let containment = RunContainment(
      cgroups: try RunCgroups(root: hierarchy.root), registry: nil,
      logger: Logger(label: "test.run-priority"))
    var priority = RunPriority()
    priority.cpuWeight = 300
    priority.ioWeight = 7
    priority.memoryMax = 64 << 20
    let runner = CommandRunner(
      gracePeriod: .milliseconds(300), containment: containment, logger: containment.logger)
    let outcome = await runner.run(
      argv: [
        "/bin/sh", "-c",
        "cat \"$BG_RUNS\"/*/cpu.weight \"$BG_RUNS\"/*/io.weight \"$BG_RUNS\"/*/memory.max",
      ], environment: ["PATH": "/usr/bin:/bin", "BG_RUNS": hierarchy.root + "/runs"],
      workingDirectory: nil, jobID: "a.b", priority: priority)
    #expect(outcome.termination == .exited(0), "\(outcome.errorTail)")
    let values = outcome.outputTail.split(separator: "\n").map(String.init)
    #expect(values.first == "300")
    #expect(values.contains("default 7") || values.contains("7"))
    #expect(values.last == "\(64 << 20)")
  }

  @Test(
    .enabled(
      if: CgroupMount.available(controllers: ["memory"]),
      "needs root and a cgroup2 hierarchy with the memory controller enabled"))
  func memoryMaxKillIsRecordedAsTheReason() async throws {
    let hierarchy = try #require(try CgroupMount.make(controllers: ["memory"]))
    defer { hierarchy.remove() }
    let containment = RunContainment(
      cgroups: try RunCgroups(root: hierarchy.root), registry: nil,
      logger: Logger(label: "test.run-priority"))
    var priority = RunPriority()
    priority.memoryMax = 16 << 20
    let runner = CommandRunner(
      gracePeriod: .milliseconds(300), containment: containment, logger: containment.logger)
    // `tail` keeps the whole newline-free stream in memory.
    let outcome = await runner.run(
      argv: ["/bin/sh", "-c", "head -c 512M /dev/zero | tail -n 1 >/dev/null"],
      environment: ["PATH": "/usr/bin:/bin"], workingDirectory: nil, jobID: "a.b",
      priority: priority)
    #expect(outcome.exceededMemoryMax)
    guard case .failure(let reason) = CommandWorker.result(of: outcome) else {
      Issue.record("expected a failure, got \(CommandWorker.result(of: outcome))")
      return
    }
    #expect(reason.contains("memory-max"))
  }
}
