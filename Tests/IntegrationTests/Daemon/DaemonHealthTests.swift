import Foundation
import GRDB
import TestSupport
import Testing

/// The running daemon's health in `status` and `doctor`, with the real binary.
@Suite(.blockingIO, .timeLimit(.minutes(2)))
struct DaemonHealthTests {
  @Test("status and doctor show a healthy daemon, then the store error once writes fail")
  func healthThroughStatusAndDoctor() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    let job = "dev.e2e.health"
    try workspace.writeConfig(
      jobs: daemonShellJob(id: job, script: "true", schedule: "every = \"1h\""))
    let config = workspace.configPath
    _ = try harness.startDaemon()
    _ = try await harness.waitForTask(job, "the first run") { $0.lastResult == "success" }

    let healthy = try health(of: try await harness.status())
    #expect(healthy.healthy == true && healthy.problems.isEmpty, "\(healthy)")
    let human = try await harness.cli("status", "--config", config)
    #expect(human.stdout.contains("Health: healthy\n") || human.stdout.hasSuffix("Health: healthy"))
    let doctor = try await harness.cli("doctor", "--config", config)
    #expect(doctor.stdout.contains("the running daemon reports no problems"), "\(doctor)")

    // Every task write now fails, as on a full or failing disk; the next run's claim hits it.
    let saboteur = try DatabaseQueue(path: workspace.storePath)
    try await saboteur.write { db in
      try db.execute(
        sql: """
          CREATE TRIGGER refuse BEFORE INSERT ON task
          BEGIN SELECT RAISE(ABORT, 'injected write failure'); END;
          CREATE TRIGGER refuseUpdate BEFORE UPDATE ON task
          BEGIN SELECT RAISE(ABORT, 'injected write failure'); END;
          """)
    }
    try saboteur.close()
    let trigger = try await harness.cli("trigger", job, "--config", config)
    // The claim could not be recorded: `trigger` says so instead of reporting a start.
    #expect(trigger.status != 0, "\(trigger)")
    #expect(trigger.stderr.contains("was not started"), "\(trigger)")

    let failing = try await daemonEventually("the store error in status") {
      let report = try health(of: try await harness.status())
      return report.healthy == false ? report : nil
    }
    #expect(failing.problems.map(\.kind) == ["storeError"], "\(failing)")
    #expect(failing.problems.first?.message.contains("injected write failure") == true)
    let humanFailing = try await harness.cli("status", "--config", config)
    #expect(humanFailing.stdout.contains("Health: 1 problem(s)"), "\(humanFailing)")
    let doctorFailing = try await harness.cli("doctor", "--config", config)
    #expect(doctorFailing.status == 1, "\(doctorFailing)")
    #expect(
      doctorFailing.stdout.split(separator: "\n").contains {
        $0.contains("health") && $0.contains("storeError")
      }, "\(doctorFailing)")
  }

  private struct Health: Decodable {
    struct Problem: Decodable {
      var kind: String
      var message: String
    }

    var healthy: Bool
    var problems: [Problem]
  }

  private func health(of status: DaemonStatus) throws -> Health {
    struct Document: Decodable { var health: Health }
    return try JSONDecoder().decode(Document.self, from: Data(status.raw.utf8)).health
  }
}
