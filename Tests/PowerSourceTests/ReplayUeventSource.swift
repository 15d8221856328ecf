import PowerSource

/// A uevent source the test feeds with recorded datagrams.
final class ReplayUeventSource: UeventSource {
  private let stream: AsyncThrowingStream<UeventInput, any Error>
  private let continuation: AsyncThrowingStream<UeventInput, any Error>.Continuation

  init() {
    (stream, continuation) = AsyncThrowingStream.makeStream()
  }

  func inputs() throws -> AsyncThrowingStream<UeventInput, any Error> { stream }

  /// Delivers a recorded datagram from `Fixtures/power_supply/uevents`.
  func replay(_ file: String) throws {
    continuation.yield(.datagram(try FixtureFiles.uevent(file)))
  }

  func overflow() { continuation.yield(.overflow) }
}

/// Waits (yielding, with a real-time bound) until `condition` holds; for async progress only.
func eventually(_ condition: () -> Bool) async -> Bool {
  for _ in 0..<5000 {
    if condition() { return true }
    try? await Task.sleep(for: .milliseconds(1))
  }
  return condition()
}
