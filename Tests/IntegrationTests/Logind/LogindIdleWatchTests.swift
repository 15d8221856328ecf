import BackgrounderLinux
import EventLoops
import Foundation
import Logging
import ServiceLifecycle
import TestSupport
import Testing

/// `LogindIdleWatch` on python-dbusmock's logind: when logind invalidates the idle hint and then
/// does not answer the `GetAll` the watch sends, the idle state becomes unknown once sd-bus's
/// own timeout (2 s) passes, although nothing else arrives on the connection. The connection is
/// served with sd-bus's deadline (`BusConnection.serve`); served by its descriptor alone, the
/// watch kept the last hint (idle) until logind answered.
@Suite(
  .blockingIO,
  .enabled(if: LogindMock.isAvailable, "needs dbus-daemon, dbus-send and python3-dbusmock"),
  .timeLimit(.minutes(2)))
struct LogindIdleWatchTests {
  @Test func anUnansweredReadMakesTheIdleStateUnknown() async throws {
    let bus = try PrivateBus()
    defer { bus.close() }
    let logind = try LogindMock(bus: bus)
    defer { logind.stop() }
    let loop = try EventLoop(name: "test-idle")
    defer { loop.stop() }
    let watch = LogindIdleWatch(
      eventLoop: loop, address: bus.address, logger: Logger(label: "test-idle"))
    let running = Task { try await watch.run() }
    defer { running.cancel() }
    #expect(await waitUntil { watch.current.unknown == nil }, "\(watch.current)")

    try logind.setIdle(true, sinceMonotonic: LogindMock.monotonicMicroseconds())
    #expect(await waitUntil { watch.current.idleSince != nil }, "\(watch.current)")

    // logind says the hint changed without its value, then stops answering: the watch asks with
    // GetAll (a 2 s timeout) and nothing else comes.
    try logind.invalidateIdleHintAndStall()
    #expect(
      await waitUntil { watch.current.unknown == "logind did not answer" }, "\(watch.current)")
    #expect(watch.current.idleSince == nil)
  }

  /// A watch that stopped (its group shut down) closes its bus connection. Before, it only
  /// stopped serving it: the connection stayed open, and logind's signals queued on it, for as
  /// long as the watch lived.
  @Test func aStoppedWatchClosesItsConnection() async throws {
    let bus = try PrivateBus()
    defer { bus.close() }
    let logind = try LogindMock(bus: bus)
    defer { logind.stop() }
    let before = try bus.connections()
    let watch = LogindIdleWatch(address: bus.address, logger: Logger(label: "test-idle"))
    let group = ServiceGroup(
      configuration: .init(services: [watch], logger: Logger(label: "test-idle")))
    let running = Task { try await group.run() }
    #expect(await waitUntil { watch.current.unknown == nil }, "\(watch.current)")
    #expect(try bus.connections() == before + 1)
    await group.triggerGracefulShutdown()
    try await running.value
    try await daemonEventually("the watch's connection to close") {
      try bus.connections() == before ? true : nil
    }
    withExtendedLifetime(watch) {}
  }
}
