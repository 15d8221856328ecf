import Backgrounder
import Foundation

/// When the wake alarm goes off: the earliest next run, after `now`, of the `wake-system` jobs
/// that are not running (a run due now or overdue needs no alarm: the machine is awake).
enum WakeAlarmPlan {
  static func alarm(for tasks: [ScheduledTask], wakeJobs: Set<String>, now: Date) -> Date? {
    tasks.lazy
      .filter { wakeJobs.contains($0.taskId.rawValue) && $0.state != .running }
      .compactMap(\.nextRunHint)
      .filter { $0 > now }
      .min()
  }
}
