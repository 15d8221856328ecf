import Foundation
import Logging
import Netlink
import TestSupport
import Testing

@testable import PowerSource

/// The uevent path over a real `NETLINK_KOBJECT_UEVENT` socket, in a network namespace made for
/// the test (uevent sockets are per network namespace, so nothing leaves it).
///
/// What the kernel allows, checked here: the kernel itself sends uevents for devices created in
/// the namespace (a veth pair: `SUBSYSTEM=net`, sender port 0) — real kernel messages. This VM
/// has no power_supply device, so no real `SUBSYSTEM=power_supply` uevent can be made; a root
/// process may, however, send to group 1 of a uevent socket, and the receiver then sees that
/// sender's port ID (not 0). So the power_supply path is a faithful replay: recorded datagrams
/// sent through the kernel's netlink multicast to the probe's real socket, accepted only because
/// the socket's policy names that one sender; the production policy (kernel only) rejects them.
@Suite(
  .blockingIO,
  .serialized, .timeLimit(.minutes(3)),
  .enabled(if: getuid() == 0, "needs root: ip netns add, setns, multicast send to group 1"))
struct PowerUeventTests {
  private let logger = Logger(label: "PowerUeventTests") { _ in SwiftLogNoOpLogHandler() }

  @Test func kernelUeventsArriveAndNonPowerOnesCauseNoReread() async throws {
    let namespace = try NamespaceSandbox.create(prefix: "bgtest-power", vethPair: false)
    defer { namespace.remove() }
    let (socket, sender) = try NetworkNamespace.perform(inNamespaceAt: namespace.path) {
      (try NetlinkUeventSocket(), try UeventSender())
    }
    let scratch = try PowerScratchTree(copying: "laptop-discharging")
    defer { scratch.remove() }
    let probe = PowerProbe(
      sysfsRoot: scratch.root, logger: logger, batteryRereadInterval: .seconds(3600),
      uevents: socket)
    let running = Task { try await probe.run() }
    defer { running.cancel() }
    #expect(await waitUntil { probe.counters.reads == 1 })

    // Real kernel uevents (sender port 0) for a veth pair created inside the namespace.
    try namespace.ip("link", "add", "bgpwrA", "type", "veth", "peer", "name", "bgpwrB")
    #expect(await waitUntil { probe.counters.otherUevents >= 2 })
    #expect(probe.counters.malformedUevents == 0)
    #expect(probe.counters.powerSupplyUevents == 0)
    #expect(probe.counters.reads == 1, "net uevents must not cause a sysfs re-read")

    // A user-space sender is not the kernel: the production policy drops it.
    try sender.send(try PowerFixtureFiles.uevent("ac-online.bin"))
    #expect(await waitUntil { socket.counters.rejectedSenders == 1 })
    #expect(probe.counters.powerSupplyUevents == 0)
  }

  @Test func replayedPowerUeventThroughTheRealSocketPublishesTheCharger() async throws {
    let namespace = try NamespaceSandbox.create(prefix: "bgtest-power", vethPair: false)
    defer { namespace.remove() }
    let (socket, sender) = try NetworkNamespace.perform(inNamespaceAt: namespace.path) {
      () throws -> (NetlinkUeventSocket, UeventSender) in
      let sender = try UeventSender()
      return (try NetlinkUeventSocket(senderPolicy: .kernelAndPort(sender.portID)), sender)
    }
    let scratch = try PowerScratchTree(copying: "laptop-discharging")
    defer { scratch.remove() }
    let probe = PowerProbe(
      sysfsRoot: scratch.root, logger: logger, batteryRereadInterval: .seconds(3600),
      uevents: socket)
    var updates = probe.statusUpdates().makeAsyncIterator()
    let running = Task { try await probe.run() }
    defer { running.cancel() }
    #expect(try #require(await updates.next()).charging == false)
    #expect(await waitUntil { probe.counters.reads == 1 }, "start-up read done before edits")

    // udev's format and garbage go through the same socket and are counted, not fatal.
    try sender.send(try PowerFixtureFiles.uevent("udev-monitor-power.bin"))
    try sender.send(try PowerFixtureFiles.uevent("malformed-field.bin"))

    try scratch.set("AC", "online", "1")
    try scratch.set("BAT0", "status", "Charging")
    try sender.send(try PowerFixtureFiles.uevent("ac-online.bin"))
    let plugged = try #require(await updates.next())
    #expect(plugged.externalPower)
    #expect(plugged.charging)
    let counters = probe.counters
    #expect(counters.udevMessages == 1)
    #expect(counters.malformedUevents == 1)
    #expect(counters.powerSupplyUevents == 1)
    #expect(socket.counters.delivered == 3)
    #expect(socket.counters.rejectedSenders == 0)
  }

