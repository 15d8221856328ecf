import Foundation

/// python-dbusmock's `logind` template on a ``PrivateBus``: `Inhibit` hands out a pipe end
/// and `ListInhibitors` lists the locks whose descriptor is still open somewhere.
final class LogindMock {
  static let path = "/org/freedesktop/login1"
  static let manager = "org.freedesktop.login1.Manager"

  static var isAvailable: Bool { DbusmockTemplate.isInstalled("logind") }

  private let bus: PrivateBus
  private let template: DbusmockTemplate

  /// Starts the template on `bus` and waits until its methods are there.
  init(bus: PrivateBus) throws {
    self.bus = bus
    template = try DbusmockTemplate("logind", on: bus, system: true)
    try template.waitUntilReady("logind mock") { _ = try inhibitors() }
  }

  /// `ListInhibitors` as dbus-send prints it (one `string "…"` line per field).
  func inhibitors() throws -> String {
    try bus.send(
      destination: "org.freedesktop.login1", path: Self.path,
      method: "\(Self.manager).ListInhibitors")
  }

  /// How many times `Inhibit` was called (the mock's `GetCalls`, one struct per call).
  func inhibitCalls() throws -> Int {
    try bus.send(
      destination: "org.freedesktop.login1", path: Self.path,
      method: "org.freedesktop.DBus.Mock.GetCalls"
    ).components(separatedBy: "struct {").dropFirst()
      .filter { $0.contains("string \"Inhibit\"") }.count
  }

  /// Emits `signal` (`PrepareForSleep`, `PrepareForShutdown`) with `active` from the manager.
  func emit(_ signal: String, _ active: Bool) throws {
    try bus.send(
      destination: "org.freedesktop.login1", path: Self.path,
      method: "org.freedesktop.DBus.Mock.EmitSignal", "string:\(Self.manager)",
      "string:\(signal)", "string:b", "array:boolean:\(active)")
  }

  /// Adds logind's `InhibitDelayMaxUSec` property (the template has none) with `microseconds`.
  func setInhibitDelayMax(microseconds: UInt64) throws {
    _ = try bus.send(
      destination: "org.freedesktop.login1", path: Self.path,
      method: "org.freedesktop.DBus.Mock.AddProperty", "string:\(Self.manager)",
      "string:InhibitDelayMaxUSec", "variant:uint64:\(microseconds)")
  }

  /// Sets the manager's `IdleSinceHintMonotonic` (`CLOCK_MONOTONIC` microseconds), then its
  /// `IdleHint`, each emitting `PropertiesChanged` as logind does.
  func setIdle(_ idle: Bool, sinceMonotonic microseconds: UInt64) throws {
    try setProperty("IdleSinceHintMonotonic", "variant:uint64:\(microseconds)")
    try setProperty("IdleHint", "variant:boolean:\(idle)")
  }

  /// Emits `PropertiesChanged` with `IdleHint` invalidated (no value), then blocks the mock's
  /// main loop for two minutes: a logind that announces a change and then answers nothing.
  func invalidateIdleHintAndStall() throws {
    _ = try bus.send(
      destination: "org.freedesktop.login1", path: Self.path,
      method: "org.freedesktop.DBus.Mock.AddMethod", "string:dev.backgrounder.Test",
      "string:InvalidateAndStall", "string:", "string:",
      "string:self.EmitSignal('org.freedesktop.DBus.Properties', 'PropertiesChanged', "
        + "'sa{sv}as', ['\(Self.manager)', dbus.Dictionary({}, signature='sv'), "
        + "['IdleHint']]); self.connection.flush(); time.sleep(120)")
    try bus.send(
      destination: "org.freedesktop.login1", path: Self.path,
      method: "dev.backgrounder.Test.InvalidateAndStall", waitForReply: false)
  }

  private func setProperty(_ name: String, _ value: String) throws {
    _ = try bus.send(
      destination: "org.freedesktop.login1", path: Self.path,
      method: "org.freedesktop.DBus.Properties.Set", "string:\(Self.manager)", "string:\(name)",
      value)
  }

  /// `CLOCK_MONOTONIC` now, in microseconds (logind's `IdleSinceHintMonotonic` clock).
  static func monotonicMicroseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
  }

  func stop() { template.stop() }
}
