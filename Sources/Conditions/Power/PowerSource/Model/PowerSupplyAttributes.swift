/// The kind of supply, from the `type` attribute.
enum PowerSupplyKind: Equatable {
  /// `Battery`.
  case battery
  /// Any source of external power: `Mains`, `UPS`, `USB*`, `Wireless`, `BrickID`, `Unknown`.
  case external
}

/// The `status` attribute of a battery.
enum BatteryState: Equatable {
  case charging
  case discharging
  case notCharging
  case full
  /// The kernel's own `Unknown` value (a valid reading, not a parse failure).
  case unknown
}

/// The `scope` attribute: peripherals (`Device`) are ignored by the model.
enum PowerSupplyScope: Equatable {
  case system
  case device
  /// The kernel's own `Unknown` value; treated like `System`, as systemd does.
  case unknown
}

/// The `capacity_level` attribute.
enum CapacityLevel: Equatable {
  case unknown
  case critical
  case low
  case normal
  case high
  case full

  var isLow: Bool { self == .critical || self == .low }
}

/// One supply's attributes, parsed. `nil` means missing or unparseable (see ``problems``).
struct ParsedSupply: Equatable {
  var name: String
  /// The trimmed `type` text as written by the kernel, for display (only when it is known).
  var typeText: String?
  var kind: PowerSupplyKind?
  var online: Int?
  /// The trimmed `status` text, for display (only when it is a known value).
  var statusText: String?
  var state: BatteryState?
  /// `true` when the `present` attribute is missing (missing means present).
  var present: Bool?
  /// The effective scope: missing means `System`.
  var scope: PowerSupplyScope?
  var capacity: Int?
  var capacityLevel: CapacityLevel?
  var energyNow: Int64?
  var energyFull: Int64?
  var chargeNow: Int64?
  var chargeFull: Int64?
  /// One line per attribute that was present but unreadable or unparseable.
  var problems: [String]

  /// Parses every attribute the model needs; never fails, bad values become `nil` + a problem.
  init(_ snapshot: PowerSupplySnapshot) {
    var parser = AttributeParser(snapshot: snapshot)
    name = snapshot.name
    kind = parser.value("type", Self.kind(from:))
    typeText = kind == nil ? nil : parser.text("type")
    online = parser.value("online") { Int($0).flatMap { $0 >= 0 ? $0 : nil } }
    state = parser.value("status", Self.state(from:))
    statusText = state == nil ? nil : parser.text("status")
    present = parser.value("present", default: true) { text in
      switch text {
      case "0": false
      case "1": true
      default: nil
      }
    }
    scope = parser.value("scope", default: .system) { text in
      switch text {
      case "system": .system
      case "device": .device
      case "unknown": .unknown
      default: nil
      }
    }
    capacity = parser.value("capacity") { Int($0).flatMap { (0...100).contains($0) ? $0 : nil } }
    capacityLevel = parser.value("capacity_level", Self.level(from:))
    energyNow = parser.value("energy_now", Self.microUnits(from:))
    energyFull = parser.value("energy_full", Self.microUnits(from:))
    chargeNow = parser.value("charge_now", Self.microUnits(from:))
    chargeFull = parser.value("charge_full", Self.microUnits(from:))
    problems = parser.problems
  }

  static func kind(from text: String) -> PowerSupplyKind? {
    switch text {
    case "battery": return .battery
    case "mains", "ups", "wireless", "brickid", "unknown": return .external
    default:
      // USB, USB_C, USB_PD, USB_PD_DRP, USB_DCP, USB_CDP, USB_ACA, and future USB variants.
      if text == "usb" || text.hasPrefix("usb_") { return .external }
      return nil
    }
  }

  static func state(from text: String) -> BatteryState? {
    switch text {
    case "charging": .charging
    case "discharging": .discharging
    case "not charging": .notCharging
    case "full": .full
    case "unknown": .unknown
    default: nil
    }
  }

  static func level(from text: String) -> CapacityLevel? {
    switch text {
    case "unknown": .unknown
    case "critical": .critical
    case "low": .low
    case "normal": .normal
    case "high": .high
    case "full": .full
    default: nil
    }
  }

  /// µWh / µAh counters: non-negative integers.
  static func microUnits(from text: String) -> Int64? {
    Int64(text).flatMap { $0 >= 0 ? $0 : nil }
  }
}

/// Trims, lower-cases and parses attributes, collecting a problem line for each bad one.
private struct AttributeParser {
  let snapshot: PowerSupplySnapshot
  var problems: [String] = []

  /// The trimmed text as written (original case), or `nil` when missing/unreadable/empty.
  func text(_ attribute: String) -> String? {
    guard let raw = snapshot.attributes[attribute] else { return nil }
    let trimmed = trim(raw)
    return trimmed.isEmpty ? nil : trimmed
  }

  /// Parses `attribute` with `parse` (which sees trimmed, lower-cased text).
  /// Missing → `missing`; unreadable or unparseable → `nil` and a problem line.
  mutating func value<T>(
    _ attribute: String, default missing: T? = nil, _ parse: (String) -> T?
  ) -> T? {
    if let reason = snapshot.unreadable[attribute] {
      problems.append("\(snapshot.name)/\(attribute): unreadable (\(reason))")
      return nil
    }
    guard let raw = snapshot.attributes[attribute] else { return missing }
    let normalized = trim(raw).lowercased()
    if let parsed = parse(normalized) { return parsed }
    problems.append("\(snapshot.name)/\(attribute): unparseable value \(quoted(raw))")
    return nil
  }

  private func trim(_ text: String) -> String {
    let isSpace: (Character) -> Bool = { $0.isWhitespace || $0 == "\0" }
    return String(text.drop(while: isSpace).reversed().drop(while: isSpace).reversed())
  }

  private func quoted(_ raw: String) -> String {
    let escaped = raw.unicodeScalars.map { $0.escaped(asASCII: true) }.joined()
    let limit = 40
    return escaped.count > limit ? "\"\(escaped.prefix(limit))…\"" : "\"\(escaped)\""
  }
}
