import Backgrounder
import BackgrounderTesting
import Foundation
import Locking
import Testing

/// Unknown is not permission, through the whole runtime: sources not answered yet, no source
/// configured, stop reasons that say what was lost, and one snapshot from gate to start.
@Suite(.stopsRuntimes) struct UnknownConditionsTests {
  static let waitingForNetworkManager = NetworkConditions(
    isReachable: true, unknownSources: ["NetworkManager"])

  @Test("a source that has not answered holds network work; it runs once the source answers")
  func heldUntilEverySourceAnswered() async throws {
    let job = id("test.unknown.startup")
    let worker = RecordingWorker()
    let h = try await Harness.start(
      workers: [job: worker], network: Self.waitingForNetworkManager)
    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: job, constraints: .init(networkRequired: .any)))
    // At the gate (min(5 s, budget / 4)), not invoked.
    await h.clock.waitForSleepers(until: h.at(5))
    #expect(worker.invocations == 0)
    #expect(h.task(job)?.state == .blocked)
    #expect(h.task(job)?.pendingPredicates.contains(.networkRequired(.any)) == true)

    // The gate times out: the deferral says what it waited for.
    h.clock.advance(by: .seconds(5))
    await h.waitFor(job) { $0 == .attemptDeferred(reason: .reachabilityTimeout) }
    let deferred = try #require(try await h.status(job))
    #expect(
      deferred.lastReason == "network gate: NetworkManager has not answered within 5 s")
    #expect(deferred.attempt == 0)

    h.network.set(.unmetered)
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(worker.invocations == 1)
    #expect(worker.contexts.first?.network == .unmetered)
  }

  @Test("connectivity expected but not known yet holds `any` work; a portal verdict keeps it")
  func expectedConnectivityMustBeKnown() async throws {
    let job = id("test.unknown.connectivity")
    let worker = RecordingWorker()
    let h = try await Harness.start(
      workers: [job: worker],
      network: NetworkConditions(isReachable: true, expectsConnectivity: true))
    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: job, constraints: .init(networkRequired: .any)))
    await h.clock.waitForSleepers(until: h.at(5))
    #expect(worker.invocations == 0)
    #expect(h.task(job)?.state == .blocked)
    let portal = NetworkConditions(
      isReachable: true, connectivity: .portal, expectsConnectivity: true)
    h.network.set(portal)
    await Self.until { h.backgrounder.diagnostics().network == portal }
    #expect(worker.invocations == 0)
    #expect(h.task(job)?.pendingPredicates == [.workingInternet(.portal)])
    // What `status` reads from the store says so too, while the run is still at the gate.
    let stored = try #require(try await h.status(job))
    #expect(stored.pendingPredicates.contains(.workingInternet(.portal)), "\(stored)")
    #expect(h.events(job) { $0 == .attemptDeferred(reason: .reachabilityTimeout) }.isEmpty)
    h.network.set(
      NetworkConditions(isReachable: true, connectivity: .full, expectsConnectivity: true))
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(worker.contexts.first?.network.connectivity == .full)
  }

  @Test("without a network source, network work is held with a health problem")
  func unconfiguredNetworkHoldsWork() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let runtime = Backgrounder(
      configuration: .init(storePath: directory.appendingPathComponent("s.sqlite").path))
    let job = id("test.unknown.unconfigured")
    let free = id("test.unknown.nonetwork")
    let worker = RecordingWorker()
    let other = RecordingWorker()
    try runtime.register(job) { worker }
    try runtime.register(free) { other }
    try await runtime.start()
    RunningRuntimes.forRunningTest().stopAtEnd { await runtime.shutdown() }
    let recorder = EventRecorder(runtime)
    _ = await runtime.schedule(
      WorkRequest.OneTime(taskId: job, constraints: .init(networkRequired: .any)))
    _ = await runtime.schedule(WorkRequest.OneTime(taskId: free))
    await recorder.wait(count: 1) { $0.taskId == free && $0.kind.isWorkCompleted }
    #expect(other.invocations == 1, "work without a network requirement still runs")
    #expect(worker.invocations == 0)
    let problems = runtime.diagnostics().problems
    #expect(problems.contains { $0.kind == .networkSourceMissing })
  }

  @Test("without a power source, power-constrained work is held with a health problem")
  func unconfiguredPowerHoldsWork() async throws {
    let job = id("test.unknown.power")
    let worker = RecordingWorker()
    let h = try await Harness.start(workers: [job: worker], power: .unconfigured)
    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: job, constraints: .init(requiresCharging: true)))
    await h.waitFor(job) { $0 == .attemptDeferred(reason: .chargingNotMet) }
    #expect(worker.invocations == 0)
    #expect(h.task(job)?.pendingPredicates.contains(.requiresCharging) == true)
    h.power.set(.externalPower)
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(worker.invocations == 1)
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let bare = Backgrounder(
      configuration: .init(
        storePath: directory.appendingPathComponent("s.sqlite").path,
        network: AlwaysReachableNetwork()))
    #expect(bare.diagnostics().problems.map(\.kind) == [.powerSourceMissing])
  }

  @Test("power becoming unknown does not stop a run; a known loss does")
  func unknownPowerDoesNotStopARun() async throws {
    let job = id("test.unknown.powerloss")
    let worker = BlockingWorker()
    let h = try await Harness.start(workers: [job: worker])
    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: job, constraints: .init(requiresCharging: true)))
    await worker.waitUntilInvoked()
    h.power.set(.unconfigured)
    await UnknownConditionsTests.until { h.backgrounder.diagnostics().power == .unconfigured }
    #expect(worker.stopReasons.isEmpty)
    h.power.set(PowerConditions(isCharging: false, isBatteryNotLow: true))
    await h.waitFor(job) { $0 == .workStopped(attempt: 0, reason: .chargerDisconnected) }
  }

  @Test("an explicit AlwaysReachableNetwork runs network work and reports no problem")
  func explicitAlwaysReachable() async throws {
    let job = id("test.unknown.always")
    let worker = RecordingWorker()
    let h = try await Harness.start(
      workers: [job: worker], networkSource: AlwaysReachableNetwork())
    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: job, constraints: .init(networkRequired: .unmetered)))
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(!h.backgrounder.diagnostics().problems.contains { $0.kind == .networkSourceMissing })
  }

  @Test(
    "a run that loses its network is stopped with a code naming what was lost",
    arguments: [
      (NetworkConditions.offline, StopReason.networkLost),
      (NetworkConditions(isReachable: true, connectivity: .portal), .captivePortal),
      (NetworkConditions(isReachable: true, connectivity: .limited), .limitedConnectivity),
      (NetworkConditions(isReachable: true, connectivity: .none), .networkLost),
      (NetworkConditions.metered, .networkMetered),
    ])
  func stopReasonsSayWhatWasLost(lost: NetworkConditions, reason: StopReason) async throws {
    let job = id("test.unknown.stop")
    let worker = BlockingWorker()
    let h = try await Harness.start(workers: [job: worker])
    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: job, constraints: .init(networkRequired: .unmetered)))
    await worker.waitUntilInvoked()
    h.network.set(lost)
    await h.waitFor(job) { $0 == .workStopped(attempt: 0, reason: reason) }
    #expect(worker.stopReasons == [reason])
    let status = try await h.status(job)
    #expect(status?.lastReason == "stopped: \(reason.rawValue)")
  }

  @Test("a run is not stopped only because a source became unknown")
  func unknownDoesNotStopARun() {
    let reason = NetworkRequirement.unmetered.lossReason(under: Self.waitingForNetworkManager)
    #expect(reason == nil)
    #expect(!NetworkRequirement.unmetered.isSatisfied(by: Self.waitingForNetworkManager))
  }

  @Test("the conditions changed before the start: not started, no attempt used, runs again")
  func confirmStartRefusesChangedConditions() async throws {
    let job = id("test.unknown.confirm")
    let wifi = NetworkConditions(isReachable: true, primaryLink: "wlan0")
    let wired = NetworkConditions(isReachable: true, primaryLink: "eth0")
    let seen = Lock<[(told: String?, confirmed: Bool)]>([])
    let network = FakeNetworkSource(wifi)
    let runtime = Lock<Backgrounder?>(nil)
    let worker = ClosureWorker { context in
      if seen.withLock({ $0.isEmpty }) {
        // Between the decision and the start, the primary link changes (still unmetered:
        // no stop), so the environment the work would be told is no longer true.
        network.set(wired)
        await Self.until { runtime.withLock { $0 }?.diagnostics().network == wired }
      }
      let confirmed = context.confirmStart()
      seen.withLock { $0.append((context.network.primaryLink, confirmed)) }
      return .success
    }
    let h = try await Harness.start(workers: [job: worker], networkSource: network)
    runtime.withLock { $0 = h.backgrounder }
    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: job, constraints: .init(networkRequired: .unmetered)))
    await h.waitFor(job) { $0.isWorkCompleted }
    let runs = seen.withLock { $0 }
    #expect(runs.map(\.told) == ["wlan0", "eth0"])
    #expect(runs.map(\.confirmed) == [false, true])
    #expect(h.events(job) { $0 == .attemptDeferred(reason: .constraintLost) }.count == 1)
    let status = try #require(try await h.status(job))
    #expect(status.state == .succeeded)
    #expect(status.attempt == 0, "the refused start used no attempt")
    #expect(status.recentRuns.map(\.outcome) == ["success", "deferred"])
  }

  /// Polls `condition` every millisecond (real time; the runtime's clock is manual).
  static func until(_ condition: @Sendable () -> Bool) async {
    while !condition() { try? await Task.sleep(for: .milliseconds(1)) }
  }
}
