import CSystemdBus
import SystemPackage

/// Why a one-shot bus call failed, as each caller spells it (`InhibitRefusal`,
/// `NoticeRefusal`).
package protocol BusCallRefusal: Error {
  /// `isAbsent`: there is no bus, or nobody owns (or can be started as) the destination.
  init(isAbsent: Bool, description: String)
}

/// One blocking method call on a ``BusConnection`` of its own, closed right after: the daemon
/// keeps no bus connection between such calls (no idle wake-ups).
package enum BusMethodCall {
  /// Calls `interface.method` of `destination` at `path` with what `arguments` appends, waits
  /// at most `timeout` for the reply and returns what `read` makes of it. No bus, or a
  /// destination nobody owns, throws a refusal that `isAbsent`.
  package static func call<Result, Refusal: BusCallRefusal>(
    on choice: BusChoice, destination: String, path: String, interface: String, method: String,
    timeout: Duration, arguments: (OpaquePointer?) -> Int32,
    read: (OpaquePointer) throws(Refusal) -> Result
  ) throws(Refusal) -> Result {
    let connection: BusConnection
    do throws(BusError) {
      connection = try BusConnection(choice)
    } catch {
      throw Refusal(isAbsent: true, description: "\(error)")
    }
    let bus = connection.handle
    var message: OpaquePointer?
    var result = sd_bus_message_new_method_call(bus, &message, destination, path, interface, method)
    defer { sd_bus_message_unref(message) }
    if result >= 0 { result = arguments(message) }
    guard result >= 0 else {
      throw Refusal(
        isAbsent: false, description: "\(method): \(Errno(rawValue: -result))")
    }
    var error = csd_error_null()
    defer { sd_bus_error_free(&error) }
    var reply: OpaquePointer?
    result = sd_bus_call(bus, message, BusConnection.microseconds(timeout), &error, &reply)
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
