import Locking
import Testing

/// The runtimes a test started, stopped when the test ends: a test is over only once its
/// runtimes have shut down.
///
/// A `defer { Task { await h.stop() } }` left the shutdown to an unstructured task that could
/// still be pending when the test process exited, and LeakSanitizer then reported the runtime's
/// suspended tasks (waiting on each other, reachable from no thread) as leaked; runtimes still
/// running also took CPU from the tests after them. ``Harness/start(workers:network:power:concurrencyLimit:gracePeriod:directory:clock:expeditedQuota:fallback:dispatchesWork:watchesClockChanges:networkSource:timeZone:mounts:onWaitChange:)``
/// registers each harness here, so it needs a suite with the ``Trait/stopsRuntimes`` trait.
final class RunningRuntimes: Sendable {
  @TaskLocal static var current: RunningRuntimes?

  private let stops = Lock<[@Sendable () async -> Void]>([])

  /// Runs `stop` when the test ends (after the test's other stops, newest first).
  func stopAtEnd(_ stop: @escaping @Sendable () async -> Void) {
    stops.withLock { $0.append(stop) }
  }

  fileprivate func stopAll() async {
    for stop in stops.withLock({ $0 }).reversed() { await stop() }
  }
}

/// Each test of the suite stops, when it ends, the runtimes it started.
struct StopsRuntimesTrait: SuiteTrait, TestTrait, TestScoping {
  var isRecursive: Bool { true }

  func provideScope(
    for test: Test, testCase: Test.Case?,
    performing function: @Sendable () async throws -> Void
  ) async throws {
    guard testCase != nil else { return try await function() }
    let runtimes = RunningRuntimes()
    do {
      try await RunningRuntimes.$current.withValue(runtimes) { try await function() }
    } catch {
      await runtimes.stopAll()
      throw error
    }
    await runtimes.stopAll()
  }
}

extension Trait where Self == StopsRuntimesTrait {
  /// Each test stops the runtimes it started before it ends (see ``RunningRuntimes``).
  static var stopsRuntimes: Self { Self() }
}

extension RunningRuntimes {
  /// The running test's registry; a test outside a ``Trait/stopsRuntimes`` suite stops here.
  static func forRunningTest() -> RunningRuntimes {
    guard let current else {
      preconditionFailure("a test that starts a runtime needs @Suite(.stopsRuntimes, …)")
    }
    return current
  }
}
