import Backgrounder
import Foundation
import Testing

@testable import BackgrounderDaemon

/// The `ssids`, `interfaces` and `requires-mount` keys of a `[[job]]`: read into the job, carried
/// to the runtime's constraints, and each mistake named with its line and key.
@Suite struct PlaceKeysTests {
  private func parse(_ jobKeys: String) throws(ConfigurationError) -> JobDefinition? {
    try parseJob(id: "dev.example.backup", jobKeys)
  }

  @Test func readsTheKeysIntoTheConstraints() throws {
    let job = try #require(
      try parse(
        """
        network = "any"
        ssids = ["Home*", "Office-WiFi"]
        interfaces = ["wl*"]
        requires-mount = "/media/backup"
        """))
    #expect(job.ssids == ["Home*", "Office-WiFi"])
    #expect(job.interfaces == ["wl*"])
    #expect(job.requiresMount == "/media/backup")
    let request = try JobRequests.request(for: job, origin: .config)
    guard case .periodic(let periodic) = request else {
      Issue.record("expected a periodic request")
      return
    }
    #expect(
      periodic.constraints.allowedNetworks
        == NetworkAllowList(ssids: ["Home*", "Office-WiFi"], interfaces: ["wl*"]))
    #expect(periodic.constraints.requiredMount == "/media/backup")
    let reach = try #require(try parse("requires-reachable = \"[::1]:445\""))
    #expect(reach.requiresReachable == "[::1]:445")
    guard case .periodic(let withReach) = try JobRequests.request(for: reach, origin: .config)
    else {
      Issue.record("expected a periodic request")
      return
    }
    #expect(withReach.constraints.requiredReachable == "[::1]:445")
    #expect(JobEnvironment.destinationVariables(reach) == ["BACKGROUNDER_REACHABLE": "1"])
    #expect(JobEnvironment.destinationVariables(job).isEmpty)
    let plain = try #require(try parse(""))
    #expect(plain.ssids == nil && plain.requiresMount == nil)
  }

  @Test(
    arguments: [
      ("ssids = []", "ssids", "at least one glob"),
      ("interfaces = [\"eth*\", \"\"]", "interfaces[1]", "must not be empty"),
      ("ssids = \"Home\"", "ssids", "array"),
      ("requires-mount = \"media/backup\"", "requires-mount", "absolute"),
      ("requires-mount = \"/media/backup/\"", "requires-mount", "trailing"),
      ("requires-mount = \"/media//backup\"", "requires-mount", "//"),
      ("requires-mount = \"/media/../backup\"", "requires-mount", ".."),
      ("requires-mount = \"/\"", "requires-mount", "always mounted"),
      ("requires-reachable = \"nas.lan\"", "requires-reachable", "host:port"),
      ("requires-reachable = \"nas.lan:0\"", "requires-reachable", "port"),
      ("requires-reachable = \"::1:445\"", "requires-reachable", "[address]:port"),
      ("requires-reachable = 445", "requires-reachable", "string"),
    ])
  func mistakesNameLineAndKey(keys: String, key: String, fragment: String) {
    do {
      _ = try parse(keys)
      Issue.record("accepted \(keys)")
    } catch {
      #expect(error.line == 5, "\(error)")
      #expect(error.key == "job[0].\(key)", "\(error)")
      #expect(error.message.contains(fragment), "\(error)")
    }
  }
}
