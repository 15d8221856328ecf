import Foundation
import Logging
import SystemCalls
import SystemPackage

#if canImport(Glibc)
  import Glibc
#endif

/// Talks the `sd_notify` protocol to systemd over `$NOTIFY_SOCKET` (no libsystemd needed):
/// `READY=1`, `STATUS=…`, `STOPPING=1`, `WATCHDOG=1`. Does nothing when not run by systemd.
package struct SystemdNotifier: Sendable {
  /// The socket path (`@` prefix = abstract namespace), nil outside systemd.
  package let socketPath: String?
  /// How often to send `WATCHDOG=1` (half of `$WATCHDOG_USEC`), nil when no watchdog is set.
  package let watchdogInterval: Duration?

  /// Reads `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `WATCHDOG_PID` from `environment`.
  package init(
    environment: [String: String] = ProcessInfo.processInfo.environment,
    processID: Int32 = getpid()
  ) {
    socketPath = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
    let watchdogForUs = environment["WATCHDOG_PID"].map { $0 == "\(processID)" } ?? true
    if watchdogForUs, let text = environment["WATCHDOG_USEC"], let usec = Int64(text), usec > 0 {
      watchdogInterval = .microseconds(usec / 2)
    } else {
      watchdogInterval = nil
    }
  }

  /// Sends one notification such as `"READY=1\nSTATUS=3 jobs scheduled"`.
  /// Errors are returned, not thrown: a missing systemd must never stop the daemon.
  @discardableResult
  package func notify(_ state: String) -> Errno? {
    guard let socketPath else { return nil }
    let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return SystemCallError.current("socket").errno }
    defer { close(fd) }
    let address: UnixSocketAddress
    do {
      address = try UnixSocketAddress(path: socketPath)
    } catch {
      return error
    }
    let bytes = Array(state.utf8)
    let sent = address.withSocketAddress { socketAddress, length in
      sendto(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL), socketAddress, length)
    }
    return sent < 0 ? SystemCallError.current("sendto").errno : nil
  }

  /// Sends `WATCHDOG=1` every `watchdogInterval` while `isHealthy()` says so, until the calling
  /// task is cancelled; while it does not, no ping is sent and systemd restarts the service
  /// after `WatchdogSec`.
  package func runWatchdog(logger: Logger, isHealthy: @Sendable () -> Bool) async {
    guard let interval = watchdogInterval, socketPath != nil else { return }
    var withheld = false
    while !Task.isCancelled {
      if isHealthy() {
        if withheld { logger.notice("dispatch loop progresses again: watchdog pings resumed") }
        withheld = false
        notify("WATCHDOG=1")
      } else if !withheld {
        withheld = true
        logger.error("dispatch loop makes no progress: withholding watchdog pings")
      }
      try? await Task.sleep(for: interval)
    }
  }
}
