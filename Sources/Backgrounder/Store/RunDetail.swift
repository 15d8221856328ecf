/// What a run record keeps besides its outcome (migration `i29-run-detail`): the conditions
/// the run started under and the tail of its output.
struct RunDetail: Sendable, Equatable {
  /// ``RunConditions/text(network:power:)`` at the worker's start; nil when it never started.
  var conditions: String?
  /// The last output the worker recorded (``WorkContext/recordOutputTail(_:)``), bounded.
  var outputTail: String?
  /// How the worker ended when it was stopped (``WorkContext/recordStop(_:)``).
  var stop: String?
  /// The bytes the run sent and received (``WorkContext/recordNetworkBytes(_:)``), stored in
  /// the same transaction as the run's outcome.
  var networkBytes: RunNetworkRecord?

  /// The longest output tail kept, in UTF-8 bytes.
  static let outputTailLimit = 4096

  /// `text` cut to its last ``outputTailLimit`` bytes, at a character boundary.
  static func bounded(_ text: String) -> String {
    let bytes = text.utf8
    guard bytes.count > outputTailLimit else { return text }
    var start = bytes.index(bytes.endIndex, offsetBy: -outputTailLimit)
    // Skip continuation bytes (0b10xxxxxx) so the tail starts at a character.
    while start < bytes.endIndex, bytes[start] & 0xC0 == 0x80 { start = bytes.index(after: start) }
    return String(text[start...])
  }
}

/// The words a run record keeps for the conditions a run started under.
public enum RunConditions {
  /// `eth0, unmetered, internet full; charging, battery not low` — the primary link (and its
  /// Wi-Fi network), metered or not, connectivity; external power and the battery, or
  /// `power unknown`. `offline` when nothing is reachable.
  public static func text(network: NetworkConditions, power: PowerConditions) -> String {
    var parts: [String] = []
    if !network.isReachable {
      parts.append("offline")
    } else {
      var link = network.primaryLink ?? "no primary link"
      if let ssid = network.primarySSID { link += " (Wi-Fi \"\(ssid)\")" }
      parts.append(link)
      parts.append(network.isDataMetered ? "metered" : "unmetered")
      parts.append("internet \(network.connectivity.rawValue)")
    }
    let powerText =
      power.isKnown
      ? [
        power.isCharging ? "charging" : "on battery",
        power.isBatteryNotLow ? "battery not low" : "battery low",
      ].joined(separator: ", ") : "power unknown"
    return parts.joined(separator: ", ") + "; " + powerText
  }
}