  /// The socket filter in the kernel (issue #34: quiet when the machine is busy): real kernel
  /// uevents of another subsystem (a veth pair's `SUBSYSTEM=net`) and replayed non-power
  /// datagrams never reach a socket filtered on `power_supply`, while power_supply uevents in
  /// the kernel's layout do. Netlink multicast queues each datagram while sending, in order, so
  /// the first datagram read is the first one the filter let through.
  @Test func subsystemFilterDropsOtherUeventsInTheKernel() async throws {
    let namespace = try NamespaceSandbox.create(prefix: "bgtest-power", vethPair: false)
    defer { namespace.remove() }
    let (socket, sender) = try NetworkNamespace.perform(inNamespaceAt: namespace.path) {
      () throws -> (NetlinkUeventSocket, UeventSender) in
      let sender = try UeventSender()
      let socket = try NetlinkUeventSocket(
        senderPolicy: .kernelAndPort(sender.portID), subsystem: PowerProbe.subsystem)
      return (socket, sender)
    }
    var inputs = try socket.inputs().makeAsyncIterator()
    try namespace.ip("link", "add", "bgpwrA", "type", "veth", "peer", "name", "bgpwrB")
    for name in ["kernel-net-add-veth.bin", "udev-monitor-power.bin", "malformed-no-at.bin"] {
      try sender.send(try PowerFixtureFiles.uevent(name))
    }
    let acOnline = try PowerFixtureFiles.uevent("ac-online.bin")
    let battery = try PowerFixtureFiles.uevent("battery-change.bin")
    try sender.send(acOnline)
    try sender.send(try PowerFixtureFiles.uevent("kernel-net-add-veth.bin"))
    try sender.send(battery)
    #expect(try await inputs.next() == .datagram(acOnline))
    #expect(try await inputs.next() == .datagram(battery))
    #expect(socket.counters.delivered == 2)
    #expect(socket.counters.rejectedSenders == 0)
  }
}

/// A uevent sender's socket call failed.
private struct SenderError: Error {
  var errno: Int32
}

/// A user-space `NETLINK_KOBJECT_UEVENT` socket that sends datagrams to group 1.
private final class UeventSender: Sendable {
  let descriptor: Int32
  let portID: UInt32

  init() throws {
    let raw = socket(
      AF_NETLINK, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
      NetlinkAddress.kobjectUeventProtocol)
    guard raw >= 0 else { throw SenderError(errno: errno) }
    let bound = NetlinkAddress().withSockaddr { bind(raw, $0, $1) }
    let (named, address) = NetlinkAddress.receive { getsockname(raw, $0, $1) }
    guard bound == 0, named == 0, let address else {
      close(raw)
      throw SenderError(errno: errno)
    }
    descriptor = raw
    portID = address.portID
  }

  deinit { close(descriptor) }

  func send(_ bytes: [UInt8]) throws {
    let destination = NetlinkAddress(portID: 0, groups: NetlinkUeventSocket.kernelGroup)
    let sent = bytes.withUnsafeBytes { buffer in
      destination.withSockaddr { sendto(descriptor, buffer.baseAddress, buffer.count, 0, $0, $1) }
    }
    guard sent == bytes.count else { throw SenderError(errno: errno) }
  }
}

/// Fixture access for the integration tests.
private enum PowerFixtureFiles {
  static let powerSupply: String = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures/power_supply").path

  static func uevent(_ name: String) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: powerSupply + "/uevents/" + name)))
  }
}

/// A writable copy of a power_supply fixture tree.
private struct PowerScratchTree {
  let root = NSTemporaryDirectory() + "power-it-\(UUID().uuidString)"

  init(copying scenario: String) throws {
    try FileManager.default.copyItem(
      atPath: PowerFixtureFiles.powerSupply + "/" + scenario, toPath: root)
  }

  func set(_ supply: String, _ attribute: String, _ value: String) throws {
    try (value + "\n").write(
      toFile: root + "/class/power_supply/" + supply + "/" + attribute, atomically: false,
      encoding: .utf8)
  }

  func remove() { try? FileManager.default.removeItem(atPath: root) }
}
