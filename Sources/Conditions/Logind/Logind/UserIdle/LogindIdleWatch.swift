import Backgrounder
import Broadcasting
import CSystemdBus
import DBus
import EventLoops
import Foundation
import Locking
import Logging
import ServiceLifecycle
import SystemCalls
import SystemPackage

/// The user's idle state for `requires-idle`: systemd-logind's `IdleHint` and
/// `IdleSinceHintMonotonic` on a bus connection of its own, read once when connecting and then
/// followed through logind's `PropertiesChanged` signals (no polling), served by the host's
/// event loop (or the process's shared one) while it runs as a `Service`. Signals count only when broadcast by the current owner of
/// `org.freedesktop.login1` (``BusSignals``); when logind leaves the bus the state is unknown
/// until it is back (and read again).
///
/// Unknown is not permission: without a system bus, without logind, or without an answer in
/// 2 s the conditions say why (``UserIdleConditions/unknown``) and jobs that require an idle
/// user wait.
public final class LogindIdleWatch: UserIdleConditionSource, Service, @unchecked Sendable {
  // @unchecked: `loop` is set before the connecting thread starts; `hint` and `firstSeen` are
  // set up on that thread before the event loop sees them (its `execute` hands them over);
  // `connection`, `pendingRead` and `stopped` are touched on the event loop's thread only;
  // `state` is locked.

  private let eventLoop: EventLoop?
  /// The loop serving the connection while ``run()`` runs.
  private var loop: EventLoop?
  /// ``run()`` ended (on the loop): a connection made after that is not served.
  private var stopped = false
  private let address: String?
  private let logger: Logger
  private let state = Lock(
    Broadcaster<UserIdleConditions>(
      latest: UserIdleConditions(idleSince: nil, unknown: "connecting to logind")))
  private var connection: BusConnection?
  private var hint = LogindIdleHint()
  /// When the hint was first seen idle without a time (logind always sends one).
  private var firstSeen = Date()
  /// The `GetAll` in flight after logind came (back) onto the bus.
  private var pendingRead: BusPendingCall?

  /// Follows logind on `address` (a bus address, or nil for the system bus:
  /// `DBUS_SYSTEM_BUS_ADDRESS` when set), served by `eventLoop` (nil: the process's shared
  /// loop) while ``run()`` runs.
  public init(eventLoop: EventLoop? = nil, address: String? = nil, logger: Logger) {
    self.eventLoop = eventLoop
    self.address = address
    self.logger = logger
  }

  public var current: UserIdleConditions {
    state.withLock { $0.latest } ?? .unconfigured
  }

  public func updates() -> AsyncStream<UserIdleConditions> {
    state.withLock { state in
      state.subscribe { [weak self] id in self?.state.withLock { $0.unsubscribe(id) } }
    }
  }

  /// Connects, subscribes and reads the hint on a thread of its own (bounded by 2 s), then
  /// serves the connection on the event loop until cancelled or a graceful shutdown.
  public func run() async throws {
    let loop = try eventLoop ?? EventLoop.shared()
    self.loop = loop
    do throws(SystemCallError) {
      try SystemThread.detach(name: "bg-logind-idle") { self.connectAndServe() }
    } catch {
      publish(unknown: "no thread to connect: \(error)")
    }
    // Until cancelled or a graceful shutdown.
    try? await gracefulShutdown()
    await loop.submit {
      self.stopped = true
      self.connection?.stopServing()
      // Closed, not only no longer served (it stayed open, signals queuing, while the watch
      // lived).
      self.pendingRead = nil
      self.connection = nil
    }
  }

  private func connectAndServe() {
    let connection: BusConnection
    do throws(BusError) {
      connection = try LogindBus.connect(address: address, logger: logger)
    } catch {
      return publish(unknown: "no system bus (\(error))")
    }
    do throws(BusError) {
      try connection.subscribe(
        from: LogindBus.destination,
        match: "path='\(LogindBus.path)',interface='org.freedesktop.DBus.Properties',"
          + "member='PropertiesChanged',arg0='\(LogindBus.interface)'"
      ) { [unowned self] message in self.changed(message) }
      try connection.subscribe(
        from: BusSignals.busDriver,
        match: "path='/org/freedesktop/DBus',interface='org.freedesktop.DBus',"
          + "member='NameOwnerChanged',arg0='\(LogindBus.destination)'"
      ) { [unowned self] message in self.ownerChanged(message) }
    } catch {
      return publish(unknown: "cannot follow logind's idle hint (\(error))")
    }
    if connection.owner(of: LogindBus.destination) == nil {
      publish(unknown: "logind not running")
    } else {
      readAll(blocking: true, on: connection)
    }
    // Handed to the loop, which alone touches it from now on.
    loop?.execute { self.serve(connection) }
  }

