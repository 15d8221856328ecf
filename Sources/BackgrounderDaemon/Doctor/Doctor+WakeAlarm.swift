import Foundation

extension Doctor {
  /// Whether the `wake-system` jobs can wake a suspended machine: a `CLOCK_REALTIME_ALARM`
  /// timer is created and closed at once. Without `CAP_WAKE_ALARM` each such job gets a note
  /// naming why (it still runs, at the next wake).
  func checkWakeAlarms(_ jobs: [JobDefinition]) -> [DoctorFinding] {
    let wakeJobs = jobs.filter(\.wakeSystem)
    guard !wakeJobs.isEmpty else { return [] }
    do {
      _ = try WakeAlarmTimer()
      return [.init(.ok, "wake alarm", "wake-system jobs can wake the machine (CAP_WAKE_ALARM)")]
    } catch {
      return wakeJobs.map { job in
        .init(
          .note, "job \(job.id)",
          "wake-system: cannot wake the machine: \(WakeAlarmRefusal.explain(error)); "
            + "it runs at the next wake")
      }
    }
  }
}
