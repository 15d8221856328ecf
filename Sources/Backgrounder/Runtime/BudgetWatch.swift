import Locking

/// The budgets of the runs in flight, watched by one task that sleeps until the earliest.
///
/// A run used to start a task of its own that slept until its budget ran out and was cancelled
/// when the run ended: with libdispatch's executor each such sleep is a timer source handed to
/// the manager thread (a wake-up through an `eventfd`), and the dispatch benchmark ran 13 %
/// more jobs per second without them (issue #35). A run's budget now costs an entry here; the
/// watching task is woken only for a deadline earlier than the one it sleeps until.
final class BudgetWatch: Sendable {
  private struct Watched {
    var deadline: WallInstant
    var due: @Sendable () -> Void
  }

  private struct State {
    var watched: [RunToken: Watched] = [:]
    /// The deadline the watching task sleeps until; nil while it waits for one.
    var armed: WallInstant?
  }

  private let state = Lock(State())
  private let rearm = WakeSignal()

  /// Calls `due` once `deadline` has passed, unless ``forget(_:)`` of `token` comes first. A
  /// later call for `token` replaces the earlier one.
  func watch(_ token: RunToken, until deadline: WallInstant, due: @escaping @Sendable () -> Void) {
    let earlier = state.withLock { state in
      state.watched[token] = Watched(deadline: deadline, due: due)
      return state.armed.map { deadline < $0 } ?? true
    }
    if earlier { rearm.fire() }
  }

  /// Stops watching `token` (its run ended). The last one forgotten disarms the watching
  /// task's timer, so that an idle process is not woken at the deadline of a run long ended.
  func forget(_ token: RunToken) {
    let disarm = state.withLock { state in
      state.watched.removeValue(forKey: token) != nil && state.watched.isEmpty
        && state.armed != nil
    }
    if disarm { rearm.fire() }
  }

  /// Calls the `due` of each watched deadline that passes on `clock`, until cancelled.
  func run(clock: any WallClock) async {
    while !Task.isCancelled {
      let now = clock.now
      let (due, next) = state.withLock {
        state -> ([(RunToken, @Sendable () -> Void)], WallInstant?) in
        var due: [(RunToken, @Sendable () -> Void)] = []
        var next: WallInstant?
        for (token, watched) in state.watched {
          if watched.deadline <= now {
            due.append((token, watched.due))
          } else if next.map({ watched.deadline < $0 }) ?? true {
            next = watched.deadline
          }
        }
        for (token, _) in due { state.watched.removeValue(forKey: token) }
        state.armed = next
        return (due, next)
      }
      for (_, call) in due { call() }
      if !due.isEmpty { continue }
      let timer = next.map { deadline in
        Task { [rearm] in
          do {
            try await clock.sleep(until: deadline, tolerance: nil)
            rearm.fire()
          } catch {}
        }
      }
      await withTaskCancellationHandler {
        await rearm.wait()
      } onCancel: {
        rearm.fire()
      }
      timer?.cancel()
    }
  }
}
