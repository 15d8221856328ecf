import CSystemdBus
import EventLoops
import Glibc
import SystemCalls
import SystemPackage

/// A D-Bus failure: the operation, and the peer's error name or sd-bus's failure.
public struct BusError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What failed and why, e.g. "GetAll /org/freedesktop/NetworkManager: ServiceUnknown ...".
  public var description: String
  /// The D-Bus error name when the peer answered with an error.
  public var name: String?
  /// The call got no answer in time (the peer is on the bus but silent).
  public var isTimeout = false
  /// What sd-bus said, when it failed with an errno (its negative result) rather than the peer
  /// with an error name: a ``SystemCallError`` naming the operation, as every errno is carried.
  public var systemCall: SystemCallError?
  /// ``systemCall``'s errno.
  public var errno: Errno? { systemCall?.errno }

  package init(
    description: String, name: String? = nil, isTimeout: Bool = false,
    systemCall: SystemCallError? = nil
  ) {
    self.description = description
    self.name = name
    self.isTimeout = isTimeout
    self.systemCall = systemCall
  }

  /// `what` failed with sd-bus's negative `result`: "what: message", carrying the errno. When
  /// libsystemd could not be opened (ELIBACC from `CSystemdBus`), the message says why.
  package init(_ what: String, result: Int32) {
    let failure = SystemCallError(what, errno: Errno(rawValue: -result))
    if -result == ELIBACC {
      let reason = csd_library_error().map { String(cString: $0) }
      self.init(
        description: "\(what): \(reason ?? "libsystemd.so.0 lacks this function (too old)")",
        systemCall: failure)
    } else {
      self.init(description: failure.description, systemCall: failure)
    }
  }
}

/// A value of a D-Bus property this package reads; other types are skipped.
package enum BusValue: Sendable, Equatable {
  case bool(Bool)
  case uint32(UInt32)
  case uint64(UInt64)
  case string(String)
  case objectPaths([String])
}

/// The bus a connection is made to.
package enum BusChoice: Sendable, Equatable {
  /// The session bus: `DBUS_SESSION_BUS_ADDRESS` when set, else `$XDG_RUNTIME_DIR/bus`.
  case session
  /// The bus at `address`, or nil for the system bus (`DBUS_SYSTEM_BUS_ADDRESS` when set).
  case system(address: String?)

  package var name: String {
    switch self {
    case .session: "session"
    case .system: "system"
    }
  }
}

