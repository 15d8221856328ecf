/// The raw attributes of one supply under `ROOT/class/power_supply/NAME`, as read from sysfs.
///
/// Values are kept as the strings the kernel wrote; ``PowerModel`` interprets them. An attribute
/// that exists but could not be read is listed in ``unreadable`` with the reason, so the model can
/// treat it as unknown and say why.
public struct PowerSupplySnapshot: Sendable, Equatable {
  /// The directory name under `class/power_supply` (`AC`, `BAT0`, `hidpp_battery_0`, …).
  public var name: String
  /// Attribute name → the file's contents (not yet trimmed or parsed).
  public var attributes: [String: String]
  /// Attribute name → why the file could not be read (e.g. `EIO`, "not UTF-8").
  public var unreadable: [String: String]

  /// Creates a snapshot from raw attribute strings.
  public init(name: String, attributes: [String: String], unreadable: [String: String] = [:]) {
    self.name = name
    self.attributes = attributes
    self.unreadable = unreadable
  }

  /// The attribute names the power model reads.
  public static let attributeNames: [String] = [
    "type", "online", "status", "present", "scope", "capacity", "capacity_level",
    "energy_now", "energy_full", "charge_now", "charge_full",
  ]
}
