import Backgrounder
import Foundation

/// How a daemon job travels in its task's input, so that an unchanged job reads back equal
/// whatever version of the code wrote it.
///
/// - Format 2 (written today): input `jobFormat = 2` and `jobDefinition` = a JSON object keyed
///   by the config file's names, durations in nanoseconds. Every setting except `id`, `command`
///   and the schedule may be absent (read as its default) and unknown keys are ignored, so a
///   setting added later reads back as its default and leaves the job unchanged.
/// - Format 1 (before): input `job` = the synthesized `Codable` form of ``JobDefinition``;
///   still read; active jobs are rewritten as format 2 by ``JobSynchronizer`` (finished ones
///   are only read).
enum StoredJob {
  static let formatKey = "jobFormat"
  static let definitionKey = "jobDefinition"
  static let legacyDefinitionKey = "job"
  static let originKey = "origin"
  /// The ``JobDigest`` of the config table the job was read from (config jobs only). It sorts
  /// before the other keys, so ``JobSynchronizer`` compares it without decoding the input.
  static let digestKey = "digest"
  /// The format written today.
  static let currentFormat = 2

  /// A job read from a task's input, with the format it was stored in.
  struct Decoded: Sendable {
    var job: JobDefinition
    var origin: JobOrigin
    var format: Int
  }

  /// The input carrying `job` and its origin, in the current format, with the digest of the
  /// config table it was read from when there is one.
  static func input(
    for job: JobDefinition, origin: JobOrigin, digest: String? = nil
  ) throws -> WorkInput {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    let document = String(decoding: try encoder.encode(JobDocument(job)), as: UTF8.self)
    var input: WorkInput = [
      formatKey: .int(currentFormat), definitionKey: .string(document),
      originKey: .string(origin.rawValue),
    ]
    if let digest { input[digestKey] = .string(digest) }
    return input
  }

  /// The job stored in `input` in any known format, or nil when it carries none (or one this
  /// version cannot read).
  static func decode(_ input: WorkInput) -> Decoded? {
    let origin = input.string(originKey).flatMap(JobOrigin.init(rawValue:)) ?? .config
    if let format = input.int(formatKey) {
      guard format == currentFormat, let text = input.string(definitionKey),
        let document = try? JSONDecoder().decode(JobDocument.self, from: Data(text.utf8)),
        let job = document.job
      else { return nil }
      return Decoded(job: job, origin: origin, format: format)
    }
    guard let text = input.string(legacyDefinitionKey),
      let legacy = try? JSONDecoder().decode(LegacyJobV1.self, from: Data(text.utf8))
    else { return nil }
    return Decoded(job: legacy.job, origin: origin, format: 1)
  }
}

/// Format 2 of a stored job: the config file's key names, durations in nanoseconds, absent
/// settings read as their defaults.
private struct JobDocument: Codable {
  struct Backoff: Codable {
    var policy: JobDefinition.Backoff.Policy?
    var initial: Int64?
    var maxAttempts: Int?
    var jitter: Double?

    enum CodingKeys: String, CodingKey {
      case policy, initial, jitter
      case maxAttempts = "max-attempts"
    }
  }

  var id: String
  var command: [String]
  var every: Int64?
  var flex: Int64?
  var once: Bool?
  var delay: Int64?
  var network: JobDefinition.Network?
  var requiresCharging: Bool?
  var requiresBatteryNotLow: Bool?
  var budget: Int64?
  var backoff: Backoff?
  var environment: [String: String]?
  var environmentFile: String?
  var workingDirectory: String?
  var expedited: Bool?
  var inheritEnvironment: Bool?
  var calendar: [String]?
  var timing: JobTiming?
  var nice: Int?
  var ioClass: RunPriority.IOClass?
  var cpuWeight: Int?
  var ioWeight: Int?
  var memoryMax: UInt64?
  var inhibit: InhibitPolicy?
  var wakeSystem: Bool?
  var ssids: [String]?
  var interfaces: [String]?
  var requiresMount: String?
  var requiresReachable: String?
  /// `metered-budget` (a job's is always a trailing window): its bytes and window seconds.
  var meteredBudgetBytes: Int64?
  var meteredBudgetSeconds: Int64?
  /// `bandwidth`, `metered-bandwidth` (bits per second) and `bandwidth-required`.
  var bandwidth: UInt64?
  var meteredBandwidth: UInt64?
  var bandwidthRequired: Bool?
  var stopSignal: Int32?
  var stopTimeout: Int64?
  var onConditionLost: String?
  var pauseMax: Int64?
  var user: String?
  var group: String?
  /// `relax-after` and `relax = { … }`.
  var relax: JobRelax?
  var requiresIdle: Int64?
  var onUserReturn: UserReturnPolicy?

