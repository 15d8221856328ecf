import Backgrounder
import Broadcasting
import EventLoops
import Locking
import Logging
import ServiceLifecycle
import SystemCalls

/// Reports wall-clock steps and resumes from suspend to the runtime (a ``ClockChangeSource``),
/// read from a ``CancelOnSetTimer`` watched by an ``EventLoop``: no wake-ups while the clock is
/// left alone. Runs as a `Service` until cancelled or a graceful shutdown; subscribers' streams
/// end with it.
public final class WallClockChangeMonitor: ClockChangeSource, Service, Sendable {
  private let logger: Logger
  private let eventLoop: EventLoop?
  /// Changes are events, not a value: a new subscriber hears of the later ones only, and a
  /// consumer behind by several needs to hear of one.
  private let changes = Lock(Broadcaster<Void>(replaysLatest: false, bufferLimit: 1))
  private let count = Lock<UInt64>(0)

  /// The changes read from the timer so far.
  public var changeCount: UInt64 { count.withLock { $0 } }

  /// Without `eventLoop`, the monitor is served by the process's shared loop
  /// (`EventLoop.shared()`).
  public init(logger: Logger, eventLoop: EventLoop? = nil) {
    self.logger = logger
    self.eventLoop = eventLoop
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
    let loop = try eventLoop ?? EventLoop.shared()
    let serving = LoopServing()
    let registration = try loop.register(timer.descriptor, interest: .readable) { [self] _ in
      do throws(SystemCallError) {
        try read(timer)
      } catch {
        serving.fail(error)
      }
    }
    try await serving.wait(thenDeregister: registration, from: loop)
  }

  /// Reads the timer, on the event loop.
  private func read(_ timer: CancelOnSetTimer) throws(SystemCallError) {
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

  private func publish() {
    count.withLock { $0 += 1 }
    for recipient in changes.withLock({ $0.publish(()) }) { recipient.deliver(()) }
  }
}
