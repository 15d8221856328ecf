import Foundation

@testable import Backgrounder

/// One event of a random history fed to the dispatch state machine.
enum DispatchStep: Sendable, CustomStringConvertible {
  case schedule(task: Int, periodic: Bool, network: NetworkRequirement, charging: Bool)
  case cancel(task: Int)
  case trigger(task: Int)
  case network(NetworkConditions)
  case power(PowerConditions)
  case advance(seconds: Int)
  /// Ends the `run`-th running run (modulo their number) with `result`.
  case finish(run: Int, WorkResult)
  /// The budget of the `run`-th running run ran out.
  case expire(run: Int)

  /// Decodes three small random numbers (see ``DispatchProperties``) into a step.
  init(kind: Int, task: Int, value: Int) {
    let networks = Self.networks
    let requirements = NetworkRequirement.allCases
    switch kind {
    case 0, 1:
      self = .schedule(
        task: task, periodic: value % 2 == 0, network: requirements[value / 2 % 3],
        charging: value / 6 % 4 == 0)
    case 2: self = .cancel(task: task)
    case 3: self = .trigger(task: task)
    case 4: self = .network(networks[value % networks.count])
    case 5:
      self = .power(PowerConditions(isCharging: value % 2 == 0, isBatteryNotLow: value % 3 != 0))
    case 6, 7: self = .advance(seconds: [1, 4, 7, 60, 601, 1_000, 3_700][value % 7])
    case 8, 9:
      let results: [WorkResult] = [.success, .retry(reason: nil), .failure(reason: "no")]
      self = .finish(run: task, results[value % 3])
    default: self = .expire(run: task)
    }
  }

  /// What the sources may say, answered or not: known conditions, a source that has not
  /// answered yet (start-up) or no longer answers, connectivity expected but not known yet,
  /// known-broken connectivity, and no source configured at all.
  static let networks: [NetworkConditions] = [
    .unmetered, .metered, .offline,
    NetworkConditions(isReachable: true, unknownSources: ["NetworkManager"]),
    NetworkConditions(isReachable: true, isDataMetered: true, unknownSources: ["nl80211"]),
    NetworkConditions(isReachable: true, connectivity: .unknown, expectsConnectivity: true),
    NetworkConditions(isReachable: true, connectivity: .full, expectsConnectivity: true),
    NetworkConditions(isReachable: true, connectivity: .portal, expectsConnectivity: true),
    NetworkConditions(isReachable: true, connectivity: .limited),
    NetworkConditions(
      isReachable: true, isDataMetered: true, connectivity: .full, expectsConnectivity: true),
    NetworkConditions(isReachable: true, connectivity: .none),
    .unconfigured,
  ]

  var description: String {
    switch self {
    case .schedule(let task, let periodic, let network, let charging):
      "schedule(\(task), \(periodic ? "periodic" : "once"), \(network)\(charging ? ", charging" : ""))"
    case .cancel(let task): "cancel(\(task))"
    case .trigger(let task): "trigger(\(task))"
    case .network(let conditions):
      "network(\(conditions.isReachable ? conditions.isDataMetered ? "metered" : "unmetered" : "offline"), "
        + "\(conditions.connectivity)\(conditions.expectsConnectivity ? " expected" : "")"
        + "\(conditions.unknownSources.isEmpty ? "" : ", waiting for \(conditions.unknownSources)"))"
    case .power(let power): "power(charging: \(power.isCharging), ok: \(power.isBatteryNotLow))"
    case .advance(let seconds): "advance(\(seconds)s)"
    case .finish(let run, let result): "finish(\(run), \(result))"
    case .expire(let run): "expire(\(run))"
    }
  }
}

/// Drives a `DispatchStateMachine` the way the runtime does (claims become runs, gate releases
/// pass gates, stops end runs, gates time out at their deadline) and records every breach of
/// the dispatch invariants it observes.
struct DispatchSimulation {
  static let tasks = (0..<3).map { try! TaskId("test.property.task\($0)") }
  static let interval: Duration = .seconds(900)
  static let flex: Duration = .seconds(120)
  static let backoff = BackoffPolicy.exponential(initialDelay: .seconds(10), maxAttempts: 3)

