/// What sources beyond rtnetlink and sysfs say about the network: NetworkManager over D-Bus
/// (per-interface metered setting, connectivity), nl80211 (the SSID of each Wi-Fi link) and the
/// opt-in HTTP connectivity probe. Each source updates only its own part; the monitor
/// re-evaluates the status after every change (``ReachabilityMonitor/updateHints(_:)``).
public struct LinkHints: Sendable, Equatable {
  /// NetworkManager's `Metered` per interface name (devices it manages and knows).
  public var networkManagerMetered: [String: NetworkManagerMetered] = [:]
  /// NetworkManager's global connectivity (`unknown` when it does not run or does not check).
  public var networkManagerConnectivity: Connectivity = .unknown
  /// NetworkManager's per-device connectivity (best of `Ip4Connectivity`/`Ip6Connectivity`),
  /// by IP interface name.
  public var networkManagerDeviceConnectivity: [String: Connectivity] = [:]
  /// The SSID of each associated Wi-Fi interface, from nl80211 (absent: not associated or
  /// unknown). Raw bytes decoded as UTF-8 with replacement; SSIDs are not required to be text.
  public var ssids: [String: String] = [:]
  /// The probe's last answer and the link it was made over; used only while that link is
  /// still primary.
  public var probe: (link: String, connectivity: Connectivity)?
  /// Where each hint source stands (a source not listed is not in use). While one is
  /// ``HintSourceState/waiting(since:)``, the status is not settled.
  public var sources: [HintSourceName: HintSourceState] = [:]
  /// NetworkManager checks connectivity (`ConnectivityCheckEnabled`): its `unknown` then means
  /// "not known yet".
  public var networkManagerChecksConnectivity = false
  /// ModemManager: per network interface of a modem's bearer, whether the modem is registered
  /// on a roaming network (absent: no modem ModemManager knows uses that interface).
  public var modemManagerRoaming: [String: Bool] = [:]

  /// No hints.
  public init() {}

  /// The connectivity of the network whose primary link is `primary`, and its source:
  /// NetworkManager's for that device when it knows, else NetworkManager's global value, else
  /// the probe's for that link, else unknown.
  public func connectivity(primary: String?) -> (Connectivity, ConnectivitySource?) {
    if let primary, let device = networkManagerDeviceConnectivity[primary], device != .unknown {
      return (device, .networkManager)
    }
    if networkManagerConnectivity != .unknown {
      return (networkManagerConnectivity, .networkManager)
    }
    if let probe, probe.link == primary, probe.connectivity != .unknown {
      return (probe.connectivity, .probe)
    }
    return (.unknown, nil)
  }

  /// Equal when every part is equal.
  public static func == (lhs: LinkHints, rhs: LinkHints) -> Bool {
    lhs.networkManagerMetered == rhs.networkManagerMetered
      && lhs.networkManagerConnectivity == rhs.networkManagerConnectivity
      && lhs.networkManagerDeviceConnectivity == rhs.networkManagerDeviceConnectivity
      && lhs.ssids == rhs.ssids && lhs.probe?.link == rhs.probe?.link
      && lhs.probe?.connectivity == rhs.probe?.connectivity && lhs.sources == rhs.sources
      && lhs.networkManagerChecksConnectivity == rhs.networkManagerChecksConnectivity
      && lhs.modemManagerRoaming == rhs.modemManagerRoaming
  }

  /// A connectivity source is configured or present: NetworkManager with its check enabled
  /// (answered or stale), or the probe.
  public var expectsConnectivity: Bool {
    let networkManager = sources[.networkManager]
    let networkManagerChecks =
      networkManagerChecksConnectivity
      && (networkManager == .answered || networkManager?.isStale == true)
    let probeInUse = sources[.probe].map { $0 != .absent } ?? false
    return networkManagerChecks || probeInUse
  }
}
