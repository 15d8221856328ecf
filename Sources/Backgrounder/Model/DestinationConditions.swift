/// Why the last TCP connect to a `requiredReachable` destination failed.
public enum DestinationFailure: String, Hashable, Sendable, Codable, CaseIterable {
  /// The destination answered with a reset (`ECONNREFUSED`): nothing listens on the port.
  case refused
  /// No answer before the timeout (a dropped SYN, a host that is not there).
  case timedOut
  /// The host name does not resolve to an address.
  case doesNotResolve
  /// No route to the destination (`ENETUNREACH`, `EHOSTUNREACH`, no primary link).
  case noRoute

  /// For humans: "connection refused", "timed out", "does not resolve", "no route".
  public var phrase: String {
    switch self {
    case .refused: "connection refused"
    case .timedOut: "timed out"
    case .doesNotResolve: "does not resolve"
    case .noRoute: "no route"
    }
  }
}

/// What is known of one destination on the current network.
public enum DestinationState: Hashable, Sendable {
  /// The last TCP connect succeeded.
  case reachable
  /// The last TCP connect failed, for this reason.
  case unreachable(DestinationFailure)
}

/// What the dispatcher knows about the destinations work requires (`requiredReachable`,
/// `"host:port"`). Unknown is not permission: a destination missing from ``states`` (not checked
/// yet on this network) is not reachable.
public struct DestinationConditions: Hashable, Sendable {
  /// The state of each destination checked on the current network, by its text.
  public var states: [String: DestinationState]

  /// Creates destination conditions.
  public init(states: [String: DestinationState]) {
    self.states = states
  }

  /// No destination source configured (or none checked yet): nothing is reachable.
  public static let unconfigured = DestinationConditions(states: [:])

  /// Whether `destination` was reachable at its last check on the current network.
  public func isReachable(_ destination: String) -> Bool {
    states[destination] == .reachable
  }

  /// Why `destination` is known to be unreachable, or `nil` (reachable, or not checked yet).
  public func failure(of destination: String) -> DestinationFailure? {
    if case .unreachable(let failure) = states[destination] { return failure }
    return nil
  }
}

/// A source of destination conditions (on Linux, TCP connects over the primary link, driven
/// by the daemon's event loop).
public protocol DestinationConditionSource: Sendable {
  /// The conditions right now.
  var current: DestinationConditions { get }
  /// What ``updates()`` returns: any sequence that never throws, consumed where it is
  /// iterated (a source maps its own stream lazily rather than re-yielding it from a task).
  associatedtype Updates: AsyncSequence<DestinationConditions, Never> & Sendable
  /// An independent subscription per call: yields the current conditions first, then each change.
  func updates() -> Updates
}

/// The destination source of a configuration that names none: nothing is known, so work that
/// requires a reachable destination is held.
public struct UnconfiguredDestinations: DestinationConditionSource {
  /// Creates the source.
  public init() {}
  /// Always ``DestinationConditions/unconfigured``.
  public var current: DestinationConditions { .unconfigured }
  /// Yields ``DestinationConditions/unconfigured`` once and never finishes.
  public func updates() -> AsyncStream<DestinationConditions> {
    AsyncStream { $0.yield(.unconfigured) }
  }
}

extension WorkConstraints {
  /// The destination predicate `conditions` leave unmet (also while it is not checked yet).
  func unmetDestination(_ conditions: DestinationConditions) -> [PendingPredicate] {
    guard let destination = requiredReachable, !conditions.isReachable(destination) else {
      return []
    }
    return [.reachable(destination: destination, failure: conditions.failure(of: destination))]
  }
}
