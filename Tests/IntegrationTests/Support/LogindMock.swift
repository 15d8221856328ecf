import Foundation

/// python-dbusmock's `logind` template on a ``PrivateBus``: `Inhibit` hands out a pipe end
/// and `ListInhibitors` lists the locks whose descriptor is still open somewhere.
final class LogindMock {
  static let path = "/org/freedesktop/login1"
  static let manager = "org.freedesktop.login1.Manager"

  static var isAvailable: Bool {
    PrivateBus.isAvailable
      && FileManager.default.fileExists(
        atPath: "/usr/lib/python3/dist-packages/dbusmock/templates/logind.py")
  }

  private let bus: PrivateBus
  private let process: Process

  /// Starts the template on `bus` and waits until its methods are there.
  init(bus: PrivateBus) throws {
    self.bus = bus
    process = Process()
    process.executableURL = URL(fileURLWithPath: PrivateBus.python)
    process.arguments = ["-m", "dbusmock", "--system", "--template", "logind"]
    process.environment = ["DBUS_SYSTEM_BUS_ADDRESS": bus.address, "PATH": "/usr/bin:/bin"]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    for _ in 0..<200 {
      if (try? inhibitors()) != nil { return }
      usleep(25_000)
    }
    stop()
    throw PrivateBus.Failed(description: "timed out waiting for the logind mock")
  }

  /// `ListInhibitors` as dbus-send prints it (one `string "…"` line per field).
  func inhibitors() throws -> String {
    try bus.send(
      destination: "org.freedesktop.login1", path: Self.path,
      method: "\(Self.manager).ListInhibitors")
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

  func stop() {
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
  }
}
