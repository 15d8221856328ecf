import DBus
import EventLoops
import Foundation
import Logging
import SystemCalls
import SystemPackage

/// Watches systemd-logind's `PrepareForSleep` and `PrepareForShutdown` signals on a bus
/// connection of its own, served by the daemon's event loop (no thread of its own; an idle
/// connection makes no system calls). `true`: the system is about to go; `false`: it is back
/// (or the shutdown was cancelled). With it comes logind's `InhibitDelayMaxUSec`, read once
/// when connecting (nil when it could not be read).
package final class LogindSleepWatch: @unchecked Sendable {
  // @unchecked: the connection is made on a thread of its own and handed to the event loop
  // (its `execute`), which alone touches `connection`; `inhibitDelayMax` is set before that.
  private let eventLoop: EventLoop
  private let address: String?
  private let logger: Logger
  private let onChange: @Sendable (_ sleeping: Bool, _ inhibitDelayMax: Duration?) -> Void
  private var inhibitDelayMax: Duration?
  /// logind's signals arrive here, each checked (sent by logind's current owner, broadcast)
  /// before ``received(_:)`` sees it.
  private var connection: BusConnection?
  /// Set by ``stopSoon()`` on the event loop: a connection made after it is closed, not served.
  private var stopped = false

  /// `address`: a bus address, or nil for the system bus (`DBUS_SYSTEM_BUS_ADDRESS` when set).
  package init(
    eventLoop: EventLoop, address: String? = nil, logger: Logger,
    onChange: @escaping @Sendable (_ sleeping: Bool, _ inhibitDelayMax: Duration?) -> Void
  ) {
    self.eventLoop = eventLoop
    self.address = address
    self.logger = logger
    self.onChange = onChange
  }

  /// Connects and subscribes off the caller (bounded by 2 s), then serves the connection on
  /// the event loop. Without a bus the daemon goes on without the signals (logged).
  package func start() {
    // The connection's setup blocks (sd-bus calls): on a thread of its own, never on one of
    // the concurrency pool's.
    do throws(SystemCallError) {
      try SystemThread.detach(name: "bg-logind-watch") { self.connectAndServe() }
    } catch {
      logger.info(
        "not watching for system sleep: runs are not stopped before it",
        metadata: ["reason": "\(error)"])
    }
  }

  private func connectAndServe() {
    let connection: BusConnection
    do throws(BusError) {
      connection = try connect()
    } catch {
      logger.info(
        "not watching for system sleep: runs are not stopped before it",
        metadata: ["reason": "logind signals: \(error)"])
      return
    }
    // Handed to the loop, which alone touches it from now on.
    eventLoop.execute { self.serve(connection) }
  }

  /// Stops serving the connection and closes it (on the event loop, soon), also when it is
  /// still being made: it is closed when it arrives.
  package func stopSoon() {
    eventLoop.execute {
      self.stopped = true
      self.connection?.stopServing()
      self.connection = nil
    }
  }

  private func connect() throws(BusError) -> BusConnection {
    let connection = try LogindBus.connect(address: address, logger: logger)
    try connection.subscribe(
      from: LogindBus.destination,
      match: "path='\(LogindBus.path)',interface='\(LogindBus.interface)'"
    ) { [weak self] message in self?.received(message) }
    inhibitDelayMax = readInhibitDelayMax(connection)
    return connection
  }

  /// logind's `InhibitDelayMaxUSec` (the longest sleep waits for a delay lock), nil when it
  /// cannot be read (logged).
  private func readInhibitDelayMax(_ connection: BusConnection) -> Duration? {
    do throws(BusError) {
      let microseconds = try connection.uint64Property(
        destination: LogindBus.destination, path: LogindBus.path,
        interface: LogindBus.interface, name: "InhibitDelayMaxUSec",
        timeout: .seconds(2), autoStart: true)
      return .microseconds(Int64(clamping: microseconds))
    } catch {
      logger.info(
        "cannot read logind's InhibitDelayMaxUSec: runs stopped for sleep get the full grace",
        metadata: ["error": "\(error)"])
      return nil
    }
  }

  /// On the event loop: takes the connection and serves it, unless the watch was stopped while
  /// it was being made (then dropping it closes it).
  private func serve(_ connection: BusConnection) {
    guard !stopped else { return }
    self.connection = connection
    connection.serve(on: eventLoop) { [logger] error in
      logger.warning(
        "the bus connection for system sleep broke: runs are no longer stopped before it",
        metadata: ["error": "\(error)"])
    }
  }

  private func received(_ message: BusMessage) {
    guard let member = message.member,
      member == "PrepareForSleep" || member == "PrepareForShutdown",
      let active = try? message.bool()
    else { return }
    logger.info("systemd-logind: \(member)(\(active))")
    onChange(active, inhibitDelayMax)
  }
}
