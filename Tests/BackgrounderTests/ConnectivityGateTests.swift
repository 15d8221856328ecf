import Backgrounder
import BackgrounderTesting
import Foundation
import Testing

/// Known-broken connectivity (captive portal, limited, none) holds work that needs the
/// network; unknown connectivity trusts the routes.
@Suite(.stopsRuntimes, .timeLimit(.minutes(3)))
struct ConnectivityGateTests {
  static func network(_ connectivity: InternetConnectivity, metered: Bool = false)
    -> NetworkConditions
  {
    NetworkConditions(
      isReachable: true, isDataMetered: metered, primaryLink: "wlp2s0", connectivity: connectivity)
  }

  @Test func requirementsTreatKnownBrokenConnectivityAsUnmet() {
    for connectivity in [InternetConnectivity.portal, .limited, .none] {
      #expect(!NetworkRequirement.any.isSatisfied(by: Self.network(connectivity)))
      #expect(!NetworkRequirement.unmetered.isSatisfied(by: Self.network(connectivity)))
      #expect(NetworkRequirement.none.isSatisfied(by: Self.network(connectivity)))
    }
    for connectivity in [InternetConnectivity.unknown, .full] {
      #expect(NetworkRequirement.any.isSatisfied(by: Self.network(connectivity)))
      #expect(NetworkRequirement.unmetered.isSatisfied(by: Self.network(connectivity)))
    }
    #expect(!NetworkRequirement.unmetered.isSatisfied(by: Self.network(.full, metered: true)))
  }

  @Test("a job behind a captive portal waits for working internet, then runs when it is full")
  func portalHoldsThenFullReleases() async throws {
    let job = id("test.gate.portal")
    let worker = RecordingWorker(.success)
    let h = try await Harness.start(workers: [job: worker], network: Self.network(.portal))

    #expect(
      await h.backgrounder.schedule(
        WorkRequest.OneTime(taskId: job, constraints: .init(networkRequired: .any)))
        == .scheduled)
    await h.clock.waitForSleepers(until: h.at(5))
    let waiting = try #require(h.task(job))
    #expect(waiting.state == .blocked)
    #expect(waiting.pendingPredicates == [.workingInternet(.portal)])
    #expect(worker.invocations == 0)

    h.network.set(Self.network(.full))
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(worker.invocations == 1)
  }

  @Test("a deferred job's predicate follows the connectivity: limited, then no network")
  func predicateFollowsTheConnectivity() async throws {
    let job = id("test.gate.limited")
    let worker = RecordingWorker(.success)
    let h = try await Harness.start(workers: [job: worker], network: Self.network(.limited))

    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: job, constraints: .init(networkRequired: .unmetered)))
    await h.clock.waitForSleepers(until: h.at(5))
    h.clock.advance(by: .seconds(5))
    await h.waitFor(job) { $0 == .attemptDeferred(reason: .reachabilityTimeout) }
    #expect(try #require(h.task(job)).pendingPredicates.contains(.workingInternet(.limited)))
    #expect(
      try #require(try await h.status(job)).pendingPredicates.contains(.workingInternet(.limited)))

    h.network.set(.offline)
    // The change reaches the dispatcher through its condition stream: wait for it.
    var offline = try #require(h.task(job))
    for _ in 0..<200 where !offline.pendingPredicates.contains(.networkRequired(.unmetered)) {
      try await Task.sleep(for: .milliseconds(5))
      offline = try #require(h.task(job))
    }
    #expect(offline.pendingPredicates.contains(.networkRequired(.unmetered)))
    #expect(!offline.pendingPredicates.contains(.workingInternet(.limited)))
    // What the store keeps (read by `backgrounder status`) follows too.
    let stored = try #require(try await h.status(job))
    #expect(stored.pendingPredicates.contains(.networkRequired(.unmetered)))
    #expect(!stored.pendingPredicates.contains(.workingInternet(.limited)))
    #expect(worker.invocations == 0)
  }

  @Test func workingInternetPredicateEncodesItsConnectivity() throws {
    let encoded = try JSONEncoder().encode(PendingPredicate.workingInternet(.portal))
    let json = try #require(String(data: encoded, encoding: .utf8))
    #expect(json.contains("\"kind\":\"workingInternet\""))
    #expect(json.contains("\"connectivity\":\"portal\""))
  }
}
