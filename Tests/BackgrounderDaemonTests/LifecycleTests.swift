import Backgrounder
import BackgrounderDaemon
import BackgrounderLinux
import Foundation
import Locking
import Logging
import ServiceLifecycle
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The daemon's parts in one `ServiceGroup` and its watchdog.
@Suite(.timeLimit(.minutes(3))) struct DaemonPartsTests {
  private let logger = Logger(label: "test.lifecycle")

  /// A part standing in for the runtime: waits for the graceful shutdown, then records that
  /// it cancelled its jobs.
  private func runtimeLike(_ shutDown: Flag) -> DaemonPart {
    DaemonPart("runtime") {
      try? await gracefulShutdown()
      shutDown.set()
    }
  }

  @Test("a failing part ends the group with its error, after a graceful shutdown of the rest")
  func failingPartEndsTheGroup() async throws {
    let shutDown = Flag()
    let parts: [DaemonPart] = [
      runtimeLike(shutDown),
      DaemonPart("control socket") {
        throw POSIXError(.ENAMETOOLONG)
      },
    ]
    let group = ServiceGroup(
      configuration: ServiceGroupConfiguration(
        services: parts.map(\.configuration), logger: logger))
    let error = await #expect(throws: DaemonPartFailure.self) { try await group.run() }
    #expect(error?.part == "control socket")
    #expect(
      error?.description.hasPrefix("control socket: ") == true, "\(String(describing: error))")
    #expect(shutDown.isSet, "the runtime part was shut down gracefully first")
  }

  @Test("a part that returns on its own is a failure too")
  func returningPartIsAFailure() async throws {
    let shutDown = Flag()
    let parts: [DaemonPart] = [runtimeLike(shutDown), DaemonPart("network monitor") {}]
    let group = ServiceGroup(
      configuration: ServiceGroupConfiguration(
        services: parts.map(\.configuration), logger: logger))
    let error = await #expect(throws: DaemonPartFailure.self) { try await group.run() }
    #expect(error == DaemonPartFailure(part: "network monitor", reason: "stopped unexpectedly"))
    #expect(shutDown.isSet)
  }

  @Test("a graceful shutdown ends every part without an error")
  func gracefulShutdownIsClean() async throws {
    let shutDown = Flag()
    let parts: [DaemonPart] = [
      runtimeLike(shutDown),
      DaemonPart.untilShutdown("control socket") {
        try await Task.sleep(for: .seconds(3600))
      },
    ]
    let group = ServiceGroup(
      configuration: ServiceGroupConfiguration(
        services: parts.map(\.configuration), logger: logger))
    try await withThrowingTaskGroup(of: Void.self) { tasks in
      tasks.addTask { try await group.run() }
      await group.triggerGracefulShutdown()
      try await tasks.waitForAll()
    }
    #expect(shutDown.isSet)
  }

  @Test("readiness waits for every condition, whatever order they arrive in")
  func readinessWaitsForAll() async {
    let (listening, listened) = AsyncStream<Void>.makeStream()
    let (statuses, network) = AsyncStream<Int>.makeStream()
    let result = Lock<String??>(nil)
    let waiter = Task {
      let unmet = await ReadinessCondition.firstUnmet([
        .firstElement(of: listening, "control socket listening"),
        .firstElement(of: statuses, "first network status"),
      ])
      result.withLock { $0 = .some(unmet) }
      return unmet
    }
    network.yield(1)
    // Time for a wrong answer to arrive (not a wait for a right one). Not Task.yield(): at the
    // start of a whole run each yield waited seconds behind the other tests' first steps, and
    // 200 of them took this test past its time limit.
    try? await Task.sleep(for: .milliseconds(50))
    #expect(result.withLock { $0 } == nil, "not ready before the socket listens")
    listened.yield()
    #expect(await waiter.value == nil)
  }

  @Test("a condition whose source ended is never met")
  func readinessFailsWhenASourceEnds() async {
    let (listening, listened) = AsyncStream<Void>.makeStream()
    let (statuses, network) = AsyncStream<Int>.makeStream()
    listened.yield()
    network.finish()  // the monitor failed before its first status
    let unmet = await ReadinessCondition.firstUnmet([
      .firstElement(of: listening, "control socket listening"),
      .firstElement(of: statuses, "first network status"),
    ])
    #expect(unmet == "first network status")
  }

  @Test("the watchdog check passes while the loop iterates or idles, fails when it is stuck")
  func dispatchWatchdog() {
    let samples = Lock<[DispatchLoopProgress?]>([
      DispatchLoopProgress(iterations: 1, isIdle: false),
      DispatchLoopProgress(iterations: 2, isIdle: false),
      DispatchLoopProgress(iterations: 2, isIdle: true),
      DispatchLoopProgress(iterations: 3, isIdle: false),
      DispatchLoopProgress(iterations: 3, isIdle: false),
      nil,
    ])
    let watchdog = DispatchWatchdog { samples.withLock { $0.removeFirst() } }
    #expect(watchdog.isHealthy(), "first sample: running")
    #expect(watchdog.isHealthy(), "iterated")
    #expect(watchdog.isHealthy(), "idle")
    #expect(watchdog.isHealthy(), "woken from idle")
    #expect(!watchdog.isHealthy(), "busy twice at iteration 3")
    #expect(!watchdog.isHealthy(), "no runtime")
  }

  @Test("WATCHDOG=1 is sent while healthy and withheld while not")
  func watchdogPingsOnlyWhileHealthy() async throws {
    let path = FileManager.default.temporaryDirectory
      .appendingPathComponent("wd-\(UUID().uuidString).sock").path
    // Short receive timeouts, and waiting between tries with Task.sleep: a blocked receive
    // would hold a thread of the pool the pinger itself runs on.
    let receiver = try DatagramReceiver(path: path, timeout: .milliseconds(1))
    let notifier = SystemdNotifier(
      environment: ["NOTIFY_SOCKET": path, "WATCHDOG_USEC": "20000"])
    // Whether the pinger sees a healthy loop, and how often it asked while it was not.
    let health = Lock((healthy: true, unhealthyChecks: 0))
    let pinger = Task {
      await notifier.runWatchdog(logger: logger) {
        health.withLock { state in
          if !state.healthy { state.unhealthyChecks += 1 }
          return state.healthy
        }
      }
    }
    defer { pinger.cancel() }
    // A liveness bound, not a timing goal: under parallel tests (sanitizers, 2 cores) the
    // cooperative pool can be busy for tens of seconds before the pinger's first turn (30 s
    // were missed once in CI's `swift test`, 2026-11-30).
    #expect(try await next(receiver, within: .seconds(120)) == "WATCHDOG=1")
    health.withLock { $0 = (false, 0) }
    // The pinger checks, pings, sleeps, checks again: once it has asked while unhealthy, the
    // ping of its last healthy check was sent. No wall-clock guess, so a loaded machine that
    // delays the pinger cannot leave that ping for the assertion below.
    try await waitUntil("the pinger asks while unhealthy") {
      health.withLock { $0.unhealthyChecks >= 1 }
    }
    while (try? receiver.receive()) != nil {}
    try await waitUntil("ten more checks") { health.withLock { $0.unhealthyChecks >= 11 } }
    #expect((try? receiver.receive()) == nil, "no WATCHDOG=1 while unhealthy")
    health.withLock { $0.healthy = true }
    #expect(try await next(receiver, within: .seconds(120)) == "WATCHDOG=1", "pings resume")
  }

  /// Waits, trying every 5 ms for up to 60 s, until `condition` holds; records an issue if it
  /// never does. A liveness bound, not a timing goal: with the whole suite on 2 cores the
  /// cooperative pool went 10 s without giving the pinger ten 10 ms turns.
  private func waitUntil(_ what: String, _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(60)
    while !condition() {
      guard ContinuousClock.now < deadline else {
        Issue.record("timed out waiting until \(what)")
        return
      }
      try await Task.sleep(for: .milliseconds(5))
    }
  }

  /// The next datagram, trying every 10 ms until `limit`.
  private func next(_ receiver: DatagramReceiver, within limit: Duration) async throws -> String? {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
      if let message = try? receiver.receive() { return message }
      try await Task.sleep(for: .milliseconds(10))
    }
    return nil
  }
}

/// A flag set once, read from any task.
private final class Flag: Sendable {
  private let value = Lock(false)
  var isSet: Bool { value.withLock { $0 } }
  func set() { value.withLock { $0 = true } }
}
