import Foundation

/// What a task waits out when a metered budget is spent (``PendingPredicate/meteredBudget``):
/// an unmetered link, or the budget freeing up.
public struct MeteredBudgetWait: Hashable, Sendable {
  /// Whose budget is spent.
  public enum Scope: String, Hashable, Sendable, Codable {
    /// The job's own `metered-budget`.
    case job
    /// The daemon's `[network] metered-budget`, shared by all jobs.
    case daemon
  }

  /// Whose budget it is.
  public var scope: Scope
  /// The budget.
  public var budget: MeteredBudget
  /// Metered bytes used in its window.
  public var used: Int64
  /// When some of ``used`` stops counting, if any does.
  public var freesAt: Date?
  /// How many bytes stop counting then.
  public var freesBytes: Int64

  /// Creates a wait.
  public init(
    scope: Scope, budget: MeteredBudget, used: Int64, freesAt: Date?, freesBytes: Int64
  ) {
    self.scope = scope
    self.budget = budget
    self.used = used
    self.freesAt = freesAt
    self.freesBytes = freesBytes
  }

  /// The wait of `standing`.
  public init(scope: Scope, standing: MeteredBudgetStanding) {
    self.init(
      scope: scope, budget: standing.budget, used: standing.used,
      freesAt: standing.freesAt.map {
        // Whole seconds, as the store keeps them.
        Date(timeIntervalSince1970: TimeInterval($0.nanosecondsSince1970 / 1_000_000_000))
      }, freesBytes: standing.freesBytes)
  }

  /// `an unmetered network (metered budget 200 MB/1d used: 212 MB; 14 MB frees at 09:12)`,
  /// with `time` formatting ``freesAt``.
  public func phrase(time: (Date) -> String) -> String {
    let owner = scope == .daemon ? "the daemon's metered budget" : "metered budget"
    var text = "an unmetered network (\(owner) \(budget) used: \(MeteredBudget.byteText(used))"
    if let freesAt, freesBytes > 0 {
      text += "; \(MeteredBudget.byteText(freesBytes)) frees at \(time(freesAt))"
    }
    return text + ")"
  }
}

/// The metered budgets' standings the dispatcher decides by: the daemon's, shared by every
/// task needing the network, and each task's own (`WorkConstraints.meteredBudget`). A task
/// with a budget but no standing here may not use metered links (unknown is not permission).
public struct MeteredBudgetStandings: Hashable, Sendable {
  /// The shared budget's standing, or nil when there is none.
  public var daemon: MeteredBudgetStanding?
  /// Each budgeted task's standing.
  public var tasks: [TaskId: MeteredBudgetStanding]

  /// Creates standings; the default has none.
  public init(daemon: MeteredBudgetStanding? = nil, tasks: [TaskId: MeteredBudgetStanding] = [:]) {
    self.daemon = daemon
    self.tasks = tasks
  }
}
