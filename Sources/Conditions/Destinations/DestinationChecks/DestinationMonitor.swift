import Backgrounder
import Broadcasting
import EventLoops
import Locking
import Logging
import Reachability
import ServiceLifecycle

/// The `requires-reachable` destinations, checked by TCP connects over the primary link: after
/// each network change the ``ReachabilityMonitor`` reports (primary link, its SSID, whether it
/// is usable), and with backoff while a destination is unreachable (``DestinationSchedule``).
/// The sockets and the backoff timer are watched by the host's shared ``EventLoop``; a
/// destination that is reachable costs nothing until the network changes.
///
/// Unknown is not permission: a destination not checked yet on the current network is not
/// reachable.
public final class DestinationMonitor: DestinationConditionSource, Service, Sendable {
  private struct State {
    var schedule = DestinationSchedule()
    var timer: EventLoop.Timer?
    /// ``run()`` ended: checks still under way are dropped and nothing is scheduled again.
    var ended = false
  }

  private let network: ReachabilityMonitor
  private let eventLoop: EventLoop?
  private let timeout: Duration
  private let logger: Logger
  /// Touched on the loop's thread only (the lock makes the class `Sendable`).
  private let state = Lock(State())
  private let broadcast = Lock(Broadcaster<DestinationConditions>(latest: .unconfigured))
  /// The loop while ``run()`` runs.
  private let running = Lock<EventLoop?>(nil)

  /// Checks destinations on the network `network` reports, with sockets on `eventLoop` (a
  /// host's loop) or on the process's shared one (`EventLoop.shared()`); a connect that has
  /// not answered after `timeout` is "timed out".
  public init(
    network: ReachabilityMonitor, eventLoop: EventLoop? = nil, timeout: Duration = .seconds(3),
    logger: Logger
  ) {
    self.network = network
    self.eventLoop = eventLoop
    self.timeout = timeout
    self.logger = logger
  }

  public var current: DestinationConditions {
    broadcast.withLock { $0.latest } ?? .unconfigured
  }

  public func updates() -> AsyncStream<DestinationConditions> {
    broadcast.withLock { state in
      state.subscribe { [weak self] id in self?.broadcast.withLock { $0.unsubscribe(id) } }
    }
  }

  /// The destinations the jobs require (`requires-reachable` texts); new ones are checked at
  /// once, ones no longer required are forgotten.
  public func watch(_ destinations: Set<String>) {
    let loop = running.withLock { $0 } ?? eventLoop
    guard let loop else {
      state.withLock { _ = $0.schedule.setDestinations(destinations, now: .now) }
      return
    }
    loop.execute { [self] in
      apply(loop) { $0.setDestinations(destinations, now: .now) }
    }
  }

  /// Follows the network until cancelled or a graceful shutdown.
  public func run() async throws {
    let loop = try eventLoop ?? EventLoop.shared()
    running.withLock { $0 = loop }
    defer {
      running.withLock { $0 = nil }
      let streams = broadcast.withLock { state in
        _ = state.publish(.unconfigured)
        return state.finish()
      }
      for stream in streams { stream.finish() }
    }
    // Destinations set before the loop ran are checked once the network answers.
    let statuses = network.statusUpdates()
    // A graceful shutdown cancels the loop below, which ends the subscription.
    await cancelWhenGracefulShutdown {
      for await status in statuses {
        // Until the hint sources answered, the SSID is not known: the network is not either.
        guard status.isSettled else { continue }
        let key = Self.key(status)
        loop.execute { [self] in apply(loop) { $0.networkChanged(to: key, now: .now) } }
      }
    }
    await loop.submit { [self] in
      state.withLock { state in
        if let timer = state.timer { loop.cancel(timer) }
        state.timer = nil
        state.ended = true
      }
    }
  }

  /// The network a status describes, as far as destinations are concerned.
  static func key(_ status: NetworkStatus) -> NetworkKey {
    let link = status.links.first { $0.name == status.primary }
    return NetworkKey(
      primaryLink: status.isReachable ? status.primary : nil, ssid: link?.ssid,
      addresses: link.map { ["\($0.index)"] } ?? [])
  }

  /// Runs one step of the schedule on the loop and carries out its decision.
  private func apply(
    _ loop: EventLoop, _ step: (inout DestinationSchedule) -> DestinationSchedule.Decision
  ) {
    let stepped = state.withLock {
      state -> (DestinationSchedule.Decision, UInt64, String?)? in
      guard !state.ended else { return nil }
      let decision = step(&state.schedule)
      if let timer = state.timer { loop.cancel(timer) }
      state.timer = decision.nextWake.map { deadline in
        loop.schedule(at: deadline) { [self] in
          apply(loop) { $0.wake(now: .now) }
        }
      }
      return (decision, state.schedule.generation, state.schedule.network?.primaryLink)
    }
    guard let (decision, generation, link) = stepped else { return }
    if let conditions = decision.publish { publish(conditions) }
    for destination in decision.probes {
      DestinationConnect.check(destination, interface: link, timeout: timeout, loop: loop) {
        [self] answer in
        // A new answer on this network goes to the journal (what `status` shows, with when it
        // changed); the same answer again, on backoff, only at debug.
        var changed = false
        apply(loop) { schedule in
          changed =
            schedule.generation == generation && schedule.states[destination] != answer
          return schedule.checked(destination, answer, generation: generation, now: .now)
        }
        logger.log(
          level: changed ? .info : .debug, "destination checked",
          metadata: [
            "destination": "\(destination)", "link": "\(link ?? "none")",
            "state": "\(Self.word(answer))",
          ])
      }
    }
  }

  /// `reachable`, or the failure's raw value (`refused`, `timedOut`, …).
  static func word(_ state: DestinationState) -> String {
    switch state {
    case .reachable: "reachable"
    case .unreachable(let failure): failure.rawValue
    }
  }

  private func publish(_ conditions: DestinationConditions) {
    let recipients = broadcast.withLock { $0.publish(conditions) }
    for recipient in recipients { recipient.deliver(conditions) }
  }
}

extension DestinationMonitor {
  /// Whether `destination`'s host is an address or resolves to one now (blocks on
  /// `getaddrinfo`: for `doctor`, never on the event loop).
  public static func resolves(_ destination: Destination) -> Bool {
    DestinationConnect.numeric(destination) != nil
      || !DestinationConnect.resolve(destination).isEmpty
  }
}
