import Backgrounder
import Foundation
import Testing

@testable import BackgrounderDaemon

/// `relax-after` and `relax = { … }` of a `[[job]]`, and `[daemon] start-splay`: the values
/// read, the runtime constraints they become, and each mistake named by its key.
@Suite struct RelaxConfigTests {
  private func parse(_ jobKeys: String) throws(ConfigurationError) -> JobDefinition? {
    try parseJob(id: "dev.example.backup", jobKeys)
  }

  private func constraints(_ job: JobDefinition) throws -> WorkConstraints {
    switch try JobRequests.request(for: job, origin: .config) {
    case .oneTime(let request): request.constraints
    case .periodic(let request): request.constraints
    }
  }

  @Test func defaultRelaxation() throws {
    let job = try #require(
      try parse(
        """
        network = "unmetered"
        requires-charging = true
        ssids = ["home"]
        relax-after = "3d"
        """))
    #expect(job.relax == JobRelax(after: .seconds(3 * 86_400)))
    let constraints = try constraints(job)
    let relaxation = try #require(constraints.relaxation)
    #expect(relaxation.after == .seconds(3 * 86_400))
    let relaxed = constraints.relaxed
    #expect(relaxed.networkRequired == .notRoaming)
    #expect(!relaxed.requiresCharging && relaxed.requiresBatteryNotLow)
    #expect(relaxed.allowedNetworks == .any)
  }

  @Test func relaxTableSetsTheRelaxedValues() throws {
    let job = try #require(
      try parse(
        """
        network = "unmetered"
        requires-charging = true
        interfaces = ["eth*"]
        relax-after = "1d"
        relax = { network = "any", requires-battery-not-low = false, interfaces = ["eth*", "wl*"] }
        """))
    let relaxed = try constraints(job).relaxed
    #expect(relaxed.networkRequired == .any)
    #expect(!relaxed.requiresCharging && !relaxed.requiresBatteryNotLow)
    #expect(relaxed.allowedNetworks.interfaces == ["eth*", "wl*"])
  }

  @Test func withoutRelaxAfterNothingRelaxes() throws {
    let job = try #require(try parse("network = \"unmetered\""))
    #expect(job.relax == nil)
    #expect(try constraints(job).relaxation == nil)
  }

  @Test(
    "a relax table that relaxes a key never relaxed is refused, naming the key",
    arguments: [
      ("window", "\"01:00-05:00\""), ("requires-mount", "\"/media/backup\""),
      ("requires-reachable", "\"nas.lan:445\""),
    ])
  func neverRelaxed(key: String, value: String) {
    do {
      _ = try parse("relax-after = \"3d\"\nrelax = { \(key) = \(value) }")
      Issue.record("relax.\(key) was accepted")
    } catch {
      #expect(error.key == "job[0].relax.\(key)", "\(error)")
      #expect(error.message.contains("never relaxed"), "\(error)")
    }
  }

  @Test(
    "mistakes are named by their key",
    arguments: [
      ("relax = { network = \"any\" }", "job[0].relax", "relax-after"),
      ("relax-after = \"0s\"", "job[0].relax-after", "longer than 0"),
      ("relax-after = \"soon\"", "job[0].relax-after", "soon"),
      ("relax-after = \"3d\"\nrelax = { network = \"wifi\" }", "job[0].relax.network", "wifi"),
      ("relax-after = \"3d\"\nrelax = { budget = \"1h\" }", "job[0].relax.budget", "unknown"),
    ])
  func mistakes(keys: String, key: String, words: String) {
    do {
      _ = try parse(keys)
      Issue.record("\(keys) was accepted")
    } catch {
      #expect(error.key == key, "\(error)")
      #expect("\(error)".contains(words), "\(error)")
    }
  }

  private func daemon(_ table: String) throws(ConfigurationError) -> DaemonConfiguration {
    let locations = DefaultLocations(
      configPath: "/cfg/config.toml", storePath: "/state/default.sqlite",
      controlSocketPath: "/run/test/control.sock")
    return try ConfigurationLoader.parse(table, path: "test.toml", locations: locations)
  }

  @Test func startSplay() throws {
    #expect(try daemon("").startSplay == .seconds(120), "on by default, 2 minutes")
    #expect(try daemon("[daemon]\nstart-splay = \"5m\"").startSplay == .seconds(300))
    #expect(try daemon("[daemon]\nstart-splay = \"0\"").startSplay == .zero)
    #expect(try daemon("[daemon]\nstart-splay = \"0s\"").startSplay == .zero)
    #expect(StartSplayKey.runtimeSplay(.zero) == nil, "0 turns it off")
    let splay = StartSplayKey.runtimeSplay(.seconds(60), machineIdPath: "/nonexistent/machine-id")
    #expect(splay == StartSplay(over: .seconds(60), machineId: ""))
    for bad in ["2h", "later"] {
      do {
        _ = try daemon("[daemon]\nstart-splay = \"\(bad)\"")
        Issue.record("start-splay = \(bad) was accepted")
      } catch {
        #expect(error.key == "daemon.start-splay", "\(error)")
      }
    }
  }
}