  /// A claimed run the simulated driver has not ended yet.
  struct Run {
    var token: RunToken
    var task: TaskId
    var attempt: Int
    var gateDeadline: WallInstant?
    /// A stop was requested; the worker returns (and the run ends) at its next step.
    var stopping: StopReason?
  }

  private(set) var machine: DispatchStateMachine
  private(set) var now = WallInstant(nanosecondsSince1970: 1_700_000_000_000_000_000)
  private(set) var runs: [RunToken: Run] = [:]
  /// The invariants checked along the way.
  enum Invariant: Hashable {
    /// Never two runs of one task in flight at once.
    case oneRunAtATime
    /// A periodic task runs at most once per cycle (a retry stays in its cycle).
    case oneRunPerCycle
    /// Deferrals never use an attempt; each claim carries the attempt the history implies.
    case attempts
    /// Unknown is not permission: no worker is invoked (unless forced) while a condition its
    /// network requirement needs is unknown or unmet (``DispatchSimulation/permits(_:_:)``).
    case startedWithoutPermission
  }
  /// Workers invoked with a network requirement, and those invoked right after the conditions
  /// became known again (a source answered after being unknown).
  private(set) var networkStarts = 0
  private(set) var startsAfterUnknown = 0
  private var lastWasUnknown = false
  private var answeredAfterUnknown = false
  /// Breaches seen so far, in words, by invariant.
  private(set) var violations: [Invariant: [String]] = [:]
  /// The attempt number the next claim of each task must carry.
  private var expectedAttempt: [TaskId: Int] = [:]
  /// When each periodic task last completed a cycle (nil after a trigger or a reschedule).
  private var cycleEnded: [TaskId: WallInstant] = [:]
  /// One-time tasks accepted and neither cancelled nor replaced, and those that finished.
  private(set) var acceptedOneTime: Set<TaskId> = []
  private(set) var finishedOneTime: Set<TaskId> = []
  /// Claims made ahead of a free worker: they become runs when the machine promotes them
  /// (with the ticket it kept), each at most once.
  private var claims: Set<RunToken> = []
  /// How many claims made ahead became runs.
  private(set) var promotedClaims = 0

  /// `claimAhead`: one-time tasks the machine may claim beyond its 2 worker slots.
  init(claimAhead: Int = 0) {
    var settings = DispatchSettings(concurrencyLimit: 2, minimumPeriodicInterval: .seconds(60))
    settings.claimAhead = claimAhead
    machine = DispatchStateMachine(
      settings: settings, registered: Set(Self.tasks), network: .unmetered,
      power: .externalPower, seed: 1)
  }

  mutating func apply(_ step: DispatchStep) {
    switch step {
    case .schedule(let index, let periodic, let network, let charging):
      schedule(Self.tasks[index], periodic: periodic, network: network, charging: charging)
    case .cancel(let index):
      let id = Self.tasks[index]
      let (_, effects) = machine.cancel(id, now: now)
      acceptedOneTime.remove(id)
      cycleEnded[id] = nil
      perform(effects)
    case .trigger(let index):
      if machine.runNow(Self.tasks[index]) == .triggered { cycleEnded[Self.tasks[index]] = nil }
    case .network(let conditions):
      let wasUnknown = lastWasUnknown
      lastWasUnknown = !Self.isKnown(conditions)
      perform(machine.networkChanged(conditions, now: now))
      if wasUnknown && !lastWasUnknown { answeredAfterUnknown = true }
    case .power(let conditions):
      perform(machine.powerChanged(conditions, now: now))
    case .advance(let seconds):
      advance(to: now.advanced(by: .seconds(seconds)))
    case .finish(let index, let result):
      if let run = running(index) {
        end(run, run.stopping.map { .stopped($0) } ?? .finished(result))
      }
    case .expire(let index):
      if let run = running(index) { end(run, run.stopping.map { .stopped($0) } ?? .expired) }
    }
    settle()
  }

