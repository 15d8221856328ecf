/// What a worker reports when it returns.
public enum WorkResult: Hashable, Sendable, Codable {
  /// The work is done.
  case success
  /// The work failed and should not be retried in this cycle.
  case failure(reason: String)
  /// Try again later (by the backoff policy); after the last attempt this becomes a failure.
  /// The reason, when given, is recorded as the last result's reason.
  case retry(reason: String?)

  /// Try again later, for no particular reason.
  public static var retry: WorkResult { .retry(reason: nil) }
}

/// The recorded outcome of the last run, as the store keeps it.
public enum LastResult: String, Hashable, Sendable, Codable {
  /// The worker succeeded.
  case success
  /// The worker failed, or retries were exhausted.
  case failure
  /// The run will be retried (worker asked, budget expired, deferral, interruption, stop).
  case retry
}

/// Why a running worker is being stopped. Each lost condition has its own code (events, the
/// store's run history, `status`, the journal, metrics): offline, metered, captive portal,
/// limited connectivity, charging lost, battery low.
public enum StopReason: String, Hashable, Sendable, Codable, CaseIterable {
  /// Offline: no usable route, or connectivity `none`.
  case networkLost
  /// The unmetered requirement is no longer met (the primary link became metered).
  case networkMetered
  /// A captive portal intercepts traffic (connectivity `portal`).
  case captivePortal
  /// The network does not reach the internet (connectivity `limited`).
  case limitedConnectivity
  /// The primary link is no longer on an allowed network (`ssids`, `interfaces`).
  case networkNotAllowed
  /// A required mount point was unmounted.
  case unmounted
  /// A required destination stopped answering after a network change (`requiredReachable`).
  case unreachable
  /// External power was disconnected.
  case chargerDisconnected
  /// The battery became low.
  case batteryLow
  /// The runtime is shutting down.
  case shutdown
  /// The work was cancelled or replaced.
  case cancelled
  /// Stopped on request (test driver or operator).
  case requested
  /// The window the run started in closed (`window-end = "stop"`).
  case windowClosed
  /// The system is about to suspend or shut down (``Backgrounder/systemSleeping(_:stopping:)``).
  case systemSuspending
  /// The primary link started roaming (`network = "not-roaming"`).
  case roaming
  /// The user came back while a run that requires an idle user was going
  /// (`onUserReturn = .stop`).
  case userReturned

  /// For humans: "offline", "metered", "captive portal", …
  public var phrase: String {
    switch self {
    case .networkLost: "offline"
    case .networkMetered: "metered"
    case .captivePortal: "captive portal"
    case .limitedConnectivity: "limited connectivity"
    case .networkNotAllowed: "not an allowed network"
    case .unmounted: "unmounted"
    case .unreachable: "unreachable"
    case .chargerDisconnected: "charging lost"
    case .batteryLow: "battery low"
    case .shutdown: "shutdown"
    case .cancelled: "cancelled"
    case .windowClosed: "window closed"
    case .requested: "requested"
    case .systemSuspending: "system suspending"
    case .roaming: "roaming"
    case .userReturned: "user returned"
    }
  }
}