/// The one sd-bus connection type: NetworkManager and ModemManager (the hints), logind's sleep
/// and idle watches and the one-shot calls (``BusMethodCall``) all connect through it, and only
/// this package calls sd-bus (callers read and write ``BusMessage`` and ``BusArgument``).
/// Blocking and asynchronous method calls, match rules whose signals pass ``BusSignals``, and
/// serving on an `EventLoop`: the
/// descriptor with what sd-bus waits for and a timer at sd-bus's own deadline
/// (`sd_bus_get_timeout`), so an asynchronous call's timeout fires even when nothing else
/// arrives.
///
/// Used by one thread at a time: the thread that connects, then the event loop's.
package final class BusConnection: @unchecked Sendable {
  // @unchecked: see above; the hand-over to the loop goes through the loop's lock.
  /// The sd-bus connection.
  private var handle: OpaquePointer?
  /// The signals subscribed to, each checked by ``BusSignals`` before its handler runs.
  private var signals: BusSignals?
  private var served: (loop: EventLoop, registration: EventLoop.Registration?)?
  private var interest: EventLoop.Interest?
  private var timer: EventLoop.Timer?
  private var processed: (() -> Void)?
  private var broke: ((BusError) -> Void)?

  /// Connects to `choice`'s bus; `refused` hears of every signal ``BusSignals`` drops.
  package init(_ choice: BusChoice, refused: ((BusSignals.Refusal) -> Void)? = nil)
    throws(BusError)
  {
    if choice == .system(address: nil), Self.systemBusIsAbsent() {
      // What sd-bus would answer, without opening libsystemd (and its six libraries) for it.
      throw BusError("connect to the system bus", result: -ENOENT)
    }
    var bus: OpaquePointer?
    var result: Int32
    switch choice {
    case .session:
      result = sd_bus_open_user(&bus)
    case .system(address: nil):
      result = sd_bus_open_system(&bus)
    case .system(let address?):
      result = sd_bus_new(&bus)
      if result >= 0 { result = sd_bus_set_address(bus, address) }
      if result >= 0 { result = sd_bus_set_bus_client(bus, 1) }
      if result >= 0 { result = sd_bus_start(bus) }
    }
    guard result >= 0, let bus else {
      sd_bus_unref(bus)
      let target =
        switch choice {
        case .system(let address?): address
        default: "the \(choice.name) bus"
        }
      throw BusError("connect to \(target)", result: result)
    }
    handle = bus
    signals = BusSignals(bus: bus, refused: refused)
  }

  /// The system bus's socket when `DBUS_SYSTEM_BUS_ADDRESS` is not set (sd-bus's default).
  package static let defaultSystemBusSocket = "/run/dbus/system_bus_socket"

  /// Whether there is surely no system bus to connect to: `DBUS_SYSTEM_BUS_ADDRESS` is not set
  /// and nothing is at sd-bus's default socket path (a container, an edge image without
  /// D-Bus). A connection would fail with ENOENT; checked first, so that such a machine never
  /// opens libsystemd for it.
  package static func systemBusIsAbsent(
    environment: (String) -> String? = { getenv($0).map { String(cString: $0) } },
    socket: String = defaultSystemBusSocket
  ) -> Bool {
    guard environment("DBUS_SYSTEM_BUS_ADDRESS") == nil else { return false }
    var status = stat()
    do throws(SystemCallError) {
      _ = try systemCall("lstat", path: socket) { lstat(socket, &status) }
      return false
    } catch {
      return error.errno == .noSuchFileOrDirectory
    }
  }

  /// Connects to the bus at `address`, or to the system bus when `nil`.
  package convenience init(address: String?, refused: ((BusSignals.Refusal) -> Void)? = nil)
    throws(BusError)
  {
    try self.init(.system(address: address), refused: refused)
  }

  deinit {
    signals = nil
    // (A connection that failed has no handle: libsystemd is not opened to free nothing.)
    if let handle { sd_bus_flush_close_unref(handle) }
  }

  /// The current owner (unique name) of a well-known name subscribed to, nil when none.
  package func owner(of service: String) -> String? {
    signals?.owner(of: service)
  }

  // MARK: - Serving on an event loop

  /// On `loop`'s thread: registers the connection and processes what is pending, then again
  /// whenever the descriptor is ready or sd-bus's deadline comes; `processed` runs after each
  /// round (match callbacks have run) and may stop serving, to hand the connection to another
  /// thread for a while. When the connection breaks it is deregistered and `broke` hears why,
  /// once.
  package func serve(
    on loop: EventLoop, processed: @escaping () -> Void = {},
    broke: @escaping (BusError) -> Void
  ) {
    self.processed = processed
    self.broke = broke
    served = (loop, nil)
    pump()
  }

  /// On the loop's thread: stops serving (the connection stays open).
  package func stopServing() {
    guard let (loop, registration) = served else { return }
    if let registration { loop.deregister(registration) }
    if let timer { loop.cancel(timer) }
    (served, timer, interest, processed, broke) = (nil, nil, nil, nil, nil)
  }

  /// Processes everything pending, then waits for what sd-bus waits for now.
  private func pump() {
    guard served != nil else { return }
    do throws(BusError) {
      try processPending()
      processed?()
      try rearm()
    } catch {
      let broke = self.broke
      stopServing()
      broke?(error)
    }
  }

  private func rearm() throws(BusError) {
    guard let (loop, registration) = served else { return }
    let parameters = try pollParameters()
    var wanted: EventLoop.Interest = []
    if Int32(parameters.events) & Int32(POLLIN) != 0 { wanted.insert(.readable) }
    if Int32(parameters.events) & Int32(POLLOUT) != 0 { wanted.insert(.writable) }
    do throws(SystemCallError) {
      if let registration, registration.descriptor == parameters.descriptor {
        if wanted != interest { try loop.setInterest(registration, wanted) }
      } else {
        if let registration { loop.deregister(registration) }
        served = (loop, nil)
        let registered = try loop.register(parameters.descriptor, interest: wanted) {
          [self] _ in pump()
        }
        served = (loop, registered)
      }
    } catch {
      throw BusError(description: "cannot watch the bus: \(error)")
    }
    interest = wanted
    if let timer { loop.cancel(timer) }
    timer = nil
    if parameters.timeout >= 0 {
      timer = loop.schedule(after: .milliseconds(parameters.timeout)) { [self] in
        timer = nil
        pump()
      }
    }
  }

  /// The descriptor, the `poll()` events it waits for, and the timeout in milliseconds (-1:
  /// none, which is the idle case).
  package func pollParameters() throws(BusError) -> (
    descriptor: Int32, events: Int16, timeout: Int32
  ) {
    let descriptor = sd_bus_get_fd(handle)
    let events = sd_bus_get_events(handle)
    guard descriptor >= 0, events >= 0 else {
      throw BusError("bus closed", result: min(descriptor, events))
    }
    var deadline: UInt64 = 0
    guard sd_bus_get_timeout(handle, &deadline) >= 0 else {
      throw BusError(description: "sd_bus_get_timeout failed")
    }
    let timeout: Int32
    if deadline == UInt64.max {
      timeout = -1
    } else {
      let now = csd_monotonic_microseconds()
      timeout = deadline <= now ? 0 : Int32(clamping: (deadline - now + 999) / 1000)
    }
    return (descriptor, Int16(events), timeout)
  }

  /// Processes everything pending (match callbacks run here). Throws when the connection
  /// broke.
  package func processPending() throws(BusError) {
    while true {
      let result = sd_bus_process(handle, nil)
      if result < 0 { throw BusError("bus failed", result: result) }
      if result == 0 { return }
    }
  }

  /// Calls `handler` with the signals of `service` that `match` selects, each sent by the
  /// service's current owner and broadcast (``BusSignals``).
  package func subscribe(
    from service: String, match: String, handler: @escaping (BusMessage) -> Void
  ) throws(BusError) {
    guard let signals else { throw BusError(description: "no bus connection") }
    try signals.subscribe(from: service, match: match) { handler(BusMessage($0)) }
  }

  /// `org.freedesktop.DBus.Properties.GetAll(interface)` on `path` of `destination`, waiting
  /// at most until `deadline` (monotonic microseconds); values of types other than `b`, `u`,
  /// `s`, `o` and `ao` are skipped. No answer in time throws a ``BusError/isTimeout`` error.
  package func allProperties(destination: String, path: String, interface: String, deadline: UInt64)
    throws(BusError) -> [String: BusValue]
  {
    try call(
      destination: destination, path: path, interface: "org.freedesktop.DBus.Properties",
      member: "GetAll", arguments: [.string(interface)], deadline: deadline
    ) { reply throws(BusError) in try reply.dictionary() }
  }

  /// Calls `interface.member` on `path` of `destination` with `arguments` and reads the reply
  /// with `read`, waiting at most until `deadline` (monotonic microseconds). No answer in time
  /// throws a ``BusError/isTimeout`` error. A destination nobody owns is not started unless
  /// `autoStart` (a notification server is often started on demand).
  package func call<Value>(
    destination: String, path: String, interface: String, member: String,
    arguments: [BusArgument], deadline: UInt64, autoStart: Bool = false,
    read: (BusMessage) throws(BusError) -> Value
  ) throws(BusError) -> Value {
    let what = Self.describe(member, path, interface, arguments)
    let now = csd_monotonic_microseconds()
    guard now < deadline else {
      throw BusError(description: "\(what): no answer in time", isTimeout: true)
    }
    let message = try methodCall(destination, path, interface, member, arguments, autoStart)
    defer { sd_bus_message_unref(message) }
    var error = csd_error_null()
    defer { sd_bus_error_free(&error) }
    var reply: OpaquePointer?
    let result = sd_bus_call(handle, message, deadline - now, &error, &reply)
    guard result >= 0, let reply else {
      throw Self.failure(
        what, name: csd_error_name(&error).map { String(cString: $0) },
        detail: csd_error_message(&error).map { String(cString: $0) }, result: result,
        deadline: deadline)
    }
    defer { sd_bus_message_unref(reply) }
    do {
      return try read(BusMessage(reply))
    } catch {
      throw BusError(description: "\(what): malformed reply: \(error)")
    }
  }

  /// `org.freedesktop.DBus.Properties.Get(interface, name)` of a `t` (UInt64) property, waiting
  /// at most `timeout`; `autoStart` as for
  /// ``call(destination:path:interface:member:arguments:deadline:autoStart:read:)``.
  package func uint64Property(
    destination: String, path: String, interface: String, name: String, timeout: Duration,
    autoStart: Bool = false
  ) throws(BusError) -> UInt64 {
    try call(
      destination: destination, path: path, interface: "org.freedesktop.DBus.Properties",
      member: "Get", arguments: [.string(interface), .string(name)],
      deadline: csd_monotonic_microseconds() &+ Self.microseconds(timeout), autoStart: autoStart
    ) { reply throws(BusError) in
      guard case .uint64(let value)? = try reply.variant() else {
        throw BusError(description: "\(name) is not a t")
      }
      return value
    }
  }

  /// Calls `interface.member` on `path` of `destination` with `arguments` without waiting:
  /// `answered` gets the reply (or the error, a ``BusError/isTimeout`` one after `timeout`)
  /// while the connection is served (``serve(on:processed:broke:)``), unless the returned call
  /// was dropped first.
  package func callAsync(
    destination: String, path: String, interface: String, member: String,
    arguments: [BusArgument], timeout: Duration,
    answered: @escaping (Result<BusMessage, BusError>) -> Void
  ) throws(BusError) -> BusPendingCall {
    let what = Self.describe(member, path, interface, arguments)
    let message = try methodCall(destination, path, interface, member, arguments, false)
    defer { sd_bus_message_unref(message) }
    let pending = BusPendingCall(
      what: what, deadline: csd_monotonic_microseconds() &+ Self.microseconds(timeout),
      answered: answered)
    var slot: OpaquePointer?
    let result = sd_bus_call_async(
      handle, &slot, message,
      { reply, context, _ in
        guard let context else { return 0 }
        let call = Unmanaged<BusPendingCall>.fromOpaque(context).takeUnretainedValue()
        // The handler may drop the call: it lives until it returns.
        withExtendedLifetime(call) { call.received(reply) }
        return 0
      }, Unmanaged.passUnretained(pending).toOpaque(), Self.microseconds(timeout))
    guard result >= 0 else { throw BusError("\(what)", result: result) }
    pending.slot = slot
    return pending
  }

  /// A method call message with `arguments`, auto-starting its destination only when
  /// `autoStart`.
  private func methodCall(
    _ destination: String, _ path: String, _ interface: String, _ member: String,
    _ arguments: [BusArgument], _ autoStart: Bool
  ) throws(BusError) -> OpaquePointer {
    var message: OpaquePointer?
    var result = sd_bus_message_new_method_call(
      handle, &message, destination, path, interface, member)
    if result >= 0 { result = BusArgument.append(arguments, to: message) }
    // Never start a stopped service by asking it something, unless asked to.
    if result >= 0, !autoStart { result = sd_bus_message_set_auto_start(message, 0) }
    guard result >= 0, let message else {
      sd_bus_message_unref(message)
      throw BusError("\(member) \(path)", result: result)
    }
    return message
  }

  /// "member path first-argument" (or the interface) for errors.
  private static func describe(
    _ member: String, _ path: String, _ interface: String, _ arguments: [BusArgument]
  ) -> String {
    if case .string(let first)? = arguments.first { return "\(member) \(path) \(first)" }
    return "\(member) \(path) \(interface)"
  }

  /// The error of a call that got no reply: `name` and `detail` from the bus's error, sd-bus's
  /// `result`. No reply before the deadline is a peer that left during the call (the bus
  /// answers NoReply for it), not a timeout.
  static func failure(
    _ what: String, name: String?, detail: String?, result: Int32, deadline: UInt64
  ) -> BusError {
    let noReply = "org.freedesktop.DBus.Error.NoReply"
    let unanswered = result == -ETIMEDOUT || name == noReply
    let timedOut = unanswered && csd_monotonic_microseconds() >= deadline
    return BusError(
      description: "\(what): \(name ?? "\(Errno(rawValue: -result))")"
        + (detail.map { " (\($0))" } ?? ""),
      name: timedOut ? nil : (name ?? (unanswered ? noReply : nil)), isTimeout: timedOut,
      systemCall: name == nil && result < 0
        ? SystemCallError(what, errno: Errno(rawValue: -result)) : nil)
  }

  @discardableResult
  package static func check(_ result: Int32) throws(BusError) -> Int32 {
    guard result >= 0 else {
      let failure = SystemCallError("sd-bus", errno: Errno(rawValue: -result))
      throw BusError(description: "\(failure.errno)", systemCall: failure)
    }
    return result
  }

  /// `duration` in whole microseconds (sd-bus's unit), negative as 0.
  package static func microseconds(_ duration: Duration) -> UInt64 {
    let (seconds, attoseconds) = duration.components
    guard seconds >= 0 else { return 0 }
    return UInt64(seconds) * 1_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000_000)
  }
}

