import Backgrounder
import Foundation

/// Where a daemon job came from: the config file (reconciled on start and reload) or the
/// `schedule` verb (left alone by reconciliation).
public enum JobOrigin: String, Sendable, Codable {
  case config
  case cli
}

/// Maps daemon jobs to runtime requests. The job definition travels in the request's input (in
/// the versioned format of ``StoredJob``), so the worker needs nothing but its context, and a
/// changed definition is visible in the store.
public enum JobRequests {
  /// The work request for `job`. Throws ``InvalidJobDefinition`` when `job` breaks a rule of
  /// ``JobValidation``: a definition sent over the control socket has not been checked by the
  /// config reader or the CLI.
  public static func request(
    for job: JobDefinition, origin: JobOrigin, digest: String? = nil,
    machineIdPath: String = MachineIdentity.defaultPath
  ) throws -> WorkRequest {
    if let (key, message) = JobValidation.problem(with: job) {
      throw InvalidJobDefinition(key: key, message: message)
    }
    if let (key, message) = RunIdentity.problem(user: job.user, group: job.group) {
      throw InvalidJobDefinition(key: key, message: message)
    }
    let taskId = try TaskId(job.id)
    let input = try StoredJob.input(for: job, origin: origin, digest: digest)
    var network = NetworkRequirement(rawValue: job.network.rawValue) ?? .none
    // A cap that must be applied needs the link it shapes: a job without a `network` key waits
    // for a known, reachable network (as `network = "any"`) instead of being decided before
    // the daemon knows its primary link and deferred for lack of one.
    if job.bandwidth?.required == true, network == .none { network = .any }
    var constraints = WorkConstraints(
      networkRequired: network,
      requiresCharging: job.requiresCharging,
      requiresBatteryNotLow: job.requiresBatteryNotLow,
      windows: job.timing?.timeWindows ?? [], windowEnd: job.timing?.runtimeWindowEnd ?? .continue,
      allowedNetworks: NetworkAllowList(ssids: job.ssids ?? [], interfaces: job.interfaces ?? []),
      requiredMount: job.requiresMount, requiredReachable: job.requiresReachable,
      meteredBudget: job.meteredBudget)
    constraints.onConditionLost = job.onConditionLost ?? .stop
    constraints.requiresIdle = job.requiresIdle
    constraints.onUserReturn = job.onUserReturn ?? .continue
    constraints.bandwidth = job.bandwidth
    constraints.relaxation = job.relax?.relaxation(of: constraints)
    let backoff =
      switch job.backoff.policy {
      case .linear:
        BackoffPolicy.linear(
          initialDelay: job.backoff.initial, maxAttempts: job.backoff.maxAttempts,
          jitter: job.backoff.jitter)
      case .exponential:
        BackoffPolicy.exponential(
          initialDelay: job.backoff.initial, maxAttempts: job.backoff.maxAttempts,
          jitter: job.backoff.jitter)
      }
    let budget = job.budget ?? WorkRequest.defaultBudget
    let inhibit = job.inhibit ?? .delay
    switch job.schedule {
    case .every(let interval, let flex):
      return .periodic(
        WorkRequest.Periodic(
          taskId: taskId, constraints: constraints, input: input, interval: interval,
          flexWindow: flex, backoff: backoff, budget: budget, inhibitPolicy: inhibit))
    case .calendar(let expressions):
      return .periodic(
        WorkRequest.Periodic(
          taskId: taskId, constraints: constraints, input: input,
          calendar: try calendar(expressions, job, machineIdPath: machineIdPath),
          backoff: backoff, budget: budget, inhibitPolicy: inhibit))
    case .once(let delay):
      return .oneTime(
        WorkRequest.OneTime(
          taskId: taskId, constraints: constraints, input: input, initialDelay: delay,
          backoff: backoff,
          executionHint: job.expedited ? .expedited(onQuotaExhausted: .runAsRegular) : .standard,
          budget: budget, inhibitPolicy: inhibit))
    }
  }

  /// The job definition and origin stored in `input` (in any format this version reads), or
  /// nil when it carries none.
  package static func job(in input: WorkInput) -> (JobDefinition, JobOrigin)? {
    StoredJob.decode(input).map { ($0.job, $0.origin) }
  }
}

/// A job definition that breaks a rule of ``JobValidation``.
public struct InvalidJobDefinition: Error, Equatable, CustomStringConvertible {
  /// The config key the rule concerns (`backoff.max-attempts`, `command`, ...).
  package var key: String
  /// What is wrong with it.
  package var message: String

  /// `key: message`.
  public var description: String { "\(key): \(message)" }
}
