/// How an expedited request behaves once the expedited quota is used up.
public enum QuotaExhaustedPolicy: String, Hashable, Sendable, Codable {
  /// Run it like a standard request.
  case runAsRegular
  /// Drop it (event `skipped(quotaExhausted)`).
  case drop
}

/// A hint about how urgently a one-time request should run.
public enum ExecutionHint: Hashable, Sendable, Codable {
  /// Ordinary priority.
  case standard
  /// Dispatched before standard work while the expedited quota lasts.
  case expedited(onQuotaExhausted: QuotaExhaustedPolicy)

  var isExpedited: Bool {
    if case .expedited = self { true } else { false }
  }
}

/// What to do when a request is scheduled for a task id that already has active work.
public enum ExistingWorkPolicy: String, Hashable, Sendable, Codable {
  /// Replace the existing work (a running worker is cancelled).
  case replace
  /// Keep the existing work and ignore the new request.
  case keep
  /// Keep the existing work's schedule (next run, attempt, deferrals, results) but take the new
  /// request's definition (constraints, interval, backoff, budget, input) from its next run on.
  /// A request of the other kind (one-time vs periodic) replaces the existing work.
  case update
}

/// A unit of work to schedule.
public enum WorkRequest: Hashable, Sendable {
  /// Runs once (with retries).
  case oneTime(OneTime)
  /// Runs every interval.
  case periodic(Periodic)

  /// The default budget of a run (10 minutes).
  public static let defaultBudget: Duration = .seconds(600)

  /// Work that runs once, retried by its backoff policy.
  public struct OneTime: Hashable, Sendable {
    /// The registered task id.
    public var taskId: TaskId
    /// Conditions for running.
    public var constraints: WorkConstraints
    /// Data for the worker (non-empty keys, ≤ 10,240 bytes serialized).
    public var input: WorkInput
    /// Ephemeral work does not survive a restart (swept by `start()`).
    public var ephemeral: Bool
    /// Earliest start, relative to scheduling (not negative).
    public var initialDelay: Duration
    /// Retry policy (see ``BackoffPolicy`` for its limits).
    public var backoff: BackoffPolicy
    /// Standard or expedited.
    public var executionHint: ExecutionHint
    /// How long one run may take before it is cancelled (positive).
    public var budget: Duration
    /// What a run holds against system sleep and shutdown (``InhibitPolicy/delay`` by default).
    public var inhibitPolicy: InhibitPolicy

    /// Creates a one-time request.
    public init(
      taskId: TaskId, constraints: WorkConstraints = .none, input: WorkInput = WorkInput(),
      ephemeral: Bool = false, initialDelay: Duration = .zero,
      backoff: BackoffPolicy = .standard, executionHint: ExecutionHint = .standard,
      budget: Duration = WorkRequest.defaultBudget, inhibitPolicy: InhibitPolicy = .delay
    ) {
      self.taskId = taskId
      self.constraints = constraints
      self.input = input
      self.ephemeral = ephemeral
      self.initialDelay = initialDelay
      self.backoff = backoff
      self.executionHint = executionHint
      self.budget = budget
      self.inhibitPolicy = inhibitPolicy
    }
  }

  /// Work that runs every ``interval``; the first run is due when scheduled.
  public struct Periodic: Hashable, Sendable {
    /// The registered task id.
    public var taskId: TaskId
    /// Conditions for running.
    public var constraints: WorkConstraints
    /// Data for the worker (non-empty keys, ≤ 10,240 bytes serialized).
    public var input: WorkInput
    /// Ephemeral work does not survive a restart (swept by `start()`).
    public var ephemeral: Bool
    /// Time between runs (at least the minimum periodic interval, 1 minute by default).
    public var interval: Duration
    /// When set (0 < flex < interval), the run may start up to `flexWindow` before it is due,
    /// so that it can share a wake-up with other work.
    public var flexWindow: Duration?
    /// Retry policy within a cycle (delays are clamped to the interval; see ``BackoffPolicy``
    /// for its limits).
    public var backoff: BackoffPolicy
    /// How long one run may take before it is cancelled (positive).
    public var budget: Duration
    /// When set, runs follow this calendar (its elapses, splay and catch-up) instead of
    /// ``interval`` and ``flexWindow``, which are then ignored.
    public var calendar: CalendarSchedule?
    /// What a run holds against system sleep and shutdown (``InhibitPolicy/delay`` by default).
    public var inhibitPolicy: InhibitPolicy

