import DBus
import EventLoops
import Foundation
import Locking
import TestSupport
import Testing

/// An asynchronous call (``BusConnection/callAsync(destination:path:interface:member:arguments:timeout:answered:)``)
/// on a private `dbus-daemon`, served on an event loop, as the hints' reads of NetworkManager
/// and ModemManager make them: a peer that leaves before answering is a peer that left (the bus
/// answers `NoReply` for it, long before the deadline), not a timeout — a read takes it for a
/// source gone from the bus, as it takes a blocking call's — while a peer that keeps silent
/// times out at the deadline.
@Suite(
  .blockingIO,
  .enabled(if: PrivateBus.isAvailable, "needs dbus-daemon, dbus-send and python3-dbusmock"),
  .timeLimit(.minutes(1)))
struct BusPendingCallTests {
  static let name = "dev.backgrounder.Test.Peer"

  /// A dbus-python peer owning ``name``: `Leave` exits without answering, `Stall` never
  /// answers.
  static let peer = """
    import os, sys, dbus, dbus.service, dbus.mainloop.glib
    from gi.repository import GLib
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    class Peer(dbus.service.Object):
        @dbus.service.method("dev.backgrounder.Test", in_signature="", out_signature="s")
        def Leave(self):
            os._exit(0)
        @dbus.service.method("dev.backgrounder.Test", in_signature="", out_signature="s",
                             async_callbacks=("ok", "error"))
        def Stall(self, ok, error):
            pass
    name = dbus.service.BusName("\(name)", bus)
    Peer(bus, "/")
    print("ready", flush=True)
    GLib.MainLoop().run()
    """

  /// Keeps the call in flight; touched only on the loop's thread.
  private final class Held: @unchecked Sendable {
    var call: BusPendingCall?
  }

  /// Calls `member` of the peer with `timeout` on a connection served on a loop of its own;
  /// returns its error, or nil when it was answered.
  private func call(_ member: String, timeout: Duration, on bus: PrivateBus) async throws
    -> BusError?
  {
    let loop = try EventLoop(name: "bg-test-bus")
    defer { loop.stop() }
    let connection = try BusConnection(address: bus.address)
    let answer = Lock<BusError??>(nil)
    let held = Held()
    loop.execute {
      do throws(BusError) {
        held.call = try connection.callAsync(
          destination: Self.name, path: "/", interface: "dev.backgrounder.Test", member: member,
          arguments: [], timeout: timeout
        ) { reply in
          let error: BusError? =
            switch reply {
            case .success: nil
            case .failure(let error): error
            }
          answer.withLock { $0 = .some(error) }
        }
        connection.serve(on: loop) { _ in }
      } catch {
        answer.withLock { $0 = .some(error) }
      }
    }
    let deadline = ContinuousClock.now + .seconds(20)
    while ContinuousClock.now < deadline {
      if let result = answer.withLock({ $0 }) {
        loop.execute {
          held.call = nil
          connection.stopServing()
        }
        return result
      }
      try await Task.sleep(for: .milliseconds(10))
    }
    throw PrivateBus.Failed(description: "\(member): no answer handed over")
  }

  private func startPeer(on bus: PrivateBus) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: PrivateBus.python)
    process.arguments = ["-c", Self.peer]
    process.environment = ["DBUS_SYSTEM_BUS_ADDRESS": bus.address, "PATH": "/usr/bin:/bin"]
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try process.run()
    let line = pipe.fileHandleForReading.availableData
    guard String(decoding: line, as: UTF8.self).hasPrefix("ready") else {
      throw PrivateBus.Failed(description: "the peer did not start")
    }
    return process
  }

  /// `Leave`: the peer exits before answering (within the call's 30 s): `NoReply`, not a
  /// timeout. `Stall`: the peer keeps silent: a timeout at the call's 300 ms, no error name.
  @Test(
    "a peer that leaves before answering left (NoReply); a silent one times out at the deadline",
    arguments: [
      ("Leave", Duration.seconds(30), false, "org.freedesktop.DBus.Error.NoReply"),
      ("Stall", Duration.milliseconds(300), true, nil),
    ] as [(String, Duration, Bool, String?)])
  func unansweredCalls(member: String, timeout: Duration, isTimeout: Bool, name: String?)
    async throws
  {
    let bus = try PrivateBus()
    defer { bus.close() }
    let peer = try startPeer(on: bus)
    defer { peer.terminate() }
    let error = try #require(
      try await call(member, timeout: timeout, on: bus), "\(member) was answered")
    #expect(error.isTimeout == isTimeout, "\(error)")
    #expect(error.name == name, "\(error)")
  }
}
