import Reachability

/// Human-readable renderings of a ``NetworkStatus``.
enum NetworkStatusText {
  /// The multi-line report `status` prints.
  static func report(_ status: NetworkStatus) -> String {
    var lines: [String] = []
    if let primary = status.primaryLink {
      lines.append("Network: reachable via \(primary.name) (\(primary.type.rawValue))")
      let verdict = primary.isMetered ? "yes" : "no"
      lines.append("Metered: \(verdict), \(primary.meteredReason)")
      if let ssid = primary.ssid { lines.append("Wi-Fi network: \"\(ssid)\"") }
      lines.append("Connectivity: \(connectivityText(status))")
    } else {
      lines.append("Network: not reachable (no usable default route)")
      lines.append("Metered: no (nothing reachable)")
    }
    lines.append("Links:")
    for link in status.links {
      var flags = [link.isUp ? "up" : "down", link.hasCarrier ? "carrier" : "no-carrier"]
      if link.hasDefaultRoute { flags.append("default-route") }
      let metered = link.isMetered ? "metered" : "unmetered"
      lines.append(
        "  \(link.index) \(link.name) type=\(link.type.rawValue) \(flags.joined(separator: ",")) "
          + "\(metered) (\(link.meteredReason))" + (link.ssid.map { " ssid=\"\($0)\"" } ?? ""))
    }
    if status.malformedMessages > 0 {
      lines.append("Malformed netlink messages skipped: \(status.malformedMessages)")
    }
    return lines.joined(separator: "\n")
  }

  /// The one-line summary `status --watch` prints per change.
  static func line(_ status: NetworkStatus, observedAt: String) -> String {
    let links = status.links.map { link in
      "\(link.name):\(link.isUp ? "up" : "down")\(link.hasCarrier ? "" : ",no-carrier")"
    }.joined(separator: " ")
    guard let primary = status.primaryLink else {
      return "\(observedAt) unreachable | links \(links)"
    }
    let metered = primary.isMetered ? "metered" : "unmetered"
    let connectivity = status.connectivity == .unknown ? "" : ", \(status.connectivity.phrase)"
    return "\(observedAt) reachable via \(primary.name) (\(primary.type.rawValue)), \(metered): "
      + "\(primary.meteredReason)\(connectivity) | links \(links)"
  }

  /// "behind a captive portal (NetworkManager)", or "not checked".
  static func connectivityText(_ status: NetworkStatus) -> String {
    guard let source = status.connectivitySource else { return status.connectivity.phrase }
    return "\(status.connectivity.phrase) (\(source.rawValue))"
  }
}
