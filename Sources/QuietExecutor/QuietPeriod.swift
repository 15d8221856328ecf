/// When a process whose executor is quiet should run its ``QuietAction``: a value type fed with
/// `CLOCK_MONOTONIC` times in nanoseconds by the pool's resident worker, which reports the work
/// the pool ran since it last looked, its own or its helpers' (``ranWork()``), and asks before
/// each wait (``beforeWait(now:)``).
///
/// The action is due once the worker has waited `delay` with nothing to run after some work,
/// and never sooner than `minimumInterval` after the previous action: after a burst of work it
/// runs once, within `delay` (or the interval) of the burst's end, and while nothing happens it
/// never runs again, so an idle process does not wake for it.
struct QuietPeriod: Sendable, Equatable {
  /// What the worker does before it waits.
  enum Decision: Equatable {
    /// Nothing is due: wait for work or the earliest sleep only.
    case wait
    /// Wait at most this many nanoseconds: then the action is due, unless work came first.
    case waitAtMost(Int64)
    /// Run the action now (and then look for work again).
    case act
  }

  let delay: Int64
  let minimumInterval: Int64
  private var workRan = false
  private var due: Int64?
  private var lastAction: Int64?

  init(delay: Duration, minimumInterval: Duration) {
    self.delay = Self.nanoseconds(delay)
    self.minimumInterval = Self.nanoseconds(minimumInterval)
  }

  /// The pool ran a job since the worker last looked.
  mutating func ranWork() {
    workRan = true
  }

  /// The worker found nothing to run at `now` and is about to wait.
  mutating func beforeWait(now: Int64) -> Decision {
    if workRan {
      workRan = false
      let afterLast = lastAction.map { Self.sum($0, minimumInterval) }
      due = max(Self.sum(now, delay), afterLast ?? .min)
    }
    guard let due else { return .wait }
    guard now >= due else { return .waitAtMost(due - now) }
    self.due = nil
    lastAction = now
    return .act
  }

  private static func sum(_ time: Int64, _ nanoseconds: Int64) -> Int64 {
    let (sum, overflow) = time.addingReportingOverflow(nanoseconds)
    return overflow ? .max : sum
  }

  private static func nanoseconds(_ duration: Duration) -> Int64 {
    let (seconds, attoseconds) = duration.components
    let (whole, overflow) = max(0, seconds).multipliedReportingOverflow(by: 1_000_000_000)
    return overflow ? .max : whole + max(0, attoseconds) / 1_000_000_000
  }
}

/// Work a long-running process does once its executor falls quiet after some work, such as
/// giving back memory the work used (``QuietExecutors/install(whenQuiet:)``). It runs on the
/// pool's resident worker (the main thread, which runs the main actor's jobs too), so it should
/// be short and must not wait for anything: work that may wait belongs on a thread of its own.
public struct QuietAction: Sendable {
  let delay: Duration
  let minimumInterval: Duration
  let run: @Sendable () -> Void

  /// `run` is called once the executor has had nothing to run for `delay` after running
  /// something, and at most once per `minimumInterval`.
  public init(
    after delay: Duration, atMostEvery minimumInterval: Duration,
    _ run: @escaping @Sendable () -> Void
  ) {
    self.delay = delay
    self.minimumInterval = minimumInterval
    self.run = run
  }
}
