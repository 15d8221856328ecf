/// What the dispatcher knows about the network.
///
/// Unknown is not permission: while ``unknownSources`` is not empty, or a connectivity source
/// is expected (``expectsConnectivity``) and has not said yet, no requirement but
/// ``NetworkRequirement/none`` is met (``isKnown``).
public struct NetworkConditions: Hashable, Sendable, Codable {
  /// A route to the internet exists.
  public var isReachable: Bool
  /// The primary link is metered (cellular, tethering, ...).
  public var isDataMetered: Bool
  /// The name of the primary link, if known (diagnostics, ``NetworkAllowList/interfaces``).
  public var primaryLink: String?
  /// The SSID of the primary link when it is Wi-Fi and associated, if known
  /// (``NetworkAllowList/ssids``).
  public var primarySSID: String?
  /// Whether the internet really answers (NetworkManager or the connectivity probe);
  /// ``InternetConnectivity/unknown`` trusts the routes.
  public var connectivity: InternetConnectivity
  /// The sources that should answer but have not yet (start-up), by name ("NetworkManager",
  /// "nl80211", "network source not configured", …): while any is listed, the conditions are
  /// not known.
  public var unknownSources: [String]
  /// A connectivity source is configured or present (NetworkManager with its check enabled,
  /// the probe): ``InternetConnectivity/unknown`` then means "not known yet", not "trust the
  /// routes".
  public var expectsConnectivity: Bool
  /// The primary link is on a modem registered on a roaming network (ModemManager).
  public var isPrimaryRoaming = false
  /// Why it is not known whether the primary link is roaming, when that matters (a cellular
  /// primary link and ModemManager not running, say): `nil` when it is known or not cellular.
  public var roamingUnknown: String?

  /// Creates network conditions.
  public init(
    isReachable: Bool, isDataMetered: Bool = false, primaryLink: String? = nil,
    connectivity: InternetConnectivity = .unknown, unknownSources: [String] = [],
    expectsConnectivity: Bool = false, primarySSID: String? = nil
  ) {
    self.primarySSID = primarySSID
    self.isReachable = isReachable
    self.isDataMetered = isDataMetered
    self.primaryLink = primaryLink
    self.connectivity = connectivity
    self.unknownSources = unknownSources
    self.expectsConnectivity = expectsConnectivity
  }

  /// Every source answered (or is definitively absent), and connectivity is known when a
  /// connectivity source is expected: only then can a network requirement be met.
  public var isKnown: Bool {
    unknownSources.isEmpty && !(expectsConnectivity && isReachable && connectivity == .unknown)
  }

  /// No network source is configured: nothing is known, network work is held.
  public static let unconfigured = NetworkConditions(
    isReachable: false, unknownSources: [UnconfiguredNetwork.sourceName])

  private enum CodingKeys: String, CodingKey {
    case isReachable, isDataMetered, primaryLink, connectivity, unknownSources
    case expectsConnectivity, primarySSID, isPrimaryRoaming, roamingUnknown
  }

  /// Decodes what the synthesized encoder writes; the fields added later may be missing.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    isReachable = try container.decode(Bool.self, forKey: .isReachable)
    isDataMetered = try container.decode(Bool.self, forKey: .isDataMetered)
    primaryLink = try container.decodeIfPresent(String.self, forKey: .primaryLink)
    connectivity = try container.decode(InternetConnectivity.self, forKey: .connectivity)
    unknownSources =
      try container.decodeIfPresent([String].self, forKey: .unknownSources) ?? []
    expectsConnectivity =
      try container.decodeIfPresent(Bool.self, forKey: .expectsConnectivity) ?? false
    primarySSID = try container.decodeIfPresent(String.self, forKey: .primarySSID)
    isPrimaryRoaming =
      try container.decodeIfPresent(Bool.self, forKey: .isPrimaryRoaming) ?? false
    roamingUnknown = try container.decodeIfPresent(String.self, forKey: .roamingUnknown)
  }

  /// The primary link is known not to be roaming (``NetworkRequirement/notRoaming``).
  public var isKnownNotRoaming: Bool { !isPrimaryRoaming && roamingUnknown == nil }

  /// Reachable and unmetered.
  public static let unmetered = NetworkConditions(isReachable: true, isDataMetered: false)
  /// Reachable over a metered link.
  public static let metered = NetworkConditions(isReachable: true, isDataMetered: true)
  /// Not reachable.
  public static let offline = NetworkConditions(isReachable: false, isDataMetered: false)
}

/// Whether the internet answers through the primary link (NetworkManager's
/// `NMConnectivityState` values).
public enum InternetConnectivity: String, Hashable, Sendable, Codable, CaseIterable {
  /// Nobody checked: the routes are trusted.
  case unknown
  /// No network.
  case none
  /// Behind a captive portal.
  case portal
  /// Connected, but the internet does not answer.
  case limited
  /// The internet answers.
  case full

  /// Known to be broken: work needing the network waits.
  public var blocksNetworkWork: Bool { self == .none || self == .portal || self == .limited }

  /// Why work waits, for humans: "captive portal", "limited", "no network".
  public var waitingPhrase: String {
    switch self {
    case .portal: "captive portal"
    case .limited: "limited connectivity"
    case .none: "no connectivity"
    case .unknown, .full: rawValue
    }
  }
}

