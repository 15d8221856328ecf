import Foundation

/// python-dbusmock's `notification_daemon` template on a ``PrivateBus`` (a session bus of its
/// own): it answers `Notify` and records every call, read back with the mock's `GetCalls`.
final class NotificationMock {
  static let path = "/org/freedesktop/Notifications"
  static let name = "org.freedesktop.Notifications"

  static var isAvailable: Bool { DbusmockTemplate.isInstalled("notification_daemon") }

  private let bus: PrivateBus
  private let template: DbusmockTemplate

  /// Starts the template on `bus` and waits until it answers.
  init(bus: PrivateBus) throws {
    self.bus = bus
    template = try DbusmockTemplate("notification_daemon", on: bus, system: false)
    try template.waitUntilReady("notification mock") { _ = try calls() }
  }

  /// The recorded calls as dbus-send prints `GetCalls` (`a(tsav)`).
  func calls() throws -> String {
    try bus.send(
      destination: Self.name, path: Self.path, method: "org.freedesktop.DBus.Mock.GetCalls")
  }

  /// The recorded `Notify` calls, each as the lines dbus-send printed for it.
  func notifyCalls() throws -> [String] {
    // Each call is a struct: `struct {` … `uint64 …` `string "Notify"` `array [` … `]` `}`.
    try calls().components(separatedBy: "struct {").dropFirst()
      .filter { $0.contains("string \"Notify\"") }
  }

  func stop() { template.stop() }
}
