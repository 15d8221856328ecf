import CSystemdBus
import Foundation

/// Why logind gave no inhibitor lock.
public struct InhibitRefusal: Error, Sendable, Equatable, CustomStringConvertible {
  /// logind is not on the bus (or there is no bus): no lock can be had on this machine.
  public var isAbsent: Bool
  public var description: String
}

/// One blocking `org.freedesktop.login1.Manager.Inhibit` call on a connection of its own, closed
/// right after: the daemon keeps no bus connection while no run goes (no idle wake-ups), and
/// the lock lives in the returned descriptor, not in the connection.
enum LogindInhibitCall {
  static let destination = "org.freedesktop.login1"
  static let path = "/org/freedesktop/login1"
  static let interface = "org.freedesktop.login1.Manager"

  /// Asks logind for a `what` lock (`sleep:shutdown`) in `mode` (`delay`, `block`) for `who`
  /// and `why`; returns the lock's descriptor (close-on-exec; closing it releases the lock).
  /// `address`: a bus address, or nil for the system bus (`DBUS_SYSTEM_BUS_ADDRESS` when set).
  static func inhibit(
    what: String, who: String, why: String, mode: String, address: String?, timeout: Duration
  ) throws(InhibitRefusal) -> Int32 {
    var bus: OpaquePointer?
    var result: Int32
    if let address {
      result = sd_bus_new(&bus)
      if result >= 0 { result = sd_bus_set_address(bus, address) }
      if result >= 0 { result = sd_bus_set_bus_client(bus, 1) }
      if result >= 0 { result = sd_bus_start(bus) }
    } else {
      result = sd_bus_open_system(&bus)
    }
    defer { sd_bus_flush_close_unref(bus) }
    guard result >= 0 else {
      throw InhibitRefusal(
        isAbsent: true, description: "no system bus: \(String(cString: strerror(-result)))")
    }
    var message: OpaquePointer?
    result = sd_bus_message_new_method_call(bus, &message, destination, path, interface, "Inhibit")
    defer { sd_bus_message_unref(message) }
    for argument in [what, who, why, mode] where result >= 0 {
      result = csd_append_string(message, argument)
    }
    guard result >= 0 else {
      throw InhibitRefusal(
        isAbsent: false, description: "Inhibit: \(String(cString: strerror(-result)))")
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
      throw InhibitRefusal(
        isAbsent: name.map(absentNames.contains) ?? false,
        description: "Inhibit: \(name ?? String(cString: strerror(-result)))"
          + (detail.map { " (\($0))" } ?? ""))
    }
    var descriptor: Int32 = -1
    result = sd_bus_message_read_basic(reply, CChar(UInt8(ascii: "h")), &descriptor)
    guard result > 0, descriptor >= 0 else {
      throw InhibitRefusal(isAbsent: false, description: "Inhibit: the reply has no descriptor")
    }
    // The reply owns its descriptor: keep a copy of our own.
    let own = fcntl(descriptor, F_DUPFD_CLOEXEC, 3)
    guard own >= 0 else {
      throw InhibitRefusal(
        isAbsent: false,
        description: "Inhibit: cannot keep the lock: \(String(cString: strerror(errno)))")
    }
    return own
  }
}
