import Foundation
import Testing

@testable import BackgrounderDaemon

@Suite struct JobEnvironmentTests {
  private let daemon = [
    "PATH": "/usr/bin:/bin", "HOME": "/root", "LANG": "C.UTF-8", "LC_TIME": "C", "TZ": "UTC",
    "NOTIFY_SOCKET": "/run/systemd/notify", "WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1",
    "LISTEN_FDS": "1", "INVOCATION_ID": "abc", "CREDENTIALS_DIRECTORY": "/run/credentials/x",
    "RESTIC_PASSWORD": "hunter2",
  ]
  private let backgrounder = ["BACKGROUNDER_TASK_ID": "a.b"]

  @Test func cleanEnvironmentIsTheAllowListPlusJobAndBackgrounderVariables() {
    let environment = JobEnvironment.build(
      daemon: daemon, inherit: false, job: ["RCLONE_CONFIG": "/etc/rclone", "TZ": "Europe/Paris"],
      backgrounder: backgrounder)
    #expect(
      environment == [
        "PATH": "/usr/bin:/bin", "HOME": "/root", "LANG": "C.UTF-8", "LC_TIME": "C",
        "TZ": "Europe/Paris", "RCLONE_CONFIG": "/etc/rclone", "BACKGROUNDER_TASK_ID": "a.b",
      ])
  }

  @Test func inheritEnvironmentKeepsEverythingButTheServiceManagerProtocol() {
    let environment = JobEnvironment.build(
      daemon: daemon, inherit: true, job: [:], backgrounder: backgrounder)
    #expect(environment["RESTIC_PASSWORD"] == "hunter2")
    for name in [
      "NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS", "INVOCATION_ID",
      "CREDENTIALS_DIRECTORY",
    ] {
      #expect(environment[name] == nil, "\(name) was passed on")
    }
  }

  @Test func realProcessSeesExactlyTheBuiltEnvironment() async throws {
    let environment = JobEnvironment.build(
      daemon: daemon, inherit: false, job: [:], backgrounder: backgrounder)
    let runner = CommandRunner(logger: .init(label: "test.environment"))
    let outcome = await runner.run(
      argv: ["env"], environment: environment, workingDirectory: nil, jobID: "a.b")
    #expect(outcome.termination == .exited(0))
    let seen = Set(outcome.outputTail.split(separator: "\n").map(String.init))
    #expect(seen == Set(environment.map { "\($0.key)=\($0.value)" }))
  }

  @Test func inheritEnvironmentIsReadFromTheConfig() throws {
    let text = """
      [[job]]
      id = "dev.example.a"
      command = ["true"]
      once = true
      inherit-environment = true
      """
    let configuration = try ConfigurationLoader.parse(
      text, path: "test.toml",
      locations: DefaultLocations(
        configPath: "/cfg/config.toml", storePath: "/state/default.sqlite",
        controlSocketPath: "/run/test/control.sock"))
    let job = try #require(configuration.jobs.first)
    #expect(job.inheritEnvironment)
    // Stored definitions without the key decode as not inheriting, and round-trip unchanged.
    var plain = job
    plain.inheritEnvironment = false
    let encoded = try JSONEncoder().encode(plain)
    #expect(!String(decoding: encoded, as: UTF8.self).contains("inherit"))
    #expect(try JSONDecoder().decode(JobDefinition.self, from: encoded) == plain)
  }

  @Test func statLineWithParenthesesInTheCommandNameParses() {
    let line = "4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 99 0 0 0 0 0 0 0 20 0 1 0 123456 0 0"
    let stat = ProcStat.parse(line)
    #expect(
      stat
        == ProcStat(
          pid: 4242, state: "S", parent: 1, processGroup: 4242, session: 4242,
          startTime: 123_456))
  }
}
