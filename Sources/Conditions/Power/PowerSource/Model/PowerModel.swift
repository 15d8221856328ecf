/// The pure power decision: supply attributes in, ``PowerStatus`` out. No I/O.
///
/// A value-type state machine: it remembers only whether the battery was low, for the
/// hysteresis of ``PowerStatus/batteryLow`` (low at ≤ 20 %, not low again only above 25 %).
public struct PowerModel: Sendable, Equatable {
  /// At or below this percent the battery is low (UPower's warning level).
  public static let lowPercent = 20.0
  /// Once low, the battery stays low until it is above this percent.
  public static let recoveredPercent = 25.0

  /// Whether the last ``update(_:)`` reported a low battery.
  public private(set) var wasLow: Bool

  /// A model with no history (`wasLow == false`).
  public init(wasLow: Bool = false) {
    self.wasLow = wasLow
  }

  /// Evaluates `supplies` and remembers the low state for the next call.
  public mutating func update(_ supplies: [PowerSupplySnapshot]) -> PowerStatus {
    let parsed = supplies.sorted { $0.name < $1.name }.map(ParsedSupply.init)
    let system = parsed.filter { $0.scope != .device }
    let batteries = system.filter { $0.kind == .battery && $0.present != false }

    let externalPower = system.contains { $0.kind == .external && ($0.online ?? 0) >= 1 }
    let mayBeDischarging = system.contains { supply in
      switch supply.kind {
      case .battery:
        // A missing or unparseable status might be "Discharging": never claim power then.
        supply.present != false && (supply.state == .discharging || supply.state == nil)
      case nil:
        // An unrecognised `type` that reports discharging is treated as a battery.
        supply.state == .discharging
      case .external:
        false
      }
    }
    let charging = externalPower || !mayBeDischarging
    let percent = BatteryPercent.combined(batteries)

    let low: Bool
    if charging {
      low = false
    } else if let percent {
      low = percent <= (wasLow ? Self.recoveredPercent : Self.lowPercent)
    } else {
      low = batteries.contains { $0.capacityLevel?.isLow == true }
    }
    wasLow = low

    return PowerStatus(
      externalPower: externalPower,
      charging: charging,
      batteryPercent: percent,
      batteryLow: low,
      supplies: parsed.map(Self.row),
      problems: parsed.flatMap(\.problems)
    )
  }

  private static func row(_ supply: ParsedSupply) -> PowerSupplyStatus {
    let scope: String? =
      switch supply.scope {
      case .system: "System"
      case .device: "Device"
      case .unknown: "Unknown"
      case nil: nil
      }
    return PowerSupplyStatus(
      name: supply.name, type: supply.typeText, online: supply.online,
      status: supply.statusText, capacity: supply.capacity, scope: scope)
  }
}

extension PowerModel {
  /// The status when the supply directory itself cannot be read: nothing is claimed —
  /// no external power, `requiresCharging` and `batteryNotLow` both unsatisfied.
  public mutating func unreadable(reason: String) -> PowerStatus {
    wasLow = true
    return PowerStatus(
      externalPower: false, charging: false, batteryPercent: nil, batteryLow: true,
      supplies: [], problems: [reason])
  }
}
