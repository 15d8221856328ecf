import Foundation
import TestSupport
import Testing

/// Whether the tests can act as a second user (root, with util-linux's `setpriv`).
private let canSwitchUser =
  geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")

/// A local user on the system bus forges the signals the daemon acts on: on a private
/// `dbus-daemon` with Debian's own system bus policy (which lets any user send a signal to any
/// connection), uid 65534 sends logind's `PrepareForSleep(true)` and `PrepareForShutdown(true)`
/// addressed to each of the daemon's connections (unicast) and broadcast. Nothing happens: the
/// running job keeps running and nothing is stopped for sleep; logind's own signals still work.
@Suite(
  .blockingIO,
  .serialized,
  .enabled(if: canSwitchUser, "needs root and setpriv to act as a second user"),
  .enabled(if: LogindMock.isAvailable, "needs dbus-daemon, dbus-send and python3-dbusmock"),
  .enabled(if: PrivateBus.hasSystemPolicy, "needs \(PrivateBus.systemConfig)"),
  .timeLimit(.minutes(2)))
struct DaemonBusTrustTests {
  static let otherUser: uid_t = 65534

  /// Sends each `path|interface|member` signal with one `true` argument, to every connection
  /// of process `pid` and broadcast, then makes a round trip to the bus (everything above is
  /// routed by then); prints the connections it addressed.
  static let forger = """
    import sys, dbus, dbus.lowlevel
    bus = dbus.bus.BusConnection(sys.argv[1])
    pid = int(sys.argv[2])
    driver = bus.get_object('org.freedesktop.DBus', '/org/freedesktop/DBus')
    targets = []
    for name in driver.ListNames(dbus_interface='org.freedesktop.DBus'):
        if not name.startswith(':'):
            continue
        try:
            if driver.GetConnectionUnixProcessID(name, dbus_interface='org.freedesktop.DBus') == pid:
                targets.append(str(name))
        except dbus.DBusException:
            pass
    if not targets:
        sys.exit(3)
    for spec in sys.argv[3:]:
        path, interface, member = spec.split('|')
        for destination in targets + [None]:
            message = dbus.lowlevel.SignalMessage(path, interface, member)
            if destination:
                message.set_destination(destination)
            message.append(True, signature='b')
            bus.send_message(message)
    bus.flush()
    driver.GetId(dbus_interface='org.freedesktop.DBus')
    print(' '.join(targets))
    """

  /// Runs ``forger`` as uid 65534 against the daemon `pid` on `bus`; returns what it printed.
  static func forge(
    _ signals: [String], daemon pid: Int32, bus: PrivateBus, workspace: DaemonWorkspace
  ) async throws -> String {
    let script = workspace.file("forge.py")
    try forger.write(toFile: script, atomically: true, encoding: .utf8)
    let child = try DaemonChild(
      [
        "/usr/bin/setpriv", "--reuid=\(otherUser)", "--regid=\(otherUser)", "--clear-groups", "--",
        PrivateBus.python, script, bus.address, "\(pid)",
      ] + signals, outputPath: workspace.file("forge-\(UUID().uuidString).log"))
    guard let status = await child.waitForExit(timeout: .seconds(30)) else {
      child.terminate()
      throw DaemonHarnessError("the forger hung")
    }
    guard status == 0 else {
      throw DaemonHarnessError("the forger failed (\(status)): \(child.output)")
    }
    return child.output
  }

  @Test func forgedLogindSignalsDoNotStopARootDaemonsJobs() async throws {
    try await forgedLogindSignalsStopNothing(daemonUser: nil)
  }

  /// A per-user daemon (Debian's `daemon` user, its workspace its own) is attacked the same way
  /// by uid 65534. (The bus refuses a uid with no passwd entry, so the daemon's user must exist.)
  @Test func forgedLogindSignalsDoNotStopAPerUserDaemonsJobs() async throws {
    let user = try #require(getpwnam("daemon")?.pointee.pw_uid, "no `daemon` user")
    try await forgedLogindSignalsStopNothing(daemonUser: user)
  }

  /// A job appends to `ticks` until released; uid 65534 forges logind's signals at the daemon
  /// (running as root, or as `daemonUser`); logind's own signal after them is heard, the
  /// forged ones are not; then logind's own `PrepareForSleep(true)` stops the run.
  private func forgedLogindSignalsStopNothing(daemonUser: uid_t?) async throws {
    let setup = try LogindDaemonSetup(systemPolicy: true)
    defer { setup.remove() }
    let (logind, workspace) = (setup.logind, setup.workspace)
    let job = "dev.e2e.steady"
    try workspace.writeConfig(
      jobs: daemonShellJob(
        id: job,
        script: "while [ ! -e \(workspace.file("release")) ]; do "
          + "echo tick >> \(workspace.file("ticks")); sleep 0.05; done",
        schedule: "once = true"))
    var wrapper: [String] = []
    var environment = setup.systemBus
    if let daemonUser {
      for path in [workspace.directory, workspace.configPath] {
        guard chown(path, daemonUser, daemonUser) == 0 else {
          throw DaemonHarnessError("cannot chown \(path): errno \(errno)")
        }
      }
      wrapper = [
        "/usr/bin/setpriv", "--reuid=\(daemonUser)", "--regid=\(daemonUser)", "--clear-groups",
        "--",
      ]
      environment["HOME"] = workspace.directory
    }
    let harness = try DaemonHarness(workspace: workspace, daemonWrapper: wrapper)
    defer { harness.cleanUp() }
    let daemon = try harness.startDaemon(environment: environment)
    func logged(_ text: String) -> Int { daemon.output.components(separatedBy: text).count - 1 }
    let cancelled = "systemd-logind: PrepareForShutdown(false)"
    try await daemonEventually("the job to run", describe: daemon.output) {
      workspace.lines(of: "ticks").isEmpty ? nil : true
    }
    // logind's own (harmless) signal until the daemon hears it: its watch is subscribed.
    try await daemonEventually("the daemon to hear logind", describe: daemon.output) {
      try logind.emit("PrepareForShutdown", false)
      return logged(cancelled) > 0 ? true : nil
    }

    let manager = "\(LogindMock.path)|\(LogindMock.manager)"
    let addressed = try await Self.forge(
      ["\(manager)|PrepareForSleep", "\(manager)|PrepareForShutdown"], daemon: daemon.pid,
      bus: setup.bus, workspace: workspace)
    #expect(!addressed.isEmpty, "the forger found the daemon's connections")
    // The forged signals were routed before this one, which the daemon handles after them.
    let heard = logged(cancelled)
    try logind.emit("PrepareForShutdown", false)
    try await daemonEventually("logind's next signal", describe: daemon.output) {
      logged(cancelled) > heard ? true : nil
    }
    #expect(logged("PrepareForSleep(true)") == 0, "\(daemon.output)")
    #expect(logged("PrepareForShutdown(true)") == 0, "\(daemon.output)")
    #expect(logged("system suspending") == 0, "\(daemon.output)")
    let ticks = workspace.lines(of: "ticks").count
    try await daemonEventually("the job to go on", describe: daemon.output) {
      workspace.lines(of: "ticks").count > ticks ? true : nil
    }

    // logind itself is still heard.
    try logind.emit("PrepareForSleep", true)
    try await daemonEventually("the run to be stopped for sleep", describe: daemon.output) {
      logged("run stopped: system suspending") > 0 ? true : nil
    }
    try logind.emit("PrepareForSleep", false)
    try Data().write(to: URL(fileURLWithPath: workspace.file("release")))
  }
}
