import Foundation
import TestSupport

/// A private `dbus-daemon` on a socket in a fresh temporary directory, with python-dbusmock's
/// NetworkManager template as a child on it. Never the machine's system bus.
final class PrivateBus: @unchecked Sendable {
  // @unchecked: the mock process handle is replaced only by the test that owns the bus.
  struct Failed: Error, CustomStringConvertible {
    var description: String
  }

  static let python = "/usr/bin/python3"
  static let managerPath = "/org/freedesktop/NetworkManager"
  /// The template's main object, which carries its `...NetworkManager.Mock` methods.
  static let mockPath = "/org/freedesktop"
  static let mockInterface = "org.freedesktop.DBus.Mock"
  static let deviceInterface = "org.freedesktop.NetworkManager.Device"

  /// Whether dbus-daemon and python-dbusmock are installed.
  static var isAvailable: Bool {
    FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon")
      && FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-send")
      && FileManager.default.fileExists(
        atPath: "/usr/lib/python3/dist-packages/dbusmock/templates/networkmanager.py")
  }

  let directory: String
  let address: String
  private let daemon: Process
  private var mock: Process?

  /// `systemPolicy`: the bus enforces Debian's system bus policy (``systemBusConfig(listen:)``)
  /// and other users may connect, as on the machine's system bus; else anyone connected may do
  /// anything, and only this user can connect.
  init(systemPolicy: Bool = false) throws {
    directory = NSTemporaryDirectory() + "bgbus-\(UInt32.random(in: 0...UInt32.max))"
    try FileManager.default.createDirectory(
      atPath: directory, withIntermediateDirectories: false,
      attributes: [.posixPermissions: 0o700])
    // Another user reaches the socket through the directory (the socket itself is 0777).
    if systemPolicy { chmod(directory, 0o755) }
    let config =
      systemPolicy
      ? try Self.systemBusConfig(listen: "unix:path=\(directory)/bus")
      : """
      <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
       "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
      <busconfig>
        <type>session</type>
        <listen>unix:path=\(directory)/bus</listen>
        <auth>EXTERNAL</auth>
        <policy context="default">
          <allow send_destination="*" eavesdrop="true"/>
          <allow eavesdrop="true"/>
          <allow own="*"/>
        </policy>
      </busconfig>
      """
    try config.write(toFile: "\(directory)/bus.conf", atomically: true, encoding: .utf8)
    daemon = Process()
    daemon.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
    daemon.arguments = ["--config-file=\(directory)/bus.conf", "--nofork", "--nopidfile"]
    daemon.standardOutput = FileHandle.nullDevice
    daemon.standardError = FileHandle.nullDevice
    try daemon.run()
    address = "unix:path=\(directory)/bus"
    // The socket file appears at bind(), before listen(): wait until a connection is accepted.
    try Self.waitFor("the bus socket") { Self.accepts("\(self.directory)/bus") }
  }

