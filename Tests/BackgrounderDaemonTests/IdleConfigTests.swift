import Backgrounder
import Foundation
import Testing

@testable import BackgrounderDaemon

/// The `requires-idle` and `on-user-return` keys of a `[[job]]`: read into the job, kept in its
/// stored definition, turned into the request's constraints, and each mistake named.
@Suite struct IdleConfigTests {
  private func parse(_ jobKeys: String) throws(ConfigurationError) -> JobDefinition? {
    try parseJob(id: "dev.example.backup", jobKeys)
  }

  private static func constraints(_ request: WorkRequest) -> WorkConstraints {
    switch request {
    case .oneTime(let request): request.constraints
    case .periodic(let request): request.constraints
    }
  }

  @Test("no idle requirement by default")
  func noneByDefault() throws {
    let job = try #require(try parse(""))
    #expect(job.requiresIdle == nil && job.onUserReturn == nil)
    let constraints = Self.constraints(try JobRequests.request(for: job, origin: .config))
    #expect(constraints.requiresIdle == nil)
    #expect(constraints.onUserReturn == .continue)
  }

  @Test("requires-idle, continuing by default; on-user-return stored and requested")
  func readStoredRequested() throws {
    let job = try #require(try parse("requires-idle = \"10m\""))
    #expect(job.requiresIdle == .seconds(600))
    #expect(job.onUserReturn == nil)
    #expect(
      Self.constraints(try JobRequests.request(for: job, origin: .config)).onUserReturn
        == .continue)
    for policy in UserReturnPolicy.allCases {
      let job = try #require(
        try parse("requires-idle = \"90s\"\non-user-return = \"\(policy.rawValue)\""))
      #expect(job.onUserReturn == policy)
      let constraints = Self.constraints(try JobRequests.request(for: job, origin: .config))
      #expect(constraints.requiresIdle == .seconds(90))
      #expect(constraints.onUserReturn == policy)
      let input = try StoredJob.input(for: job, origin: .config)
      #expect(JobRequests.job(in: input)?.0.requiresIdle == .seconds(90))
      #expect(JobRequests.job(in: input)?.0.onUserReturn == policy)
    }
  }

  @Test(
    "a bad value is refused, naming the job and the key",
    arguments: [
      ("requires-idle = \"soon\"", "requires-idle", "invalid duration"),
      ("requires-idle = \"500ms\"", "requires-idle", "1s to 1d"),
      ("requires-idle = \"2d\"", "requires-idle", "1s to 1d"),
      ("on-user-return = \"stop\"", "on-user-return", "requires-idle"),
      (
        "requires-idle = \"10m\"\non-user-return = \"kill\"", "on-user-return",
        "\"continue\", \"pause\" or \"stop\", got \"kill\""
      ),
    ])
  func refused(keys: String, key: String, says: String) {
    do {
      _ = try parse(keys)
      Issue.record("\(keys) was accepted")
    } catch {
      #expect(error.key == "job[0].\(key)", "\(error)")
      #expect(error.message.contains(says), "\(error)")
    }
  }

  @Test("a definition sent over the control socket with on-user-return alone is refused")
  func controlSocketRefused() throws {
    var job = try #require(try parse(""))
    job.onUserReturn = .stop
    #expect(throws: InvalidJobDefinition.self) {
      _ = try JobRequests.request(for: job, origin: .cli)
    }
  }
}
