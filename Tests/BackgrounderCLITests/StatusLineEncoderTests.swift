import Backgrounder
import BackgrounderDaemon
import Foundation
import PowerSource
import Reachability
import Testing

@testable import BackgrounderCLI

/// `status --watch --json` lines: the same bytes as `JSONEncoder` gives for the
/// ``StatusDocument`` (key names and order are what users' scripts rely on).
@Suite struct StatusLineEncoderTests {
  private static let links = [
    LinkStatus(
      name: "lo", index: 1, type: .loopback, isUp: true, hasCarrier: true, isMetered: false,
      hasDefaultRoute: false, meteredReason: .loopback),
    LinkStatus(
      name: "wlan0", index: 3, type: .wifi, isUp: true, hasCarrier: true, isMetered: true,
      hasDefaultRoute: true,
      meteredReason: .ssidOverride(pattern: "Pixel-*", ssid: "Pixel \"7\""),
      ssid: "Pixel \"7\" \\ \u{1}"),
    LinkStatus(
      name: "tun\u{1B}[0m", index: 12, type: .tunnel, isUp: false, hasCarrier: false,
      isMetered: true, hasDefaultRoute: false, meteredReason: .tunnelInherits(from: "wlan0")),
  ]

  private static let networks = [
    NetworkStatus.unknown,
    NetworkStatus(
      isReachable: true, isDataMetered: true, primary: "wlan0", links: links,
      malformedMessages: 3, connectivity: .portal, connectivitySource: .networkManager),
    NetworkStatus(
      isReachable: false, isDataMetered: false, primary: nil, links: Array(links.prefix(1)),
      malformedMessages: 0, connectivity: .full, connectivitySource: .probe),
    // The links of the second one again, only the middle one changed: its JSON
    // must be written afresh, not taken from the line before.
    NetworkStatus(
      isReachable: true, isDataMetered: true, primary: "wlan0",
      links: links.enumerated().map { position, link in
        var link = link
        if position == 1 { link.hasDefaultRoute = false }
        return link
      },
      malformedMessages: 3, connectivity: .portal, connectivitySource: .networkManager),
    stale,
  ]

  /// NetworkManager away: its last answers kept and marked stale, the other sources' states.
  private static var stale: NetworkStatus {
    var links = links
    links[1].meteredReason = .networkManager(.guessYes)
    links[1].isStale = true
    var status = NetworkStatus(
      isReachable: true, isDataMetered: true, primary: "wlan0", links: links,
      malformedMessages: 0, connectivity: .portal, connectivitySource: .networkManager)
    status.sources = [
      .networkManager: .stale(since: 1_764_158_590), .nl80211: .answered,
      .probe: .waiting(since: 1_764_158_500),
    ]
    return status
  }

  private static let powers = [
    PowerStatus(
      externalPower: true, charging: true, batteryPercent: nil, batteryLow: false, supplies: []),
    PowerStatus(
      externalPower: false, charging: false, batteryPercent: 17.5, batteryLow: true,
      supplies: [
        PowerSupplyStatus(
          name: "BAT0", type: "Battery", online: nil, status: "Discharging", capacity: 17,
          scope: nil)
      ]),
  ]

  private static let health = HealthReport(
    problems: [
      HealthProblem(
        kind: .storeError, detectedAt: Date(timeIntervalSince1970: 1_700_000_000),
        message: "cannot write /var/lib/backgrounder/store.sqlite")
    ], daemonAnswered: true)

  private func expected(
    _ microseconds: Int64, _ network: NetworkStatus, _ power: PowerStatus, tasks: [TaskStatus]?,
    health: HealthReport, daemon: DaemonSection.Report, daemonView: DaemonView? = nil
  ) throws -> String {
    let document = StatusDocument(
      observedAt: NetworkTimestamp.rfc3339(microseconds: microseconds), network: network,
      power: power, tasks: tasks, health: health, daemon: daemon, daemonView: daemonView)
    return try Output.json(document) + "\n"
  }

