import CSystemdBus

/// Why a one-shot bus call failed, as each caller spells it (`InhibitRefusal`,
/// `NoticeRefusal`).
package protocol BusCallRefusal: Error {
  /// `isAbsent`: there is no bus, or nobody owns (or can be started as) the destination.
  init(isAbsent: Bool, description: String)
}

/// One blocking method call on a ``BusConnection`` of its own, closed right after: the daemon
/// keeps no bus connection between such calls (no idle wake-ups).
package enum BusMethodCall {
  /// Calls `interface.method` of `destination` at `path` with `arguments`, waits at most
  /// `timeout` for the reply and returns what `read` makes of it; a destination that can be
  /// started on demand is (`autoStart`). No bus, or a destination nobody owns, throws a refusal
  /// that `isAbsent`.
  package static func call<Result, Refusal: BusCallRefusal>(
    on choice: BusChoice, destination: String, path: String, interface: String, method: String,
    timeout: Duration, arguments: [BusArgument], autoStart: Bool = true,
    read: (BusMessage) throws(Refusal) -> Result
  ) throws(Refusal) -> Result {
    let connection: BusConnection
    do throws(BusError) {
      connection = try BusConnection(choice)
    } catch {
      throw Refusal(isAbsent: true, description: "\(error)")
    }
    let absentNames = [
      "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner",
    ]
    // The reader's own refusal, kept apart from the bus's errors.
    var refusal: Refusal?
    let value: Result?
    do throws(BusError) {
      value = try connection.call(
        destination: destination, path: path, interface: interface, member: method,
        arguments: arguments,
        deadline: csd_monotonic_microseconds() &+ BusConnection.microseconds(timeout),
        autoStart: autoStart
      ) { reply throws(BusError) -> Result? in
        do throws(Refusal) {
          return try read(reply)
        } catch {
          refusal = error
          return nil
        }
      }
    } catch {
      throw Refusal(
        isAbsent: error.name.map(absentNames.contains) ?? false, description: error.description)
    }
    if let refusal { throw refusal }
    guard let value else { throw Refusal(isAbsent: false, description: "\(method): no value") }
    return value
  }
}
