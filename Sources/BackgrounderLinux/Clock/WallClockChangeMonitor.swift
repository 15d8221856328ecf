import Backgrounder
import Broadcasting
import CTimerFD
import Foundation
import Locking
import Logging
import ServiceLifecycle

#if canImport(Glibc)
  import Glibc
#endif

/// Reports wall-clock steps and resumes from suspend to the runtime (a ``ClockChangeSource``),
/// read from a ``CancelOnSetTimer``. A dedicated thread sleeps in `poll` on the timer: no
/// wake-ups while the clock is left alone. Runs as a `Service` until cancelled or a graceful
/// shutdown; subscribers' streams end with it.
public final class WallClockChangeMonitor: ClockChangeSource, Service, Sendable {
  private let logger: Logger
  /// Changes are events, not a value: a new subscriber hears of the later ones only, and a
  /// consumer behind by several needs to hear of one.
  private let changes = Lock(Broadcaster<Void>(replaysLatest: false, bufferLimit: 1))

  public init(logger: Logger) {
    self.logger = logger
  }

  public func clockChanges() -> AsyncStream<Void> {
    changes.withLock { changes in
      changes.subscribe { [weak self] id in self?.changes.withLock { $0.unsubscribe(id) } }
    }
  }

  /// Watches the clock until cancelled or a graceful shutdown. Throws when the timer cannot be
  /// created or read.
  public func run() async throws {
    defer {
      for stream in changes.withLock({ $0.finish() }) { stream.finish() }
    }
    let timer = try CancelOnSetTimer()
    let stop = eventfd(0, Int32(EFD_CLOEXEC))
    guard stop >= 0 else { throw ClockChangeError(operation: "eventfd", errno: errno) }
    defer { close(stop) }
    try await withGracefulShutdownHandler {
      try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
          let thread = Thread { [self] in
            do {
              try watch(timer, stop: stop)
              done.resume()
            } catch {
              done.resume(throwing: error)
            }
          }
          thread.name = "backgrounder-clock"
          thread.start()
        }
      } onCancel: {
        _ = eventfd_write(stop, 1)
      }
    } onGracefulShutdown: {
      _ = eventfd_write(stop, 1)
    }
  }

  /// Polls the timer and the stop event on the dedicated thread.
  private func watch(_ timer: CancelOnSetTimer, stop: Int32) throws(ClockChangeError) {
    var fds = [
      pollfd(fd: timer.descriptor, events: Int16(POLLIN), revents: 0),
      pollfd(fd: stop, events: Int16(POLLIN), revents: 0),
    ]
    while true {
      let ready = poll(&fds, nfds_t(fds.count), -1)
      if ready < 0 {
        if errno == EINTR { continue }
        throw ClockChangeError(operation: "poll", errno: errno)
      }
      if fds[1].revents != 0 { return }
      guard fds[0].revents != 0 else { continue }
      switch try timer.read() {
      case .clockChanged:
        try timer.arm()
        logger.info("wall clock was set or the system resumed")
        publish()
      case .expired:
        try timer.arm()
      case .nothing:
        break
      }
    }
  }

  private func publish() {
    for recipient in changes.withLock({ $0.publish(()) }) { recipient.deliver(()) }
  }
}
