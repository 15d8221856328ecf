import CSystemdBus
import Glibc
import SystemPackage

/// A D-Bus failure: the operation and the error name or errno.
public struct BusError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What failed and why, e.g. "GetAll /org/freedesktop/NetworkManager: ServiceUnknown ...".
  public var description: String
  /// The D-Bus error name when the peer answered with an error.
  public var name: String?
  /// The call got no answer in time (the peer is on the bus but silent).
  public var isTimeout = false
}

/// A value of a D-Bus property this package reads; other types are skipped.
enum BusValue: Sendable, Equatable {
  case bool(Bool)
  case uint32(UInt32)
  case string(String)
  case objectPaths([String])
}

/// One sd-bus connection, used by one thread only (the hints event loop): method calls, match
/// rules, and the fd/events/timeout triple for `poll()`.
final class SystemBus {
  private var bus: OpaquePointer?
  /// The signals subscribed to, each checked by ``BusSignals`` before its handler runs.
  private var signals: BusSignals?

  /// Connects to `address` (e.g. `unix:path=/run/dbus/system_bus_socket`), or to the system
  /// bus when `nil`. `refused` hears of every signal ``BusSignals`` drops.
  init(address: String?, refused: ((BusSignals.Refusal) -> Void)? = nil) throws(BusError) {
    var bus: OpaquePointer?
    if let address {
      var result = sd_bus_new(&bus)
      if result >= 0 { result = sd_bus_set_address(bus, address) }
      if result >= 0 { result = sd_bus_set_bus_client(bus, 1) }
      if result >= 0 { result = sd_bus_start(bus) }
      if result < 0 {
        sd_bus_unref(bus)
        throw BusError(description: "connect to \(address): \(Self.text(errno: -result))")
      }
    } else {
      let result = sd_bus_open_system(&bus)
      if result < 0 {
        throw BusError(description: "connect to the system bus: \(Self.text(errno: -result))")
      }
    }
    self.bus = bus
    signals = bus.map { BusSignals(bus: $0, refused: refused) }
  }

  deinit {
    signals = nil
    sd_bus_flush_close_unref(bus)
  }

  /// The descriptor, the `poll()` events it waits for, and the timeout in milliseconds (-1:
  /// none, which is the idle case).
  func pollParameters() throws(BusError) -> (descriptor: Int32, events: Int16, timeout: Int32) {
    let descriptor = sd_bus_get_fd(bus)
    let events = sd_bus_get_events(bus)
    guard descriptor >= 0, events >= 0 else {
      throw BusError(description: "bus closed: \(Self.text(errno: -min(descriptor, events)))")
    }
    var deadline: UInt64 = 0
    guard sd_bus_get_timeout(bus, &deadline) >= 0 else {
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
  func processPending() throws(BusError) {
    while true {
      let result = sd_bus_process(bus, nil)
      if result < 0 { throw BusError(description: "bus failed: \(Self.text(errno: -result))") }
      if result == 0 { return }
    }
  }

  /// Calls `handler` with the signals of `service` that `match` selects, each sent by the
  /// service's current owner and broadcast (``BusSignals``).
  func subscribe(
    from service: String, match: String, handler: @escaping (OpaquePointer) -> Void
  ) throws(BusError) {
    guard let signals else { throw BusError(description: "no bus connection") }
    try signals.subscribe(from: service, match: match, handler: handler)
  }

  /// `org.freedesktop.DBus.Properties.GetAll(interface)` on `path` of `destination`, waiting
  /// at most until `deadline` (monotonic microseconds); values of types other than `b`, `u`,
  /// `s`, `o` and `ao` are skipped. No answer in time throws a ``BusError/isTimeout`` error.
  func allProperties(destination: String, path: String, interface: String, deadline: UInt64)
    throws(BusError) -> [String: BusValue]
  {
    try call(
      destination: destination, path: path, interface: "org.freedesktop.DBus.Properties",
      member: "GetAll", argument: interface, deadline: deadline, read: Self.readDictionary)
  }

  /// Calls `interface.member` on `path` of `destination` with one string `argument` (or none)
  /// and reads the reply with `read`, waiting at most until `deadline` (monotonic
  /// microseconds). No answer in time throws a ``BusError/isTimeout`` error.
  func call<Value>(
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
      bus, &message, destination, path, interface, member)
    if result >= 0, let argument { result = csd_append_string(message, argument) }
    // Never start a stopped service by asking it something.
    if result >= 0 { result = sd_bus_message_set_auto_start(message, 0) }
    guard result >= 0 else {
      sd_bus_message_unref(message)
      throw BusError(description: "\(member) \(path): \(Self.text(errno: -result))")
    }
    defer { sd_bus_message_unref(message) }
    var error = csd_error_null()
    defer { sd_bus_error_free(&error) }
    var reply: OpaquePointer?
    result = sd_bus_call(bus, message, deadline - now, &error, &reply)
    guard result >= 0, let reply else {
      let name = csd_error_name(&error).map { String(cString: $0) }
      let detail = csd_error_message(&error).map { String(cString: $0) }
      // No reply before the deadline is a peer that left during the call (the bus answers
      // NoReply for it), not a timeout.
      let noReply = "org.freedesktop.DBus.Error.NoReply"
      let unanswered = result == -ETIMEDOUT || name == noReply
      let timedOut = unanswered && csd_monotonic_microseconds() >= deadline
      throw BusError(
        description: "\(what): \(name ?? Self.text(errno: -result))"
          + (detail.map { " (\($0))" } ?? ""),
        name: timedOut ? nil : (name ?? (unanswered ? noReply : nil)), isTimeout: timedOut)
    }
    defer { sd_bus_message_unref(reply) }
    do {
      return try read(reply)
    } catch {
      throw BusError(description: "\(what): malformed reply: \(error)")
    }
  }

  /// Reads `a{sv}`.
  static func readDictionary(_ message: OpaquePointer) throws(BusError) -> [String:
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

  static func readString(_ message: OpaquePointer, type: String) throws(BusError) -> String {
    guard let text = try readOptionalString(message, type: type) else {
      throw BusError(description: "missing \(type) value")
    }
    return text
  }

  static func readOptionalString(_ message: OpaquePointer, type: String) throws(BusError)
    -> String?
  {
    var pointer: UnsafePointer<CChar>?
    let result = sd_bus_message_read_basic(message, CChar(bitPattern: type.utf8.first!), &pointer)
    try check(result)
    guard result > 0, let pointer else { return nil }
    return String(cString: pointer)
  }

  @discardableResult
  static func check(_ result: Int32) throws(BusError) -> Int32 {
    guard result >= 0 else { throw BusError(description: text(errno: -result)) }
    return result
  }

  static func text(errno code: Int32) -> String { "\(Errno(rawValue: code))" }
}
