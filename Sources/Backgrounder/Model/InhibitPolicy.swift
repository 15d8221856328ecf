/// What a run holds against system sleep and shutdown while it goes. The core only carries the
/// choice, with the request and in the store; the code that runs the work takes the platform's
/// lock (the daemon: systemd-logind `sleep` and `shutdown` inhibitors, see ``WorkContext/inhibitPolicy``).
public enum InhibitPolicy: String, Hashable, Sendable, Codable, CaseIterable {
  /// Sleep and shutdown wait a bounded time (logind's `InhibitDelayMaxSec`) while the run is
  /// stopped cleanly, recorded as a retry without using an attempt (the default).
  case delay
  /// Sleep and shutdown wait for the run to finish: for short or critical work.
  case block
  /// Nothing is held.
  case none
}
