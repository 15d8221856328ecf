import Backgrounder
import Foundation
import Testing

@testable import BackgrounderDaemon

/// The `on-condition-lost` and `pause-max` keys of a `[[job]]`: read into the job, kept in its
/// stored definition, turned into the request's constraint, and each mistake named.
@Suite struct PauseConfigTests {
  private func parse(_ jobKeys: String) throws(ConfigurationError) -> JobDefinition? {
    try parseJob(id: "dev.example.sync", jobKeys)
  }

  @Test func stopIsTheDefault() throws {
    let job = try #require(try parse(""))
    #expect(job.onConditionLost == nil)
    #expect(try parse("on-condition-lost = \"stop\"")?.onConditionLost == nil)
    let request = try JobRequests.request(for: job, origin: .config)
    #expect(Self.constraints(request).onConditionLost == .stop)
  }

  @Test("pause, for an hour unless pause-max says otherwise; stored and requested so")
  func pause() throws {
    let job = try #require(try parse("on-condition-lost = \"pause\""))
    #expect(job.onConditionLost == .pause(max: .seconds(3600)))
    let limited = try #require(
      try parse("on-condition-lost = \"pause\"\npause-max = \"15m\""))
    #expect(limited.onConditionLost == .pause(max: .seconds(900)))
    let request = try JobRequests.request(for: limited, origin: .config)
    #expect(Self.constraints(request).onConditionLost == .pause(max: .seconds(900)))
    // The stored definition (the request's input) keeps it.
    let input = try StoredJob.input(for: limited, origin: .config)
    #expect(JobRequests.job(in: input)?.0.onConditionLost == .pause(max: .seconds(900)))
  }

  private static func constraints(_ request: WorkRequest) -> WorkConstraints {
    switch request {
    case .oneTime(let request): request.constraints
    case .periodic(let request): request.constraints
    }
  }

  @Test(
    "a bad value is refused, naming the job and the key",
    arguments: [
      ("on-condition-lost = \"freeze\"", "on-condition-lost", "\"stop\" or \"pause\""),
      ("pause-max = \"10m\"", "pause-max", "on-condition-lost = \\\"pause\\\""),
      ("on-condition-lost = \"pause\"\npause-max = \"8d\"", "pause-max", "1s to 7d"),
      ("on-condition-lost = \"pause\"\npause-max = \"500ms\"", "pause-max", "1s to 7d"),
    ])
  func refused(keys: String, key: String, says: String) {
    do {
      _ = try parse(keys)
      Issue.record("\(keys) was accepted")
    } catch {
      #expect(error.key == "job[0].\(key)", "\(error)")
      #expect(error.message.contains(says.replacingOccurrences(of: "\\", with: "")), "\(error)")
    }
  }
}
