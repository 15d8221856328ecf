import CSystemdBus
import EventLoops
import Glibc
import SystemPackage

/// An sd-bus connection served on the daemon's event loop (logind's sleep and idle watches):
/// everything pending processed when its descriptor is ready, writability asked for only
/// while sd-bus has something to send (the loop is level-triggered).
enum BusPump {
  /// Processes what is pending on `bus` (match callbacks run here). When the connection broke,
  /// deregisters it, sets `registration` to nil and returns why.
  static func process(
    _ bus: OpaquePointer?, on eventLoop: EventLoop, registration: inout EventLoop.Registration?
  ) -> Errno? {
    while true {
      let result = sd_bus_process(bus, nil)
      if result == 0 { break }
      if result < 0 {
        if let registration { eventLoop.deregister(registration) }
        registration = nil
        return Errno(rawValue: -result)
      }
    }
    if let registration {
      let events = sd_bus_get_events(bus)
      let interest: EventLoop.Interest =
        events >= 0 && (Int16(events) & Int16(POLLOUT)) != 0 ? [.readable, .writable] : .readable
      try? eventLoop.setInterest(registration, interest)
    }
    return nil
  }
}
