extension Backgrounder {
  /// Test-kit hook: every constraint of `taskId` counts as met.
  package func overrideConstraints(_ taskId: TaskId) -> Bool {
    guard let runtime, runtime.core.withLock({ $0.machine.entries[taskId] != nil }) else {
      return false
    }
    runtime.step { machine, now in ((), machine.overrideConstraints(taskId, now: now)) }
    runtime.wake.fire()
    return true
  }

  /// Test-kit hook: the initial delay (one-time) or period (periodic) has elapsed.
  package func makeDue(_ taskId: TaskId, kind: TaskKind) -> Bool {
    guard let runtime else { return false }
    let found = runtime.step { machine, now -> (Bool, Effects) in
      guard let effects = machine.makeDue(taskId, kind: kind, now: now) else {
        return (false, Effects())
      }
      return (true, effects)
    }.value
    runtime.wake.fire()
    return found
  }

  /// Test-kit hook: stops the running worker of `taskId` with `reason`.
  package func stopRunningWork(_ taskId: TaskId, reason: StopReason) -> Bool {
    guard let runtime else { return false }
    let handle = runtime.core.withLock { core -> RunHandle? in
      guard let token = core.machine.liveToken(for: taskId) else { return nil }
      return core.handles[token]
    }
    handle?.stop(reason)
    return handle != nil
  }

  /// Test hook: wakes the dispatch loop for one more iteration (one that
  /// ``Configuration/dispatchLoopWillIterate`` may block).
  package func wakeDispatchLoop() {
    runtime?.wake.fire()
  }

  /// Test-kit hook: waits until every change so far is committed to the store.
  package func flushStore() async {
    await runtime?.writer.flush()
  }
}
