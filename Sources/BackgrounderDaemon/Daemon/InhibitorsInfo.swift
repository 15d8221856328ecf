import Logind

/// What `status` shows of the daemon's systemd-logind inhibitors (under `"daemon"`,
/// `"inhibitors"`): whether logind gives locks, and the lock of each run going now.
package struct InhibitorsInfo: Sendable, Equatable, Codable {
  /// One run's lock.
  package struct Lock: Sendable, Equatable, Codable {
    /// The job whose run asked for the lock.
    package var job: String
    /// `delay` or `block`.
    package var mode: String
    /// Whether logind gave it (false: asked for, or refused).
    package var held: Bool

    package init(job: String, mode: String, held: Bool) {
      self.job = job
      self.mode = mode
      self.held = held
    }
  }

  /// `unknown` (no lock asked for yet), `available`, `absent` (no logind) or `refused`.
  package var availability: String
  /// Why logind is absent or refused, as it said.
  package var reason: String?
  /// The locks of the runs going now, by job id.
  package var locks: [Lock]

  package init(availability: String, reason: String? = nil, locks: [Lock] = []) {
    self.availability = availability
    self.reason = reason
    self.locks = locks
  }
}

extension SleepInhibitor {
  /// The availability and the locks now, for `status`.
  package var info: InhibitorsInfo {
    let (availability, reason): (String, String?) =
      switch self.availability {
      case .unknown: ("unknown", nil)
      case .available: ("available", nil)
      case .absent(let why): ("absent", why)
      case .refused(let why): ("refused", why)
      }
    let locks = self.locks.map {
      InhibitorsInfo.Lock(job: $0.jobID, mode: $0.mode.rawValue, held: $0.isHeld)
    }
    return InhibitorsInfo(availability: availability, reason: reason, locks: locks)
  }
}
