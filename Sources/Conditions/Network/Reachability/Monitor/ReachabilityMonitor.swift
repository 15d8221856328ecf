import Broadcasting
import Locking
import Logging
import Netlink
import ServiceLifecycle
import SystemCalls

/// Watches rtnetlink (links, IPv4/IPv6 addresses, default routes, policy rules and nexthop
/// objects) and publishes ``NetworkStatus`` changes. A dedicated thread sleeps in a receive on
/// the netlink socket until the kernel sends something: no wakeups while nothing changes.
///
/// `run()` dumps the current state, then follows events until cancelled or until graceful
/// shutdown; it re-dumps after a receive-buffer overrun and after an address is removed (the
/// kernel drops routes without telling). When a datagram changed the inputs it asks the kernel
/// (`RTM_GETROUTE`, a lookup only, no packet sent) where traffic to the probe destinations
/// leaves, and publishes once the answer is in, only when the status changed. Messages not
/// sent by the kernel are dropped; malformed ones are counted, logged and skipped.
public final class ReachabilityMonitor: Service, Sendable {
  private struct State: Sendable {
    var engine: ReachabilityEngine
    var broadcaster = Broadcaster<NetworkStatus>()
    var hasStarted = false
  }

  private let configuration: ReachabilityConfiguration
  private let logger: Logger
  private let capture: NetlinkCapture?
  private let state: Lock<State>
  /// Held while a status is decided and delivered (taken before `state`), so that every
  /// subscriber and observer sees the statuses in the order they were published, whichever
  /// thread published them (the netlink thread, a hint source's).
  private let delivery = Lock(())

  /// Creates a monitor; nothing happens until ``run()``. `capture` records every datagram.
  public init(
    configuration: ReachabilityConfiguration, logger: Logger, capture: NetlinkCapture? = nil
  ) {
    self.configuration = configuration
    self.logger = logger
    self.capture = capture
    state = Lock(State(engine: ReachabilityEngine(configuration: configuration, live: true)))
  }

  /// The latest status (``NetworkStatus/unknown``-like until the first dump completed).
  public var status: NetworkStatus { state.withLock { $0.engine.cachedStatus() } }

  /// A new independent stream: its first element is the current status (delivered once the
  /// initial dump completed), then one element per change. Ends when ``run()`` returns.
  public func statusUpdates() -> AsyncStream<NetworkStatus> {
    state.withLock { state in
      state.broadcaster.subscribe { [weak self] id in
        self?.state.withLock { $0.broadcaster.unsubscribe(id) }
      }
    }
  }

  /// Calls `observer` on the publishing thread with the current status (if there is one yet)
  /// and then with every change, in order, until ``run()`` returns: no hand-off to another
  /// thread or task. Changes from rtnetlink are delivered on the monitor's netlink thread, hint
  /// changes on the thread that called ``updateHints(_:)``. `observer` must return promptly and
  /// must not call back into the monitor: no netlink message is handled while it runs (the
  /// kernel queues them; after an overrun the monitor dumps again).
  public func observeStatus(_ observer: @escaping @Sendable (NetworkStatus) -> Void) {
    delivery.withLock { _ in
      let current = state.withLock { state in
        state.broadcaster.observe(observer)
        return state.broadcaster.latest
      }
      if let current { observer(current) }
    }
  }

  /// The hints from NetworkManager, nl80211 and the connectivity probe, as last updated.
  public var hints: LinkHints { state.withLock { $0.engine.model.hints } }

  /// Link-hint input path: applies `change` (run under the monitor's lock: no calls back into
  /// the monitor) and publishes the status if it changed. Safe from any thread.
  public func updateHints(_ change: (inout LinkHints) -> Void) {
    delivery.withLock { _ in
      let published = state.withLock { state -> Publication? in
        state.engine.updateHints(change)
        guard let status = state.engine.takePublishableStatus() else { return nil }
        return Publication(status: status, recipients: state.broadcaster.publish(status))
      }
      published?.deliver()
    }
  }

  /// The metered overrides the monitor classifies with (from its configuration until
  /// replaced).
  public var overrides: InterfaceOverrides { state.withLock { $0.engine.model.overrides } }

  /// Replaces the metered overrides (interface and SSID globs), as a config reload does, and
  /// publishes the status if it changed: every subscriber sees the new verdict at once. Safe
  /// from any thread.
  public func updateOverrides(_ overrides: InterfaceOverrides) {
    delivery.withLock { _ in
      let published = state.withLock { state -> Publication? in
        state.engine.setOverrides(overrides)
        guard let status = state.engine.takePublishableStatus() else { return nil }
        return Publication(status: status, recipients: state.broadcaster.publish(status))
      }
      published?.deliver()
    }
  }