  /// Whether a connection to the Unix socket at `path` is accepted.
  private static func accepts(_ path: String) -> Bool {
    let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard descriptor >= 0 else { return false }
    defer { Glibc.close(descriptor) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { buffer in
      path.utf8CString.withUnsafeBytes { buffer.copyBytes(from: $0.prefix(buffer.count - 1)) }
    }
    return withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
      }
    }
  }

  static let systemConfig = "/usr/share/dbus-1/system.conf"

  /// Whether Debian's system bus config is there for ``init(systemPolicy:)``.
  static var hasSystemPolicy: Bool { FileManager.default.fileExists(atPath: systemConfig) }

  /// Debian's `system.conf` as it is — its default policy (signals to anyone allowed, method
  /// calls denied), its root policies and its `system.d` includes — listening on `listen`
  /// instead, in the foreground, as this user, with no service activation; plus a root policy
  /// that lets the test's mocks (root) own any name and take any call. Another user gets
  /// exactly the machine's system bus policy.
  static func systemBusConfig(listen: String) throws -> String {
    var lines = try String(contentsOfFile: systemConfig, encoding: .utf8)
      .components(separatedBy: "\n")
    let dropped = [
      "<user>", "<fork/>", "<pidfile>", "<listen>", "<syslog/>", "<servicehelper>",
      "<standard_system_servicedirs/>",
    ]
    lines.removeAll { line in dropped.contains { line.contains($0) } }
    var text = lines.joined(separator: "\n")
      .replacingOccurrences(
        of: "<includedir>system.d</includedir>",
        with: "<includedir>/usr/share/dbus-1/system.d</includedir>")
    guard let end = text.range(of: "</busconfig>", options: .backwards) else {
      throw Failed(description: "\(systemConfig) has no </busconfig>")
    }
    text.replaceSubrange(
      end,
      with: """
          <listen>\(listen)</listen>
          <policy user="root">
            <allow own="*"/>
            <allow send_type="method_call"/>
          </policy>
        </busconfig>
        """)
    return text
  }

  /// Starts python-dbusmock's NetworkManager template (global connectivity `full`) and waits
  /// until it owns its name.
  func startNetworkManager() throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: Self.python)
    process.arguments = ["-m", "dbusmock", "--system", "--template", "networkmanager"]
    process.environment = ["DBUS_SYSTEM_BUS_ADDRESS": address, "PATH": "/usr/bin:/bin"]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    mock = process
    // The name is owned before the template's methods exist: wait for those.
    try Self.waitFor("NetworkManager's mock methods on the bus") {
      (try? self.send(
        path: Self.mockPath, method: "org.freedesktop.DBus.Introspectable.Introspect"))?
        .contains("AddWiFiDevice") == true
    }
  }

  /// Kills the mock NetworkManager (its name disappears from the bus).
  func stopNetworkManager() {
    guard let mock else { return }
    kill(mock.processIdentifier, SIGKILL)
    kill(mock.processIdentifier, SIGCONT)
    mock.waitUntilExit()
    self.mock = nil
  }

  /// Sends `signal` to the mock NetworkManager (`SIGSTOP`: on the bus but silent; `SIGCONT`).
  func signalNetworkManager(_ signal: Int32) {
    guard let mock else { return }
    kill(mock.processIdentifier, signal)
  }

  /// Adds a Wi-Fi device for interface `name`, with a `Metered` property of `metered`; returns
  /// its object path.
  func addWifiDevice(interface name: String, metered: UInt32, device: String = "wifi0") throws
    -> String
  {
    let output = try send(
      path: Self.mockPath, method: "\(Self.mockInterface).AddWiFiDevice", "string:\(device)",
      "string:\(name)", "uint32:100")
    guard let path = output.split(separator: "\"").dropFirst().first.map(String.init) else {
      throw Failed(description: "AddWiFiDevice answered \(output)")
    }
    try send(
      path: path, method: "org.freedesktop.DBus.Mock.AddProperty", "string:\(Self.deviceInterface)",
      "string:Metered", "variant:uint32:\(metered)")
    // AddProperty emits nothing; NetworkManager announces its devices' values.
    try setMetered(metered, device: path)
    return path
  }

  /// Changes a device's `Metered`, emitting `PropertiesChanged` as NetworkManager does.
  func setMetered(_ value: UInt32, device path: String) throws {
    try send(
      path: Self.mockPath, method: "\(Self.mockInterface).SetProperty", "objpath:\(path)",
      "string:\(Self.deviceInterface)", "string:Metered", "variant:uint32:\(value)")
  }

  /// Changes the global `Connectivity` (NM_CONNECTIVITY_*), emitting `PropertiesChanged`.
  func setConnectivity(_ value: UInt32) throws {
    try send(
      path: Self.mockPath, method: "\(Self.mockInterface).SetConnectivity", "uint32:\(value)")
  }

  /// How many connections the bus has (`ListNames`' unique names, the asking dbus-send's own
  /// included).
  func connections() throws -> Int {
    try send(
      destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
      method: "org.freedesktop.DBus.ListNames"
    ).components(separatedBy: "string \":").count - 1
  }

  /// Calls `method` with dbus-send and returns what it printed; without `waitForReply`, sends
  /// the call and returns at once.
  @discardableResult
  func send(
    destination: String = "org.freedesktop.NetworkManager", path: String, method: String,
    _ arguments: String..., waitForReply: Bool = true
  ) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-send")
    process.arguments =
      ["--bus=\(address)", waitForReply ? "--print-reply" : "--type=method_call"]
      + ["--dest=\(destination)", path, method] + arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
      throw Failed(description: "dbus-send \(method) failed: \(output)")
    }
    return output
  }

  func close() {
    stopNetworkManager()
    kill(daemon.processIdentifier, SIGKILL)
    daemon.waitUntilExit()
    try? FileManager.default.removeItem(atPath: directory)
  }

  private static func waitFor(_ what: String, _ condition: () -> Bool) throws {
    guard blockingEventually(condition) else {
      throw Failed(description: "timed out waiting for \(what)")
    }
  }
}
