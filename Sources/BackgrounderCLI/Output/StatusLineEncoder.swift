import Backgrounder
import BackgrounderDaemon
import Foundation
import Memo
import PowerSource
import Reachability

/// Encodes `status --watch --json` lines: the same bytes as ``Output/json(_:)`` of a
/// ``StatusDocument``, cheaply. The network section (new on almost every line) is written by
/// ``JSONLineWriter``; the sections that rarely change (power, tasks, health, daemon) go through
/// `JSONEncoder` only when their value differs from the previous line's. One buffer is reused.
struct StatusLineEncoder {
  private var writer = JSONLineWriter()
  private var timestamps = NetworkTimestamp.Formatter()
  private var daemon = EncodedSection<DaemonSection.Report>()
  private var health = EncodedSection<HealthReport>()
  private var power = EncodedSection<PowerStatus>()
  private var tasks = EncodedSection<[TaskStatus]>()
  private var meteredBudget = EncodedSection<MeteredBudgetReport>()
  private var networks = NetworkJSONCache()

  /// The text line's parts that change only with the links or the power, and their sources.
  private var linksText: (links: [LinkStatus], text: String)?
  private var powerText: (power: PowerStatus, text: String)?
  /// The verdicts of the last two text lines (newest first), by what they depend on.
  private var verdicts = RecentValues<VerdictKey, String>()

  private struct VerdictKey: Equatable {
    var primary: LinkStatus?
    var connectivity: Connectivity
    var networkManager: HintSourceState?
  }

  /// The text `--watch` line (``NetworkStatusText/line(_:observedAt:)`` and the power summary),
  /// newline included; the links and power parts are rendered again only when they changed.
  /// `label` (e.g. `own view (the daemon is away):`) goes after the time.
  mutating func textLine(
    observedAt microseconds: Int64, network: NetworkStatus, power: PowerStatus,
    label: String? = nil
  ) -> [UInt8] {
    if linksText.map({ !Self.sameLinksText($0.links, network.links) }) ?? true {
      linksText = (network.links, NetworkStatusText.links(network.links))
    }
    if powerText?.power != power { powerText = (power, powerSummary(power)) }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(256)
    timestamps.append(microseconds: microseconds, to: &bytes)
    bytes.append(UInt8(ascii: " "))
    if let label { bytes += "\(label) ".utf8 }
    bytes += verdict(network).utf8
    bytes += " | links ".utf8
    bytes += linksText!.text.utf8
    bytes += " | power: ".utf8
    bytes += powerText!.text.utf8
    bytes.append(UInt8(ascii: "\n"))
    return bytes
  }

  /// ``NetworkStatusText/verdict(_:)``, rendered again only for a primary link or connectivity
  /// not among the last two lines'.
  private mutating func verdict(_ network: NetworkStatus) -> String {
    let key = VerdictKey(
      primary: network.primaryLink, connectivity: network.connectivity,
      networkManager: network.sources[.networkManager])
    if let known = verdicts.value(for: key) { return known }
    let text = NetworkStatusText.verdict(network)
    verdicts.insert(text, for: key)
    return text
  }

  /// Whether the links part of the text line is the same for both lists: names, up and carrier.
  private static func sameLinksText(_ old: [LinkStatus], _ new: [LinkStatus]) -> Bool {
    if old.sharesStorage(with: new) { return true }
    guard old.count == new.count else { return false }
    for index in old.indices
    where old[index].name != new[index].name || old[index].isUp != new[index].isUp
      || old[index].hasCarrier != new[index].hasCarrier
    {
      return false
    }
    return true
  }

  /// The text `--watch` line of the daemon's view (`daemonView`), labelled as the daemon's:
  /// `TIME the daemon's view (net:[…]): reachable via IF (TYPE), metered: yes (REASON) | power:
  /// …`, newline included.
  mutating func textLine(observedAt microseconds: Int64, daemonView view: DaemonView) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(256)
    timestamps.append(microseconds: microseconds, to: &bytes)
    let namespace = view.networkNamespace.map { " (\($0))" } ?? ""
    var network = "not reachable"
    if view.reachable, let link = view.primaryLink {
      let type = view.primaryLinkType.map { " (\($0))" } ?? ""
      let reason = view.meteredReason.map { " (\(NetworkStatusText.escaped($0)))" } ?? ""
      network =
        "reachable via \(NetworkStatusText.escaped(link))\(type), metered: "
        + "\(view.metered ? "yes" : "no")\(reason)"
    }
    bytes += " the daemon's view\(namespace): \(network) | power: ".utf8
    bytes += powerSummary(view.powerStatus).utf8
    bytes.append(UInt8(ascii: "\n"))
    return bytes
  }

  /// The line for this status, newline included; with `daemonView`, its `network` and `power`
  /// are the daemon's view and `viewOf` says `"daemon"` (else `"client"`). The daemon, health,
  /// metered-budget and tasks sections are encoded again only when they changed: not compared
  /// at all when `sectionsGeneration` (``WatchSections/generation``) is the last line's, else
  /// compared with the last line's (the daemon section alone was 3k instructions a line).
  mutating func line(
    observedAt microseconds: Int64, network: NetworkStatus, power: PowerStatus,
    tasks: [TaskStatus]?, health: HealthReport, daemon: DaemonSection.Report,
    daemonView: DaemonView? = nil, sectionsGeneration: Int? = nil
  ) throws -> [UInt8] {
    let generation = sectionsGeneration
    writer.reset()
    writer.beginObject()
    writer.key("daemon")
    writer.raw(try self.daemon.encoded(daemon, generation: generation))
    writer.key("health")
    writer.raw(try self.health.encoded(health, generation: generation))
    if let meteredBudget = daemon.meteredBudget {
      writer.key("meteredBudget")
      writer.raw(try self.meteredBudget.encoded(meteredBudget, generation: generation))
    }
    writer.key("network")
    if let daemonView {
      writer.raw(Array(try Output.jsonData(DaemonNetworkView(view: daemonView))))
    } else {
      writer.raw(networks.json(of: network))
    }
    writer.key("observedAt")
    var timestamps = self.timestamps
    writer.unescapedString { timestamps.append(microseconds: microseconds, to: &$0) }
    self.timestamps = timestamps
    writer.key("power")
    if let daemonView {
      writer.raw(Array(try Output.jsonData(DaemonPowerView(view: daemonView))))
    } else {
      writer.raw(try self.power.encoded(power))
    }
    writer.key("tasks")
    if let tasks {
      writer.raw(try self.tasks.encoded(tasks, generation: generation))
    } else {
      writer.null()
    }
    writer.key("viewOf")
    writer.string(daemonView == nil ? ViewOf.client.rawValue : ViewOf.daemon.rawValue)
    writer.endObject()
    writer.newline()
    return writer.bytes
  }
}

/// One section's JSON, re-encoded only when its value changed; with a generation, the same
/// generation as the last call means the same value, and nothing is compared.
private struct EncodedSection<Value: Encodable & Equatable> {
  private var value: Value?
  private var generation: Int?
  private var bytes: [UInt8] = []

  mutating func encoded(_ newValue: Value, generation: Int? = nil) throws -> [UInt8] {
    if let generation, generation == self.generation, value != nil { return bytes }
    self.generation = generation
    if value != newValue {
      bytes = Array(try Output.jsonData(newValue))
      value = newValue
    }
    return bytes
  }
}
