import CSystemShims
import Locking
import SystemCalls
import SystemPackage

#if canImport(Glibc)
  import Glibc
#endif

/// One thread, one epoll instance, many low-traffic descriptors (swift-nio's
/// `SelectableEventLoop`, cut down): a source registers its descriptor with a readiness
/// handler, and the loop calls the handler on its thread when the descriptor is ready. Timers
/// and submitted closures run on the same thread. While nothing is ready and no timer is due,
/// the thread sleeps in `epoll_wait` without a timeout: no wake-ups.
///
/// Handlers, timers and closures run one at a time on the loop's thread: they must not block.
/// State that only they touch needs no lock (``isInLoop`` checks it). ``stop()`` is the one
/// way to stop the loop; sources close their own descriptors.
public final class EventLoop: Sendable {
  /// Called on the loop's thread when a registered descriptor is ready.
  public typealias Handler = @Sendable (Readiness) -> Void

  private typealias TimerEntry = (deadline: ContinuousClock.Instant, body: @Sendable () -> Void)

  private struct State {
    var handlers: [UInt64: Handler] = [:]
    var timers: [UInt64: TimerEntry] = [:]
    var closures: [@Sendable () -> Void] = []
    var nextID: UInt64 = 1
    /// The wake-up event was written and the loop has not taken the closures since.
    var wakeUpPending = false
    var stopping = false
    /// The thread has ended and closed its descriptors: closures and timers are dropped.
    var finished = false
    var thread: pthread_t?
  }

  /// The name of the loop's thread.
  public let name: String
  /// Whether the loop has a thread of its own (else its owner runs it: ``runOnCallingThread()``).
  private let ownsThread: Bool
  private let epoll: Int32
  private let wakeUp: Int32
  private let state = Lock(State())
  /// Held while ``submit(_:)`` runs a closure on its caller's thread after the loop ended.
  private let afterEnd = Lock(())
  /// The event whose data is this id is the wake-up event; registrations start at 1.
  private static let wakeUpID: UInt64 = 0