  /// Restores every constraint, then lets the clock run and every run succeed until every
  /// accepted one-time task finished, nothing is left to do, or `limit` rounds pass.
  mutating func drain(limit: Int = 500) {
    apply(.network(.unmetered))
    apply(.power(.externalPower))
    for _ in 0..<limit {
      if acceptedOneTime.isSubset(of: finishedOneTime) { return }
      if let run = runs.values.min(by: { $0.token.value < $1.token.value }) {
        if let deadline = run.gateDeadline { advance(to: max(now, deadline)) }
        if let run = runs[run.token] {
          end(run, run.stopping.map { .stopped($0) } ?? .finished(.success))
        }
        settle()
        continue
      }
      guard let wake = settle() else { return }
      advance(to: wake)
      settle()
    }
  }

  private mutating func schedule(
    _ id: TaskId, periodic: Bool, network: NetworkRequirement, charging: Bool
  ) {
    let constraints = WorkConstraints(networkRequired: network, requiresCharging: charging)
    let request: WorkRequest =
      periodic
      ? .periodic(
        .init(
          taskId: id, constraints: constraints, interval: Self.interval, flexWindow: Self.flex,
          backoff: Self.backoff, budget: .seconds(60)))
      : .oneTime(
        .init(taskId: id, constraints: constraints, backoff: Self.backoff, budget: .seconds(60)))
    let row = TaskRow(request: request, input: Data(), now: now)
    let (outcome, effects) = machine.schedule(row, policy: .replace, now: now)
    guard outcome == .scheduled else { return }
    expectedAttempt[id] = 0
    cycleEnded[id] = nil
    if periodic { acceptedOneTime.remove(id) } else { acceptedOneTime.insert(id) }
    finishedOneTime.remove(id)
    perform(effects)
  }

  private func running(_ index: Int) -> Run? {
    let running = runs.values.filter { $0.gateDeadline == nil }.sorted {
      $0.token.value < $1.token.value
    }
    return running.isEmpty ? nil : running[index % running.count]
  }

  /// Moves the clock to `time`, timing out every gate whose deadline passed on the way.
  private mutating func advance(to time: WallInstant) {
    while let run = runs.values.filter({ $0.gateDeadline.map { $0 <= time } ?? false })
      .min(by: { $0.gateDeadline! < $1.gateDeadline! })
    {
      now = max(now, run.gateDeadline!)
      resolveGate(run, passed: false)
    }
    now = max(now, time)
  }

  /// Claims whatever is due; returns the next instant worth waking up for.
  @discardableResult
  private mutating func settle() -> WallInstant? {
    while true {
      let (effects, wake) = machine.dispatch(now: now)
      if effects.tickets.isEmpty {
        perform(effects)
        return wake
      }
      perform(effects)
    }
  }

  private mutating func perform(_ effects: Effects) {
    for op in effects.ops { record(op) }
    for ticket in effects.tickets {
      if ticket.claimedAhead { claims.insert(ticket.token) } else { claimed(ticket) }
    }
    for ticket in effects.promotions {
      guard claims.remove(ticket.token) != nil else {
        violations[.oneRunAtATime, default: []].append(
          "\(ticket.taskId): promoted a claim not made ahead, or twice")
        continue
      }
      promotedClaims += 1
      claimed(ticket)
    }
    for token in effects.gateReleases {
      if let run = runs[token] { resolveGate(run, passed: true) }
    }
    for (token, reason) in effects.stops {
      guard let run = runs[token] else { continue }
      // A gate wait ends at once; a running worker returns when it next gets to run.
      if run.gateDeadline != nil {
        end(run, .stopped(reason))
      } else if run.stopping == nil {
        runs[token]?.stopping = reason
      }
    }
  }

  private mutating func record(_ op: StoreOp) {
    guard case .upsert(let row) = op, row.kind == .oneTime,
      row.state == .succeeded || row.state == .failed
    else { return }
    finishedOneTime.insert(row.id)
  }

