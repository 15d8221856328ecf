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

/// An error from `register`.
///
/// Compare ``code`` to tell errors apart; new codes may be added in later versions.
public struct RegistrationError: Error, Hashable, Sendable, CustomStringConvertible {
  /// What went wrong.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    private enum Value: String, Hashable, Sendable {
      case alreadyStarted, duplicate, duplicateFallback, noTaskIds
    }

    private let value: Value

    private init(_ value: Value) {
      self.value = value
    }

    /// `start()` has been called; the registry is sealed.
    public static let alreadyStarted = Code(.alreadyStarted)
    /// A factory is already registered for the id.
    public static let duplicate = Code(.duplicate)
    /// A fallback factory is already registered.
    public static let duplicateFallback = Code(.duplicateFallback)
    /// The list of task ids to register is empty.
    public static let noTaskIds = Code(.noTaskIds)

    /// The code's name.
    public var description: String { value.rawValue }
  }

  /// What went wrong.
  public let code: Code
  /// The task id concerned (``Code/duplicate`` only).
  public let taskId: TaskId?

  private init(_ code: Code, taskId: TaskId? = nil) {
    self.code = code
    self.taskId = taskId
  }

  /// `start()` has been called; the registry is sealed.
  public static let alreadyStarted = RegistrationError(.alreadyStarted)
  /// A factory is already registered for `taskId`.
  public static func duplicate(_ taskId: TaskId) -> RegistrationError {
    RegistrationError(.duplicate, taskId: taskId)
  }
  /// A fallback factory is already registered.
  public static let duplicateFallback = RegistrationError(.duplicateFallback)
  /// The list of task ids to register is empty.
  public static let noTaskIds = RegistrationError(.noTaskIds)

  /// A readable explanation.
  public var description: String {
    switch code {
    case .alreadyStarted: "cannot register after start()"
    case .duplicate: "a worker factory is already registered for \(taskId.map(\.rawValue) ?? "")"
    case .duplicateFallback: "a fallback worker factory is already registered"
    case .noTaskIds: "no task ids to register: the list is empty"
    default: "registration failed: \(code)"
    }
  }
}

/// An error from the runtime's lifecycle (`start`, and calls that need a started runtime).
///
/// Compare ``code`` to tell errors apart; new codes may be added in later versions.
public struct LifecycleError: Error, Hashable, Sendable, CustomStringConvertible {
  /// What went wrong.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    private enum Value: String, Hashable, Sendable {
      case shutDown, notStarted
    }

    private let value: Value

    private init(_ value: Value) {
      self.value = value
    }

    /// `start()` was called after `shutdown()`.
    public static let shutDown = Code(.shutDown)
    /// The call needs a started runtime.
    public static let notStarted = Code(.notStarted)

    /// The code's name.
    public var description: String { value.rawValue }
  }

  /// What went wrong.
  public let code: Code

  private init(_ code: Code) {
    self.code = code
  }

  /// `start()` was called after `shutdown()`.
  public static let shutDown = LifecycleError(.shutDown)
  /// The call needs a started runtime.
  public static let notStarted = LifecycleError(.notStarted)

  /// A readable explanation.
  public var description: String {
    switch code {
    case .shutDown: "the runtime was shut down and cannot be started again"
    case .notStarted: "the runtime has not been started"
    default: "lifecycle error: \(code)"
    }
  }
}
