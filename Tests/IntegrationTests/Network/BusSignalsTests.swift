import CSystemdBus
import DBus
import Foundation
import NetworkHints
import TestSupport
import Testing

/// Whether the tests can act as a second user (root, with util-linux's `setpriv`).
private let canSwitchUser =
  geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")

/// The gate every subscription goes through (``BusSignals``), with NetworkManager's and
/// ModemManager's signals as the hints loop subscribes to them: on a bus with Debian's system
/// policy, uid 65534 forges NetworkManager's `StateChanged` and `PropertiesChanged` and
/// ModemManager's `InterfacesAdded` at this connection (unicast) and broadcast; only what
/// python-dbusmock's NetworkManager (the owner of the name) broadcasts reaches the handlers.
@Suite(
  .blockingIO,
  .serialized,
  .enabled(if: canSwitchUser, "needs root and setpriv to act as a second user"),
  .enabled(if: PrivateBus.isAvailable, "needs dbus-daemon, dbus-send and python3-dbusmock"),
  .enabled(if: PrivateBus.hasSystemPolicy, "needs \(PrivateBus.systemConfig)"),
  .timeLimit(.minutes(3)))
struct BusSignalsTests {
  static let networkManager = "org.freedesktop.NetworkManager"
  static let modemManager = "org.freedesktop.ModemManager1"

  @Test func onlyTheOwnersBroadcastsReachTheHandlers() async throws {
    let bus = try PrivateBus(systemPolicy: true)
    defer { bus.close() }
    try bus.startNetworkManager()
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    var connection: OpaquePointer?
    var result = sd_bus_new(&connection)
    if result >= 0 { result = sd_bus_set_address(connection, bus.address) }
    if result >= 0 { result = sd_bus_set_bus_client(connection, 1) }
    if result >= 0 { result = sd_bus_start(connection) }
    defer { sd_bus_flush_close_unref(connection) }
    #expect(result >= 0, "connect: \(result)")
    let connected = try #require(connection)

    var heard: [(sender: String?, member: String?)] = []
    var refused: [BusSignals.Refusal] = []
    let signals = BusSignals(bus: connected) { refused.append($0) }
    let record = { (message: OpaquePointer) in
      heard.append(
        (
          sd_bus_message_get_sender(message).map { String(cString: $0) },
          sd_bus_message_get_member(message).map { String(cString: $0) }
        ))
    }
    try signals.subscribe(
      from: Self.networkManager, match: "path_namespace='/org/freedesktop/NetworkManager'",
      handler: record)
    try signals.subscribe(
      from: Self.modemManager,
      match: "path='/org/freedesktop/ModemManager1',interface='org.freedesktop.DBus.ObjectManager'",
      handler: record)
    let owner = try #require(signals.owner(of: Self.networkManager))
    #expect(signals.owner(of: Self.modemManager) == nil, "nobody owns ModemManager here")

    let addressed = try await DaemonBusTrustTests.forge(
      [
        "/org/freedesktop/NetworkManager|\(Self.networkManager)|StateChanged",
        "/org/freedesktop/NetworkManager|org.freedesktop.DBus.Properties|PropertiesChanged",
        "/org/freedesktop/ModemManager1|org.freedesktop.DBus.ObjectManager|InterfacesAdded",
      ], daemon: getpid(), bus: bus, workspace: workspace)
    #expect(addressed.contains(":"), "the forger found this connection: \(addressed)")
    // NetworkManager's own change, broadcast after the forged signals were routed.
    try bus.setConnectivity(2)
    let deadline = ContinuousClock.now.advanced(by: .seconds(10))
    while heard.isEmpty, ContinuousClock.now < deadline {
      while sd_bus_process(connected, nil) > 0 {}
      if heard.isEmpty { sd_bus_wait(connected, 100_000) }
    }
    #expect(!heard.isEmpty, "NetworkManager's own signal is heard")
    #expect(heard.allSatisfy { $0.sender == owner }, "only the owner's: \(heard)")
    // Each forged signal addressed to us arrived and was dropped (the broadcast copies never
    // pass the bus's match rule).
    #expect(refused.count == 3, "\(refused)")
    #expect(refused.allSatisfy { $0.destination != nil && $0.sender != owner }, "\(refused)")
  }

  /// The owner itself addressing a signal to one connection: dropped (none of the signals
  /// Backgrounder watches is sent so); its broadcast goes through.
  @Test func theOwnersUnicastSignalIsDropped() async throws {
    let bus = try PrivateBus(systemPolicy: true)
    defer { bus.close() }
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    var connection: OpaquePointer?
    var result = sd_bus_new(&connection)
    if result >= 0 { result = sd_bus_set_address(connection, bus.address) }
    if result >= 0 { result = sd_bus_set_bus_client(connection, 1) }
    if result >= 0 { result = sd_bus_start(connection) }
    defer { sd_bus_flush_close_unref(connection) }
    let connected = try #require(result >= 0 ? connection : nil, "connect: \(result)")
    var unique: UnsafePointer<CChar>?
    #expect(sd_bus_get_unique_name(connected, &unique) >= 0)
    let ourName = try #require(unique.map { String(cString: $0) })

    var heard: [String] = []
    var refused: [BusSignals.Refusal] = []
    let signals = BusSignals(bus: connected) { refused.append($0) }
    try signals.subscribe(from: "dev.backgrounder.Sender", match: "path='/dev/backgrounder'") {
      heard.append(sd_bus_message_get_member($0).map { String(cString: $0) } ?? "")
    }
    // The sender (root, which may own any name here) takes the name, then sends `Unicast` to
    // us and `Broadcast` to everyone.
    let script = workspace.file("owner.py")
    try """
    import sys, dbus, dbus.lowlevel
    bus = dbus.bus.BusConnection(sys.argv[1])
    bus.request_name('dev.backgrounder.Sender')
    for member, destination in (('Unicast', sys.argv[2]), ('Broadcast', None)):
        message = dbus.lowlevel.SignalMessage('/dev/backgrounder', 'dev.backgrounder.Test', member)
        if destination:
            message.set_destination(destination)
        bus.send_message(message)
    bus.flush()
    bus.get_object('org.freedesktop.DBus', '/org/freedesktop/DBus').GetId(
        dbus_interface='org.freedesktop.DBus')
    """.write(toFile: script, atomically: true, encoding: .utf8)
    let sender = try DaemonChild(
      [PrivateBus.python, script, bus.address, ourName], outputPath: workspace.file("owner.log"))
    #expect(await sender.waitForExit(timeout: .seconds(30)) == 0, "\(sender.output)")
    let deadline = ContinuousClock.now.advanced(by: .seconds(10))
    while heard.isEmpty, ContinuousClock.now < deadline {
      while sd_bus_process(connected, nil) > 0 {}
      if heard.isEmpty { sd_bus_wait(connected, 100_000) }
    }
    #expect(heard == ["Broadcast"])
    #expect(refused.map(\.member) == ["Unicast"], "\(refused)")
    #expect(refused.first?.destination == ourName, "\(refused)")
  }
}
