import Backgrounder
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
  private struct State {
    var subscribers: [Int: AsyncStream<Void>.Continuation] = [:]
    var nextId = 0
    var finished = false
  }

  private let logger: Logger
  private let state = Lock(State())

  public init(logger: Logger) {
    self.logger = logger
  }

  public func clockChanges() -> AsyncStream<Void> {
    let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    let id = state.withLock { state -> Int? in
      guard !state.finished else { return nil }
      state.nextId += 1
      state.subscribers[state.nextId] = continuation
      return state.nextId
    }
    guard let id else {
      continuation.finish()
      return stream
    }
    continuation.onTermination = { [weak self] _ in
      _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
    }
    return stream
  }

  /// Watches the clock until cancelled or a graceful shutdown. Throws when the timer cannot be
  /// created or read.
  public func run() async throws {
    defer {
      let subscribers = state.withLock { state in
        state.finished = true
        defer { state.subscribers = [:] }
        return Array(state.subscribers.values)
      }
      for subscriber in subscribers { subscriber.finish() }
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
    for subscriber in state.withLock({ Array($0.subscribers.values) }) { subscriber.yield() }
  }
}
