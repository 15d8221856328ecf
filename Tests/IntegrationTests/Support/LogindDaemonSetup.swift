/// What a daemon test against logind starts from: a private system bus (a real dbus-daemon),
/// python-dbusmock's logind on it and a daemon workspace. ``remove()`` undoes all three.
struct LogindDaemonSetup {
  let bus: PrivateBus
  let logind: LogindMock
  let workspace: DaemonWorkspace

  /// A daemon's or a command's environment that makes `bus` its system bus.
  var systemBus: [String: String] { ["DBUS_SYSTEM_BUS_ADDRESS": bus.address] }

  /// With `systemPolicy`, the bus applies Debian's system-bus policy (``PrivateBus``).
  init(systemPolicy: Bool = false) throws {
    bus = try PrivateBus(systemPolicy: systemPolicy)
    do {
      logind = try LogindMock(bus: bus)
    } catch {
      bus.close()
      throw error
    }
    do {
      workspace = try DaemonWorkspace()
    } catch {
      logind.stop()
      bus.close()
      throw error
    }
  }

  func remove() {
    workspace.remove()
    logind.stop()
    bus.close()
  }
}
