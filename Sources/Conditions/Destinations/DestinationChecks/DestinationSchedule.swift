import Backgrounder

/// The network a destination's answer holds for: the primary link, its SSID and its addresses.
/// A change of any of them is a network change: every destination is checked again.
struct NetworkKey: Hashable, Sendable {
  /// The primary link's name; `nil`: no usable default route.
  var primaryLink: String?
  /// The SSID of the primary link when it is Wi-Fi.
  var ssid: String?
  /// The primary link's addresses, sorted.
  var addresses: [String]
}

/// When to check which `requires-reachable` destination, as a value-type state machine (the
/// driver, ``DestinationMonitor``, does the connects and the timer):
///
/// - after each network change (``networkChanged(to:now:)``) every destination is checked, and
///   nothing is known of it until the check answers: an answer from an earlier visit to the same
///   network is not kept (a server that answered an hour ago may be gone; a job started on that
///   answer was stopped a moment later, when the check found the port closed);
/// - while a destination is unreachable it is checked again with backoff (``Settings``: 5 s,
///   doubling, at most 5 min);
/// - a reachable destination is not checked again until the network changes: nothing runs on a
///   timer then.
///
/// Unknown is not permission: a destination not checked yet on this network is absent from
/// ``conditions`` (not reachable), and a running job is not stopped for it (the dispatcher stops
/// a run for a known failure only).
struct DestinationSchedule: Sendable {
  /// The backoff while a destination is unreachable.
  struct Settings: Sendable {
    var initialBackoff: Duration = .seconds(5)
    var maxBackoff: Duration = .seconds(300)
  }

  /// What the driver does after a step.
  struct Decision: Equatable, Sendable {
    /// Destinations to connect to now (over ``NetworkKey/primaryLink``).
    var probes: [String] = []
    /// The conditions to publish (they changed), or `nil`.
    var publish: DestinationConditions?
    /// When ``wake(now:)`` is due next; `nil`: no timer.
    var nextWake: ContinuousClock.Instant?
  }

  let settings: Settings
  private(set) var destinations: Set<String> = []
  /// The current network; `nil` until the network source answered.
  private(set) var network: NetworkKey?
  /// What the checks on the current network found, by destination (emptied on each change).
  private(set) var states: [String: DestinationState] = [:]
  /// Checks under way on the current network.
  private(set) var inFlight: Set<String> = []
  /// The last backoff of each unreachable destination and when it is checked again.
  private(set) var backoff: [String: Duration] = [:]
  private(set) var due: [String: ContinuousClock.Instant] = [:]
  /// Bumped on each network change: a check started before it answers for an old network.
  private(set) var generation: UInt64 = 0
  private var published = DestinationConditions.unconfigured

  init(settings: Settings = Settings()) {
    self.settings = settings
  }

  /// The conditions on the current network (what its checks found).
  var conditions: DestinationConditions {
    guard network != nil else { return .unconfigured }
    return DestinationConditions(states: states.filter { destinations.contains($0.key) })
  }

  /// The destinations the jobs require now: new ones are checked at once.
  mutating func setDestinations(_ wanted: Set<String>, now: ContinuousClock.Instant) -> Decision {
    let added = wanted.subtracting(destinations)
    destinations = wanted
    for gone in backoff.keys where !wanted.contains(gone) {
      backoff[gone] = nil
      due[gone] = nil
    }
    return decide(probing: network == nil ? [] : added, now: now)
  }

  /// The network changed (or answered for the first time): check every destination again.
  mutating func networkChanged(to key: NetworkKey, now: ContinuousClock.Instant) -> Decision {
    guard key != network else { return decide(probing: [], now: now) }
    network = key
    generation += 1
    states = [:]
    inFlight = []
    backoff = [:]
    due = [:]
    return decide(probing: destinations, now: now)
  }

  /// A check started at `generation` answered.
  mutating func checked(
    _ destination: String, _ state: DestinationState, generation: UInt64,
    now: ContinuousClock.Instant
  ) -> Decision {
    guard generation == self.generation, network != nil, destinations.contains(destination) else {
      return decide(probing: [], now: now)
    }
    inFlight.remove(destination)
    states[destination] = state
    if state == .reachable {
      backoff[destination] = nil
      due[destination] = nil
    } else {
      let delay =
        backoff[destination].map { min($0 * 2, settings.maxBackoff) }
        ?? settings.initialBackoff
      backoff[destination] = delay
      due[destination] = now + delay
    }
    return decide(probing: [], now: now)
  }

  /// The timer fired: check the unreachable destinations whose backoff is over.
  mutating func wake(now: ContinuousClock.Instant) -> Decision {
    let ready = due.filter { $0.value <= now }.map(\.key)
    for destination in ready { due[destination] = nil }
    return decide(probing: Set(ready), now: now)
  }

  private mutating func decide(probing: Set<String>, now: ContinuousClock.Instant) -> Decision {
    var decision = Decision()
    // With no primary link nothing is connected: each destination has no route, known at once.
    if let network, network.primaryLink == nil {
      for destination in probing { states[destination] = .unreachable(.noRoute) }
    } else {
      let fresh = probing.subtracting(inFlight)
      inFlight.formUnion(fresh)
      decision.probes = fresh.sorted()
    }
    let conditions = self.conditions
    if conditions != published {
      published = conditions
      decision.publish = conditions
    }
    decision.nextWake = due.values.min()
    return decision
  }
}