  /// Reads the manager's properties: `blocking` on the connecting thread, else asynchronously
  /// (the reply is processed on the event loop). Either waits at most 2 s.
  private func readAll(blocking: Bool, on connection: BusConnection?) {
    guard let connection else { return }
    let properties = "org.freedesktop.DBus.Properties"
    if blocking {
      answered(
        Result { () throws(BusError) in
          try connection.allProperties(
            destination: LogindBus.destination, path: LogindBus.path,
            interface: LogindBus.interface,
            deadline: csd_monotonic_microseconds() + 2_000_000)
        })
      return
    }
    do throws(BusError) {
      pendingRead = try connection.callAsync(
        destination: LogindBus.destination, path: LogindBus.path, interface: properties,
        member: "GetAll",
        arguments: [.string(LogindBus.interface)], timeout: .seconds(2)
      ) { [unowned self] reply in
        answered(
          reply.flatMap { message in Result { () throws(BusError) in try message.dictionary() } })
      }
    } catch {
      publish(unknown: "cannot ask logind (\(error))")
    }
  }

  /// A `GetAll` answer (or its failure).
  private func answered(_ reply: Result<[String: BusValue], BusError>) {
    let values: [String: BusValue]
    switch reply {
    case .success(let read): values = read
    case .failure(let error):
      let why =
        switch error.name {
        case "org.freedesktop.DBus.Error.ServiceUnknown",
          "org.freedesktop.DBus.Error.NameHasNoOwner":
          "logind not running"
        case "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout":
          "logind did not answer"
        case nil: error.isTimeout ? "logind did not answer" : "logind unreachable"
        case let name?: "logind refused (\(name))"
        }
      return publish(unknown: why)
    }
    guard values["IdleHint"] != nil else {
      return publish(unknown: "logind has no idle hint")
    }
    hint = LogindIdleHint()
    _ = hint.take(values)
    publishHint()
  }

  /// On the event loop: takes the connection and serves it (with sd-bus's deadline, so an
  /// unanswered `GetAll` times out); after ``run()`` ended it is closed instead.
  private func serve(_ connection: BusConnection) {
    guard let loop, !stopped else { return }
    self.connection = connection
    connection.serve(on: loop) { [unowned self] error in
      logger.warning(
        "the bus connection for logind's idle hint broke: jobs requiring an idle user wait",
        metadata: ["error": "\(error)"])
      publish(unknown: "the bus connection broke")
    }
  }

  /// `PropertiesChanged(interface, changed, invalidated)` from logind's current owner.
  private func changed(_ message: BusMessage) {
    defer { message.rewind() }
    guard let (_, values, invalidated) = try? message.propertiesChanged() else { return }
    if invalidated.contains(where: { $0 == "IdleHint" || $0.hasPrefix("IdleSinceHint") }) {
      return readAll(blocking: false, on: connection)
    }
    let wasIdle = hint.idle
    guard hint.take(values) else { return }
    if hint.idle && !wasIdle { firstSeen = Date() }
    publishHint()
  }

  /// `NameOwnerChanged(org.freedesktop.login1, old, new)` from the bus.
  private func ownerChanged(_ message: BusMessage) {
    defer { message.rewind() }
    guard let new = try? [message.string(), message.string(), message.string()][2] else {
      return
    }
    if new.isEmpty {
      publish(unknown: "logind not running")
    } else {
      readAll(blocking: false, on: connection)
    }
  }

  private func publishHint() {
    let conditions = hint.conditions(
      now: Date(), monotonicNow: csd_monotonic_microseconds(), firstSeen: firstSeen)
    logger.debug(
      "logind idle hint",
      metadata: [
        "idle": "\(hint.idle)", "since": "\(conditions.idleSince.map(ISO8601.string) ?? "-")",
      ])
    publish(conditions)
  }

  private func publish(unknown why: String) {
    guard publish(UserIdleConditions(idleSince: nil, unknown: why)) else { return }
    logger.info(
      "the user's idle state is not known: jobs requiring an idle user wait",
      metadata: ["reason": "\(why)"])
  }

  /// Publishes `conditions` when they changed; returns whether they did.
  @discardableResult
  private func publish(_ conditions: UserIdleConditions) -> Bool {
    let (changed, recipients) = state.withLock {
      state -> (Bool, [Broadcaster<UserIdleConditions>.Recipient]) in
      guard state.latest != conditions else { return (false, []) }
      return (true, state.publish(conditions))
    }
    for recipient in recipients { recipient.deliver(conditions) }
    return changed
  }
}
