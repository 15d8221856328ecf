/// What the machine's power supplies say, as published by ``PowerProbe``.
///
/// Encodes as `{"externalPower", "charging", "batteryPercent", "batteryLow", "supplies"}`;
/// unknown values encode as `null`. ``problems`` is for humans and logs and is not encoded.
public struct PowerStatus: Sendable, Equatable, Encodable {
  /// Some non-battery system supply (Mains, USB…, Wireless, UPS) reports `online ≥ 1`.
  public var externalPower: Bool
  /// `requiresCharging` is satisfied: external power, or no present system battery is (or may
  /// be) discharging — desktops, VMs and batteries held at a charge threshold count as on power.
  public var charging: Bool
  /// Energy-weighted charge of the present system batteries (charge-weighted, then the mean of
  /// `capacity`, as fall-backs), 0–100 rounded to 0.1; `nil` when no battery is readable.
  public var batteryPercent: Double?
  /// The battery is low: not on power, and the percent is ≤ 20 % (≤ 25 % once low), or no number
  /// is readable and `capacity_level` says Critical/Low.
  public var batteryLow: Bool
  /// Every supply found, peripherals (`scope=Device`) included, sorted by name.
  public var supplies: [PowerSupplyStatus]
  /// One line per attribute that was unreadable or unparseable (`BAT0/capacity: …`).
  public var problems: [String]

  /// Creates a status; ``PowerModel`` is the usual way to get one.
  public init(
    externalPower: Bool, charging: Bool, batteryPercent: Double?, batteryLow: Bool,
    supplies: [PowerSupplyStatus], problems: [String] = []
  ) {
    self.externalPower = externalPower
    self.charging = charging
    self.batteryPercent = batteryPercent
    self.batteryLow = batteryLow
    self.supplies = supplies
    self.problems = problems
  }

  /// The `batteryNotLow` constraint is satisfied.
  public var isBatteryNotLow: Bool { !batteryLow }

  /// The `requiresCharging` constraint is satisfied (same as ``charging``).
  public var isRequiresChargingSatisfied: Bool { charging }

  private enum CodingKeys: String, CodingKey {
    case externalPower, charging, batteryPercent, batteryLow, supplies
  }

  /// Encodes the documented keys, with `null` for an unknown percent.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(externalPower, forKey: .externalPower)
    try container.encode(charging, forKey: .charging)
    try container.encode(batteryPercent, forKey: .batteryPercent)
    try container.encode(batteryLow, forKey: .batteryLow)
    try container.encode(supplies, forKey: .supplies)
  }
}

/// One supply as shown in `backgrounder status`; `nil` fields are missing or unparseable.
public struct PowerSupplyStatus: Sendable, Equatable, Encodable {
  /// Directory name under `class/power_supply`.
  public var name: String
  /// `type` as written (`Battery`, `Mains`, `USB`, …); `nil` when missing or not a known type.
  public var type: String?
  /// `online` (0, 1 or 2) for non-battery supplies.
  public var online: Int?
  /// `status` as written (`Charging`, `Discharging`, `Not charging`, `Full`, `Unknown`).
  public var status: String?
  /// `capacity` in percent.
  public var capacity: Int?
  /// Effective scope: `System` (also when missing), `Device` or `Unknown`.
  public var scope: String?

  /// Creates a supply row.
  public init(
    name: String, type: String?, online: Int?, status: String?, capacity: Int?, scope: String?
  ) {
    self.name = name
    self.type = type
    self.online = online
    self.status = status
    self.capacity = capacity
    self.scope = scope
  }

  private enum CodingKeys: String, CodingKey {
    case name, type, online, status, capacity, scope
  }

  /// Encodes every key, with `null` for unknown values.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(name, forKey: .name)
    try container.encode(type, forKey: .type)
    try container.encode(online, forKey: .online)
    try container.encode(status, forKey: .status)
    try container.encode(capacity, forKey: .capacity)
    try container.encode(scope, forKey: .scope)
  }
}
