/// Settings of the reachability monitor.
public struct ReachabilityConfiguration: Sendable, Equatable {
  /// Root of the sysfs tree used for `class/net/IF/...` lookups (default `/sys`).
  public var sysfsRoot: String
  /// Interface-name globs (fnmatch) always treated as metered. Checked before
  /// ``unmeteredOverrides``.
  public var meteredOverrides: [String]
  /// Interface-name globs (fnmatch) always treated as unmetered.
  public var unmeteredOverrides: [String]
  /// SSID globs (fnmatch) of Wi-Fi networks always treated as metered (phone hotspots).
  public var meteredSSIDs: [String]
  /// SSID globs (fnmatch) of Wi-Fi networks always treated as unmetered.
  public var unmeteredSSIDs: [String]
  /// Network namespace to watch, e.g. `/var/run/netns/NAME`; `nil` for the current one.
  public var networkNamespacePath: String?
  /// IPv4/IPv6 address literals whose route decides the primary link (e.g. the connectivity
  /// check host's address); per family the first one replaces the well-known destination
  /// (`8.8.8.8`, `2001:4860:4860::8888`). See ``EgressProbeDestinations``.
  public var egressProbeDestinations: [String] = []

  /// Creates a configuration.
  public init(
    sysfsRoot: String = "/sys", meteredOverrides: [String] = [], unmeteredOverrides: [String] = [],
    networkNamespacePath: String? = nil, meteredSSIDs: [String] = [],
    unmeteredSSIDs: [String] = []
  ) {
    self.meteredSSIDs = meteredSSIDs
    self.unmeteredSSIDs = unmeteredSSIDs
    self.sysfsRoot = sysfsRoot
    self.meteredOverrides = meteredOverrides
    self.unmeteredOverrides = unmeteredOverrides
    self.networkNamespacePath = networkNamespacePath
  }

  /// The metered overrides (``meteredOverrides``, ``unmeteredOverrides``, ``meteredSSIDs``,
  /// ``unmeteredSSIDs``) as the classifier takes them; a running monitor takes new ones with
  /// ``ReachabilityMonitor/updateOverrides(_:)``.
  public var interfaceOverrides: InterfaceOverrides {
    InterfaceOverrides(
      metered: meteredOverrides, unmetered: unmeteredOverrides, meteredSSIDs: meteredSSIDs,
      unmeteredSSIDs: unmeteredSSIDs)
  }
}