    /// Creates a calendar-scheduled periodic request: a run at each elapse of `calendar`
    /// after scheduling (plus its splay); an elapse missed while not running gives one run
    /// at `start()` when the calendar catches up.
    public init(
      taskId: TaskId, constraints: WorkConstraints = .none, input: WorkInput = WorkInput(),
      ephemeral: Bool = false, calendar: CalendarSchedule, backoff: BackoffPolicy = .standard,
      budget: Duration = WorkRequest.defaultBudget, inhibitPolicy: InhibitPolicy = .delay
    ) {
      self.init(
        taskId: taskId, constraints: constraints, input: input, ephemeral: ephemeral,
        interval: .zero, backoff: backoff, budget: budget, inhibitPolicy: inhibitPolicy)
      self.calendar = calendar
    }

    /// Creates a periodic request.
    public init(
      taskId: TaskId, constraints: WorkConstraints = .none, input: WorkInput = WorkInput(),
      ephemeral: Bool = false, interval: Duration, flexWindow: Duration? = nil,
      backoff: BackoffPolicy = .standard, budget: Duration = WorkRequest.defaultBudget,
      inhibitPolicy: InhibitPolicy = .delay
    ) {
      self.taskId = taskId
      self.constraints = constraints
      self.input = input
      self.ephemeral = ephemeral
      self.interval = interval
      self.flexWindow = flexWindow
      self.backoff = backoff
      self.budget = budget
      self.inhibitPolicy = inhibitPolicy
    }
  }

  /// The task id of either kind.
  public var taskId: TaskId {
    switch self {
    case .oneTime(let request): request.taskId
    case .periodic(let request): request.taskId
    }
  }

  /// The inhibit policy of either kind.
  public var inhibitPolicy: InhibitPolicy {
    switch self {
    case .oneTime(let request): request.inhibitPolicy
    case .periodic(let request): request.inhibitPolicy
    }
  }
}

