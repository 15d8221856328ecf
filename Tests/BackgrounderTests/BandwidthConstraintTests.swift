import Backgrounder
import BackgrounderTesting
import Foundation
import TestSupport
import Testing

/// ``WorkConstraints/bandwidth`` through the runtime, with the test kit's fake network: each run
/// is told the cap for the network it starts on (``WorkContext/bandwidth``), the metered rate on
/// a metered primary link.
@Suite(.stopsRuntimes, .timeLimit(.minutes(3)))
struct BandwidthConstraintTests {
  static let cap = BandwidthCap(rate: 2_000_000, meteredRate: 500_000, required: true)

  @Test("a run is told the cap for the network it starts on: metered rate on a metered link")
  func eachRunGetsTheCapOfItsNetwork() async throws {
    let (onCellular, onEthernet, uncapped) = (
      id("test.bandwidth.cellular"), id("test.bandwidth.ethernet"), id("test.bandwidth.none")
    )
    let worker = RecordingWorker(.success)
    let h = try await Harness.start(
      workers: [onCellular: worker, onEthernet: worker, uncapped: worker],
      network: NetworkConditions(isReachable: true, isDataMetered: true, primaryLink: "wwan0"))
    let constraints = WorkConstraints(networkRequired: .any, bandwidth: Self.cap)
    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: onCellular, constraints: constraints))
    await h.waitFor(onCellular) { $0.isWorkCompleted }

    h.network.set(NetworkConditions(isReachable: true, isDataMetered: false, primaryLink: "eth0"))
    // The runtime reads the source's updates on a task of its own: a run scheduled before it
    // saw eth0 started on wwan0 (CI's AddressSanitizer run: [500_000, 500_000, nil]).
    #expect(await waitUntil { h.backgrounder.diagnostics().network.primaryLink == "eth0" })
    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: onEthernet, constraints: constraints))
    await h.waitFor(onEthernet) { $0.isWorkCompleted }
    _ = await h.backgrounder.schedule(WorkRequest.OneTime(taskId: uncapped))
    await h.waitFor(uncapped) { $0.isWorkCompleted }

    #expect(worker.contexts.map(\.taskId) == [onCellular, onEthernet, uncapped])
    #expect(worker.contexts.map(\.bandwidth) == [500_000, 2_000_000, nil])
    #expect(worker.contexts.map(\.bandwidthCap) == [Self.cap, Self.cap, nil])
  }

  @Test("the cap is kept with the task's constraints; constraints stored without it decode")
  func coding() throws {
    let constraints = WorkConstraints(networkRequired: .unmetered, bandwidth: Self.cap)
    let data = try JSONEncoder().encode(constraints)
    #expect(try JSONDecoder().decode(WorkConstraints.self, from: data) == constraints)
    let older = Data(
      #"{"networkRequired":"unmetered","requiresCharging":false,"requiresBatteryNotLow":false}"#
        .utf8)
    #expect(try JSONDecoder().decode(WorkConstraints.self, from: older).bandwidth == nil)
  }
}
