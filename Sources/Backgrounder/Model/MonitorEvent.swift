import Foundation

/// Something that happened to a task, as `events()` delivers it.
public struct MonitorEvent: Hashable, Sendable {
  /// The task concerned (`nil` for runtime-wide errors).
  public var taskId: TaskId?
  /// When it happened (the runtime's clock).
  public var time: Date
  /// What happened.
  public var kind: Kind

  /// Creates an event.
  public init(taskId: TaskId?, time: Date, kind: Kind) {
    self.taskId = taskId
    self.time = time
    self.kind = kind
  }

  /// What happened.
  public enum Kind: Hashable, Sendable {
    /// A request was scheduled.
    case scheduled
    /// A request replaced an existing one.
    case scheduleReplaced
    /// Work was cancelled.
    case cancelled(source: CancelSource)
    /// A worker was invoked.
    case workStarted(attempt: Int)
    /// A worker returned.
    case workCompleted(attempt: Int, result: WorkResult, runtime: Duration)
    /// A due run was held back; no attempt was used.
    case attemptDeferred(reason: DeferralReason)
    /// A task was skipped.
    case skipped(reason: SkipReason)
    /// An attempt failed without the worker returning a result.
    case attemptFailed(reason: FailureReason)
    /// A retry was scheduled.
    case retryScheduled(nextAttempt: Int, delay: Duration)
    /// A running worker was stopped because a constraint was lost (or on request).
    case workStopped(attempt: Int, reason: StopReason)
    /// A worker ignored cancellation past the grace period and was abandoned.
    case workerAbandoned(attempt: Int)
    /// A running worker was frozen because a condition was lost (`on-condition-lost = "pause"`).
    case workPaused(attempt: Int, reason: StopReason)
    /// A paused worker was thawed, its conditions holding again after `paused`.
    case workResumed(attempt: Int, paused: Duration)
    /// A running worker reported progress.
    case progress(fraction: Double, message: String?)
    /// The runtime hit an error it could not attribute to a worker (e.g. a store write).
    case libraryError(message: String)
  }
}

/// Who cancelled work.
public enum CancelSource: String, Hashable, Sendable, Codable {
  /// `cancel` or `cancelAll`.
  case user
  /// A `schedule(_:policy: .replace)` replaced it.
  case replaced
  /// `shutdown()` stopped it (it is recorded as a retry and resumes after the next start).
  case shutdown
}

/// Why a due run was held back.
public enum DeferralReason: String, Hashable, Sendable, Codable {
  /// The network gate timed out.
  case reachabilityTimeout
  /// `requiresCharging` is not met.
  case chargingNotMet
  /// `requiresBatteryNotLow` is not met.
  case batteryNotLowNotMet
  /// `requiredMount` is not mounted.
  case mountNotMet
  /// `requiredReachable` is not reachable (or not checked yet).
  case reachableNotMet
  /// `requiresIdle` is not met: the user has not been idle that long (or it is not known).
  case userIdleNotMet
  /// The run was stopped because a constraint was lost; it resumes when the constraint returns.
  case constraintLost
  /// The worker declined to start for a condition of its own
  /// (``WorkContext/declineStart(reason:)``: a bandwidth cap that cannot be enforced).
  case workerDeclined
}

/// Why a task was skipped.
public enum SkipReason: String, Hashable, Sendable, Codable {
  /// No worker factory is registered for it in this process.
  case notRegistered
  /// It was ephemeral and the runtime restarted.
  case ephemeralExpired
  /// The factory returned `nil`.
  case factoryDeclined
  /// It was expedited with `onQuotaExhausted: .drop` and the quota was used up.
  case quotaExhausted
}

/// Why an attempt failed without a worker result.
public enum FailureReason: String, Hashable, Sendable, Codable {
  /// The budget expired.
  case expired
  /// The factory threw.
  case factoryThrew
  /// The worker threw (reserved: `Worker.execute` does not throw).
  case workerThrew
  /// The process ended while the worker was running (found by the next `start()`).
  case interrupted
}
