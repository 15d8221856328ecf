import BenchmarkSupport
import Foundation

/// The namespace, the private bus, the mock NetworkManager and the driver that changes it.
final class BenchmarkSetup {
  private let network: BenchmarkNamespace
  var namespace: String { network.name }
  let directory = NSTemporaryDirectory() + "bgnmbench-\(getpid())"
  var address: String { "unix:path=\(directory)/bus" }
  private var children: [Process] = []

  init() throws {
    try FileManager.default.createDirectory(
      atPath: directory, withIntermediateDirectories: false,
      attributes: [.posixPermissions: 0o700])
    network = try BenchmarkNamespace.create(
      name: "bgnmbench-\(getpid())",
      commands: BenchmarkNamespace.vethPair(0, address: "192.0.2.1/24")
        + ["route add default via 192.0.2.254 dev veth0"])
    let config = """
      <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
       "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
      <busconfig><type>session</type><listen>unix:path=\(directory)/bus</listen>
      <auth>EXTERNAL</auth><policy context="default">
      <allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/>
      <allow own="*"/></policy></busconfig>
      """
    try config.write(toFile: "\(directory)/bus.conf", atomically: true, encoding: .utf8)
    children.append(
      try start(
        "/usr/bin/dbus-daemon", ["--config-file=\(directory)/bus.conf", "--nofork", "--nopidfile"]))
    try waitFor("bus socket") { FileManager.default.fileExists(atPath: "\(self.directory)/bus") }
    children.append(
      try start(
        "/usr/bin/python3", ["-m", "dbusmock", "--system", "--template", "networkmanager"],
        environment: ["DBUS_SYSTEM_BUS_ADDRESS": address]))
    try waitFor("mock NetworkManager") {
      usleep(100_000)  // the name is owned before the template's methods exist
      return
        (try? shell(
          [
            "--bus=\(self.address)", "--print-reply", "--dest=org.freedesktop.NetworkManager",
            "/org/freedesktop", "org.freedesktop.DBus.Mock.AddWiFiDevice",
            "string:wifi0", "string:veth0", "uint32:100",
          ], executable: "/usr/bin/dbus-send")) != nil
    }
    try shell(
      [
        "--bus=\(address)", "--print-reply", "--dest=org.freedesktop.NetworkManager",
        "/org/freedesktop/NetworkManager/Devices/wifi0", "org.freedesktop.DBus.Mock.AddProperty",
        "string:org.freedesktop.NetworkManager.Device", "string:Metered", "variant:uint32:2",
      ], executable: "/usr/bin/dbus-send")
  }

  /// Flips `Metered` between yes and no `changes` times; one latency (ns) per change.
  func measureLatency(changes: Int, backgrounder: String) throws -> [UInt64] {
    let watch = try WatchProcess(
      executable: backgrounder, namespace: namespace,
      environment: ["DBUS_SYSTEM_BUS_ADDRESS": address])
    defer { watch.stop() }
    guard watch.waitForLine(after: 0, containing: "networkmanager:no", timeoutSeconds: 30) != nil
    else { throw BenchmarkError("no initial status line with NetworkManager's metered value") }
    let driver = try Driver(address: address)
    defer { driver.stop() }
    var latencies: [UInt64] = []
    for change in 0..<(changes + 10) {
      let metered = change % 2 == 0
      let before = watch.count
      let sentAt = try driver.setMetered(metered ? 1 : 2)
      let needle = metered ? "networkmanager:yes" : "networkmanager:no"
      guard let (_, line) = watch.waitForLine(after: before, containing: needle) else {
        throw BenchmarkError("no status line for change \(change)")
      }
      if change >= 10 { latencies.append(line.arrivedNanoseconds - sentAt) }  // 10 warm-up
    }
    return latencies
  }

