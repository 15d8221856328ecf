/// What happens to a run still going when a condition it needs is lost (the link turns
/// metered, the charger is pulled, the disk is unmounted …): config key `on-condition-lost`.
public enum ConditionLossPolicy: Hashable, Sendable, Codable {
  /// Stop it (its stop signal, then SIGKILL), and run it again once the conditions hold,
  /// without using an attempt: today's behaviour, and the default.
  case stop
  /// Freeze it, and thaw it the moment the conditions hold again: same processes, no attempt
  /// used, its budget clock stopped while paused. A run paused longer than `max` is stopped as
  /// with ``stop``. A worker that never called ``WorkContext/handlePauses(_:)`` cannot be
  /// frozen and is stopped instead.
  case pause(max: Duration)

  /// `pause-max` when the job does not say: one hour.
  public static let defaultPauseMax: Duration = .seconds(3600)

  /// Pause, for at most ``defaultPauseMax``.
  public static var pause: ConditionLossPolicy { .pause(max: defaultPauseMax) }

  /// The longest pause, or nil when the run is stopped.
  public var pauseMax: Duration? {
    if case .pause(let max) = self { return max }
    return nil
  }
}

/// A change of a run's pause state, as told to the worker's handler
/// (``WorkContext/handlePauses(_:)``).
public enum PauseChange: Hashable, Sendable {
  /// Freeze the work: the condition `reason` was lost.
  case pause(StopReason)
  /// Thaw the work: the conditions hold again, or the run is about to be stopped.
  case resume
}

extension StopReason {
  /// The lost condition, for `status`: "metered network" in `paused (metered network) since
  /// 12:03`.
  public var lostCondition: String {
    switch self {
    case .networkMetered: "metered network"
    case .networkLost: "offline"
    case .networkNotAllowed: "network not allowed"
    case .unmounted: "not mounted"
    case .chargerDisconnected: "not charging"
    case .windowClosed: "window closed"
    default: phrase
    }
  }
}