  private mutating func claimed(_ ticket: RunTicket) {
    let id = ticket.taskId
    if let other = runs.values.first(where: { $0.task == id }) {
      violations[.oneRunAtATime, default: []].append(
        "\(id) claimed (run \(ticket.token.value)) while run \(other.token.value) is in flight")
    }
    if let expected = expectedAttempt[id], ticket.attempt != expected {
      violations[.attempts, default: []].append(
        "\(id) claimed with attempt \(ticket.attempt), expected \(expected)")
    }
    if let ended = cycleEnded.removeValue(forKey: id),
      now < ended.advanced(by: Self.interval - Self.flex)
    {
      violations[.oneRunPerCycle, default: []].append(
        "\(id) ran again \(ended.duration(to: now)) after its cycle ended (interval \(Self.interval))"
      )
    }
    runs[ticket.token] = Run(
      token: ticket.token, task: id, attempt: ticket.attempt,
      gateDeadline: ticket.gate?.deadline)
    if ticket.gate == nil { checkPermitted(ticket.token, id) }
  }

  /// The specification of rule 1, written independently of the product's
  /// `NetworkRequirement.isSatisfied(by:)`: every source answered, connectivity known when a
  /// connectivity source is expected, reachable, not known-broken, unmetered when asked.
  static func permits(_ requirement: NetworkRequirement, _ conditions: NetworkConditions) -> Bool {
    if requirement == .none { return true }
    guard isKnown(conditions), conditions.isReachable else { return false }
    if [.none, .portal, .limited].contains(conditions.connectivity) { return false }
    return requirement == .any || !conditions.isDataMetered
  }

  static func isKnown(_ conditions: NetworkConditions) -> Bool {
    conditions.unknownSources.isEmpty
      && !(conditions.expectsConnectivity && conditions.connectivity == .unknown)
  }

  /// A worker of `id` is invoked now (run `token`): its conditions must permit it.
  private mutating func checkPermitted(_ token: RunToken, _ id: TaskId) {
    guard let entry = machine.entries[id], let run = entry.run(token), !run.exempt else { return }
    let requirement = entry.row.constraints.networkRequired
    guard requirement != .none else { return }
    networkStarts += 1
    if answeredAfterUnknown { startsAfterUnknown += 1 }
    if !Self.permits(requirement, machine.network) {
      violations[.startedWithoutPermission, default: []].append(
        "\(id) (\(requirement)) invoked under \(DispatchStep.network(machine.network))")
    }
    // What the worker is told is what the decision used.
    if run.startedUnder != machine.network {
      violations[.startedWithoutPermission, default: []].append(
        "\(id) told \(run.startedUnder), decided under \(machine.network)")
    }
  }

  private mutating func resolveGate(_ run: Run, passed: Bool) {
    let attemptBefore = machine.entries[run.task]?.row.attempt
    let (decision, effects) = machine.gateResolved(run.token, passed: passed, now: now)
    switch decision {
    case .invoke:
      runs[run.token]?.gateDeadline = nil
      checkPermitted(run.token, run.task)
    case .over:
      runs[run.token] = nil
      if let attemptBefore, let after = machine.entries[run.task]?.row.attempt,
        after != attemptBefore
      {
        violations[.attempts, default: []].append(
          "\(run.task): a deferral at the gate moved attempt \(attemptBefore) → \(after)")
      }
    }
    perform(effects)
  }

  /// Ends `run` as the driver would, and updates what the next claim must look like.
  private mutating func end(_ run: Run, _ ending: RunEnding) {
    runs[run.token] = nil
    let current = machine.liveToken(for: run.task) == run.token
    let row = machine.entries[run.task]?.row
    let effects = machine.runEnded(run.token, ending: ending, abandoned: false, now: now)
    defer { perform(effects) }
    guard current, let row else { return }
    let exhausted = run.attempt + 1 >= Self.backoff.maxAttempts
    let cycleOver: Bool
    switch ending {
    case .finished(.success), .finished(.failure): cycleOver = true
    case .finished(.retry), .expired: cycleOver = exhausted
    case .stopped:
      if let after = machine.entries[run.task]?.row.attempt, after != run.attempt {
        violations[.attempts, default: []].append(
          "\(run.task): a stop moved attempt \(run.attempt) → \(after)")
      }
      return
    default: return
    }
    if cycleOver {
      expectedAttempt[run.task] = 0
      if row.kind == .periodic { cycleEnded[run.task] = now }
    } else {
      expectedAttempt[run.task] = run.attempt + 1
    }
  }
}
