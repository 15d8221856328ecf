import BackgrounderDaemon
import Foundation
import Testing

/// A `schedule` request sent straight to the control socket (not through the CLI, which checks
/// its flags) is held to the same rules as the config file. Inputs: `Fixtures/fuzz/FuzzControl/`.
@Suite struct ControlRequestValidationTests {
  private func scheduledJob(_ fixture: String) throws -> JobDefinition {
    let line = try Data(
      contentsOf: FixturePaths.root.appendingPathComponent("fuzz/FuzzControl/\(fixture)"))
    let request = try JSONDecoder().decode(
      ControlRequest.self, from: line.prefix { $0 != UInt8(ascii: "\n") })
    guard case .schedule(let job) = request else {
      Issue.record("\(fixture) is not a schedule request")
      throw CancellationError()
    }
    return job
  }

  @Test(
    "a job the config file would refuse is refused, naming the key",
    arguments: [
      ("schedule-zero-attempts.json", "backoff.max-attempts"),
      ("schedule-empty-command.json", "command"),
    ])
  func refusedWithTheKey(fixture: String, key: String) throws {
    let job = try scheduledJob(fixture)
    #expect(throws: InvalidJobDefinition.self) {
      try JobRequests.request(for: job, origin: .cli)
    }
    do {
      _ = try JobRequests.request(for: job, origin: .cli)
    } catch let error as InvalidJobDefinition {
      #expect(error.key == key)
    }
  }

  @Test("the same job with valid settings is accepted")
  func validJobAccepted() throws {
    var job = try scheduledJob("schedule-zero-attempts.json")
    job.backoff.maxAttempts = 10
    #expect(throws: Never.self) { try JobRequests.request(for: job, origin: .cli) }
  }
}
