/// A snapshot of the dispatch loop, for a watchdog. Take one per watchdog period and compare it
/// with the previous one: the loop is healthy when it iterated in between, or when it is idle
/// (asleep until its next due time or a change, with no wake-up left undelivered). An idle
/// loop never has to wake up just to prove it is alive.
public struct DispatchLoopProgress: Hashable, Sendable {
  /// Loop iterations so far (one per wake-up).
  public var iterations: UInt64
  /// The loop is suspended waiting for its next wake-up, and none is pending.
  public var isIdle: Bool

  /// Creates a snapshot.
  public init(iterations: UInt64, isIdle: Bool) {
    self.iterations = iterations
    self.isIdle = isIdle
  }

  /// Whether the loop made progress between `previous` and this snapshot. A loop seen busy in
  /// both snapshots without iterating is stuck; a wake-up that arrived just before this
  /// snapshot (idle before, busy now) gets the benefit of the doubt until the next one.
  public func madeProgress(since previous: DispatchLoopProgress) -> Bool {
    iterations != previous.iterations || isIdle || previous.isIdle
  }
}