  enum CodingKeys: String, CodingKey {
    case id, command, every, flex, once, delay, network, budget, backoff, environment, expedited
    case calendar, timing
    case requiresCharging = "requires-charging"
    case requiresBatteryNotLow = "requires-battery-not-low"
    case workingDirectory = "working-directory"
    case inheritEnvironment = "inherit-environment"
    case environmentFile = "environment-file"
    case nice, inhibit
    case wakeSystem = "wake-system"
    case ioClass = "io-class"
    case cpuWeight = "cpu-weight"
    case ioWeight = "io-weight"
    case memoryMax = "memory-max"
    case ssids, interfaces
    case requiresMount = "requires-mount"
    case requiresReachable = "requires-reachable"
    case meteredBudgetBytes = "metered-budget-bytes"
    case meteredBudgetSeconds = "metered-budget-seconds"
    case bandwidth
    case meteredBandwidth = "metered-bandwidth"
    case bandwidthRequired = "bandwidth-required"
    case stopSignal = "stop-signal"
    case stopTimeout = "stop-timeout"
    case onConditionLost = "on-condition-lost"
    case pauseMax = "pause-max"
    case user, group, relax
    case requiresIdle = "requires-idle"
    case onUserReturn = "on-user-return"
  }

  init(_ job: JobDefinition) {
    id = job.id
    command = job.command
    switch job.schedule {
    case .every(let interval, let flex):
      every = interval.storedNanoseconds
      self.flex = flex?.storedNanoseconds
    case .once(let delay):
      once = true
      self.delay = delay.storedNanoseconds
    case .calendar(let expressions):
      calendar = expressions
    }
    timing = job.timing
    network = job.network
    requiresCharging = job.requiresCharging
    requiresBatteryNotLow = job.requiresBatteryNotLow
    budget = job.budget?.storedNanoseconds
    backoff = Backoff(
      policy: job.backoff.policy, initial: job.backoff.initial.storedNanoseconds,
      maxAttempts: job.backoff.maxAttempts, jitter: job.backoff.jitter)
    environment = job.environment
    environmentFile = job.environmentFile
    workingDirectory = job.workingDirectory
    expedited = job.expedited
    inheritEnvironment = job.inheritEnvironment ? true : nil
    if let priority = job.priority {
      nice = priority.nice
      ioClass = priority.ioClass
      cpuWeight = priority.cpuWeight
      ioWeight = priority.ioWeight
      memoryMax = priority.memoryMax
    }
    inhibit = job.inhibit
    wakeSystem = job.wakeSystem ? true : nil
    ssids = job.ssids
    interfaces = job.interfaces
    requiresMount = job.requiresMount
    requiresReachable = job.requiresReachable
    if let budget = job.meteredBudget, case .trailing(let seconds) = budget.window {
      meteredBudgetBytes = budget.bytes
      meteredBudgetSeconds = seconds
    }
    bandwidth = job.bandwidth?.rate
    meteredBandwidth = job.bandwidth?.meteredRate
    bandwidthRequired = job.bandwidth?.required == true ? true : nil
    stopSignal = job.stopSignal
    stopTimeout = job.stopTimeout?.storedNanoseconds
    if let pauseMax = job.onConditionLost?.pauseMax {
      onConditionLost = "pause"
      self.pauseMax = pauseMax.storedNanoseconds
    }
    user = job.user
    group = job.group
    relax = job.relax
    requiresIdle = job.requiresIdle?.storedNanoseconds
    onUserReturn = job.onUserReturn
  }

  /// The stored priority keys, or nil when none was stored (the background defaults).
  private var priority: RunPriority? {
    guard nice != nil || ioClass != nil || cpuWeight != nil || ioWeight != nil || memoryMax != nil
    else { return nil }
    var priority = RunPriority()
    if let nice { priority.nice = nice }
    if let ioClass { priority.ioClass = ioClass }
    if let cpuWeight { priority.cpuWeight = cpuWeight }
    if let ioWeight { priority.ioWeight = ioWeight }
    priority.memoryMax = memoryMax
    return priority
  }

