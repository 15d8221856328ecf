/// How the runtime spreads the runs that became due while it was not running or the system
/// slept (the daemon's `start-splay`): each starts at its own offset in [0, ``over``] after the
/// start or the resume, fixed by ``machineId`` and the task id (as `fixed-random-delay` is), so
/// that catch-up runs do not all start at once and each keeps its slot.
public struct StartSplay: Hashable, Sendable {
  /// The time the catch-up runs spread over; zero turns the spreading off.
  public var over: Duration
  /// Fixes each task's offset (`/etc/machine-id` in the daemon).
  public var machineId: String

  /// Creates a splay.
  public init(over: Duration, machineId: String) {
    self.over = over
    self.machineId = machineId
  }
}
