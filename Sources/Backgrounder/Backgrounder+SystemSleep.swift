extension Backgrounder {
  /// The system is about to suspend or shut down (`sleeping` true, systemd-logind's
  /// `PrepareForSleep` / `PrepareForShutdown`): nothing new starts, and the running work of
  /// `taskIds` is stopped with ``StopReason/systemSuspending`` — recorded as a retry without
  /// using an attempt, due again at once. `false`: the system is back; dispatch resumes and due
  /// times are re-evaluated at once (backoffs and periods that ended during sleep run now).
  /// Work not in `taskIds` keeps running. With a ``Configuration/startSplay``, the runs due on
  /// resume spread over it.
  public func systemSleeping(_ sleeping: Bool, stopping taskIds: [TaskId] = []) {
    guard let runtime else { return }
    let splay = configuration.startSplay
    runtime.step { machine, now in
      var effects = Effects()
      machine.dispatchHeld = sleeping
      if sleeping {
        machine.sleptAt = now
      } else if let splay {
        machine.spreadCatchUp(splay, ids: machine.dueWhileAsleep(now: now), now: now)
      }
      if sleeping {
        for id in taskIds {
          if let token = machine.liveToken(for: id) {
            effects.stops.append((token, .systemSuspending))
          }
        }
      }
      return ((), effects)
    }
    configuration.logger.info(
      sleeping
        ? "system suspending: nothing starts until it is back"
        : "system back from sleep: re-evaluating due times")
    runtime.wake.fire()
  }
}