/// An asynchronous call in flight (``BusConnection/callAsync(destination:path:interface:member:arguments:timeout:answered:)``):
/// dropping it cancels the call, and its answer is not handed over.
package final class BusPendingCall {
  fileprivate var slot: OpaquePointer?
  private let what: String
  /// When the call times out (monotonic microseconds; sd-bus's own deadline is no earlier).
  private let deadline: UInt64
  private var answered: ((Result<BusMessage, BusError>) -> Void)?

  fileprivate init(
    what: String, deadline: UInt64, answered: @escaping (Result<BusMessage, BusError>) -> Void
  ) {
    self.what = what
    self.deadline = deadline
    self.answered = answered
  }

  deinit {
    sd_bus_slot_unref(slot)
  }

  /// The reply, or an error reply (sd-bus makes one, `NoReply`, when the timeout passes or the
  /// connection closes): handed over once. As for a blocking call
  /// (``BusConnection/failure(_:name:detail:result:deadline:)``), no reply before the deadline
  /// is a peer that left during the call (the bus answers `NoReply` for it), not a timeout.
  fileprivate func received(_ reply: OpaquePointer?) {
    guard let answered else { return }
    self.answered = nil
    guard let reply else {
      return answered(.failure(BusError(description: "\(what): no reply")))
    }
    if let error = sd_bus_message_get_error(reply) {
      let name = csd_error_name(error).map { String(cString: $0) }
      let detail = csd_error_message(error).map { String(cString: $0) }
      let unanswered =
        name == "org.freedesktop.DBus.Error.Timeout" || name == "org.freedesktop.DBus.Error.NoReply"
      let timedOut = unanswered && csd_monotonic_microseconds() >= deadline
      return answered(
        .failure(
          BusError(
            description: "\(what): \(name ?? "an error")" + (detail.map { " (\($0))" } ?? ""),
            name: timedOut ? nil : name, isTimeout: timedOut)))
    }
    answered(.success(BusMessage(reply)))
  }
}
