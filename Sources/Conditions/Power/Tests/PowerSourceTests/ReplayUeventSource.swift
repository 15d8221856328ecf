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
