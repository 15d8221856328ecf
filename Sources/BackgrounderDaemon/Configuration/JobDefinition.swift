import Backgrounder

/// One `[[job]]` entry of the config file: a command run under constraints.
public struct JobDefinition: Sendable, Equatable, Codable {
  /// When the job runs.
  public enum Schedule: Sendable, Equatable, Codable {
    /// `every = "4h"` (optionally `flex = "30m"`): a periodic job.
    case every(Duration, flex: Duration?)
    /// `once = true` (optionally `delay = "10m"`): a one-time job.
    case once(delay: Duration)
    /// `calendar = "Mon..Fri *-*-* 02:00"` or a list (in normal form): a run at every elapse.
    case calendar([String])
  }

  /// `network = "none" | "any" | "unmetered" | "not-roaming"`.
  public enum Network: String, Sendable, Equatable, Codable, CaseIterable {
    case none
    case any
    case unmetered
    case notRoaming = "not-roaming"
  }

  /// `backoff = { policy = "exponential", initial = "30s", max-attempts = 10 }`.
  public struct Backoff: Sendable, Equatable, Codable {
    /// `linear` or `exponential`.
    public enum Policy: String, Sendable, Equatable, Codable, CaseIterable {
      case linear
      case exponential
    }
    public var policy: Policy = .exponential
    public var initial: Duration = .seconds(30)
    public var maxAttempts: Int = 10
    /// Spread retries of a fleet by up to this fraction of the delay (0 = none).
    public var jitter: Double = 0

    public init() {}
  }

  /// Reverse-DNS job id, also the task id in the store.
  public var id: String
  /// The argv to execute (no shell).
  public var command: [String]
  public var schedule: Schedule
  public var network: Network = .none
  public var requiresCharging = false
  public var requiresBatteryNotLow = false
  /// `ssids = ["Home*"]`: the primary link must be Wi-Fi on a network matching one of these
  /// globs; `nil`: any network.
  public var ssids: [String]?
  /// `interfaces = ["eth*"]`: the primary link's name must match one of these globs; `nil`:
  /// any interface.
  public var interfaces: [String]?
  /// `requires-mount = "/media/backup"`: the path must be a mount point of the daemon's mount
  /// namespace.
  public var requiresMount: String?
  /// `requires-reachable = "nas.lan:445"`: a TCP connect to this destination over the primary
  /// link must succeed (``Destination``).
  public var requiresReachable: String?
  /// Per-run time budget; the runtime's default (10 minutes) when nil.
  public var budget: Duration?
  public var backoff = Backoff()
  /// Extra environment variables for the command.
  public var environment: [String: String] = [:]
  /// `environment-file = "/etc/backgrounder/backup.env"`: `NAME=value` lines read at each run
  /// (checked like the store path, see ``EnvironmentFile``), under `environment`; a leading
  /// `${CREDENTIALS_DIRECTORY}` is the daemon's systemd credentials directory. Keeps secrets
  /// out of the config and the store.
  public var environmentFile: String?
  /// Working directory of the command; the daemon's when nil.
  public var workingDirectory: String?
  /// Run ahead of standard work when the concurrency limit is reached.
  public var expedited = false
  /// Windows, splay and catch-up (nil: none of their keys was written).
  public var timing: JobTiming?
  /// `inherit-environment = true`: the command gets the daemon's whole environment (minus the
  /// service manager's private variables) instead of the allow-list of `JobEnvironment`.
  public var inheritEnvironment: Bool {
    get { inheritsEnvironment ?? false }
    set { inheritsEnvironment = newValue ? true : nil }
  }
  /// Encoded only when set, so that a definition sent by an older CLI (the control socket's
  /// `schedule`) decodes unchanged.
  private var inheritsEnvironment: Bool?
  /// `nice`, `io-class`, `cpu-weight`, `io-weight`, `memory-max`: how much of the machine its
  /// runs may take; the background defaults (``RunPriority/background``) when nil. Encoded only
  /// when set.
  public var priority: RunPriority?
  /// `inhibit`: the logind lock its runs hold; ``InhibitPolicy/delay`` when nil. Encoded only
  /// when set. It becomes the request's ``WorkRequest/OneTime/inhibitPolicy`` (stored with the
  /// task), which the worker takes the lock from.
  public var inhibit: InhibitPolicy?
  /// `wake-system = true`: a suspended machine wakes for its next run (a `CLOCK_REALTIME_ALARM`
  /// timer, which needs `CAP_WAKE_ALARM`).
  public var wakeSystem: Bool {
    get { wakesSystem ?? false }
    set { wakesSystem = newValue ? true : nil }
  }
  /// Encoded only when set.
  private var wakesSystem: Bool?
  /// `stop-signal = "SIGINT"`: the signal that stops its runs; SIGTERM when nil. Encoded only
  /// when set.
  public var stopSignal: Int32?
  /// `stop-timeout = "30s"`: how long a stopped run has before SIGKILL; the daemon's
  /// `--kill-grace` (10 s) when nil. Encoded only when set.
  public var stopTimeout: Duration?
  /// `user = "alice"`: the user its runs execute as (a daemon running as root switches to it
  /// before the exec; see ``RunIdentity``); the daemon's own user when nil. Encoded only when
  /// set.
  public var user: String?
  /// `group = "backup"`: the group its runs execute in, with `user`; the user's primary group
  /// when nil. Encoded only when set.
  public var group: String?

  /// A job with the given id, command and schedule and every other setting at its default.
  public init(id: String, command: [String], schedule: Schedule) {
    self.id = id
    self.command = command
    self.schedule = schedule
  }
}
