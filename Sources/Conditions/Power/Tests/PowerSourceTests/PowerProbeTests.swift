import Logging
import ServiceLifecycle
import TestSupport
import Testing

@testable import PowerSource

/// The live probe with an injected uevent source and a manual clock.
@Suite(.timeLimit(.minutes(3))) struct PowerProbeTests {
  private let logger = Logger(label: "PowerProbeTests") { _ in SwiftLogNoOpLogHandler() }

  private struct Harness {
    let scratch: ScratchTree
    let clock = ManualClock()
    let source = ReplayUeventSource()
    let probe: PowerProbe
    let task: Task<Void, any Error>

    init(_ scenario: String, logger: Logger) throws {
      scratch = try ScratchTree(copying: scenario)
      probe = PowerProbe(
        sysfsRoot: scratch.root, logger: logger, batteryRereadInterval: .seconds(60),
        clock: clock, uevents: source)
      task = Task { [probe] in try await probe.run() }
    }

    /// Waits for run()'s own start-up read, so later file edits cannot race it.
    func started() async {
      #expect(await waitUntil { probe.counters.reads >= 1 })
    }

    func plugCharger() throws {
      try scratch.set("AC", "online", "1")
      try scratch.set("BAT0", "status", "Charging")
      try source.replay("ac-online.bin")
    }

    func unplugCharger() throws {
      try scratch.set("AC", "online", "0")
      try scratch.set("BAT0", "status", "Discharging")
      try source.replay("ac-offline.bin")
    }

    func stop() async {
      task.cancel()
      _ = await task.result
      scratch.remove()
    }
  }

  @Test func chargerPluggedInPublishesANewStatus() async throws {
    let harness = try Harness("laptop-discharging", logger: logger)
    await harness.started()
    var updates = harness.probe.statusUpdates().makeAsyncIterator()
    let first = try #require(await updates.next())
    #expect(!first.charging)
    #expect(!first.externalPower)

    try harness.plugCharger()
    let plugged = try #require(await updates.next())
    #expect(plugged.externalPower)
    #expect(plugged.charging)
    #expect(harness.probe.status == plugged)
    #expect(harness.probe.counters.powerSupplyUevents == 1)

    try harness.unplugCharger()
    let unplugged = try #require(await updates.next())
    #expect(!unplugged.charging)
    await harness.stop()
  }

  @Test func slowRereadRunsOnlyWhileOnBattery() async throws {
    let harness = try Harness("laptop-discharging", logger: logger)
    await harness.started()
    var updates = harness.probe.statusUpdates().makeAsyncIterator()
    #expect(try #require(await updates.next()).batteryPercent == 32)

    // On battery: one timer sleeps; capacity drops without any uevent.
    await harness.clock.waitForSleepers(1)
    try harness.scratch.set("BAT0", "energy_now", "9000000")
    harness.clock.advance(by: .seconds(59))
    #expect(harness.probe.counters.timerReads == 0)
    harness.clock.advance(by: .seconds(1))
    let drained = try #require(await updates.next())
    #expect(drained.batteryPercent == 18)
    #expect(drained.batteryLow)
    #expect(harness.probe.counters.timerReads == 1)

    // On AC: the timer is gone, however long we wait.
    try harness.plugCharger()
    let plugged = try #require(await updates.next())
    #expect(plugged.charging)
    #expect(!plugged.batteryLow)
    #expect(harness.clock.sleeperCount == 0)
    harness.clock.advance(by: .seconds(3600))
    #expect(harness.clock.sleeperCount == 0)
    #expect(harness.probe.counters.timerReads == 1)

    // Back on battery: the timer comes back.
    try harness.unplugCharger()
    #expect(try #require(await updates.next()).charging == false)
    await harness.clock.waitForSleepers(1)
    await harness.stop()
  }

  @Test func onACFromTheStartNoTimerEverRuns() async throws {
    let harness = try Harness("laptop-charging", logger: logger)
    #expect(await waitUntil { harness.probe.counters.reads == 1 })
    harness.clock.advance(by: .seconds(7200))
    try harness.source.replay("battery-change.bin")
    #expect(await waitUntil { harness.probe.counters.reads == 2 })
    #expect(harness.clock.sleeperCount == 0)
    #expect(harness.probe.counters.timerReads == 0)
    await harness.stop()
  }

  @Test func onlyPowerSupplyUeventsTriggerAReread() async throws {
    let harness = try Harness("laptop-discharging", logger: logger)
    await harness.started()
    var updates = harness.probe.statusUpdates().makeAsyncIterator()
    _ = await updates.next()

    try harness.scratch.set("AC", "online", "1")
    for file in [
      "kernel-net-add-veth.bin", "udev-monitor-power.bin", "malformed-no-at.bin",
      "malformed-field.bin", "malformed-utf8.bin", "empty.bin",
    ] {
      try harness.source.replay(file)
    }
    try harness.source.replay("ac-online.bin")
    let next = try #require(await updates.next())
    #expect(next.externalPower, "only the power_supply uevent (last) caused this read")
    let counters = harness.probe.counters
    #expect(counters.uevents == 7)
    #expect(counters.otherUevents == 1)
    #expect(counters.udevMessages == 1)
    #expect(counters.malformedUevents == 4)
    #expect(counters.powerSupplyUevents == 1)
    #expect(counters.reads == 2)
    await harness.stop()
  }

  @Test func equalStatusesAreNotRepeatedAndSubscribersAreIndependent() async throws {
    let harness = try Harness("laptop-discharging", logger: logger)
    await harness.started()
    var first = harness.probe.statusUpdates().makeAsyncIterator()
    var second = harness.probe.statusUpdates().makeAsyncIterator()
    let initial = try #require(await first.next())
    #expect(await second.next() == initial)

    try harness.source.replay("battery-change.bin")  // nothing changed on disk
    #expect(await waitUntil { harness.probe.counters.reads == 2 })
    try harness.plugCharger()
    let firstNext = try #require(await first.next())
    let secondNext = try #require(await second.next())
    #expect(firstNext.charging)
    #expect(secondNext == firstNext)
    #expect(harness.probe.counters.published == 1)
    await harness.stop()
  }

  @Test func overflowTriggersAReread() async throws {
    let harness = try Harness("laptop-discharging", logger: logger)
    await harness.started()
    var updates = harness.probe.statusUpdates().makeAsyncIterator()
    _ = await updates.next()
    try harness.scratch.set("AC", "online", "1")
    harness.source.overflow()
    #expect(try #require(await updates.next()).externalPower)
    #expect(harness.probe.counters.overflows == 1)
    await harness.stop()
  }

  @Test func statusIsReadAtCreation() throws {
    let probe = PowerProbe(
      sysfsRoot: FixtureFiles.scenario("full-on-ac"), logger: logger, clock: ManualClock(),
      uevents: ReplayUeventSource())
    #expect(probe.status.batteryPercent == 100)
    #expect(probe.status.externalPower)
  }

  @Test func cancellationEndsRunAndEveryStream() async throws {
    let harness = try Harness("laptop-discharging", logger: logger)
    await harness.started()
    let updates = harness.probe.statusUpdates()
    await harness.clock.waitForSleepers(1)
    harness.task.cancel()
    try await harness.task.value
    var count = 0
    for await _ in updates { count += 1 }
    #expect(count == 1)
    #expect(harness.clock.sleeperCount == 0, "the battery timer is cancelled with run()")
    var late = harness.probe.statusUpdates().makeAsyncIterator()
    #expect(await late.next() != nil)
    #expect(await late.next() == nil)
    harness.scratch.remove()
  }

  @Test func gracefulShutdownEndsRun() async throws {
    let scratch = try ScratchTree(copying: "laptop-charging")
    defer { scratch.remove() }
    let probe = PowerProbe(
      sysfsRoot: scratch.root, logger: logger, clock: ManualClock(),
      uevents: ReplayUeventSource())
    let group = ServiceGroup(services: [probe], logger: logger)
    let running = Task { try await group.run() }
    #expect(await waitUntil { probe.counters.reads == 1 })
    await group.triggerGracefulShutdown()
    try await running.value
  }
}
