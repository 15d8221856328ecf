import Backgrounder

/// `relax-after = "3d"` with an optional `relax = { … }`: once a due run of the job has waited
/// that long for its conditions (since its due time; the wait restarts after a success), they
/// relax. By default `network = "unmetered"` becomes `"not-roaming"`, `requires-charging`
/// becomes `requires-battery-not-low`, and `ssids` / `interfaces` are dropped; `relax` sets the
/// relaxed values of those keys itself. `window`, `requires-mount` and `requires-reachable`
/// are never relaxed.
package struct JobRelax: Sendable, Equatable, Codable {
  /// How long a due run waits for the full conditions.
  package var after: Duration
  /// `relax.network`: the network once relaxed; the default relaxation when nil.
  package var network: JobDefinition.Network?
  /// `relax.requires-charging`.
  package var requiresCharging: Bool?
  /// `relax.requires-battery-not-low`.
  package var requiresBatteryNotLow: Bool?
  /// `relax.ssids`: the Wi-Fi networks allowed once relaxed; dropped when nil.
  package var ssids: [String]?
  /// `relax.interfaces`: the interfaces allowed once relaxed; dropped when nil.
  package var interfaces: [String]?

  /// Relaxes the defaults way after `after`.
  package init(after: Duration) {
    self.after = after
  }

  /// The runtime's relaxation of `constraints` (the job's full ones).
  package func relaxation(of constraints: WorkConstraints) -> ConstraintRelaxation {
    var relaxation = ConstraintRelaxation.defaults(after: after, for: constraints)
    if let network { relaxation.networkRequired = NetworkRequirement(rawValue: network.rawValue)! }
    if let requiresCharging { relaxation.requiresCharging = requiresCharging }
    if let requiresBatteryNotLow { relaxation.requiresBatteryNotLow = requiresBatteryNotLow }
    relaxation.allowedNetworks = NetworkAllowList(ssids: ssids ?? [], interfaces: interfaces ?? [])
    return relaxation
  }
}

/// Reads `relax-after` and `relax`.
enum RelaxKeys {
  static let keys = ["relax-after", "relax"]
  /// The keys a `relax` table may set.
  static let relaxable = [
    "network", "requires-charging", "requires-battery-not-low", "ssids", "interfaces",
  ]
  /// The keys that are never relaxed: a `relax` table naming one is an error.
  static let neverRelaxed = ["window", "requires-mount", "requires-reachable"]

  static func read(_ job: TableReader) throws(ConfigurationError) -> JobRelax? {
    let table = try job.table("relax")
    guard let after = try job.duration("relax-after") else {
      if table != nil {
        throw job.error("relax", "needs a `relax-after` (how long a due run waits first)")
      }
      return nil
    }
    guard after > .zero else { throw job.error("relax-after", "must be longer than 0") }
    var relax = JobRelax(after: after)
    guard let table else { return relax }
    for key in neverRelaxed where table.contains(key) {
      throw table.error(key, "is never relaxed (only \(relaxable.joined(separator: ", ")) are)")
    }
    try table.rejectUnknownKeys(relaxable)
    if let network = try table.string("network") {
      guard let value = JobDefinition.Network(rawValue: network) else {
        throw table.error(
          "network",
          "expected \"none\", \"any\", \"unmetered\" or \"not-roaming\", got \"\(network)\"")
      }
      relax.network = value
    }
    relax.requiresCharging = try table.bool("requires-charging")
    relax.requiresBatteryNotLow = try table.bool("requires-battery-not-low")
    relax.ssids = try table.stringArray("ssids")
    relax.interfaces = try table.stringArray("interfaces")
    return relax
  }
}
