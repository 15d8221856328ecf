import Backgrounder
import Foundation
import Locking

/// How long each job waited for its conditions before a run (`backgrounder.waited_seconds`):
/// the time it was due but held by a condition (network, power, window, mount, … as
/// ``WaitAccounting/condition(_:)`` names them; not a backoff or a later begin date) since its
/// previous run started. Fed the runtime's wait changes; a value type with no clock.
struct RunWaits: Sendable, Equatable {
  private var waitingSince: [TaskId: Date] = [:]
  private var waited: [TaskId: Double] = [:]

  /// `job` now waits for `predicates` (none: no longer) as of `time`.
  mutating func change(job: TaskId, predicates: [PendingPredicate], at time: Date) {
    let held = predicates.contains { WaitAccounting.condition($0) != nil }
    if let since = waitingSince[job] {
      guard !held else { return }
      waited[job, default: 0] += max(0, time.timeIntervalSince(since))
      waitingSince[job] = nil
    } else if held {
      waitingSince[job] = time
    }
  }

  /// A run of `job` started at `time`: the seconds it waited for conditions since its previous
  /// run started; the count starts again from 0.
  mutating func runStarted(job: TaskId, at time: Date) -> Double {
    var seconds = waited.removeValue(forKey: job) ?? 0
    if let since = waitingSince.removeValue(forKey: job) {
      seconds += max(0, time.timeIntervalSince(since))
    }
    return seconds
  }
}

/// ``RunWaits`` behind a lock, fed from ``Backgrounder/Configuration/onWaitChange`` and read by
/// ``TelemetryExport`` when a run starts.
final class RunWaitFeed: Sendable {
  private let waits = Lock(RunWaits())

  init() {}

  @Sendable func change(job: TaskId, predicates: [PendingPredicate], at time: Date) {
    waits.withLock { $0.change(job: job, predicates: predicates, at: time) }
  }

  func runStarted(job: TaskId, at time: Date) -> Double {
    waits.withLock { $0.runStarted(job: job, at: time) }
  }
}
