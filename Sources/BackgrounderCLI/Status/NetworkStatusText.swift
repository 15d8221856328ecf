import Reachability

/// Human-readable renderings of a ``NetworkStatus``. Every text that comes from the kernel or
/// the network (interface names, drivers, link kinds) is printed with control and invisible
/// format characters escaped, so that a crafted interface name cannot rewrite the terminal.
enum NetworkStatusText {
  /// The multi-line report `status` prints.
  static func report(_ status: NetworkStatus) -> String {
    var lines: [String] = []
    if let primary = status.primaryLink {
      lines.append("Network: reachable via \(escaped(primary.name)) (\(primary.type.rawValue))")
      let verdict = primary.isMetered ? "yes" : "no"
      lines.append(
        "Metered: \(verdict), \(escaped("\(primary.meteredReason)"))"
          + (primary.isStale ? " \(staleNote(status))" : ""))
      // SSIDs arrive escaped (control characters, backslash and invalid bytes as `\xNN`).
      if let ssid = primary.ssid { lines.append("Wi-Fi network: \"\(ssid)\"") }
      if let roaming = primary.isRoaming { lines.append("Roaming: \(roaming ? "yes" : "no")") }
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
        "  \(link.index) \(escaped(link.name)) type=\(link.type.rawValue) "
          + "\(flags.joined(separator: ",")) \(metered) (\(escaped("\(link.meteredReason)")))"
          + (link.ssid.map { " ssid=\"\($0)\"" } ?? "") + (link.isRoaming == true ? " roaming" : "")
          + (link.isStale ? " stale" : ""))
    }
    for line in sourceLines(status) { lines.append(line) }
    if status.malformedMessages > 0 {
      lines.append("Malformed netlink messages skipped: \(status.malformedMessages)")
    }
    if status.netlinkOverruns > 0 {
      lines.append("Netlink receive buffer overruns (re-synchronized): \(status.netlinkOverruns)")
    }
    return lines.joined(separator: "\n")
  }

  /// `reachable via NAME (TYPE), metered: REASON[, CONNECTIVITY]` or `unreachable`: the part of
  /// a `status --watch` line between the time and the links (see
  /// ``StatusLineEncoder/textLine(observedAt:network:power:)``).
  static func verdict(_ status: NetworkStatus) -> String {
    guard let primary = status.primaryLink else { return "unreachable" }
    let metered = primary.isMetered ? "metered" : "unmetered"
    let connectivity = status.connectivity == .unknown ? "" : ", \(status.connectivity.phrase)"
    let stale = status.networkManagerIsStale ? " \(staleNote(status))" : ""
    return "reachable via \(escaped(primary.name)) (\(primary.type.rawValue)), "
      + "\(metered): \(escaped("\(primary.meteredReason)"))\(connectivity)\(stale)"
  }

  /// "(NetworkManager away since 12:03:10, using its last answer)".
  static func staleNote(_ status: NetworkStatus) -> String {
    let since = status.sources[.networkManager]?.sinceClockText.map { " since \($0)" } ?? ""
    return "(NetworkManager away\(since), using its last answer)"
  }

  /// One line per hint source that is not simply answered or absent: "Sources: NetworkManager
  /// waiting since 12:03:10", "… timed out at …", "… away since …, using its last answer", "…
  /// gone since …, kernel signals decide".
  static func sourceLines(_ status: NetworkStatus) -> [String] {
    status.sources.keys.sorted().compactMap { name -> String? in
      guard let state = status.sources[name] else { return nil }
      let at = state.sinceClockText ?? "?"
      return switch state {
      case .answered, .absent: nil
      case .waiting: "Source: \(name.rawValue) has not answered yet (waiting since \(at))"
      case .timedOut:
        "Source: \(name.rawValue) did not answer in time (since \(at)); treated as absent"
      case .stale: "Source: \(name.rawValue) away since \(at), using its last answer"
      case .expired:
        "Source: \(name.rawValue) away since before \(at); its last answer was dropped, "
          + "kernel signals decide"
      }
    }
  }

  /// `NAME:up NAME:down,no-carrier ...`: the links part of a `status --watch` line.
  static func links(_ links: [LinkStatus]) -> String {
    links.map { link in
      "\(escaped(link.name)):\(link.isUp ? "up" : "down")\(link.hasCarrier ? "" : ",no-carrier")"
    }.joined(separator: " ")
  }

  /// "behind a captive portal (NetworkManager)", or "not checked".
  static func connectivityText(_ status: NetworkStatus) -> String {
    guard let source = status.connectivitySource else { return status.connectivity.phrase }
    let stale = status.connectivityIsStale ? " \(staleNote(status))" : ""
    return "\(status.connectivity.phrase) (\(source.rawValue))\(stale)"
  }

  /// One field (an interface name, a reason) escaped for the terminal: backslashes, newlines
  /// and control characters as `\\`, `\n`, `\x1b` (``TerminalText/escaped(_:keepingLines:)``).
  static func escaped(_ text: String) -> String { TerminalText.escaped(text, keepingLines: false) }
}
