import Foundation

/// How long a test waits for something another process or thread does (a daemon's status, a
/// monitor's update, a child's exit) before it fails: a hang guard, never a timing goal. The
/// wait ends as soon as the awaited thing happens, so a passing test does not pay for it; the
/// first half-minute of a whole `swift test` on 2 cores is crowded enough to take 20 s.
public let testEventTimeout: Duration = .seconds(60)

/// `probe`'s first non-nil value, tried every `interval` until ``testEventTimeout`` has passed
/// or the task is cancelled (then one last time); `nil` if it never gave one.
public func eventually<T>(
  every interval: Duration = .milliseconds(20), _ probe: () async throws -> T?
) async rethrows -> T? {
  let deadline = ContinuousClock.now.advanced(by: testEventTimeout)
  while ContinuousClock.now < deadline, !Task.isCancelled {
    if let value = try await probe() { return value }
    try? await Task.sleep(for: interval)
  }
  return try await probe()
}

/// Whether `condition` came to hold, tried every `interval` until ``testEventTimeout`` has
/// passed or the task is cancelled (then one last time). For conditions another thread or
/// process makes true; never for checking that something does *not* happen.
public func waitUntil(
  every interval: Duration = .milliseconds(10), _ condition: () async throws -> Bool
) async rethrows -> Bool {
  try await eventually(every: interval) { try await condition() ? true : nil } ?? false
}

/// Whether `condition` held, tried every `interval` (blocking the thread: for synchronous
/// helpers only) until ``testEventTimeout`` has passed, then one last time.
public func blockingEventually(
  every interval: Duration = .milliseconds(25), _ condition: () -> Bool
) -> Bool {
  let deadline = ContinuousClock.now.advanced(by: testEventTimeout)
  while ContinuousClock.now < deadline {
    if condition() { return true }
    let (seconds, attoseconds) = interval.components
    Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) / 1e18)
  }
  return condition()
}
