import Broadcasting
import Locking
import Logging
import ServiceLifecycle

/// The live power probe: reads `ROOT/class/power_supply` and publishes ``PowerStatus`` changes.
///
/// It reads the tree when created (so ``status`` is meaningful at once) and at the start of
/// ``run()``, again on every kernel uevent with `SUBSYSTEM=power_supply`, and — only while on
/// battery (``PowerStatus/charging`` is `false`) — every `batteryRereadInterval`, because
/// capacity can change without an event. On external power no timer runs.
public final class PowerProbe: Service, Sendable {
  private let reader: PowerSupplyReader
  private let logger: Logger
  private let batteryRereadInterval: Duration
  private let sleep: @Sendable (Duration) async throws -> Void
  private let uevents: (any UeventSource)?
  private let state: Lock<State>

  private struct State {
    var model = PowerModel()
    var status: PowerStatus
    var counters = PowerProbeCounters()
    /// Replays the last *published* status: one read but not yet published is not handed to a
    /// new subscriber ahead of its publication (which would give that subscriber it twice).
    var broadcaster: Broadcaster<PowerStatus>
  }

  private enum Trigger {
    case start
    case uevent
    case overflow
    case batteryTimer
  }

  /// Creates a probe and reads the tree once.
  /// - Parameters:
  ///   - sysfsRoot: The sysfs mount point, or a fixture tree with `class/power_supply` inside.
  ///   - logger: Where problems (unparseable attributes, socket errors) are reported.
  ///   - batteryRereadInterval: How often to re-read while on battery.
  ///   - clock: The clock for the battery re-read timer (inject a manual clock in tests).
  ///   - uevents: The uevent source; `nil` opens a ``NetlinkUeventSocket`` filtered on
  ///     ``subsystem`` in ``run()``.
  public init(
    sysfsRoot: String = "/sys",
    logger: Logger,
    batteryRereadInterval: Duration = .seconds(60),
    clock: some Clock<Duration> = ContinuousClock(),
    uevents: (any UeventSource)? = nil
  ) {
    self.reader = PowerSupplyReader(sysfsRoot: sysfsRoot)
    self.logger = logger
    self.batteryRereadInterval = batteryRereadInterval
    self.sleep = { duration in try await clock.sleep(for: duration) }
    self.uevents = uevents
    var model = PowerModel()
    let status = Self.evaluate(reader, &model)
    self.state = Lock(State(model: model, status: status, broadcaster: Broadcaster(latest: status)))
    if !status.problems.isEmpty {
      logger.warning(
        "power supply attributes unreadable or unparseable",
        metadata: ["problems": .array(status.problems.map { .string($0) })])
    }
  }

  /// The uevent subsystem the probe reads; a socket made for it should filter on it
  /// (``NetlinkUeventSocket/init(senderPolicy:subsystem:eventLoop:)``).
  public static let subsystem = "power_supply"

  /// The latest status.
  public var status: PowerStatus { state.withLock { $0.status } }

  /// What the probe has done so far.
  public var counters: PowerProbeCounters { state.withLock { $0.counters } }

  /// A new, independent subscription: first the status last published (the one read at
  /// creation until a change is), then each change (equal statuses are not repeated). Ends when
  /// ``run()`` returns or the consumer stops.
  public func statusUpdates() -> AsyncStream<PowerStatus> {
    state.withLock { state in
      state.broadcaster.subscribe { [weak self] id in
        self?.state.withLock { $0.broadcaster.unsubscribe(id) }
      }
    }
  }

  /// Watches until cancelled or a graceful shutdown; then ends every ``statusUpdates()`` stream.
  public func run() async throws {
    defer {
      for stream in state.withLock({ $0.broadcaster.finish() }) { stream.finish() }
    }
    await cancelWhenGracefulShutdown { await self.monitor() }
  }

