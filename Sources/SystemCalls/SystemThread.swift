import CSystemShims
import Locking
import SystemPackage

#if canImport(Glibc)
  import Glibc
#endif

/// The one way to start a thread of our own: a named, detached POSIX thread, for the
/// ``EventLoop`` and the few sources measured to be better on a thread of their own.
public enum SystemThread {
  final class Body: Sendable {
    let name: String
    let run: @Sendable () -> Void
    init(name: String, run: @escaping @Sendable () -> Void) {
      self.name = name
      self.run = run
    }
  }

  /// Starts `body` on a detached thread named `name` (at most 15 bytes are shown): a parked one
  /// (``parkFinishedThreads()``) when there is one, else a new one. Created detached, so no
  /// moment exists in which it could end unjoined (a process exiting then shows ThreadSanitizer
  /// a leaked thread). With `parksAfter` false, the thread ends after `body` even while threads
  /// park.
  public static func detach(
    name: String, parksAfter: Bool = true, _ body: @escaping @Sendable () -> Void
  ) throws(SystemCallError) {
    try detach(name: name, parksAfter: parksAfter, in: parking, body)
  }

  /// ``detach(name:parksAfter:_:)`` with the parked threads of `parking` (a pool of its own in
  /// tests, which other suites' threads do not take from).
  static func detach(
    name: String, parksAfter: Bool, in parking: ParkedThreads,
    _ body: @escaping @Sendable () -> Void
  ) throws(SystemCallError) {
    let work = Body(name: name, run: body)
    if parking.handOff(work, parksAfter: parksAfter) { return }
    let handoff = Handoff(next: (work, parksAfter))
    _ = try start(name: name, detached: true) {
      let slot = ParkedThreads.Slot()
      var named = name
      while let parks = handoff.runNext() {
        guard parks, let following = parking.park(slot) else { return }
        // Renamed only for another kind of work (a `prctl` per store commit saved).
        if following.body.name != named {
          _ = csystem_set_thread_name(following.body.name)
          named = following.body.name
        }
        handoff.next = following
      }
    }
  }

  /// A thread's next body: taken out before it runs, so that a parked thread holds nothing its
  /// last body captured.
  private final class Handoff: @unchecked Sendable {
    // Used by its thread only, after the start.
    var next: (body: Body, parksAfter: Bool)?

    init(next: (body: Body, parksAfter: Bool)) {
      self.next = next
    }

    /// Runs the next body, if any (released once it returned); whether its thread parks after.
    func runNext() -> Bool? {
      guard let (body, parksAfter) = next else { return nil }
      next = nil
      body.run()
      return parksAfter
    }
  }

  /// Makes threads of ``detach(name:parksAfter:_:)`` whose body returned wait for the next body
  /// instead of ending (at most `limit` at once), until ``retireParkedThreads()``: for a
  /// long-running process, whose short blocking steps (a store write, a wait for a stopped
  /// process) then start no thread each (issue #35). The executor's quiet action retires them,
  /// so an idle process keeps none.
  public static func parkFinishedThreads(limit: Int = 8) {
    parking.enable(limit: limit)
  }

  /// Ends the threads parked now.
  public static func retireParkedThreads() {
    parking.retireAll()
  }

  static let parking = ParkedThreads()

  /// Where finished threads wait for their next body: each on a semaphore of its own, handed a
  /// body (or nothing: it ends) under the lock before the post.
  final class ParkedThreads: Sendable {
    /// One parked thread's semaphore and what it is handed.
    final class Slot: @unchecked Sendable {
      // Guarded by `ParkedThreads.state`'s lock: written before the post, read after the wait.
      var handed: (body: Body, parksAfter: Bool)?
      let semaphore: UnsafeMutablePointer<sem_t>

      init() {
        semaphore = .allocate(capacity: 1)
        sem_init(semaphore, 0, 0)
      }

      deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
      }
    }

    private struct State {
      var limit = 0
      var idle: [Slot] = []
    }

    private let state = Lock(State())

    var count: Int { state.withLock { $0.idle.count } }

    func enable(limit: Int) {
      state.withLock { $0.limit = max(0, limit) }
    }

    /// Hands `body` to a parked thread; false when none is parked.
    func handOff(_ body: Body, parksAfter: Bool) -> Bool {
      guard
        let slot = state.withLock({ state -> Slot? in
          guard let slot = state.idle.popLast() else { return nil }
          slot.handed = (body, parksAfter)
          return slot
        })
      else { return false }
      sem_post(slot.semaphore)
      return true
    }

    /// Parks the calling thread on its `slot` until it is handed a body; nil (the thread ends)
    /// when parking is off, the limit is reached, or the thread was retired.
    func park(_ slot: Slot) -> (body: Body, parksAfter: Bool)? {
      guard
        state.withLock({ state in
          guard state.idle.count < state.limit else { return false }
          state.idle.append(slot)
          return true
        })
      else { return nil }
      while sem_wait(slot.semaphore) != 0 {}  // EINTR
      return state.withLock { _ in
        defer { slot.handed = nil }
        return slot.handed
      }
    }

    func retireAll() {
      let slots = state.withLock { state in
        defer { state.idle = [] }
        return state.idle
      }
      for slot in slots { sem_post(slot.semaphore) }
    }
  }

  /// Runs `body` on a new thread named `name` and waits for it to finish: for short work that
  /// changes thread-local kernel state (a `setns` into another network namespace).
  public static func runAndWait<Result: Sendable>(
    name: String, _ body: @escaping @Sendable () -> Result
  ) throws(SystemCallError) -> Result {
    let slot = ResultSlot<Result>()
    let thread = try start(name: name) { slot.store(body()) }
    pthread_join(thread, nil)
    return slot.take()!
  }

  private static func start(
    name: String, detached: Bool = false, _ body: @escaping @Sendable () -> Void
  ) throws(SystemCallError) -> pthread_t {
    var thread = pthread_t()
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    if detached { pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED)) }
    let context = Unmanaged.passRetained(Body(name: name, run: body)).toOpaque()
    let status = pthread_create(
      &thread, &attributes,
      { context in
        let body = Unmanaged<Body>.fromOpaque(context!).takeRetainedValue()
        _ = csystem_set_thread_name(body.name)
        body.run()
        return nil
      }, context)
    guard status == 0 else {
      Unmanaged<Body>.fromOpaque(context).release()
      throw SystemCallError("pthread_create", errno: Errno(rawValue: status))
    }
    return thread
  }

  /// Runs `body`, which blocks (`flock`, a `usleep` loop), on a thread of its own and returns
  /// its result: a caller on the Swift concurrency pool never holds one of its fixed threads.
  public static func runBlocking<Result: Sendable>(
    name: String, _ body: @escaping @Sendable () throws -> Result
  ) async throws -> Result {
    try await withCheckedThrowingContinuation { continuation in
      do {
        try detach(name: name) { continuation.resume(with: Swift.Result { try body() }) }
      } catch {
        continuation.resume(throwing: error)
      }
    }
  }
}
