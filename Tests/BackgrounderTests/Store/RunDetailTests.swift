import Foundation
import GRDB
import Testing

@testable import Backgrounder

/// `run.conditions` and `run.outputTail` (migration `i29-run-detail`) and `run.stop` (migration
/// `run-stop-signal`): their words, their bound, and that a run record keeps them in the store.
@Suite(.timeLimit(.minutes(3)))
struct RunDetailTests {
  private let t0 = WallInstant(nanosecondsSince1970: 1_700_000_000_000_000_000)

  @Test func theConditionsInWords() {
    let power = PowerConditions(isCharging: true, isBatteryNotLow: true)
    #expect(
      RunConditions.text(
        network: NetworkConditions(
          isReachable: true, primaryLink: "wlan0", connectivity: .full, primarySSID: "Home"),
        power: power)
        == "wlan0 (Wi-Fi \"Home\"), unmetered, internet full; charging, battery not low")
    #expect(
      RunConditions.text(
        network: NetworkConditions(isReachable: true, isDataMetered: true, primaryLink: "usb0"),
        power: PowerConditions(isCharging: false, isBatteryNotLow: false))
        == "usb0, metered, internet unknown; on battery, battery low")
    #expect(
      RunConditions.text(
        network: NetworkConditions(isReachable: false),
        power: PowerConditions(isCharging: false, isBatteryNotLow: false, isKnown: false))
        == "offline; power unknown")
  }

  @Test func theOutputTailKeepsTheLast4KiBAtACharacter() {
    #expect(RunDetail.bounded("short\ntail") == "short\ntail")
    let long = String(repeating: "a", count: 5000) + "é" + String(repeating: "b", count: 4095)
    let bounded = RunDetail.bounded(long)
    // The last 4096 bytes start inside "é" (2 bytes): the tail starts after it.
    #expect(bounded.utf8.count == 4095 && bounded.allSatisfy { $0 == "b" })
    let whole = RunDetail.bounded(String(long.dropLast()))
    #expect(whole.utf8.count == 4096 && whole.hasPrefix("é"), "a character that fits is kept")
    #expect(RunDetail.bounded(String(repeating: "x", count: 4097)).utf8.count == 4096)
  }

  @Test("a run record keeps its conditions, output tail and stop; old rows read as nil")
  func storedWithTheRun() throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("store.sqlite").path
    let taskId = id("dev.example.detail")
    let row = TaskRow(
      request: .periodic(WorkRequest.Periodic(taskId: taskId, interval: .seconds(3600))),
      input: Data(), now: t0)
    let store = try TaskStore.open(path: path, durability: .full, historyLimit: 5)
    defer { try? store.close() }
    try store.pool.write { db in
      try TaskStore.apply(
        [
          .upsert(row),
          .appendRun(
            RunRow(
              taskId: taskId, attempt: 0, startedAt: t0, endedAt: t0.advanced(by: .seconds(1)),
              outcome: "failure", reason: "exit status 1")),
          .appendRun(
            RunRow(
              taskId: taskId, attempt: 0, startedAt: t0, endedAt: t0.advanced(by: .seconds(2)),
              outcome: "success", reason: nil,
              conditions: "eth0, unmetered, internet full; "
                + "power unknown", outputTail: "one\ntwo")),
          .appendRun(
            RunRow(
              taskId: taskId, attempt: 0, startedAt: t0, endedAt: t0.advanced(by: .seconds(3)),
              outcome: "expired", reason: "budget of 1s expired", stop: "stopped with SIGINT")),
        ], in: db, historyLimit: 5)
    }
    let runs = try #require(try TaskStoreReader(path: path).task(taskId)?.recentRuns)
    #expect(
      runs.map(\.conditions) == [nil, "eth0, unmetered, internet full; power unknown", nil])
    #expect(runs.map(\.outputTail) == [nil, "one\ntwo", nil])
    #expect(runs.map(\.stop) == ["stopped with SIGINT", nil, nil])
  }
}
