import Foundation
import TestSupport

/// One of python-dbusmock's templates, running on a ``PrivateBus`` as its system or session bus.
final class DbusmockTemplate {
  private let process: Process

  /// Whether dbus-daemon, python-dbusmock and its `template` are installed.
  static func isInstalled(_ template: String) -> Bool {
    PrivateBus.isAvailable
      && FileManager.default.fileExists(
        atPath: "/usr/lib/python3/dist-packages/dbusmock/templates/\(template).py")
  }

  /// Starts `template` on `bus`, as the system bus when `system`, else as the session bus.
  init(_ template: String, on bus: PrivateBus, system: Bool) throws {
    process = Process()
    process.executableURL = URL(fileURLWithPath: PrivateBus.python)
    process.arguments =
      ["-m", "dbusmock"] + (system ? ["--system"] : []) + ["--template", template]
    let variable = system ? "DBUS_SYSTEM_BUS_ADDRESS" : "DBUS_SESSION_BUS_ADDRESS"
    process.environment = [variable: bus.address, "PATH": "/usr/bin:/bin"]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
  }

  /// Waits (`testEventTimeout` at most) until `probe` succeeds; stops the template and throws
  /// when it does not.
  func waitUntilReady(_ what: String, probe: () throws -> Void) throws {
    if blockingEventually({ (try? probe()) != nil }) { return }
    stop()
    throw PrivateBus.Failed(description: "timed out waiting for the \(what)")
  }

  func stop() {
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
  }
}
