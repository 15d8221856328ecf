/// Whether the internet is really reachable through the primary link, beyond having a route:
/// NetworkManager's connectivity check or our own HTTP probe. Values as NetworkManager's
/// `NM_CONNECTIVITY_*`.
public enum Connectivity: String, Sendable, Equatable, Hashable, Encodable, CaseIterable {
  /// Nobody checked: routes are trusted.
  case unknown
  /// No network at all.
  case none
  /// A captive portal intercepts traffic (a login page answers instead of the internet).
  case portal
  /// Connected to a network that does not reach the internet.
  case limited
  /// The internet answered as expected.
  case full

  /// Creates the value from NetworkManager's `NMConnectivityState` number; `nil` when out of
  /// range.
  public init?(networkManagerValue value: UInt32) {
    switch value {
    case 0: self = .unknown
    case 1: self = .none
    case 2: self = .portal
    case 3: self = .limited
    case 4: self = .full
    default: return nil
    }
  }

  /// Known and not `full`: work that needs the network should wait.
  public var blocksNetworkWork: Bool {
    switch self {
    case .unknown, .full: false
    case .none, .portal, .limited: true
    }
  }

  /// A phrase for humans, e.g. "behind a captive portal".
  public var phrase: String {
    switch self {
    case .unknown: "not checked"
    case .none: "no network"
    case .portal: "behind a captive portal"
    case .limited: "limited (the internet does not answer)"
    case .full: "full internet access"
    }
  }
}

/// Who said what ``Connectivity`` is.
public enum ConnectivitySource: String, Sendable, Equatable, Hashable, Encodable {
  /// NetworkManager's own connectivity check.
  case networkManager = "NetworkManager"
  /// Backgrounder's HTTP probe (`[network] connectivity-check`).
  case probe
}