/// Why a request was not scheduled.
///
/// Compare ``code`` to tell reasons apart (`reason.code == .invalidBackoff`); new codes may be
/// added in later versions, so do not assume the list is complete.
public struct RejectionReason: Hashable, Sendable, CustomStringConvertible {
  /// What is wrong with the request, or why it could not be taken.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    private enum Value: String, Hashable, Sendable {
      case notRegistered, inputTooLarge, inputNotSerializable, emptyInputKey, intervalTooShort
      case invalidFlexWindow, invalidBackoff, invalidBudget, invalidInitialDelay, notStarted
      case shutDown, storeFailure, invalidCalendar
    }

    private let value: Value

    private init(_ value: Value) {
      self.value = value
    }

    /// No factory is registered for the task id.
    public static let notRegistered = Code(.notRegistered)
    /// The serialized input is larger than 10,240 bytes.
    public static let inputTooLarge = Code(.inputTooLarge)
    /// The input could not be serialized.
    public static let inputNotSerializable = Code(.inputNotSerializable)
    /// The input has a value under the empty key.
    public static let emptyInputKey = Code(.emptyInputKey)
    /// The periodic interval is below the minimum.
    public static let intervalTooShort = Code(.intervalTooShort)
    /// The flex window is not within (0, interval).
    public static let invalidFlexWindow = Code(.invalidFlexWindow)
    /// The backoff policy breaks a limit.
    public static let invalidBackoff = Code(.invalidBackoff)
    /// The budget is not positive.
    public static let invalidBudget = Code(.invalidBudget)
    /// The initial delay is negative.
    public static let invalidInitialDelay = Code(.invalidInitialDelay)
    /// `start()` has not completed.
    public static let notStarted = Code(.notStarted)
    /// The runtime is shutting down or stopped.
    public static let shutDown = Code(.shutDown)
    /// The request could not be made durable.
    public static let storeFailure = Code(.storeFailure)
    /// A calendar-scheduled request has no calendar event.
    public static let invalidCalendar = Code(.invalidCalendar)

    /// The code's name.
    public var description: String { value.rawValue }
  }

  /// What is wrong.
  public let code: Code
  /// The task id (``Code/notRegistered``).
  public let taskId: TaskId?
  /// The serialized input size in bytes (``Code/inputTooLarge``).
  public let bytes: Int?
  /// The minimum periodic interval (``Code/intervalTooShort``).
  public let minimum: Duration?
  /// Why (``Code/inputNotSerializable``, ``Code/invalidBackoff``, ``Code/storeFailure``).
  public let detail: String?

  private init(
    _ code: Code, taskId: TaskId? = nil, bytes: Int? = nil, minimum: Duration? = nil,
    detail: String? = nil
  ) {
    self.code = code
    self.taskId = taskId
    self.bytes = bytes
    self.minimum = minimum
    self.detail = detail
  }

  /// No factory is registered for `taskId`.
  public static func notRegistered(_ taskId: TaskId) -> RejectionReason {
    RejectionReason(.notRegistered, taskId: taskId)
  }
  /// The input is `bytes` bytes serialized, more than 10,240.
  public static func inputTooLarge(bytes: Int) -> RejectionReason {
    RejectionReason(.inputTooLarge, bytes: bytes)
  }
  /// The input could not be serialized, for the reason given.
  public static func inputNotSerializable(_ why: String) -> RejectionReason {
    RejectionReason(.inputNotSerializable, detail: why)
  }
  /// The input has a value under the empty key.
  public static let emptyInputKey = RejectionReason(.emptyInputKey)
  /// The periodic interval is below `minimum`.
  public static func intervalTooShort(minimum: Duration) -> RejectionReason {
    RejectionReason(.intervalTooShort, minimum: minimum)
  }
  /// The flex window is not within (0, interval).
  public static let invalidFlexWindow = RejectionReason(.invalidFlexWindow)
  /// The backoff policy breaks a limit (initial delay 10 s…5 h, attempts 1…30, jitter 0…1).
  public static func invalidBackoff(_ why: String) -> RejectionReason {
    RejectionReason(.invalidBackoff, detail: why)
  }
  /// The budget is not positive.
  public static let invalidBudget = RejectionReason(.invalidBudget)
  /// The initial delay is negative.
  public static let invalidInitialDelay = RejectionReason(.invalidInitialDelay)
  /// `start()` has not completed.
  public static let notStarted = RejectionReason(.notStarted)
  /// The runtime is shutting down or stopped.
  public static let shutDown = RejectionReason(.shutDown)
  /// A calendar-scheduled request has no calendar event.
  public static let invalidCalendar = RejectionReason(.invalidCalendar)
  /// The request could not be made durable, for the reason given.
  public static func storeFailure(_ why: String) -> RejectionReason {
    RejectionReason(.storeFailure, detail: why)
  }

  /// A readable explanation.
  public var description: String {
    let detail = detail ?? ""
    return switch code {
    case .notRegistered:
      "no worker factory is registered for \(taskId.map(\.rawValue) ?? "")"
    case .inputTooLarge:
      "input is \(bytes ?? 0) bytes serialized; the maximum is \(WorkInput.maximumSerializedSize)"
    case .inputNotSerializable: "input cannot be serialized: \(detail)"
    case .emptyInputKey: "input has an empty key; every key must have at least one character"
    case .intervalTooShort:
      "interval is below the minimum of \(minimum.map { "\($0)" } ?? "the minimum")"
    case .invalidFlexWindow: "flex window must be greater than zero and less than the interval"
    case .invalidBackoff: "invalid backoff: \(detail)"
    case .invalidBudget: "budget must be positive"
    case .invalidInitialDelay: "initial delay must not be negative"
    case .notStarted: "start() has not completed"
    case .shutDown: "the runtime is shut down"
    case .storeFailure: "the store could not record the request: \(detail)"
    case .invalidCalendar: "a calendar schedule needs at least one calendar event"
    default: "request rejected: \(code)"
    }
  }
}
