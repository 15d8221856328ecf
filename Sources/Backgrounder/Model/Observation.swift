import Foundation

/// One-time or periodic.
public enum TaskKind: String, Hashable, Sendable, Codable {
  /// A ``WorkRequest/OneTime`` request.
  case oneTime
  /// A ``WorkRequest/Periodic`` request.
  case periodic
}

/// The state of a task as the store records it.
public enum TaskState: String, Hashable, Sendable, Codable {
  /// Waiting for its next run time.
  case pending
  /// A worker is running.
  case running
  /// Waiting for a retry after a failed, deferred or interrupted attempt.
  case backoff
  /// Due but held by an unmet condition (network gate, power, missing registration).
  case blocked
  /// A one-time task that finished successfully (kept for status; not in `scheduled()`).
  case succeeded
  /// A one-time task that failed for good (kept for status; not in `scheduled()`).
  case failed

  /// Whether the task is done for good (only one-time tasks finish).
  public var isFinished: Bool { self == .succeeded || self == .failed }
}

/// Why a task is not running right now — the answer to "why didn't it run?".
public enum PendingPredicate: Hashable, Sendable {
  /// The network requirement is not met.
  case networkRequired(NetworkRequirement)
  /// A network is there, but the internet does not answer through it (captive portal,
  /// limited): waiting for working internet.
  case workingInternet(InternetConnectivity)
  /// External power is required and missing.
  case requiresCharging
  /// A battery that is not low is required.
  case requiresBatteryNotLow
  /// Waiting for a retry until the given time.
  case waitingForBackoff(until: Date)
  /// Waiting for the earliest start time.
  case waitingForEarliestBeginDate(at: Date)
  /// No worker factory is registered for the task in this process.
  case workerNotRegistered
  /// Due, but outside its time windows: waiting for the next one to open.
  case waitingForWindow(opens: Date)
  /// The primary link is not Wi-Fi on one of the `allowed` SSID globs; `current` is its SSID
  /// now (`nil`: not Wi-Fi, not associated, or not known).
  case wifiNetwork(allowed: [String], current: String?)
  /// The primary link's name matches none of the `allowed` globs; `current` is its name now
  /// (`nil`: no primary link, or not known).
  case networkInterface(allowed: [String], current: String?)
  /// `path` is not a mount point (or that is not known yet).
  case mounted(path: String)
  /// `network = "not-roaming"`: the primary link is roaming, or its roaming is not known
  /// (`roamingUnknown` says why: "ModemManager not running").
  case notRoaming(roamingUnknown: String?)
  /// A TCP connect to `destination` (`host:port`) has not succeeded on this network; `failure`
  /// is why the last one failed (`nil`: not checked yet).
  case reachable(destination: String, failure: DestinationFailure?)
  /// A metered budget is spent (the task's own or the daemon's): waiting for an unmetered
  /// link, or for the budget to free up.
  case meteredBudget(MeteredBudgetWait)
  /// The user has not been idle for `required` yet (logind's idle hint): idle since
  /// `idleSince`, active (`nil`), or not known (`unknown` says why: "logind not running").
  case userIdle(required: Duration, idleSince: Date?, unknown: String?)
}

extension PendingPredicate: Encodable {
  private enum CodingKeys: String, CodingKey {
    case kind, network, until, at, connectivity, opens, ssids, interfaces, current, path
    case roamingUnknown, destination, failure
    case used, budget, window, freesAt, scope
    case requiredSeconds, idleSince, unknown
  }

