// Runs the scheduler with fake condition sources: a job that needs the network waits while
// offline and runs once the fake network comes up.
import Backgrounder
import BackgrounderTesting
import Foundation

let directory = FileManager.default.temporaryDirectory
  .appendingPathComponent("core-smoke-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }

let clock = ManualClock()
let network = FakeNetworkSource(.offline)
let backgrounder = Backgrounder(
  configuration: .init(
    storePath: directory.appendingPathComponent("store.sqlite").path, clock: clock,
    network: network, power: FakePowerSource(.externalPower)))
let taskId = try TaskId("dev.example.core-smoke")
try backgrounder.register(taskId) { ClosureWorker { _ in .success } }
let recorder = EventRecorder(backgrounder)
try await backgrounder.start()

let outcome = await backgrounder.schedule(
  WorkRequest.OneTime(taskId: taskId, constraints: WorkConstraints(networkRequired: .any)))
guard outcome == .scheduled else { fatalError("schedule: \(outcome)") }
await clock.waitForSleepers(until: clock.date.addingTimeInterval(5))
let waiting = backgrounder.scheduled().first { $0.taskId == taskId }
guard waiting?.pendingPredicates == [.networkRequired(.any)] else {
  fatalError("expected the job to wait for the network, got \(String(describing: waiting))")
}

network.set(.unmetered)
let completed = await recorder.wait { event in
  if case .workCompleted(_, .success, _) = event.kind { true } else { false }
}
await backgrounder.shutdown()
print("core smoke test passed: \(completed.count) run, no live condition sources linked")
