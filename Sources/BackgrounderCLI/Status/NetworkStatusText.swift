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
      lines.append("Metered: \(verdict), \(escaped("\(primary.meteredReason)"))")
      // SSIDs arrive escaped (control characters, backslash and invalid bytes as `\xNN`).
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
        "  \(link.index) \(escaped(link.name)) type=\(link.type.rawValue) "
          + "\(flags.joined(separator: ",")) \(metered) (\(escaped("\(link.meteredReason)")))"
          + (link.ssid.map { " ssid=\"\($0)\"" } ?? ""))
    }
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
    return "reachable via \(escaped(primary.name)) (\(primary.type.rawValue)), "
      + "\(metered): \(escaped("\(primary.meteredReason)"))\(connectivity)"
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
    return "\(status.connectivity.phrase) (\(source.rawValue))"
  }

  /// `text` with backslashes, control characters (C0, DEL, C1) and invisible format or
  /// line-separator characters written as `\\`, `\n`, `\x1b`, `\u{202E}`.
  static func escaped(_ text: String) -> String {
    // Printable ASCII other than the backslash (most interface names) stays as it is.
    if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\\") }) {
      return text
    }
    var result = ""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\\": result += "\\\\"
      case "\n": result += "\\n"
      case "\t": result += "\\t"
      case "\r": result += "\\r"
      default:
        switch scalar.properties.generalCategory {
        case .control:  // C0, DEL and C1: all below U+0100
          let hex = String(scalar.value, radix: 16)
          result += "\\x" + (hex.count < 2 ? "0" : "") + hex
        case .format, .lineSeparator, .paragraphSeparator, .unassigned:
          result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
        default:
          result.unicodeScalars.append(scalar)
        }
      }
    }
    return result
  }
}
