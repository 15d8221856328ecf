import DBus
import Logging

/// The system-bus connection a watch of systemd-logind uses: logind's signals only from the
/// name's owner (a forged one is logged at debug and ignored), and a method call that logind
/// does not answer within 2 seconds fails instead of holding the watch.
package enum LogindBus {
  /// logind's well-known bus name, its manager's object path and interface.
  package static let destination = "org.freedesktop.login1"
  package static let path = "/org/freedesktop/login1"
  package static let interface = "org.freedesktop.login1.Manager"

  /// Opens the system bus (or the bus at `address`), as above.
  package static func connect(address: String?, logger: Logger) throws(BusError) -> BusConnection {
    let connection = try BusConnection(.system(address: address)) { refusal in
      logger.debug("ignored a forged systemd-logind signal: \(refusal)")
    }
    return connection
  }
}
