import Backgrounder
import BackgrounderTesting
import Foundation
import Testing

/// `network = "not-roaming"`: any usable network except a roaming one; a cellular primary link
/// whose roaming is not known waits, and says why; roaming starting mid-run stops the run.
@Suite(.stopsRuntimes, .timeLimit(.minutes(3)))
struct NotRoamingTests {
  static let home = NetworkConditions(isReachable: true, isDataMetered: true, primaryLink: "wwan0")
  static var roaming: NetworkConditions {
    var conditions = home
    conditions.isPrimaryRoaming = true
    return conditions
  }
  static var unknown: NetworkConditions {
    var conditions = home
    conditions.roamingUnknown = "ModemManager not running"
    return conditions
  }

  @Test func allowsAnyUsableNetworkExceptARoamingOne() {
    #expect(NetworkRequirement(rawValue: "not-roaming") == .notRoaming)
    #expect(NetworkRequirement.notRoaming.isSatisfied(by: Self.home), "metered is fine")
    #expect(NetworkRequirement.notRoaming.isSatisfied(by: .unmetered))
    #expect(!NetworkRequirement.notRoaming.isSatisfied(by: Self.roaming))
    #expect(
      !NetworkRequirement.notRoaming.isSatisfied(by: Self.unknown), "unknown is not permission")
    #expect(!NetworkRequirement.notRoaming.isSatisfied(by: .offline))
    var waiting = Self.home
    waiting.unknownSources = ["ModemManager"]
    #expect(!NetworkRequirement.notRoaming.isSatisfied(by: waiting))
    #expect(NetworkRequirement.any.isSatisfied(by: Self.roaming), "only not-roaming cares")
  }

  @Test func onlyKnownRoamingStopsARun() {
    #expect(NetworkRequirement.notRoaming.lossReason(under: Self.roaming) == .roaming)
    #expect(NetworkRequirement.notRoaming.lossReason(under: Self.unknown) == nil)
    #expect(NetworkRequirement.notRoaming.lossReason(under: Self.home) == nil)
    #expect(NetworkRequirement.notRoaming.lossReason(under: .offline) == .networkLost)
  }

  @Test func conditionsRoundTripThroughJSON() throws {
    let data = try JSONEncoder().encode(Self.unknown)
    #expect(try JSONDecoder().decode(NetworkConditions.self, from: data) == Self.unknown)
    let old = #"{"isReachable":true,"isDataMetered":false,"connectivity":"unknown"}"#
    let decoded = try JSONDecoder().decode(NetworkConditions.self, from: Data(old.utf8))
    #expect(decoded.isKnownNotRoaming, "conditions stored before roaming are not roaming")
  }

  @Test("a due job waits while roaming, with the reason, and runs at home")
  func waitsWhileRoaming() async throws {
    let job = id("test.roaming.wait")
    let worker = RecordingWorker(.success)
    let h = try await Harness.start(workers: [job: worker], network: Self.unknown)

    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: job, constraints: WorkConstraints(networkRequired: .notRoaming)))
    await h.clock.waitForSleepers(until: h.at(5))
    h.clock.advance(by: .seconds(5))
    await h.waitFor(job) { $0 == .attemptDeferred(reason: .reachabilityTimeout) }
    #expect(worker.invocations == 0)
    let waiting = PendingPredicate.notRoaming(roamingUnknown: "ModemManager not running")
    #expect(try #require(h.task(job)).pendingPredicates.contains(waiting))
    let stored = try #require(try await h.status(job))
    #expect(stored.pendingPredicates.contains(waiting), "the store keeps the reason")
    #expect(
      stored.lastReason?.contains(
        "a network that is not roaming (roaming unknown: ModemManager not running)") == true,
      "\(stored.lastReason ?? "")")

    h.network.set(Self.roaming)
    await h.driver.flush()
    #expect(worker.invocations == 0)
    h.network.set(Self.home)
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(worker.invocations == 1)
  }

  @Test("roaming starting mid-run stops the run: a retry, no attempt used")
  func roamingMidRunStops() async throws {
    let job = id("test.roaming.midrun")
    let worker = BlockingWorker()
    let h = try await Harness.start(workers: [job: worker], network: Self.home)

    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: job, constraints: WorkConstraints(networkRequired: .notRoaming)))
    await worker.waitUntilInvoked()
    h.network.set(Self.unknown)
    await h.driver.flush()
    #expect(worker.stopReasons.isEmpty, "roaming that became unknown stops nothing")
    h.network.set(Self.roaming)
    await h.waitFor(job) { $0 == .workStopped(attempt: 0, reason: .roaming) }
    #expect(worker.stopReasons == [.roaming])
    await h.waitFor(job) { $0 == .attemptDeferred(reason: .constraintLost) }
    #expect(try #require(h.task(job)).attempt == 0)

    h.network.set(Self.home)
    await worker.waitUntilInvoked(count: 2)
    worker.release()
    await h.waitFor(job) { $0.isWorkCompleted }
  }
}