/// What the dispatcher knows about power. Unknown is not permission: while ``isKnown`` is
/// false, `requiresCharging` and `requiresBatteryNotLow` are unmet.
public struct PowerConditions: Hashable, Sendable, Codable {
  /// External power is connected (`requiresCharging` is satisfied).
  public var isCharging: Bool
  /// The battery is not low (`requiresBatteryNotLow` is satisfied).
  public var isBatteryNotLow: Bool
  /// The source has answered (`false`: no power source configured, nothing read yet).
  public var isKnown: Bool

  /// Creates power conditions.
  public init(isCharging: Bool, isBatteryNotLow: Bool, isKnown: Bool = true) {
    self.isCharging = isCharging
    self.isBatteryNotLow = isBatteryNotLow
    self.isKnown = isKnown
  }

  /// No power source configured: nothing is known, power-constrained work is held.
  public static let unconfigured = PowerConditions(
    isCharging: false, isBatteryNotLow: false, isKnown: false)

  private enum CodingKeys: String, CodingKey { case isCharging, isBatteryNotLow, isKnown }

  /// Decodes what the synthesized encoder writes; `isKnown` may be missing (then `true`).
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    isCharging = try container.decode(Bool.self, forKey: .isCharging)
    isBatteryNotLow = try container.decode(Bool.self, forKey: .isBatteryNotLow)
    isKnown = try container.decodeIfPresent(Bool.self, forKey: .isKnown) ?? true
  }

  /// On external power with a healthy battery: every power constraint is met.
  public static let externalPower = PowerConditions(isCharging: true, isBatteryNotLow: true)
}

/// A source of network conditions (the lead's adapter wraps the Reachability monitor).
public protocol NetworkConditionSource: Sendable {
  /// The conditions right now.
  var current: NetworkConditions { get }
  /// What ``updates()`` returns: any sequence that never throws, consumed where it is
  /// iterated (a source maps its own stream lazily rather than re-yielding it from a task).
  associatedtype Updates: AsyncSequence<NetworkConditions, Never> & Sendable
  /// An independent subscription per call: yields the current conditions first, then each change.
  func updates() -> Updates
}

/// A source of power conditions (the lead's adapter wraps the PowerSource probe).
public protocol PowerConditionSource: Sendable {
  /// The conditions right now.
  var current: PowerConditions { get }
  /// What ``updates()`` returns: any sequence that never throws, consumed where it is
  /// iterated (a source maps its own stream lazily rather than re-yielding it from a task).
  associatedtype Updates: AsyncSequence<PowerConditions, Never> & Sendable
  /// An independent subscription per call: yields the current conditions first, then each change.
  func updates() -> Updates
}

/// The network source of a configuration that names none: nothing is ever known, so work
/// that needs the network is held, and ``Backgrounder/diagnostics()`` reports a
/// ``HealthProblem/Kind/networkSourceMissing`` problem. A program that truly has no network
/// constraint passes ``AlwaysReachableNetwork`` explicitly; a Linux program passes
/// `LinuxConditionSources` (module `BackgrounderLinux`).
public struct UnconfiguredNetwork: NetworkConditionSource {
  /// The name listed in ``NetworkConditions/unknownSources``.
  public static let sourceName = "network source not configured"
  /// Creates the source.
  public init() {}
  /// Always ``NetworkConditions/unconfigured``.
  public var current: NetworkConditions { .unconfigured }
  /// Yields ``NetworkConditions/unconfigured`` once and never finishes.
  public func updates() -> AsyncStream<NetworkConditions> {
    AsyncStream { $0.yield(.unconfigured) }
  }
}

/// For programs without a network constraint: always reachable and unmetered. Pass it
/// explicitly; a configuration without a network source holds network work instead.
public struct AlwaysReachableNetwork: NetworkConditionSource {
  /// Creates the source.
  public init() {}
  /// Always ``NetworkConditions/unmetered``.
  public var current: NetworkConditions { .unmetered }
  /// Yields ``NetworkConditions/unmetered`` once and never finishes.
  public func updates() -> AsyncStream<NetworkConditions> {
    AsyncStream { $0.yield(.unmetered) }
  }
}

/// The power source of a configuration that names none: nothing is known, so work that
/// requires charging or a battery that is not low is held, and ``Backgrounder/diagnostics()``
/// reports a ``HealthProblem/Kind/powerSourceMissing`` problem. A program that truly has no
/// power constraint passes ``AlwaysExternalPower`` explicitly.
public struct UnconfiguredPower: PowerConditionSource {
  /// Creates the source.
  public init() {}
  /// Always ``PowerConditions/unconfigured``.
  public var current: PowerConditions { .unconfigured }
  /// Yields ``PowerConditions/unconfigured`` once and never finishes.
  public func updates() -> AsyncStream<PowerConditions> {
    AsyncStream { $0.yield(.unconfigured) }
  }
}

/// For programs without a power constraint: always on external power. Pass it explicitly; a
/// configuration without a power source holds power-constrained work instead.
public struct AlwaysExternalPower: PowerConditionSource {
  /// Creates the source.
  public init() {}
  /// Always ``PowerConditions/externalPower``.
  public var current: PowerConditions { .externalPower }
  /// Yields ``PowerConditions/externalPower`` once and never finishes.
  public func updates() -> AsyncStream<PowerConditions> {
    AsyncStream { $0.yield(.externalPower) }
  }
}
