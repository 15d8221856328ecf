import Foundation

/// python-dbusmock's `notification_daemon` template on a ``PrivateBus`` (a session bus of its
/// own): it answers `Notify` and records every call, read back with the mock's `GetCalls`.
final class NotificationMock {
  static let path = "/org/freedesktop/Notifications"
  static let name = "org.freedesktop.Notifications"

  static var isAvailable: Bool {
    PrivateBus.isAvailable
      && FileManager.default.fileExists(
        atPath: "/usr/lib/python3/dist-packages/dbusmock/templates/notification_daemon.py")
  }

  private let bus: PrivateBus
  private let process: Process

  /// Starts the template on `bus` and waits until it answers.
  init(bus: PrivateBus) throws {
    self.bus = bus
    process = Process()
    process.executableURL = URL(fileURLWithPath: PrivateBus.python)
    process.arguments = ["-m", "dbusmock", "--template", "notification_daemon"]
    process.environment = ["DBUS_SESSION_BUS_ADDRESS": bus.address, "PATH": "/usr/bin:/bin"]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    for _ in 0..<200 {
      if (try? calls()) != nil { return }
      usleep(25_000)
    }
    stop()
    throw PrivateBus.Failed(description: "timed out waiting for the notification mock")
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

  func stop() {
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
  }
}
