extension DispatchStateMachine {
  // MARK: - Spreading the catch-up rush (`start-splay`)

  /// The tasks of `rows` (as stored when the runtime starts) that became due while no runtime
  /// was running: due by `now` but after the last change the store recorded. A run stopped by
  /// the shutdown or waiting before it is not among them: it was due before.
  static func dueWhileOff(_ rows: [TaskRow], now: WallInstant) -> [TaskId] {
    guard let lastSeen = rows.map(\.updatedAt).max() else { return [] }
    return rows.compactMap { row in
      guard let next = row.nextRun, next > lastSeen, next <= now else { return nil }
      return row.id
    }
  }

  /// The idle tasks that became due while the system slept: due by `now`, after the system
  /// went to sleep (``sleptAt``), and not run since (a run stopped for the sleep was due
  /// before; it resumes at once).
  func dueWhileAsleep(now: WallInstant) -> [TaskId] {
    guard let sleptAt else { return [] }
    return entries.values.compactMap { entry in
      guard entry.phase.isIdle, let next = entry.row.nextRun, next > sleptAt, next <= now,
        entry.row.lastRunEndedAt.map({ $0 < sleptAt }) ?? true
      else { return nil }
      return entry.row.id
    }
  }

  /// The runtime started or the system is back from sleep: each of `ids` (the runs that
  /// became due meanwhile) starts at `now` plus its own offset in [0, `splay.over`], fixed by
  /// the machine id and the task id (``RandomDelay/fixed(machineId:jobId:maximum:)``, as
  /// `fixed-random-delay`), so that the rush spreads over that time instead of starting at
  /// once; the concurrency limit still applies. A task run with `runNow` is not held.
  mutating func spreadCatchUp(_ splay: StartSplay, ids: [TaskId], now: WallInstant) {
    guard splay.over > .zero else { return }
    for id in ids {
      guard let waiting = entries[id]?.waiting, !waiting.forced else { continue }
      let offset = RandomDelay.fixed(
        machineId: splay.machineId, jobId: id.rawValue, maximum: splay.over)
      update(id) { $0.updateWaiting { $0.splayUntil = now.advanced(by: offset) } }
      rearm(id)
    }
  }

  /// When a run of `id` held back by the splay may start, while it is held.
  func splayedUntil(_ id: TaskId) -> WallInstant? {
    entries[id]?.waiting?.splayUntil
  }
}
