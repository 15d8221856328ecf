/// `inhibit`: the systemd-logind inhibitor lock (`sleep:shutdown`) a job's runs hold while they
/// go.
public enum InhibitMode: String, Sendable, Equatable, Codable, CaseIterable {
  /// Sleep and shutdown wait at most logind's `InhibitDelayMaxSec` while the run is stopped
  /// cleanly (the default; needs no privilege).
  case delay
  /// Sleep and shutdown wait for the run to finish: for short or critical work.
  case block
  /// No lock.
  case none
}
