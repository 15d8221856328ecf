import CSystemdBus
import EventLoops
import Glibc
import SystemCalls
import SystemPackage

/// A D-Bus failure: the operation and the error name or errno.
public struct BusError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What failed and why, e.g. "GetAll /org/freedesktop/NetworkManager: ServiceUnknown ...".
  public var description: String
  /// The D-Bus error name when the peer answered with an error.
  public var name: String?
  /// The call got no answer in time (the peer is on the bus but silent).
  public var isTimeout = false
  /// What sd-bus said, when it failed with an errno (its negative result) rather than the
  /// peer with an error name.
  public var errno: Errno?

  package init(
    description: String, name: String? = nil, isTimeout: Bool = false, errno: Errno? = nil
  ) {
    self.description = description
    self.name = name
    self.isTimeout = isTimeout
    self.errno = errno
  }

  /// `what` failed with sd-bus's negative `result`: "what: message", carrying the errno.
  package init(_ what: String, result: Int32) {
    let errno = Errno(rawValue: -result)
    self.init(description: "\(what): \(errno)", errno: errno)
  }
}

/// A value of a D-Bus property this package reads; other types are skipped.
package enum BusValue: Sendable, Equatable {
  case bool(Bool)
  case uint32(UInt32)
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
/// and idle watches and the one-shot calls (``BusMethodCall``) all connect through it. Method
/// calls, match rules whose signals pass ``BusSignals``, and serving on an `EventLoop`: the
/// descriptor with what sd-bus waits for and a timer at sd-bus's own deadline
/// (`sd_bus_get_timeout`), so an asynchronous call's timeout fires even when nothing else
/// arrives.
///
/// Used by one thread at a time: the thread that connects, then the event loop's.
package final class BusConnection: @unchecked Sendable {
  // @unchecked: see above; the hand-over to the loop goes through the loop's lock.
  /// The sd-bus connection, for calls this type does not wrap.
  package private(set) var handle: OpaquePointer?
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

  /// Connects to the bus at `address`, or to the system bus when `nil`.
  package convenience init(address: String?, refused: ((BusSignals.Refusal) -> Void)? = nil)
    throws(BusError)
  {
    try self.init(.system(address: address), refused: refused)
  }

  deinit {
    signals = nil
    sd_bus_flush_close_unref(handle)
  }

  /// Waits at most `timeout` for the answer of a call made without an explicit timeout
  /// (`sd_bus_get_property_trivial`, an asynchronous call given 0).
  package func setMethodCallTimeout(_ timeout: Duration) throws(BusError) {
    try Self.check(sd_bus_set_method_call_timeout(handle, Self.microseconds(timeout)))
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
    from service: String, match: String, handler: @escaping (OpaquePointer) -> Void
  ) throws(BusError) {
    guard let signals else { throw BusError(description: "no bus connection") }
    try signals.subscribe(from: service, match: match, handler: handler)
  }

  /// `org.freedesktop.DBus.Properties.GetAll(interface)` on `path` of `destination`, waiting
  /// at most until `deadline` (monotonic microseconds); values of types other than `b`, `u`,
  /// `s`, `o` and `ao` are skipped. No answer in time throws a ``BusError/isTimeout`` error.
  package func allProperties(destination: String, path: String, interface: String, deadline: UInt64)
    throws(BusError) -> [String: BusValue]
  {
    try call(
      destination: destination, path: path, interface: "org.freedesktop.DBus.Properties",
      member: "GetAll", argument: interface, deadline: deadline, read: Self.readDictionary)
  }

  /// Calls `interface.member` on `path` of `destination` with one string `argument` (or none)
  /// and reads the reply with `read`, waiting at most until `deadline` (monotonic
  /// microseconds). No answer in time throws a ``BusError/isTimeout`` error.
  package func call<Value>(
    destination: String, path: String, interface: String, member: String, argument: String?,
    deadline: UInt64, read: (OpaquePointer) throws(BusError) -> Value
  ) throws(BusError) -> Value {
    let what = "\(member) \(path) \(argument ?? interface)"
    let now = csd_monotonic_microseconds()
    guard now < deadline else {
      throw BusError(description: "\(what): no answer in time", isTimeout: true)
    }
    var message: OpaquePointer?
    var result = sd_bus_message_new_method_call(
      handle, &message, destination, path, interface, member)
    if result >= 0, let argument { result = csd_append_string(message, argument) }
    // Never start a stopped service by asking it something.
    if result >= 0 { result = sd_bus_message_set_auto_start(message, 0) }
    guard result >= 0 else {
      sd_bus_message_unref(message)
      throw BusError("\(member) \(path)", result: result)
    }
    defer { sd_bus_message_unref(message) }
    var error = csd_error_null()
    defer { sd_bus_error_free(&error) }
    var reply: OpaquePointer?
    result = sd_bus_call(handle, message, deadline - now, &error, &reply)
    guard result >= 0, let reply else {
      let name = csd_error_name(&error).map { String(cString: $0) }
      let detail = csd_error_message(&error).map { String(cString: $0) }
      // No reply before the deadline is a peer that left during the call (the bus answers
      // NoReply for it), not a timeout.
      let noReply = "org.freedesktop.DBus.Error.NoReply"
      let unanswered = result == -ETIMEDOUT || name == noReply
      let timedOut = unanswered && csd_monotonic_microseconds() >= deadline
      throw BusError(
        description: "\(what): \(name ?? "\(Errno(rawValue: -result))")"
          + (detail.map { " (\($0))" } ?? ""),
        name: timedOut ? nil : (name ?? (unanswered ? noReply : nil)), isTimeout: timedOut,
        errno: name == nil && result < 0 ? Errno(rawValue: -result) : nil)
    }
    defer { sd_bus_message_unref(reply) }
    do {
      return try read(reply)
    } catch {
      throw BusError(description: "\(what): malformed reply: \(error)")
    }
  }

  /// Reads `a{sv}`.
  package static func readDictionary(_ message: OpaquePointer) throws(BusError) -> [String:
    BusValue]
  {
    var values: [String: BusValue] = [:]
    try check(sd_bus_message_enter_container(message, CChar(UInt8(ascii: "a")), "{sv}"))
    while try check(sd_bus_message_enter_container(message, CChar(UInt8(ascii: "e")), "sv")) > 0 {
      let key = try readString(message, type: "s")
      var type: CChar = 0
      var contents: UnsafePointer<CChar>?
      try check(sd_bus_message_peek_type(message, &type, &contents))
      let signature = contents.map { String(cString: $0) } ?? ""
      if ["b", "u", "s", "o", "ao"].contains(signature) {
        try check(sd_bus_message_enter_container(message, CChar(UInt8(ascii: "v")), signature))
        switch signature {
        case "b":
          var value: Int32 = 0
          try check(sd_bus_message_read_basic(message, CChar(UInt8(ascii: "b")), &value))
          values[key] = .bool(value != 0)
        case "u":
          var value: UInt32 = 0
          try check(sd_bus_message_read_basic(message, CChar(UInt8(ascii: "u")), &value))
          values[key] = .uint32(value)
        case "ao":
          var paths: [String] = []
          try check(sd_bus_message_enter_container(message, CChar(UInt8(ascii: "a")), "o"))
          while let path = try readOptionalString(message, type: "o") { paths.append(path) }
          try check(sd_bus_message_exit_container(message))
          values[key] = .objectPaths(paths)
        default:
          values[key] = .string(try readString(message, type: signature))
        }
        try check(sd_bus_message_exit_container(message))
      } else {
        try check(sd_bus_message_skip(message, "v"))
      }
      try check(sd_bus_message_exit_container(message))
    }
    try check(sd_bus_message_exit_container(message))
    return values
  }

  package static func readString(_ message: OpaquePointer, type: String) throws(BusError) -> String
  {
    guard let text = try readOptionalString(message, type: type) else {
      throw BusError(description: "missing \(type) value")
    }
    return text
  }

  package static func readOptionalString(_ message: OpaquePointer, type: String) throws(BusError)
    -> String?
  {
    var pointer: UnsafePointer<CChar>?
    let result = sd_bus_message_read_basic(message, CChar(bitPattern: type.utf8.first!), &pointer)
    try check(result)
    guard result > 0, let pointer else { return nil }
    return String(cString: pointer)
  }

  @discardableResult
  package static func check(_ result: Int32) throws(BusError) -> Int32 {
    guard result >= 0 else {
      throw BusError(description: "\(Errno(rawValue: -result))", errno: Errno(rawValue: -result))
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