  /// The system calls of an idle `status --watch --json` with NetworkManager on the bus:
  /// `strace -f` for `seconds` after a 10 s settle. Calls a thread was already blocked in when
  /// strace attached (`<unfinished ...>` / `<detached ...>` as its first line) are not counted.
  func idleSyscalls(seconds: Int, backgrounder: String) throws -> String {
    let watch = try WatchProcess(
      executable: backgrounder, namespace: namespace,
      environment: ["DBUS_SYSTEM_BUS_ADDRESS": address])
    defer { watch.stop() }
    guard watch.waitForLine(after: 0, containing: "networkmanager:", timeoutSeconds: 30) != nil
    else { throw BenchmarkError("no initial status line") }
    sleep(10)
    let calls = IdleTrace.calls(ofProcess: watch.processIdentifier, seconds: seconds)
    let threads = IdleTrace.threadNames(watch.processIdentifier)
    return "idle `status --watch --json` with NetworkManager present, \(seconds) s after a 10 s "
      + "settle (strace -f -p PID, \(threads.count) threads): \(calls.count) syscalls"
      + calls.prefix(20).map { "\n  \(threads[$0.threadID] ?? $0.threadID): \($0.name)" }.joined()
  }

  static func report(_ latencies: [UInt64]) -> String {
    let sorted = latencies.sorted()
    func percentile(_ p: Double) -> String {
      let index = min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)
      return String(format: "%.0f µs", Double(sorted[max(index, 0)]) / 1000)
    }
    return "NetworkManager Metered change → status line, \(sorted.count) changes: "
      + "p50 \(percentile(0.5)), p99 \(percentile(0.99)), max \(percentile(1))"
  }

  func remove() {
    for child in children.reversed() {
      kill(child.processIdentifier, SIGKILL)
      child.waitUntilExit()
    }
    children = []
    network.remove()
    try? FileManager.default.removeItem(atPath: directory)
  }

  private func start(
    _ executable: String, _ arguments: [String], environment: [String: String] = [:]
  )
    throws -> Process
  {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if !environment.isEmpty {
      process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    }
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    return process
  }

  private func waitFor(_ what: String, _ condition: () -> Bool) throws {
    for _ in 0..<400 {
      if condition() { return }
      usleep(25_000)
    }
    throw BenchmarkError("timed out waiting for \(what)")
  }
}

/// A Python process on the bus that changes the mock's `Metered` on request and answers with
/// the CLOCK_MONOTONIC time (ns) taken just before the change.
final class Driver {
  static let script = #"""
    import dbus, sys, time
    bus = dbus.bus.BusConnection(sys.argv[1])
    manager = bus.get_object("org.freedesktop.NetworkManager", "/org/freedesktop")
    mock = dbus.Interface(manager, "org.freedesktop.DBus.Mock")
    for line in sys.stdin:
        value = dbus.UInt32(int(line), variant_level=1)
        sent = time.monotonic_ns()
        mock.SetProperty("/org/freedesktop/NetworkManager/Devices/wifi0",
                         "org.freedesktop.NetworkManager.Device", "Metered", value)
        print(sent, flush=True)
    """#

  private let process = Process()
  private let input = Pipe()
  private let output = Pipe()

  init(address: String) throws {
    process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    process.arguments = ["-c", Self.script, address]
    process.standardInput = input
    process.standardOutput = output
    try process.run()
  }

  /// Sets `Metered` to `value`; returns when the mock has emitted the signal.
  func setMetered(_ value: UInt32) throws -> UInt64 {
    input.fileHandleForWriting.write(Data("\(value)\n".utf8))
    var line: [UInt8] = []
    var byte: UInt8 = 0
    while read(output.fileHandleForReading.fileDescriptor, &byte, 1) == 1, byte != 10 {
      line.append(byte)
    }
    guard let sent = UInt64(String(decoding: line, as: UTF8.self)) else {
      throw BenchmarkError("driver answered \(line)")
    }
    return sent
  }

  func stop() {
    try? input.fileHandleForWriting.close()
    process.waitUntilExit()
  }
}
