import Foundation

/// How the store writes the network allow-list of a task and the predicates of
/// ``NetworkAllowList`` and `requiredMount` (in the comma-separated `blockedOn` column): each
/// value percent-encoded, so that globs, SSIDs and paths round-trip whatever they hold.
enum PlacePredicateCoding {
  /// `wifi:` / `interface:` + the allowed globs joined by `|`, then `=` + the current value
  /// when there is one; `mount:` + the path.
  static func encode(_ predicate: PendingPredicate) -> String? {
    switch predicate {
    case .wifiNetwork(let allowed, let current): "wifi:" + list(allowed, current)
    case .networkInterface(let allowed, let current): "interface:" + list(allowed, current)
    case .mounted(let path): "mount:" + escape(path)
    case .notRoaming(let unknown): "notRoaming" + (unknown.map { ":" + escape($0) } ?? "")
    case .reachable(let destination, let failure):
      "reach:" + escape(destination) + (failure.map { "=" + $0.rawValue } ?? "")
    case .meteredBudget(let wait): MeteredBudgetWaitCoding.encode(wait)
    case .userIdle(let required, let idleSince, let unknown):
      // `idle:` + the required seconds, then `@` + idle-since (ms since 1970) or `?` + why
      // it is not known; nothing more while the user is active.
      "idle:\(required.components.seconds)"
        + (unknown.map { "?" + escape($0) }
          ?? idleSince.map { "@\(Int64(($0.timeIntervalSince1970 * 1000).rounded()))" } ?? "")
    default: nil
    }
  }

  /// The predicate `item` encodes, or `nil` when it is not one of these.
  static func decode(_ item: Substring) -> PendingPredicate? {
    if item.hasPrefix("wifi:"), let (allowed, current) = list(item.dropFirst(5)) {
      return .wifiNetwork(allowed: allowed, current: current)
    }
    if item.hasPrefix("interface:"), let (allowed, current) = list(item.dropFirst(10)) {
      return .networkInterface(allowed: allowed, current: current)
    }
    if item.hasPrefix("mount:"), let path = item.dropFirst(6).removingPercentEncoding {
      return .mounted(path: path)
    }
    if item == "notRoaming" { return .notRoaming(roamingUnknown: nil) }
    if item.hasPrefix("notRoaming:"), let reason = item.dropFirst(11).removingPercentEncoding {
      return .notRoaming(roamingUnknown: reason)
    }
    if let wait = MeteredBudgetWaitCoding.decode(item) { return .meteredBudget(wait) }
    if item.hasPrefix("idle:") { return userIdle(item.dropFirst(5)) }
    if item.hasPrefix("reach:") {
      let parts = item.dropFirst(6).split(
        separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      guard let destination = parts[0].removingPercentEncoding else { return nil }
      guard parts.count == 2 else { return .reachable(destination: destination, failure: nil) }
      guard let failure = DestinationFailure(rawValue: String(parts[1])) else { return nil }
      return .reachable(destination: destination, failure: failure)
    }
    return nil
  }

  /// The ``PendingPredicate/userIdle(required:idleSince:unknown:)`` after `idle:`.
  private static func userIdle(_ text: Substring) -> PendingPredicate? {
    let end = text.firstIndex { $0 == "@" || $0 == "?" } ?? text.endIndex
    guard let seconds = Int64(text[..<end]), seconds >= 0 else { return nil }
    let required = Duration.seconds(seconds)
    guard end < text.endIndex else {
      return .userIdle(required: required, idleSince: nil, unknown: nil)
    }
    let rest = text[text.index(after: end)...]
    if text[end] == "?" {
      guard let why = rest.removingPercentEncoding else { return nil }
      return .userIdle(required: required, idleSince: nil, unknown: why)
    }
    guard let millis = Int64(rest) else { return nil }
    let since = Date(timeIntervalSince1970: Double(millis) / 1000)
    return .userIdle(required: required, idleSince: since, unknown: nil)
  }

  /// The `allowedNetworks` column: empty for ``NetworkAllowList/any``, else JSON.
  static func text(_ list: NetworkAllowList) -> String {
    guard !list.isEmpty, let data = try? JSONEncoder().encode(list) else { return "" }
    return String(decoding: data, as: UTF8.self)
  }

  /// The allow-list `text` holds, or `nil` when it is not one.
  static func allowList(_ text: String) -> NetworkAllowList? {
    if text.isEmpty { return .any }
    return try? JSONDecoder().decode(NetworkAllowList.self, from: Data(text.utf8))
  }

  private static func list(_ allowed: [String], _ current: String?) -> String {
    allowed.map(escape).joined(separator: "|") + (current.map { "=" + escape($0) } ?? "")
  }

  private static func list(_ text: Substring) -> ([String], String?)? {
    let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
    var allowed: [String] = []
    if !parts[0].isEmpty {
      for item in parts[0].split(separator: "|", omittingEmptySubsequences: false) {
        guard let value = item.removingPercentEncoding else { return nil }
        allowed.append(value)
      }
    }
    guard parts.count == 2 else { return (allowed, nil) }
    guard let current = parts[1].removingPercentEncoding else { return nil }
    return (allowed, current)
  }

  private static func escape(_ value: String) -> String {
    value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
  }
}