  /// Issue #34: a line of the daemon's view is the document with its view, `"viewOf":
  /// "daemon"`, and its `network` and `power` are the daemon's, whatever ours are; a line of
  /// our own after it says `"client"`.
  @Test func daemonViewLinesAreLabelledAndCarryTheDaemonsView() throws {
    var encoder = StatusLineEncoder()
    var view = DaemonView(network: Self.networks[1], power: Self.powers[1])
    view.networkNamespace = "net:[4026531840]"
    let daemon = DaemonSection.Report(running: true, pid: 42)
    let time: Int64 = 1_763_890_000_123_456
    for (network, daemonView) in [
      (Self.networks[2], view), (Self.networks[2], nil), (Self.networks[3], view),
    ] as [(NetworkStatus, DaemonView?)] {
      let line = String(
        decoding: try encoder.line(
          observedAt: time, network: network, power: Self.powers[0], tasks: [], health: Self.health,
          daemon: daemon, daemonView: daemonView), as: UTF8.self)
      #expect(
        line
          == (try expected(
            time, network, Self.powers[0], tasks: [], health: Self.health, daemon: daemon,
            daemonView: daemonView)))
      let object = try #require(
        try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
      let networkObject = try #require(object["network"] as? [String: Any])
      let powerObject = try #require(object["power"] as? [String: Any])
      if daemonView != nil {
        #expect(object["viewOf"] as? String == "daemon")
        #expect(networkObject["primary"] as? String == "wlan0")
        #expect(networkObject["networkNamespace"] as? String == "net:[4026531840]")
        #expect(powerObject["batteryLow"] as? Bool == true && powerObject["supplies"] == nil)
      } else {
        #expect(object["viewOf"] as? String == "client")
        #expect(networkObject["links"] != nil && powerObject["supplies"] != nil)
      }
    }
    let text = String(
      decoding: encoder.textLine(observedAt: time, daemonView: view), as: UTF8.self)
    #expect(
      text.hasPrefix(
        "2025-11-23T09:26:40.123456Z the daemon's view (net:[4026531840]): reachable via wlan0 "
          + "(wifi), metered: yes"),
      "\(text)")
  }

  @Test func everyLineIsTheEncodersDocumentAsSectionsChangeAndRepeat() throws {
    var encoder = StatusLineEncoder()
    let daemons = [
      DaemonSection.Report(running: false),
      DaemonSection.Report(
        running: true, pid: 42, since: "2026-11-23T09:00:00Z", version: "1.0",
        storeError: "disk full"),
    ]
    let healths = [HealthReport(problems: [], daemonAnswered: false), Self.health]
    var time: Int64 = 1_763_890_000_123_456
    var generation = 0
    // Every combination, each twice in a row: a section reused from the previous line must
    // still be right, and one that changed must be encoded afresh.
    for network in Self.networks {
      for power in Self.powers {
        for (daemon, health) in zip(daemons, healths) {
          for tasks in [nil, [] as [TaskStatus]?] {
            generation += 1
            for _ in 0..<2 {
              time += 999_999
              // Every other combination as `status --watch` passes it (with the generation of
              // its sections), the rest without one.
              let line = try encoder.line(
                observedAt: time, network: network, power: power, tasks: tasks, health: health,
                daemon: daemon, sectionsGeneration: generation % 2 == 0 ? generation : nil)
              #expect(
                String(decoding: line, as: UTF8.self)
                  == (try expected(
                    time, network, power, tasks: tasks, health: health, daemon: daemon)))
            }
          }
        }
      }
    }
  }

  /// The sections of one generation are the same sections (``WatchSections/generation``): their
  /// JSON is reused without comparing them; a new generation is compared and encoded afresh.
  @Test func theSameSectionsGenerationReusesTheSectionsWithoutComparing() throws {
    var encoder = StatusLineEncoder()
    let (stopped, running) = (
      DaemonSection.Report(running: false), DaemonSection.Report(running: true, pid: 42)
    )
    func line(_ daemon: DaemonSection.Report, _ generation: Int) throws -> String {
      String(
        decoding: try encoder.line(
          observedAt: 1_763_890_000_123_456, network: Self.networks[0], power: Self.powers[0],
          tasks: [], health: Self.health, daemon: daemon, sectionsGeneration: generation),
        as: UTF8.self)
    }
    let first = try line(stopped, 1)
    #expect(try line(running, 1) == first, "generation 1's daemon section is reused")
    #expect(try line(running, 2).contains(#""pid":42"#))
  }

  @Test func textLinesKeepTheirFormatAsLinksAndPowerChangeAndRepeat() {
    var encoder = StatusLineEncoder()
    let time: Int64 = 1_763_890_000_123_456
    let reachable =
      "2025-11-23T09:26:40.123456Z reachable via wlan0 (wifi), metered: SSID \"Pixel \"7\"\" "
      + "matches \"Pixel-*\", behind a captive portal | links lo:up wlan0:up "
      + "tun\\x1b[0m:down,no-carrier | power: "
    let unreachable = "2025-11-23T09:26:40.123456Z unreachable | links lo:up | power: "
    let plugged = "on mains power (no battery)\n"
    let battery = "on battery, 17.5 %, discharging, low\n"
    let cases: [(NetworkStatus, PowerStatus, String)] = [
      (Self.networks[1], Self.powers[0], reachable + plugged),
      (Self.networks[1], Self.powers[0], reachable + plugged),
      (Self.networks[1], Self.powers[1], reachable + battery),
      (Self.networks[2], Self.powers[1], unreachable + battery),
      (Self.networks[3], Self.powers[1], reachable + battery),
      (Self.networks[2], Self.powers[0], unreachable + plugged),
    ]
    for (network, power, expected) in cases {
      let line = encoder.textLine(observedAt: time, network: network, power: power)
      #expect(String(decoding: line, as: UTF8.self) == expected)
    }
  }

  @Test func networkObjectKeysAreTheDocumentedOnes() throws {
    var writer = JSONLineWriter()
    writer.network(Self.networks[1])
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(writer.bytes)) as? [String: Any])
    #expect(
      object.keys.sorted() == [
        "connectivity", "connectivitySource", "links", "malformedMessages", "metered",
        "netlinkOverruns", "primary", "reachable",
      ])
    let links = try #require(object["links"] as? [[String: Any]])
    #expect(
      links[1].keys.sorted()
        == [
          "carrier", "defaultRoute", "index", "meteredReason", "metered", "name", "ssid", "type",
          "up",
        ].sorted())
    #expect(links[0]["ssid"] == nil)
  }

  @Test func staleHintsAreMarkedBesideTheirSource() throws {
    var writer = JSONLineWriter()
    writer.network(Self.stale)
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(writer.bytes)) as? [String: Any])
    #expect(object["connectivitySource"] as? String == "NetworkManager")
    #expect(object["stale"] as? Bool == true)
    let links = try #require(object["links"] as? [[String: Any]])
    #expect(links[1]["meteredReason"] as? String == "networkmanager:guess-yes")
    #expect(links[1]["stale"] as? Bool == true)
    #expect(links[0]["stale"] == nil)
    let sources = try #require(object["sources"] as? [[String: Any]])
    #expect(sources.map { $0["name"] as? String } == ["NetworkManager", "nl80211", "probe"])
    #expect(sources[0]["state"] as? String == "stale")
    #expect(sources[0]["stale"] as? Bool == true)
    #expect(sources[0]["since"] as? String == "2025-11-26T12:03:10Z")
    #expect(sources[2]["state"] as? String == "waiting")
    // Fresh answers carry no stale mark.
    writer = JSONLineWriter()
    writer.network(Self.networks[1])
    let fresh = try #require(
      try JSONSerialization.jsonObject(with: Data(writer.bytes)) as? [String: Any])
    #expect(fresh["stale"] == nil)
  }

  @Test func humanTextSaysNetworkManagerIsAwayAndUsesItsLastAnswer() {
    let text = NetworkStatusText.verdict(Self.stale)
    #expect(text.contains("(NetworkManager away since "))
    #expect(text.hasSuffix(", using its last answer)"))
    let report = NetworkStatusText.report(Self.stale)
    #expect(report.contains("Source: NetworkManager away since "))
    #expect(report.contains("Source: probe has not answered yet"))
  }
}
