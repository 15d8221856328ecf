import DBus
import Foundation
import SystemCalls

/// Why logind gave no inhibitor lock.
package struct InhibitRefusal: BusCallRefusal, Sendable, Equatable, CustomStringConvertible {
  /// logind is not on the bus (or there is no bus): no lock can be had on this machine.
  package var isAbsent: Bool
  package var description: String

  package init(isAbsent: Bool, description: String) {
    self.isAbsent = isAbsent
    self.description = description
  }
}

/// One blocking `org.freedesktop.login1.Manager.Inhibit` call on a connection of its own, closed
/// right after: the daemon keeps no bus connection while no run goes (no idle wake-ups), and
/// the lock lives in the returned descriptor, not in the connection.
package enum LogindInhibitCall {
  /// Asks logind for a `what` lock (`sleep`, `shutdown`) in `mode` (`delay`, `block`) for `who`
  /// and `why`; returns the lock's descriptor (close-on-exec; closing it releases the lock).
  /// `address`: a bus address, or nil for the system bus (`DBUS_SYSTEM_BUS_ADDRESS` when set).
  package static func inhibit(
    what: String, who: String, why: String, mode: String, address: String?, timeout: Duration
  ) throws(InhibitRefusal) -> Int32 {
    try BusMethodCall.call(
      on: .system(address: address), destination: LogindBus.destination, path: LogindBus.path,
      interface: LogindBus.interface, method: "Inhibit", timeout: timeout,
      arguments: [.string(what), .string(who), .string(why), .string(mode)]
    ) { reply throws(InhibitRefusal) in
      try ownDescriptor(of: reply)
    }
  }

  /// The lock's descriptor in logind's `reply`, duplicated (close-on-exec): the reply owns its
  /// own.
  private static func ownDescriptor(of reply: BusMessage) throws(InhibitRefusal) -> Int32 {
    guard let descriptor = try? reply.unixFD(), descriptor >= 0 else {
      throw InhibitRefusal(isAbsent: false, description: "Inhibit: the reply has no descriptor")
    }
    // The reply owns its descriptor: keep a copy of our own.
    let own = fcntl(descriptor, F_DUPFD_CLOEXEC, 3)
    guard own >= 0 else {
      throw InhibitRefusal(
        isAbsent: false,
        description: "Inhibit: cannot keep the lock: \(SystemCallError.current("fcntl").errno)")
    }
    return own
  }
}
