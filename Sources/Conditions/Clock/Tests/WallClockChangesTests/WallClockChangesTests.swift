import Locking
import Logging
import Testing

@testable import WallClockChanges

/// The clock-change timer (`TFD_TIMER_CANCEL_ON_SET`) and the monitor that serves it. These
/// tests never set the clock: this machine's clock is not theirs to change.
@Suite(.timeLimit(.minutes(3))) struct WallClockChangesTests {
  private let logger = Logger(label: "test.wall-clock-changes")

  @Test("the clock-change timer is armed for the far future and re-armable")
  func cancelOnSetTimerIsArmed() throws {
    let timer = try CancelOnSetTimer()
    #expect(timer.isArmed)
    #expect(try timer.read() == .nothing, "nothing to read while the clock is left alone")
    try timer.arm()
    #expect(timer.isArmed)
  }

  @Test("reads of the timer: 8 bytes an expiry, nothing to read (EAGAIN) nothing")
  func cancelOnSetTimerReadings() throws {
    #expect(CancelOnSetTimer.interpret(count: nil) == .nothing)
    #expect(CancelOnSetTimer.interpret(count: 8) == .expired)
  }

  @Test("the clock-change monitor runs until cancelled and then ends its streams")
  func clockChangeMonitorStops() async throws {
    let monitor = WallClockChangeMonitor(logger: logger)
    let changes = monitor.clockChanges()
    let ended = Flag()
    let run = Task {
      defer { ended.set() }
      try await monitor.run()
    }
    try await Task.sleep(for: .milliseconds(50))
    #expect(!ended.isSet, "the monitor ended before it was cancelled")
    run.cancel()
    try await run.value
    var count = 0
    for await _ in changes { count += 1 }
    #expect(count == 0, "the clock was not set during the test")
  }
}

/// A flag set once, read from any task.
private final class Flag: Sendable {
  private let value = Lock(false)
  var isSet: Bool { value.withLock { $0 } }
  func set() { value.withLock { $0 = true } }
}
