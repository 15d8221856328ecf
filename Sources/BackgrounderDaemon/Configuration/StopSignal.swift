import Foundation

/// `stop-signal` and `stop-timeout`: how a job's runs are stopped (condition lost, budget
/// expired, cancel, window end, suspend, shutdown) — this signal to the run's process group
/// and session, then SIGKILL after the timeout.
package enum StopSignal {
  /// The signals a job may ask for, by name without `SIG`. SIGKILL and SIGSTOP are refused:
  /// the first leaves the job no time, the second does not stop it.
  static let allowed: [(name: String, signal: Int32)] = [
    ("INT", SIGINT), ("TERM", SIGTERM), ("HUP", SIGHUP), ("QUIT", SIGQUIT), ("USR1", SIGUSR1),
    ("USR2", SIGUSR2),
  ]
  /// The least and the most a job may give its runs to end on their stop signal.
  package static let timeoutRange: ClosedRange<Duration> = .seconds(1)...(.seconds(3600))

  /// The signal named `text` (`SIGINT`, `INT`, `sigint`), nil for one not allowed.
  static func parse(_ text: String) -> Int32? {
    var name = text.uppercased()
    if name.hasPrefix("SIG") { name.removeFirst(3) }
    return allowed.first { $0.name == name }?.signal
  }

  /// `SIGINT` for SIGINT; `signal N` for one without a name here.
  package static func name(_ signal: Int32) -> String {
    if signal == SIGKILL { return "SIGKILL" }
    return allowed.first { $0.signal == signal }.map { "SIG\($0.name)" } ?? "signal \(signal)"
  }

  /// The words of the run record for how a stopped run ended: `stopped with SIGINT`, or
  /// `killed with SIGKILL after 30 s` (`after`: from the stop to the end of the run, in whole
  /// seconds, tenths below 1 s) when it outlived its stop timeout (or logind's delay before
  /// sleep).
  static func record(signal: Int32, after: Duration, killed: Bool) -> String {
    guard killed else { return "stopped with \(name(signal))" }
    let seconds =
      Double(after.components.seconds) + Double(after.components.attoseconds) / 1e18
    let shown =
      seconds >= 0.95 ? "\(Int(seconds.rounded()))" : String(format: "%.1f", seconds)
    return "killed with SIGKILL after \(shown) s"
  }
}
