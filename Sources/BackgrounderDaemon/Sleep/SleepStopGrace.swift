/// The time between SIGTERM and SIGKILL for a run stopped because the system is about to
/// sleep or shut down: logind waits at most `InhibitDelayMaxSec` for a delay lock, so the
/// runner's grace period is cut to that delay minus ``margin`` (never below ``minimum``), and
/// the run is gone before logind stops waiting.
enum SleepStopGrace {
  /// Left of logind's delay for the kill, the reaping and the lock's release.
  static let margin: Duration = .seconds(1)
  /// The least a run gets to end on SIGTERM, whatever the delay.
  static let minimum: Duration = .milliseconds(500)

  /// `runner`: the runner's grace period; `inhibitDelayMax`: logind's, nil when not known
  /// (then the runner's applies).
  static func grace(runner: Duration, inhibitDelayMax: Duration?) -> Duration {
    guard let inhibitDelayMax else { return runner }
    return min(runner, max(minimum, inhibitDelayMax - margin))
  }
}
