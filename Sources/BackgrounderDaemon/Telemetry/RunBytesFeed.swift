import Backgrounder
import Locking

/// The bytes of each command run as ``RunNetworkCounting`` counts them, held until the run's
/// end reaches the telemetry outbox (``TelemetryExport``): the count is handed over before the
/// worker returns, so before the runtime reports the run's end.
final class RunBytesFeed: Sendable {
  private let counted = Lock([TaskId: RunNetworkBytes]())

  init() {}

  /// The run of `job` now ending was counted as `bytes`.
  @Sendable func counted(job: TaskId, bytes: RunNetworkBytes) {
    counted.withLock { $0[job] = bytes }
  }

  /// The bytes of the run of `job` that ended (nil when none were counted), forgotten here.
  func take(job: TaskId) -> RunNetworkBytes? {
    counted.withLock { $0.removeValue(forKey: job) }
  }
}