  /// Encodes as `{"kind": ..., ...}` with ISO 8601 times.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    switch self {
    case .networkRequired(let requirement):
      try container.encode("networkRequired", forKey: .kind)
      try container.encode(requirement, forKey: .network)
    case .workingInternet(let connectivity):
      try container.encode("workingInternet", forKey: .kind)
      try container.encode(connectivity, forKey: .connectivity)
    case .requiresCharging: try container.encode("requiresCharging", forKey: .kind)
    case .requiresBatteryNotLow: try container.encode("requiresBatteryNotLow", forKey: .kind)
    case .waitingForBackoff(let until):
      try container.encode("waitingForBackoff", forKey: .kind)
      try container.encode(ISO8601.string(until), forKey: .until)
    case .waitingForEarliestBeginDate(let at):
      try container.encode("waitingForEarliestBeginDate", forKey: .kind)
      try container.encode(ISO8601.string(at), forKey: .at)
    case .workerNotRegistered: try container.encode("workerNotRegistered", forKey: .kind)
    case .waitingForWindow(let opens):
      try container.encode("waitingForWindow", forKey: .kind)
      try container.encode(ISO8601.string(opens), forKey: .opens)
    case .wifiNetwork(let allowed, let current):
      try container.encode("wifiNetwork", forKey: .kind)
      try container.encode(allowed, forKey: .ssids)
      try container.encodeIfPresent(current, forKey: .current)
    case .networkInterface(let allowed, let current):
      try container.encode("networkInterface", forKey: .kind)
      try container.encode(allowed, forKey: .interfaces)
      try container.encodeIfPresent(current, forKey: .current)
    case .mounted(let path):
      try container.encode("mounted", forKey: .kind)
      try container.encode(path, forKey: .path)
    case .notRoaming(let roamingUnknown):
      try container.encode("notRoaming", forKey: .kind)
      try container.encodeIfPresent(roamingUnknown, forKey: .roamingUnknown)
    case .reachable(let destination, let failure):
      try container.encode("reachable", forKey: .kind)
      try container.encode(destination, forKey: .destination)
      try container.encodeIfPresent(failure, forKey: .failure)
    case .meteredBudget(let wait):
      try container.encode("meteredBudget", forKey: .kind)
      try container.encode(wait.used, forKey: .used)
      try container.encode(wait.budget.bytes, forKey: .budget)
      try container.encode(wait.budget.windowText, forKey: .window)
      try container.encodeIfPresent(wait.freesAt.map(ISO8601.string), forKey: .freesAt)
      try container.encode(wait.scope, forKey: .scope)
    case .userIdle(let required, let idleSince, let unknown):
      try container.encode("userIdle", forKey: .kind)
      try container.encode(required.components.seconds, forKey: .requiredSeconds)
      try container.encodeIfPresent(idleSince.map(ISO8601.string), forKey: .idleSince)
      try container.encodeIfPresent(unknown, forKey: .unknown)
    }
  }
}

/// A task as `scheduled()` reports it.
public struct ScheduledTask: Hashable, Sendable {
  /// The task id.
  public var taskId: TaskId
  /// One-time or periodic.
  public var kind: TaskKind
  /// pending, running, backoff or blocked.
  public var state: TaskState
  /// When it is expected to run next (`nil` while running).
  public var nextRunHint: Date?
  /// The attempt within the current cycle, counting from 0.
  public var attempt: Int
  /// Consecutive network-gate deferrals (never consume attempts).
  public var deferrals: Int
  /// Ephemeral work does not survive a restart.
  public var ephemeral: Bool
  /// What it waits for.
  public var pendingPredicates: [PendingPredicate]
  /// The last recorded result.
  public var lastResult: LastResult?
  /// Why the last result happened.
  public var lastReason: String?
  /// The last reported progress of the running worker.
  public var progress: Double?
}

/// What the runtime promises on this platform.
public struct Guarantees: Hashable, Sendable, Codable {
  /// Scheduled work survives the process dying (it is in the store).
  public var survivesProcessDeath: Bool
  /// Scheduled work survives a reboot, provided the program is started again.
  public var survivesReboot: Bool
  /// Scheduled work survives SIGKILL: the next `start()` resurrects it.
  public var survivesForceQuit: Bool
  /// Times are wall-clock times.
  public var honoursWallClock: Bool
  /// Retries follow the backoff policy.
  public var supportsRetryBackoff: Bool
  /// Running work is cancelled on budget expiry, constraint loss and shutdown.
  public var cancelsInFlight: Bool
  /// `requiresCharging` / `requiresBatteryNotLow` are enforced.
  public var honoursPowerConstraints: Bool
  /// Network requirements are enforced by the gate.
  public var honoursNetworkConstraints: Bool
  /// The shortest allowed periodic interval.
  public var minimumPeriodicInterval: Duration
  /// How many workers may run at once.
  public var maxConcurrentTasks: Int
}

/// The runtime's own state, for debugging.
public struct Diagnostics: Sendable, Encodable {
  /// The store file.
  public var storePath: String
  /// Whether `start()` has completed and `shutdown()` has not begun.
  public var isRunning: Bool
  /// Registered task ids.
  public var registeredTaskIds: [TaskId]
  /// Active (not finished) tasks.
  public var activeTasks: Int
  /// Runs in flight (gating or running).
  public var runsInFlight: Int
  /// Workers that ignored cancellation and were abandoned.
  public var abandonedWorkers: Int
  /// The last network conditions seen.
  public var network: NetworkConditions
  /// The last power conditions seen.
  public var power: PowerConditions
  /// Store write transactions committed.
  public var storeCommits: Int
  /// Store operations written.
  public var storeOperations: Int
  /// Time spent in store write transactions (including commit / fsync).
  public var storeWriteTime: Duration
  /// The error of the last store write when it failed (nil once a write succeeds again).
  public var lastStoreError: String?
  /// The problems detected, oldest kinds first; empty when the runtime is healthy.
  public var problems: [HealthProblem] = []

  /// Whether no problem was detected.
  public var isHealthy: Bool { problems.isEmpty }
}