  /// The job, with defaults for absent settings; nil without a schedule.
  var job: JobDefinition? {
    let schedule: JobDefinition.Schedule
    if let every {
      schedule = .every(.nanoseconds(every), flex: flex.map(Duration.nanoseconds))
    } else if once == true {
      schedule = .once(delay: .nanoseconds(delay ?? 0))
    } else if let calendar {
      schedule = .calendar(calendar)
    } else {
      return nil
    }
    var job = JobDefinition(id: id, command: command, schedule: schedule)
    let defaults = JobDefinition.Backoff()
    if let network { job.network = network }
    if let requiresCharging { job.requiresCharging = requiresCharging }
    if let requiresBatteryNotLow { job.requiresBatteryNotLow = requiresBatteryNotLow }
    job.budget = budget.map(Duration.nanoseconds)
    job.backoff.policy = backoff?.policy ?? defaults.policy
    job.backoff.initial = backoff?.initial.map(Duration.nanoseconds) ?? defaults.initial
    job.backoff.maxAttempts = backoff?.maxAttempts ?? defaults.maxAttempts
    job.backoff.jitter = backoff?.jitter ?? defaults.jitter
    if let environment { job.environment = environment }
    job.environmentFile = environmentFile
    job.workingDirectory = workingDirectory
    if let expedited { job.expedited = expedited }
    if let inheritEnvironment { job.inheritEnvironment = inheritEnvironment }
    job.timing = timing
    job.priority = priority
    job.inhibit = inhibit
    if let wakeSystem { job.wakeSystem = wakeSystem }
    job.ssids = ssids
    job.interfaces = interfaces
    job.requiresMount = requiresMount
    job.requiresReachable = requiresReachable
    if let meteredBudgetBytes, let meteredBudgetSeconds {
      job.meteredBudget = MeteredBudget(
        bytes: meteredBudgetBytes, window: .trailing(seconds: meteredBudgetSeconds))
    }
    if bandwidth != nil || meteredBandwidth != nil {
      job.bandwidth = BandwidthCap(
        rate: bandwidth, meteredRate: meteredBandwidth, required: bandwidthRequired ?? false)
    }
    job.stopSignal = stopSignal
    job.stopTimeout = stopTimeout.map(Duration.nanoseconds)
    if onConditionLost == "pause" {
      job.onConditionLost = .pause(
        max: pauseMax.map(Duration.nanoseconds) ?? ConditionLossPolicy.defaultPauseMax)
    }
    job.user = user
    job.group = group
    job.relax = relax
    job.requiresIdle = requiresIdle.map(Duration.nanoseconds)
    job.onUserReturn = onUserReturn
    return job
  }
}

extension Duration {
  /// Whole nanoseconds (config durations have at most millisecond resolution).
  fileprivate var storedNanoseconds: Int64 {
    let parts = components
    return parts.seconds * 1_000_000_000 + parts.attoseconds / 1_000_000_000
  }
}

/// Format 1 of a stored job, frozen: the synthesized `Codable` form ``JobDefinition`` had when
/// jobs were first stored. Kept separate so that changing ``JobDefinition`` cannot change how
/// old stores read.
private struct LegacyJobV1: Decodable {
  enum Schedule: Decodable {
    case every(Duration, flex: Duration?)
    case once(delay: Duration)
  }

  struct Backoff: Decodable {
    var policy: JobDefinition.Backoff.Policy
    var initial: Duration
    var maxAttempts: Int
    var jitter: Double
  }

  var id: String
  var command: [String]
  var schedule: Schedule
  var network: JobDefinition.Network
  var requiresCharging: Bool
  var requiresBatteryNotLow: Bool
  var budget: Duration?
  var backoff: Backoff
  var environment: [String: String]
  var workingDirectory: String?
  var expedited: Bool

  /// The job, with today's defaults for settings format 1 did not have.
  var job: JobDefinition {
    let schedule: JobDefinition.Schedule =
      switch self.schedule {
      case .every(let interval, let flex): .every(interval, flex: flex)
      case .once(let delay): .once(delay: delay)
      }
    var job = JobDefinition(id: id, command: command, schedule: schedule)
    job.network = network
    job.requiresCharging = requiresCharging
    job.requiresBatteryNotLow = requiresBatteryNotLow
    job.budget = budget
    job.backoff.policy = backoff.policy
    job.backoff.initial = backoff.initial
    job.backoff.maxAttempts = backoff.maxAttempts
    job.backoff.jitter = backoff.jitter
    job.environment = environment
    job.workingDirectory = workingDirectory
    job.expedited = expedited
    return job
  }
}
