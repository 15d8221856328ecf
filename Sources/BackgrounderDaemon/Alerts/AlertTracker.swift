import Backgrounder
import Foundation

/// Decides, from what the store says of each watched job, which jobs are stale, which stale
/// episodes and which failures are new (each runs its hook once), and when to look again.
/// A value type with no clock and no I/O: ``AlertWatch`` feeds it.
///
/// A stale episode is identified by the time it is counted from (``Staleness/since``): it ends
/// with a success (or with the job re-created), and only then can a new one begin. A failure is
/// identified by the end of the run that failed; the failures already in the store when the
/// tracker first looks are not new.
struct AlertTracker: Sendable {
  /// One watched job as the store shows it.
  struct Job: Sendable, Equatable {
    var id: TaskId
    var createdAt: Date
    var lastSuccessAt: Date?
    /// `alert-after`, when the job has one.
    var alertAfter: Duration?
    /// A one-time job that succeeded is done: it never becomes stale.
    var finishedForGood = false
    /// The end of the last run when it failed (a failure result or retries exhausted).
    var lastFailureAt: Date?
  }

  /// A job in a stale episode.
  struct StaleJob: Sendable, Equatable {
    var id: TaskId
    var staleness: Staleness
    var lastSuccessAt: Date?
  }

  /// What changed at one look.
  struct Update: Sendable, Equatable {
    /// Every stale job, by id.
    var stale: [StaleJob] = []
    /// The stale episodes that began at this look.
    var began: [StaleJob] = []
    /// The jobs whose stale episode ended at this look.
    var ended: [TaskId] = []
    /// The jobs whose last run failed since the previous look.
    var failed: [TaskId] = []
    /// The earliest time a watched job that is not stale becomes stale, if any.
    var nextDeadline: Date?
  }

  /// The stale episodes going on, by job: the time each is counted from.
  private(set) var episodes: [TaskId: Date]
  /// The failed run ends already seen, by job; nil before the first look.
  private var failuresSeen: [TaskId: Date]?

  /// A tracker that knows of `episodes` already (reported before a restart): a job still in
  /// one of them is stale at the first look without beginning an episode.
  init(episodes: [TaskId: Date] = [:]) {
    self.episodes = episodes
  }

  /// Looks at `jobs` at `now`.
  mutating func update(_ jobs: [Job], now: Date) -> Update {
    var update = Update()
    var stillStale: [TaskId: Date] = [:]
    for job in jobs.sorted(by: { $0.id < $1.id }) {
      guard let alertAfter = job.alertAfter, !job.finishedForGood else { continue }
      let staleness = Staleness(
        created: job.createdAt, lastSuccess: job.lastSuccessAt, alertAfter: alertAfter)
      guard staleness.isStale(at: now) else {
        update.nextDeadline = min(update.nextDeadline ?? staleness.deadline, staleness.deadline)
        continue
      }
      let stale = StaleJob(id: job.id, staleness: staleness, lastSuccessAt: job.lastSuccessAt)
      update.stale.append(stale)
      stillStale[job.id] = staleness.since
      if episodes[job.id] != staleness.since { update.began.append(stale) }
    }
    update.ended = episodes.keys.filter { episodes[$0] != stillStale[$0] }.sorted()
    episodes = stillStale

    var seen: [TaskId: Date] = [:]
    for job in jobs {
      guard let failure = job.lastFailureAt else { continue }
      seen[job.id] = failure
      if let previous = failuresSeen, previous[job.id] != failure { update.failed.append(job.id) }
    }
    update.failed.sort()
    failuresSeen = seen
    return update
  }
}