  /// Monitors until the task is cancelled or graceful shutdown is triggered. Throws when the
  /// socket cannot be opened or fails, when a configured egress probe destination is not an IP
  /// address (``InvalidProbeDestination``), or when called a second time.
  public func run() async throws {
    try claimStart()
    defer {
      for stream in state.withLock({ $0.broadcaster.finish() }) { stream.finish() }
    }
    let socket = try openSocket()
    let loop = NetlinkEventLoop(socket: socket)
    try await withGracefulShutdownHandler {
      try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation {
          (continuation: CheckedContinuation<Void, any Error>) in
          do {
            try loop.start(
              handler: { [self] reception in try handle(reception, socket: socket) },
              onExit: { error in
                socket.close()
                if let error { continuation.resume(throwing: error) } else { continuation.resume() }
              })
          } catch {
            socket.close()
            continuation.resume(throwing: error)
          }
        }
      } onCancel: {
        loop.stop()
      }
    } onGracefulShutdown: {
      loop.stop()
    }
  }

  /// Reads the network once, on the calling thread, and returns the first status: the dumps
  /// and the egress lookups, then the socket is closed; no thread is started (a one-shot
  /// `status`). Hint changes (``updateHints(_:)``) still apply to it, and ``status`` answers
  /// with them. Throws as ``run()`` does; the monitor cannot ``run()`` after it.
  public func snapshot() throws -> NetworkStatus {
    try claimStart()
    // Dumps and lookups only: no notification is waited for.
    let socket = try openSocket(notifications: false)
    defer { socket.close() }
    var next = try handle(nil, socket: socket)
    while true {
      if next == .wait, let status = state.withLock({ $0.broadcaster.latest }) { return status }
      next = try handle(try socket.receive(waiting: next == .wait), socket: socket)
    }
  }

  /// Checks the probe destinations and marks the monitor started (once: ``run()`` or
  /// ``snapshot()``).
  private func claimStart() throws {
    _ = try EgressProbeDestinations(addresses: configuration.egressProbeDestinations)
    try state.withLock { state in
      guard !state.hasStarted else { throw MonitorError.alreadyRunning }
      state.hasStarted = true
    }
  }

  /// The netlink socket, filtered for the probe destinations, whose port the engine knows;
  /// subscribed to nothing without `notifications`.
  private func openSocket(notifications: Bool = true) throws -> RouteNetlinkSocket {
    let probe = state.withLock { $0.engine.model.probeDestinations }
    let socket = try RouteNetlinkSocket.open(
      networkNamespacePath: configuration.networkNamespacePath,
      probeDestinations: [probe.ipv4, probe.ipv6], notifications: notifications)
    state.withLock { $0.engine.localPort = socket.portID }
    return socket
  }

  /// Runs on the event-loop thread for each reception (`nil`: before the first wait). A batch
  /// ends, and changes are published, at `.wouldBlock` or, sooner, with the reply to the last
  /// lookup in flight: the kernel queued it behind everything it had sent before, so nothing
  /// of the batch is left to read (no last empty read, no second wait). Requests go out as
  /// soon as they are due: the kernel answers a lookup, and starts a dump, before `send`
  /// returns, so the loop reads on without waiting.
  private func handle(_ reception: RouteNetlinkSocket.Reception?, socket: RouteNetlinkSocket)
    throws -> NetlinkEventLoop.Next
  {
    try delivery.withLock { _ in try handleInOrder(reception, socket: socket) }
  }

  private func handleInOrder(
    _ reception: RouteNetlinkSocket.Reception?, socket: RouteNetlinkSocket
  ) throws -> NetlinkEventLoop.Next {
    var warnings: [String] = []
    var published: Publication?
    let next = try state.withLock { state -> NetlinkEventLoop.Next in
      var batchIsComplete = true
      switch reception {
      case .datagram(let bytes, let truncated):
        if truncated { warnings.append("netlink datagram longer than the receive buffer") }
        let ingested = state.engine.ingest(datagram: bytes)
        try capture?.record(bytes, outgoing: false, facts: ingested.lookedUpFacts)
        if let failure = ingested.failure { throw failure }
        warnings += ingested.warnings
        batchIsComplete = state.engine.takeAnsweredLookups()
      case .overrun:
        logger.notice("netlink receive buffer overrun: events were lost, dumping again")
        state.engine.recoverFromOverrun()
        return .read
      case .foreignSender(let port):
        logger.debug(
          "dropped a netlink datagram not sent by the kernel", metadata: ["port": "\(port)"])
        return .read
      case nil:
        state.engine.requestDumps(ObjectKind.allCases)
      case .wouldBlock:
        state.engine.socketDrained()
      }
      if let request = state.engine.nextRequest() {
        try capture?.record(request, outgoing: true)
        try socket.send(request)
        return .read
      }
      guard batchIsComplete else { return .read }
      if let status = state.engine.takePublishableStatus() {
        published = Publication(status: status, recipients: state.broadcaster.publish(status))
      }
      return .wait
    }
    published?.deliver()
    for warning in warnings { logger.warning("\(warning)") }
    return next
  }

  /// A status decided under the state lock, delivered after it.
  private struct Publication {
    var status: NetworkStatus
    var recipients: [Broadcaster<NetworkStatus>.Recipient]

    func deliver() {
      for recipient in recipients { recipient.deliver(status) }
    }
  }
}

/// Why ``ReachabilityMonitor/run()`` did not start or stopped.
public enum MonitorError: Error, Sendable, Equatable, CustomStringConvertible {
  /// `run()` was called on a monitor that already ran.
  case alreadyRunning
  /// The kernel refused one kind of dump `times` times in a row, the last with `error` (its
  /// `operation` names the dump): the network cannot be known.
  case dumpRefused(SystemCallError, times: Int)

  public var description: String {
    switch self {
    case .alreadyRunning:
      "the reachability monitor already ran"
    case .dumpRefused(let error, let times):
      "the kernel refused a dump \(times) times in a row: \(error)"
    }
  }
}
