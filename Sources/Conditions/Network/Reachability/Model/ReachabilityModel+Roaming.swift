extension ReachabilityModel {
  /// Marks the links ModemManager knows: `isRoaming` from its answer, and a roaming link
  /// metered with reason ``MeteredReason/modemManagerRoaming`` (roaming is paid per megabyte
  /// whatever else says), stale while ModemManager's answer is.
  func applyModemManagerRoaming(to links: inout [LinkStatus]) {
    guard !hints.modemManagerRoaming.isEmpty else { return }
    let stale = hints.sources[.modemManager]?.isStale == true
    for index in links.indices {
      guard let roaming = hints.modemManagerRoaming[links[index].name] else { continue }
      links[index].isRoaming = roaming
      guard roaming else { continue }
      links[index].isMetered = true
      links[index].meteredReason = .modemManagerRoaming
      links[index].isStale = stale
    }
  }
}

extension NetworkStatus {
  /// The primary link is the bearer of a modem registered on a roaming network.
  public var primaryIsRoaming: Bool { primaryLink?.isRoaming == true }

  /// Why it is not known whether the primary link is roaming: only a cellular primary link
  /// can roam, and ModemManager did not say for it ("ModemManager not running"). `nil` when it
  /// is known, or when the primary link is not cellular.
  public var primaryRoamingUnknown: String? {
    guard let link = primaryLink, link.type == .cellular, link.isRoaming == nil else {
      return nil
    }
    switch sources[.modemManager] {
    case nil: return "ModemManager not used"
    case .absent: return "ModemManager not running"
    case .waiting: return "ModemManager has not answered"
    case .timedOut: return "ModemManager did not answer"
    case .expired: return "ModemManager stayed away past the stale limit"
    case .answered, .stale: return "ModemManager knows no modem on \(link.name)"
    }
  }
}