  private func monitor() async {
    // Every trigger means "re-read everything", so pending triggers collapse into one.
    let (triggers, trigger) = AsyncStream<Trigger>.makeStream(bufferingPolicy: .bufferingNewest(1))
    var timer: Task<Void, Never>?
    defer { timer?.cancel() }
    await withDiscardingTaskGroup { group in
      group.addTask { await self.pumpUevents(into: trigger) }
      trigger.yield(.start)
      for await reason in triggers {
        let (status, changed) = reread(timer: reason == .batteryTimer)
        if status.charging {
          timer?.cancel()
          timer = nil
        } else if timer == nil {
          timer = startBatteryTimer(trigger)
        }
        if changed { publish(status) }
      }
      group.cancelAll()
    }
  }

  private func startBatteryTimer(_ trigger: AsyncStream<Trigger>.Continuation) -> Task<Void, Never>
  {
    Task { [sleep, batteryRereadInterval] in
      while true {
        do { try await sleep(batteryRereadInterval) } catch { return }
        trigger.yield(.batteryTimer)
      }
    }
  }

  private func pumpUevents(into trigger: AsyncStream<Trigger>.Continuation) async {
    let inputs: AsyncThrowingStream<UeventInput, any Error>
    do {
      let source = try uevents ?? NetlinkUeventSocket(subsystem: Self.subsystem)
      inputs = try source.inputs()
    } catch {
      logger.error(
        "cannot open the uevent socket; power changes are seen only by the battery re-read",
        metadata: ["error": "\(error)"])
      return
    }
    do {
      for try await input in inputs {
        if let reason = handle(input) { trigger.yield(reason) }
      }
    } catch {
      logger.error(
        "uevent source failed; power changes are seen only by the battery re-read",
        metadata: ["error": "\(error)"])
    }
  }

  /// Classifies one input and counts it; returns the trigger it causes, if any.
  private func handle(_ input: UeventInput) -> Trigger? {
    guard case .datagram(let bytes) = input else {
      state.withLock { $0.counters.overflows += 1 }
      logger.warning("uevents were lost; re-reading power supplies")
      return .overflow
    }
    let message: UeventMessage
    do {
      message = try UeventParser.parse(bytes)
    } catch {
      state.withLock {
        $0.counters.uevents += 1
        $0.counters.malformedUevents += 1
      }
      logger.warning("skipping malformed uevent", metadata: ["error": "\(error)"])
      return nil
    }
    return state.withLock { state in
      state.counters.uevents += 1
      switch message {
      case .udevMonitor:
        state.counters.udevMessages += 1
        return nil
      case .kernel(let event) where event.subsystem == Self.subsystem:
        state.counters.powerSupplyUevents += 1
        return .uevent
      case .kernel:
        state.counters.otherUevents += 1
        return nil
      }
    }
  }

  /// Reads and evaluates the tree; stores the status. Returns it and whether it changed.
  private func reread(timer: Bool) -> (PowerStatus, changed: Bool) {
    var model = state.withLock { $0.model }
    let status = Self.evaluate(reader, &model)
    let (changed, problemsChanged) = state.withLock { state in
      state.model = model
      state.counters.reads += 1
      if timer { state.counters.timerReads += 1 }
      let changed = status != state.status
      let problemsChanged = status.problems != state.status.problems
      state.status = status
      return (changed, problemsChanged)
    }
    if problemsChanged && !status.problems.isEmpty {
      logger.warning(
        "power supply attributes unreadable or unparseable",
        metadata: ["problems": .array(status.problems.map { .string($0) })])
    }
    return (status, changed)
  }

  private func publish(_ status: PowerStatus) {
    // Yield after releasing the lock: a subscriber's termination handler takes it from inside
    // that subscriber task's own lock, which resuming the subscriber needs too.
    let recipients = state.withLock { state in
      state.counters.published += 1
      return state.broadcaster.publish(status)
    }
    for recipient in recipients { recipient.deliver(status) }
    logger.debug(
      "power status changed",
      metadata: [
        "externalPower": "\(status.externalPower)", "charging": "\(status.charging)",
        "batteryPercent": "\(status.batteryPercent.map { "\($0)" } ?? "null")",
        "batteryLow": "\(status.batteryLow)",
      ])
  }

  private static func evaluate(_ reader: PowerSupplyReader, _ model: inout PowerModel)
    -> PowerStatus
  {
    do {
      return model.update(try reader.read())
    } catch {
      return model.unreadable(reason: error.description)
    }
  }
}
