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

/// Why a running worker is being stopped.
public enum StopReason: String, Hashable, Sendable, Codable {
  /// The network requirement is no longer met.
  case networkLost
  /// The unmetered requirement is no longer met (the primary link became metered).
  case networkMetered
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
}
