/// The result of `schedule`.
public enum ScheduleOutcome: Hashable, Sendable {
  /// The request is recorded durably.
  case scheduled
  /// `.keep` was given and active work exists; nothing changed.
  case keptExisting
  /// The request was refused.
  case rejected(RejectionReason)
}

/// The result of `cancel`.
public enum CancelOutcome: Hashable, Sendable {
  /// The task was removed; `pendingCleared` is `false` when a running worker was cancelled
  /// instead of a waiting run.
  case cancelled(pendingCleared: Bool)
  /// No active task has this id.
  case noSuchTask
  /// The task was removed from the runtime (a running worker is cancelled) but the store
  /// could not record it: it comes back after a restart. The text says why.
  case storeFailure(String)
}

/// The result of `runNow`.
public enum RunNowOutcome: Hashable, Sendable {
  /// The task will be dispatched at once, bypassing constraints and backoff.
  case triggered
  /// A run of this task is already in flight; no second run is started.
  case alreadyRunning
  /// No active task has this id.
  case noSuchTask
  /// The runtime is not running.
  case notRunning
}

/// Errors from `register`.
public enum RegistrationError: Error, Hashable, Sendable, CustomStringConvertible {
  /// `start()` has been called; the registry is sealed.
  case alreadyStarted
  /// A factory is already registered for the id.
  case duplicate(TaskId)
  /// A fallback factory is already registered.
  case duplicateFallback

  /// A readable explanation.
  public var description: String {
    switch self {
    case .alreadyStarted: "cannot register after start()"
    case .duplicate(let id): "a worker factory is already registered for \(id)"
    case .duplicateFallback: "a fallback worker factory is already registered"
    }
  }
}

/// Errors from `start`.
public enum LifecycleError: Error, Hashable, Sendable, CustomStringConvertible {
  /// `start()` was called after `shutdown()`.
  case shutDown
  /// The call needs a started runtime.
  case notStarted

  /// A readable explanation.
  public var description: String {
    switch self {
    case .shutDown: "the runtime was shut down and cannot be started again"
    case .notStarted: "the runtime has not been started"
    }
  }
}
