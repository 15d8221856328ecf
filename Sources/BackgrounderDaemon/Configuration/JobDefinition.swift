import Backgrounder

/// One `[[job]]` entry of the config file: a command run under constraints.
public struct JobDefinition: Sendable, Equatable, Codable {
  /// When the job runs.
  package enum Schedule: Sendable, Equatable, Codable {
    /// `every = "4h"` (optionally `flex = "30m"`): a periodic job.
    case every(Duration, flex: Duration?)
    /// `once = true` (optionally `delay = "10m"`): a one-time job.
    case once(delay: Duration)
    /// `calendar = "Mon..Fri *-*-* 02:00"` or a list (in normal form): a run at every elapse.
    case calendar([String])
  }

  /// `network = "none" | "any" | "unmetered" | "not-roaming"`.
  package enum Network: String, Sendable, Equatable, Codable, CaseIterable {
    case none
    case any
    case unmetered
    case notRoaming = "not-roaming"
  }

  /// `backoff = { policy = "exponential", initial = "30s", max-attempts = 10 }`.
  package struct Backoff: Sendable, Equatable, Codable {
    /// `linear` or `exponential`.
    package enum Policy: String, Sendable, Equatable, Codable, CaseIterable {
      case linear
      case exponential
    }
    package var policy: Policy = .exponential
    package var initial: Duration = .seconds(30)
    package var maxAttempts: Int = 10
    /// Spread retries of a fleet by up to this fraction of the delay (0 = none).
    package var jitter: Double = 0

    package init() {}
  }

  /// Reverse-DNS job id, also the task id in the store.
  public var id: String
  /// The argv to execute (no shell).
  package var command: [String]
  package var schedule: Schedule
  package var network: Network = .none
  package var requiresCharging = false
  package var requiresBatteryNotLow = false
  /// `ssids = ["Home*"]`: the primary link must be Wi-Fi on a network matching one of these
  /// globs; `nil`: any network.
  package var ssids: [String]?
  /// `interfaces = ["eth*"]`: the primary link's name must match one of these globs; `nil`:
  /// any interface.
  package var interfaces: [String]?
  /// `requires-mount = "/media/backup"`: the path must be a mount point of the daemon's mount
  /// namespace.
  package var requiresMount: String?
  /// `requires-reachable = "nas.lan:445"`: a TCP connect to this destination over the primary
  /// link must succeed (``Destination``).
  package var requiresReachable: String?
  /// `metered-budget = "200MB/1d"`: metered bytes a `network = "unmetered"` job may use in a
  /// window before it waits for an unmetered link.
  package var meteredBudget: MeteredBudget?
  /// `bandwidth`, `metered-bandwidth`, `bandwidth-required`: the run's egress cap, shaped in
  /// the kernel (``RunShaping``).
  package var bandwidth: BandwidthCap?
  /// Per-run time budget; the runtime's default (10 minutes) when nil.
  package var budget: Duration?
  package var backoff = Backoff()
  /// Extra environment variables for the command.
  package var environment: [String: String] = [:]
  /// `environment-file = "/etc/backgrounder/backup.env"`: `NAME=value` lines read at each run
  /// (checked like the store path, see ``EnvironmentFile``), under `environment`; a leading
  /// `${CREDENTIALS_DIRECTORY}` is the daemon's systemd credentials directory. Keeps secrets
  /// out of the config and the store.
  package var environmentFile: String?
  /// Working directory of the command; the daemon's when nil.
  package var workingDirectory: String?
  /// Run ahead of standard work when the concurrency limit is reached.
  package var expedited = false
  /// Windows, splay and catch-up (nil: none of their keys was written).
  package var timing: JobTiming?
  /// `inherit-environment = true`: the command gets the daemon's whole environment (minus the
  /// service manager's private variables) instead of the allow-list of `JobEnvironment`.
  package var inheritEnvironment: Bool {
    get { inheritsEnvironment ?? false }
    set { inheritsEnvironment = newValue ? true : nil }
  }
  /// Encoded only when set, so that a definition sent by an older CLI (the control socket's
  /// `schedule`) decodes unchanged.
  private var inheritsEnvironment: Bool?
  /// `nice`, `io-class`, `cpu-weight`, `io-weight`, `memory-max`: how much of the machine its
  /// runs may take; the background defaults (``RunPriority/background``) when nil. Encoded only
  /// when set.
  package var priority: RunPriority?
  /// `inhibit`: the logind lock its runs hold; ``InhibitPolicy/delay`` when nil. Encoded only
  /// when set. It becomes the request's ``WorkRequest/OneTime/inhibitPolicy`` (stored with the
  /// task), which the worker takes the lock from.
  package var inhibit: InhibitPolicy?
  /// `wake-system = true`: a suspended machine wakes for its next run (a `CLOCK_REALTIME_ALARM`
  /// timer, which needs `CAP_WAKE_ALARM`).
  package var wakeSystem: Bool {
    get { wakesSystem ?? false }
    set { wakesSystem = newValue ? true : nil }
  }
  /// Encoded only when set.
  private var wakesSystem: Bool?
  /// `stop-signal = "SIGINT"`: the signal that stops its runs; SIGTERM when nil. Encoded only
  /// when set.
  package var stopSignal: Int32?
  /// `stop-timeout = "30s"`: how long a stopped run has before SIGKILL; the daemon's
  /// `--kill-grace` (10 s) when nil. Encoded only when set.
  package var stopTimeout: Duration?
  /// `on-condition-lost = "pause"` (with `pause-max`): a run that loses a condition is frozen
  /// rather than stopped; ``ConditionLossPolicy/stop`` when nil. Encoded only when set.
  package var onConditionLost: ConditionLossPolicy?
  /// `relax-after = "3d"` and `relax = { … }`: what the conditions relax to once a due run
  /// has waited that long for them (``RelaxKeys``). Encoded only when set.
  package var relax: JobRelax?
  /// `requires-idle = "10m"`: its runs start only once the user has been idle that long
  /// (logind's idle hint). Encoded only when set.
  package var requiresIdle: Duration?
  /// `on-user-return = "continue" | "pause" | "stop"`: what happens to a run going when the
  /// user comes back (with `requires-idle`); ``UserReturnPolicy/continue`` when nil. Encoded
  /// only when set.
  package var onUserReturn: UserReturnPolicy?
  /// `user = "alice"`: the user its runs execute as (a daemon running as root switches to it
  /// before the exec; see ``RunIdentity``); the daemon's own user when nil. Encoded only when
  /// set.
  package var user: String?
  /// `group = "backup"`: the group its runs execute in, with `user`; the user's primary group
  /// when nil. Encoded only when set.
  package var group: String?

  /// A job with the given id, command and schedule and every other setting at its default.
  package init(id: String, command: [String], schedule: Schedule) {
    self.id = id
    self.command = command
    self.schedule = schedule
  }
}
