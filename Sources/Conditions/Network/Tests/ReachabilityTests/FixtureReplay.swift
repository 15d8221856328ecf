import Netlink
import Testing

@testable import Reachability

/// Replays files from Fixtures/netlink through the model, with the scenario's sysfs tree.
enum FixtureReplay {
  static let directory: String = {
    var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(6)  // Sources/Conditions/Network/Tests/ReachabilityTests/FixtureReplay.swift
    return parts.joined(separator: "/") + "/Fixtures/netlink"
  }()

  static func run(
    _ scenario: String, metered: [String] = [], unmetered: [String] = []
  ) throws -> ReachabilityReplay.Result {
    let configuration = ReachabilityConfiguration(
      sysfsRoot: "\(directory)/\(scenario)/sysfs", meteredOverrides: metered,
      unmeteredOverrides: unmetered)
    return try ReachabilityReplay.replay(
      pcapAt: "\(directory)/\(scenario).pcap", configuration: configuration)
  }

  static func status(_ scenario: String, metered: [String] = [], unmetered: [String] = [])
    throws -> NetworkStatus
  {
    try run(scenario, metered: metered, unmetered: unmetered).finalStatus
  }

  /// A live engine (one that asks the kernel) fed the `wired` capture: links, routes and a
  /// primary known.
  static func synchronizedLiveEngine() throws -> ReachabilityEngine {
    let configuration = ReachabilityConfiguration(sysfsRoot: "\(directory)/wired/sysfs")
    var engine = ReachabilityEngine(configuration: configuration, live: true)
    for record in try PcapReader.records(atPath: "\(directory)/wired.pcap")
    where record.netlinkProtocol == 0 {
      _ = engine.ingest(datagram: record.message)
    }
    #expect(engine.model.isSynchronized)
    return engine
  }
}
