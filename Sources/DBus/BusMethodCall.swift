import CSystemdBus
import Foundation
import SystemPackage

/// Why a one-shot bus call failed, as each caller spells it (``InhibitRefusal``,
/// ``NoticeRefusal``).
protocol BusCallRefusal: Error {
  /// `isAbsent`: there is no bus, or nobody owns (or can be started as) the destination.
  init(isAbsent: Bool, description: String)
}

/// The bus a one-shot call connects to.
enum BusChoice: Sendable, Equatable {
  /// The session bus: `DBUS_SESSION_BUS_ADDRESS` when set, else `$XDG_RUNTIME_DIR/bus`.
  case session
  /// The bus at `address`, or nil for the system bus (`DBUS_SYSTEM_BUS_ADDRESS` when set).
  case system(address: String?)

  /// Opens a connection to this bus into `bus`; returns sd-bus's result (negative errno).
  func open(_ bus: inout OpaquePointer?) -> Int32 {
    switch self {
    case .session:
      return sd_bus_open_user(&bus)
    case .system(address: nil):
      return sd_bus_open_system(&bus)
    case .system(address: let address?):
      var result = sd_bus_new(&bus)
      if result >= 0 { result = sd_bus_set_address(bus, address) }
      if result >= 0 { result = sd_bus_set_bus_client(bus, 1) }
      if result >= 0 { result = sd_bus_start(bus) }
      return result
    }
  }

  var name: String {
    switch self {
    case .session: "session"
    case .system: "system"
    }
  }
}

/// One blocking method call on a bus connection of its own, closed right after: the daemon
/// keeps no bus connection between such calls (no idle wake-ups).
enum BusMethodCall {
  /// Calls `interface.method` of `destination` at `path` with what `arguments` appends, waits
  /// at most `timeout` for the reply and returns what `read` makes of it. No bus, or a
  /// destination nobody owns, throws a refusal that `isAbsent`.
  static func call<Result, Refusal: BusCallRefusal>(
    on choice: BusChoice, destination: String, path: String, interface: String, method: String,
    timeout: Duration, arguments: (OpaquePointer?) -> Int32,
    read: (OpaquePointer) throws(Refusal) -> Result
  ) throws(Refusal) -> Result {
    var bus: OpaquePointer?
    var result = choice.open(&bus)
    defer { sd_bus_flush_close_unref(bus) }
    guard result >= 0 else {
      throw Refusal(
        isAbsent: true,
        description: "no \(choice.name) bus: \(Errno(rawValue: -result))")
    }
    var message: OpaquePointer?
    result = sd_bus_message_new_method_call(bus, &message, destination, path, interface, method)
    defer { sd_bus_message_unref(message) }
    if result >= 0 { result = arguments(message) }
    guard result >= 0 else {
      throw Refusal(
        isAbsent: false, description: "\(method): \(Errno(rawValue: -result))")
    }
    var error = csd_error_null()
    defer { sd_bus_error_free(&error) }
    var reply: OpaquePointer?
    let microseconds =
      UInt64(timeout.components.seconds) * 1_000_000
      + UInt64(timeout.components.attoseconds / 1_000_000_000_000)
    result = sd_bus_call(bus, message, microseconds, &error, &reply)
    defer { sd_bus_message_unref(reply) }
    guard result >= 0, let reply else {
      let name = csd_error_name(&error).map { String(cString: $0) }
      let detail = csd_error_message(&error).map { String(cString: $0) }
      let absentNames = [
        "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner",
      ]
      throw Refusal(
        isAbsent: name.map(absentNames.contains) ?? false,
        description: "\(method): \(name ?? "\(Errno(rawValue: -result))")"
          + (detail.map { " (\($0))" } ?? ""))
    }
    return try read(reply)
  }
}
