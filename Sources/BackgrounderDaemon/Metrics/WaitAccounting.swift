import Backgrounder
import Foundation
import Locking

/// Time waited per condition (`backgrounder_job_waited_seconds_total{job,condition}`): fed the
/// runtime's wait changes (``Backgrounder/Configuration/onWaitChange``), it answers, at each
/// change, how long the job waited for each condition it waited for until then. A wait is
/// counted when it ends or changes, not while it goes on. A value type with no clock.
struct WaitAccounting: Sendable {
  /// Time waited for one condition by one job.
  struct Waited: Sendable, Equatable {
    var job: TaskId
    var condition: String
    var seconds: Double
  }

  private var current: [TaskId: (conditions: [String], since: Date)] = [:]

  /// `job` now waits for `predicates` (none: no longer) as of `time`; returns what the wait
  /// before this change adds up to.
  mutating func change(job: TaskId, predicates: [PendingPredicate], at time: Date) -> [Waited] {
    let conditions = Array(Set(predicates.compactMap(Self.condition))).sorted()
    let previous = current[job]
    current[job] = conditions.isEmpty ? nil : (conditions, time)
    guard let previous else { return [] }
    let seconds = max(0, time.timeIntervalSince(previous.since))
    return previous.conditions.map { Waited(job: job, condition: $0, seconds: seconds) }
  }

  /// The `condition` label of `predicate`; nil for waits that are no condition (backoff, a
  /// later begin date).
  static func condition(_ predicate: PendingPredicate) -> String? {
    switch predicate {
    case .networkRequired(.unmetered): "unmetered"
    case .networkRequired(.notRoaming), .notRoaming: "roaming"
    case .networkRequired: "network"
    case .workingInternet: "internet"
    case .requiresCharging: "charging"
    case .requiresBatteryNotLow: "battery"
    case .workerNotRegistered: "worker"
    case .wifiNetwork: "wifi"
    case .networkInterface: "interface"
    case .mounted: "mount"
    case .reachable: "reachable"
    case .meteredBudget: "meteredBudget"
    case .userIdle: "userIdle"
    case .waitingForWindow: "window"
    case .waitingForBackoff, .waitingForEarliestBeginDate: nil
    }
  }
}

/// Feeds ``WaitAccounting`` from the runtime's wait changes into the metrics (the file is
/// written with the next event's metrics).
final class WaitMetrics: Sendable {
  private let metrics: MetricsFile
  private let accounting = Lock(WaitAccounting())

  init(metrics: MetricsFile) { self.metrics = metrics }

  @Sendable func change(job: TaskId, predicates: [PendingPredicate], at time: Date) {
    let waited = accounting.withLock { $0.change(job: job, predicates: predicates, at: time) }
    for entry in waited {
      metrics.recordWaited(
        job: entry.job.rawValue, condition: entry.condition, seconds: entry.seconds)
    }
  }
}