  /// Creates the epoll instance and starts the loop's thread, named `name`; with
  /// `startingThread: false` no thread starts, and the loop runs when its owner calls
  /// ``runOnCallingThread()`` (a one-shot command that waits for its sources anyway).
  public init(name: String, startingThread: Bool = true) throws(SystemCallError) {
    self.name = name
    ownsThread = startingThread
    epoll = try systemCall("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
    do {
      wakeUp = try systemCall("eventfd") { eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK)) }
    } catch {
      close(epoll)
      throw error
    }
    do {
      var event = epoll_event()
      event.events = EPOLLIN.rawValue
      event.data.u64 = Self.wakeUpID
      _ = try systemCall("epoll_ctl(ADD eventfd)") {
        epoll_ctl(epoll, EPOLL_CTL_ADD, wakeUp, &event)
      }
      // The thread ends with the loop instead of parking for other work (`parksAfter`): a
      // parked thread keeps the loop's name, and an ended loop would still show as running.
      if startingThread {
        try SystemThread.detach(name: name, parksAfter: false) { [self] in run() }
      }
    } catch {
      close(wakeUp)
      close(epoll)
      throw error
    }
  }

  private static let sharedLoop = Lock<EventLoop?>(nil)

  /// The process's loop for components given none (swift-nio's singleton event loop group):
  /// created on first use, named `bg-events`, never stopped. A host that makes its own loop
  /// (the daemon) hands it to every component instead, so a process constructs one loop
  /// either way.
  public static func shared() throws(SystemCallError) -> EventLoop {
    try sharedLoop.withLock { (shared: inout EventLoop?) throws(SystemCallError) -> EventLoop in
      if let shared { return shared }
      let loop = try EventLoop(name: "bg-events")
      shared = loop
      return loop
    }
  }

  /// Whether the caller runs on the loop's thread.
  public var isInLoop: Bool {
    state.withLock { state in state.thread.map { pthread_equal($0, pthread_self()) != 0 } }
      ?? false
  }

  /// How many descriptors are registered now (for diagnostics: which sources share the loop).
  public var registrationCount: Int { state.withLock { $0.handlers.count } }

  // MARK: Descriptors

  /// Watches `descriptor` for `interest`; `handler` runs on the loop's thread while it is ready
  /// (level-triggered: a handler that leaves data unread is called again). Hang-ups and errors
  /// are reported whatever the interest. The caller keeps the descriptor open until it
  /// ``deregister(_:)``s it.
  public func register(
    _ descriptor: Int32, interest: Interest, _ handler: @escaping Handler
  ) throws(SystemCallError) -> Registration {
    let id = state.withLock { state in
      defer { state.nextID += 1 }
      state.handlers[state.nextID] = handler
      return state.nextID
    }
    let registration = Registration(id: id, descriptor: descriptor)
    do {
      try control(EPOLL_CTL_ADD, registration, interest: interest)
    } catch {
      _ = state.withLock { $0.handlers.removeValue(forKey: id) }
      throw error
    }
    return registration
  }

  /// Changes what `registration` waits for.
  public func setInterest(_ registration: Registration, _ interest: Interest)
    throws(SystemCallError)
  {
    try control(EPOLL_CTL_MOD, registration, interest: interest)
  }

  /// Stops watching the descriptor; its handler is not called again once this returns on the
  /// loop's thread (off it, a call already under way may still finish: deregister from the
  /// loop, with ``submit(_:)``, before closing a descriptor a handler reads).
  public func deregister(_ registration: Registration) {
    // The handler is released after the lock: its captures may call back into the loop.
    _ = state.withLock { state in
      // Once the loop ended, its epoll descriptor is closed (its number may be another's now).
      if !state.finished { _ = epoll_ctl(epoll, EPOLL_CTL_DEL, registration.descriptor, nil) }
      return state.handlers.removeValue(forKey: registration.id)
    }
  }

  /// `epoll_ctl` under the state lock, so that it never reaches the number of an epoll
  /// descriptor the ended loop closed; on an ended loop it fails with `EBADF`.
  private func control(_ operation: Int32, _ registration: Registration, interest: Interest)
    throws(SystemCallError)
  {
    var event = epoll_event()
    event.events = interest.epollEvents
    event.data.u64 = registration.id
    try state.withLock { (state) throws(SystemCallError) in
      guard !state.finished else { throw SystemCallError("epoll_ctl", errno: .badFileDescriptor) }
      _ = try systemCall("epoll_ctl") {
        epoll_ctl(epoll, operation, registration.descriptor, &event)
      }
    }
  }

  // MARK: Closures and timers

  /// Runs `body` on the loop's thread, soon (after the handlers of the current round). Once
  /// the loop has stopped, `body` is dropped: nothing would run it, and what it holds (often the
  /// caller, which holds the loop) must not be kept alive by the loop.
  public func execute(_ body: @escaping @Sendable () -> Void) {
    _ = enqueue(body)
  }

  /// Queues `body` for the loop's thread; false (and `body` not kept) once the loop ended.
  private func enqueue(_ body: @escaping @Sendable () -> Void) -> Bool {
    state.withLock { state in
      guard !state.finished else { return false }
      state.closures.append(body)
      wakeUpIfNeeded(&state)
      return true
    }
  }

  /// Runs `body` on the loop's thread and returns its result. Once the loop has ended, `body`
  /// runs on the caller's thread instead, one at a time as on the loop: the caller waits for
  /// the result (dropping `body` would leave it waiting forever), and a source's last step
  /// (stopping, deregistering) still runs when the loop it was given stopped first.
  public func submit<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
    await withCheckedContinuation { continuation in
      let queued = enqueue { continuation.resume(returning: body()) }
      if !queued { continuation.resume(returning: afterEnd.withLock { _ in body() }) }
    }
  }

  /// Runs `body` on the loop's thread at `deadline`, unless ``cancel(_:)`` comes first.
  @discardableResult
  public func schedule(
    at deadline: ContinuousClock.Instant, _ body: @escaping @Sendable () -> Void
  ) -> Timer {
    let id = state.withLock { state in
      defer { state.nextID += 1 }
      guard !state.finished else { return state.nextID }  // dropped, as in execute
      state.timers[state.nextID] = (deadline, body)
      wakeUpIfNeeded(&state)
      return state.nextID
    }
    return Timer(id: id)
  }

  /// Runs `body` on the loop's thread after `delay`.
  @discardableResult
  public func schedule(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> Timer {
    schedule(at: .now + delay, body)
  }

  /// Cancels `timer`; nothing happens when it already ran.
  public func cancel(_ timer: Timer) {
    _ = state.withLock { $0.timers.removeValue(forKey: timer.id) }
  }

  /// Stops the loop: closures already submitted run, then the thread ends and the epoll
  /// instance is closed. Handlers and timers are dropped; registered descriptors stay open.
  /// Closures and timers handed to it after that are dropped at once (a ``submit(_:)`` runs on
  /// its caller). Stopping an ended loop does nothing.
  public func stop() {
    state.withLock { state in
      state.stopping = true
      wakeUpIfNeeded(&state)
    }
  }

  /// Writes the wake-up event for a caller that changed the state: not from the loop's thread
  /// (it looks again before sleeping), once until the loop takes the closures, and never after
  /// the loop ended. Under the state lock, like the loop's closing of the descriptor: the write
  /// never reaches a number the ended loop closed and something else opened since.
  private func wakeUpIfNeeded(_ state: inout State) {
    if state.finished || state.wakeUpPending { return }
    if let thread = state.thread, pthread_equal(thread, pthread_self()) != 0 { return }
    state.wakeUpPending = true
    _ = try? systemCall("eventfd_write") { eventfd_write(wakeUp, 1) }
  }

  /// Runs the loop on the calling thread until ``stop()`` (from a handler, timer or closure of
  /// its own): for a loop made with `startingThread: false`, once.
  public func runOnCallingThread() {
    precondition(!ownsThread, "\(name) runs on a thread of its own")
    run()
  }

  // MARK: The loop's thread

  private func run() {
    state.withLock { $0.thread = pthread_self() }
    var events = [epoll_event](repeating: epoll_event(), count: 64)
    while true {
      let timeout = state.withLock { Self.timeout(for: $0) }
      let count: Int32
      do {
        count = try systemCall("epoll_wait") {
          epoll_wait(epoll, &events, Int32(events.count), timeout)
        }
      } catch {
        preconditionFailure("\(name): \(error)")  // EBADF/EFAULT/EINVAL: a bug of ours
      }
      for event in events.prefix(Int(count)) {
        if event.data.u64 == Self.wakeUpID {
          var value: eventfd_t = 0
          _ = eventfd_read(wakeUp, &value)
          continue
        }
        let handler = state.withLock { $0.handlers[event.data.u64] }
        handler?(Readiness(epollEvents: event.events))
      }
      runDueTimers()
      let (closures, stopping) = state.withLock { state in
        defer {
          state.closures = []
          state.wakeUpPending = false
        }
        return (state.closures, state.stopping)
      }
      for closure in closures { closure() }
      // Ended in the same lock that finds no closure left: one queued later is refused (and a
      // submitted one runs on its caller), never dropped unanswered.
      let dropped = state.withLock {
        state -> (handlers: [UInt64: Handler], timers: [UInt64: TimerEntry])? in
        guard stopping, state.closures.isEmpty else { return nil }
        defer {
          state.handlers = [:]
          state.timers = [:]
          state.finished = true
          state.thread = nil
          close(wakeUp)
          close(epoll)
        }
        return (state.handlers, state.timers)
      }
      // Released after the lock: a handler's captures may call back into the loop when freed.
      if dropped != nil { break }
    }
  }

  private func runDueTimers() {
    let now = ContinuousClock.now
    let due = state.withLock { state in
      let due = state.timers.filter { $0.value.deadline <= now }
      for id in due.keys { state.timers.removeValue(forKey: id) }
      return due.values.sorted { $0.deadline < $1.deadline }
    }
    for timer in due { timer.body() }
  }

  /// The `epoll_wait` timeout in milliseconds: 0 with closures waiting or stopping, up to the
  /// next timer (rounded up), else -1 (sleep until a descriptor is ready).
  private static func timeout(for state: State) -> Int32 {
    if !state.closures.isEmpty || state.stopping { return 0 }
    guard let next = state.timers.values.lazy.map(\.deadline).min() else { return -1 }
    let remaining = ContinuousClock.now.duration(to: next)
    guard remaining > .zero else { return 0 }
    let (seconds, attoseconds) = remaining.components
    let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
    return Int32(clamping: milliseconds)
  }
}
