#if canImport(Glibc)
  import Glibc
#endif

/// A source of link hints beyond rtnetlink and sysfs.
public enum HintSourceName: String, Sendable, Hashable, Encodable, CaseIterable, Comparable {
  /// NetworkManager over D-Bus: metered settings and connectivity.
  case networkManager = "NetworkManager"
  /// nl80211: the SSID of each Wi-Fi link.
  case nl80211
  /// The opt-in HTTP connectivity probe (`[network] connectivity-check`).
  case probe
  /// ModemManager over D-Bus: which links are on a modem registered on a roaming network.
  case modemManager = "ModemManager"

  /// Orders by name.
  public static func < (lhs: HintSourceName, rhs: HintSourceName) -> Bool {
    lhs.rawValue < rhs.rawValue
  }
}

/// Where a hint source stands. Unknown is not permission: while a source is
/// ``waiting(since:)``, the network conditions are not known and no work that needs the network
/// starts. Times are wall-clock seconds since 1970, for people ("away since 12:03:10").
public enum HintSourceState: Sendable, Equatable, Hashable {
  /// It should answer and has not yet (start-up).
  case waiting(since: Double)
  /// Its answer is in and current.
  case answered
  /// Definitively absent: not on the bus, no wireless, not configured. The kernel decides.
  case absent
  /// It should have answered but did not within `[network] source-timeout`: treated as
  /// absent, reported as a health problem.
  case timedOut(since: Double)
  /// It went away (NetworkManager left the bus): its last answer is kept, marked stale, until
  /// it returns or `[network] stale-hints` passes.
  case stale(since: Double)
  /// It stayed away longer than `[network] stale-hints`: its last answer was dropped and the
  /// kernel decides; reported as a health problem.
  case expired(since: Double)

  /// The state's name in JSON: `waiting`, `answered`, `absent`, `timedOut`, `stale`, `expired`.
  public var name: String {
    switch self {
    case .waiting: "waiting"
    case .answered: "answered"
    case .absent: "absent"
    case .timedOut: "timedOut"
    case .stale: "stale"
    case .expired: "expired"
    }
  }

  /// When the state began, for the states that have a time.
  public var since: Double? {
    switch self {
    case .waiting(let since), .timedOut(let since), .stale(let since), .expired(let since):
      since
    case .answered, .absent: nil
    }
  }

  /// ``since`` as an ISO 8601 UTC time ("2026-11-26T12:03:10Z"), for JSON.
  public var sinceText: String? { since.map(Self.iso8601) }

  /// ``since`` as a local wall-clock time of day ("12:03:10"), for people.
  public var sinceClockText: String? {
    since.map { seconds in
      var time = time_t(seconds)
      var parts = tm()
      localtime_r(&time, &parts)
      return Self.twoDigits(parts.tm_hour) + ":" + Self.twoDigits(parts.tm_min) + ":"
        + Self.twoDigits(parts.tm_sec)
    }
  }

  static func iso8601(_ seconds: Double) -> String {
    var time = time_t(seconds)
    var parts = tm()
    gmtime_r(&time, &parts)
    return "\(parts.tm_year + 1900)-\(twoDigits(parts.tm_mon + 1))-\(twoDigits(parts.tm_mday))T"
      + "\(twoDigits(parts.tm_hour)):\(twoDigits(parts.tm_min)):\(twoDigits(parts.tm_sec))Z"
  }

  static func twoDigits(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }

  /// Still waiting for a first answer.
  public var isWaiting: Bool { if case .waiting = self { true } else { false } }
  /// Its answer is kept although it went away.
  public var isStale: Bool { if case .stale = self { true } else { false } }
  /// A state worth a health problem (timed out, or stale past the limit).
  public var isProblem: Bool {
    switch self {
    case .timedOut, .expired: true
    default: false
    }
  }
}
