/// Tells the runtime that wall-clock time jumped: the clock was set (NTP step, `date -s`) or the
/// machine resumed from suspend. Each element makes the dispatcher re-evaluate due times at
/// once instead of waiting for a sleep that was measured before the jump.
///
/// The daemon uses a `timerfd` with `TFD_TIMER_CANCEL_ON_SET`; tests use the test kit's
/// `ManualClock`, whose `jump(by:)` steps the time and reports it here.
public protocol ClockChangeSource: Sendable {
  /// A new, independent stream with one element per clock change.
  func clockChanges() -> AsyncStream<Void>

  /// How many changes the source has noticed, counted before their elements are sent. The
  /// runtime reads it in every dispatcher step, so a change is applied before anything else
  /// looks at the time, even when its stream element has not arrived yet: else a step between
  /// (a condition change, a run ending) took a stepped-over calendar elapse for an overdue one
  /// and started it.
  var changeCount: UInt64 { get }
}
