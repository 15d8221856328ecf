/// Calendar-scheduled periodic work and time windows: which elapse a run stands for, when the
/// next one starts, catch-up at start and after a wall-clock step, and the window that holds a
/// due run back or stops one still going when it closes.
extension DispatchStateMachine {
  // MARK: - Calendar

  /// Takes the calendar elapse a claimed run stands for (the latest one passed, however many:
  /// one run for all of them) and plans the next run after it. A run with no new elapse (a
  /// retry, `runNow`) keeps the last one.
  func claimCalendarElapse(_ entry: inout Entry, now: WallInstant) {
    guard let schedule = entry.row.calendar else { return }
    if let elapse = schedule.latestElapse(after: entry.row.lastElapse, atOrBefore: now) {
      entry.row.lastElapse = elapse
    }
    entry.row.nextRun = schedule.due(lastElapse: entry.row.lastElapse, now: now)?.startAt
  }

  /// When a periodic task's next cycle starts once this one ended at `now`: the next elapse
  /// (plus its splay) of a calendar, else `now` plus the interval.
  func nextCycleStart(_ row: TaskRow, now: WallInstant) -> WallInstant? {
    if let schedule = row.calendar {
      return schedule.due(lastElapse: row.lastElapse, now: now)?.startAt
    }
    return row.interval.map { now.advanced(by: $0) }
  }

  /// Plans a waiting calendar task again from its last elapse at `now` (at `start()`, after a
  /// wall-clock step or resume): elapses missed meanwhile give one run at once with catch-up,
  /// or are skipped without it. A retry in progress keeps its time. Returns whether the row
  /// changed.
  func replanCalendar(_ row: inout TaskRow, now: WallInstant, loading: Bool) -> Bool {
    guard var schedule = row.calendar else { return false }
    if loading {
      schedule.localZone = settings.timeZone
      row.calendar = schedule
    }
    guard row.state == .pending || row.state == .blocked, row.lastResult != .retry else {
      return false
    }
    var last = row.lastElapse
    if !schedule.catchUp, let missed = schedule.latestElapse(after: last, atOrBefore: now) {
      last = missed
    }
    let next = schedule.due(lastElapse: last, now: now)?.startAt
    guard next != row.nextRun || last != row.lastElapse else { return false }
    row.lastElapse = last
    row.nextRun = next
    return true
  }

  /// The wall clock was stepped or the machine resumed: every waiting calendar task is
  /// planned again from now.
  mutating func clockChanged(now: WallInstant) -> Effects {
    var effects = Effects()
    let ids = entries.compactMap { id, entry in
      entry.phase.isIdle && entry.row.calendar != nil ? id : nil
    }
    for id in ids.sorted() {
      guard var row = entries[id]?.row, replanCalendar(&row, now: now, loading: false) else {
        continue
      }
      row.updatedAt = now
      update(id) {
        $0.row = row
        $0.updateWaiting { $0.windowHeld = false }
      }
      effects.ops.append(.upsert(row))
      rearm(id)
    }
    return effects
  }

  /// Takes a new calendar from an `update` of the request: a changed calendar is planned
  /// from the last elapse (from now when the task had none), a retry keeps its time.
  func updateCalendar(_ updated: inout TaskRow, to row: TaskRow, now: WallInstant) {
    guard updated.calendar != row.calendar else { return }
    let hadCalendar = updated.calendar != nil
    updated.calendar = row.calendar
    guard let schedule = row.calendar else {
      updated.lastElapse = nil
      if updated.state != .backoff { updated.nextRun = now }
      return
    }
    if !hadCalendar || updated.lastElapse == nil { updated.lastElapse = now }
    if updated.state != .backoff {
      updated.nextRun = schedule.due(lastElapse: updated.lastElapse, now: now)?.startAt
    }
  }

  // MARK: - Windows

  /// Holds a due task outside its windows until the next one opens (no attempt used, nothing
  /// written). Returns whether it is held.
  mutating func holdForWindow(_ id: TaskId, now: WallInstant) -> Bool {
    guard var entry = entries[id], !entry.forced, !entry.overridden else { return false }
    let windows = entry.row.constraints.windows
    guard !windows.allowStart(at: now, in: settings.timeZone) else { return false }
    let opening = windows.nextOpening(atOrAfter: now, in: settings.timeZone)
    guard opening > now else { return false }
    entry.row.nextRun = opening
    entry.updateWaiting { $0.windowHeld = true }
    entries[id] = entry
    rearm(id)
    return true
  }

  /// When a waiting task's windows open next, if they hold its next run back.
  func windowOpening(_ entry: Entry, _ waiting: Waiting, now: WallInstant) -> WallInstant? {
    let windows = entry.row.constraints.windows
    guard !windows.isEmpty, !waiting.forced, !entry.overridden, let next = entry.row.nextRun
    else {
      return nil
    }
    if waiting.windowHeld && next > now { return next }
    let start = max(next, now)
    guard !windows.allowStart(at: start, in: settings.timeZone) else { return nil }
    let opening = windows.nextOpening(atOrAfter: start, in: settings.timeZone)
    return opening > start ? opening : nil
  }

  /// Arms the stop of run `token`, started at `now`, for when its window closes
  /// (`window-end = "stop"`).
  mutating func armWindowStop(_ token: RunToken, _ constraints: WorkConstraints, now: WallInstant) {
    guard constraints.windowEnd == .stop,
      let closes = constraints.windows.closing(after: now, in: settings.timeZone)
    else { return }
    windowStops[token] = closes
  }

  /// Stops the runs whose window closed: each is a retry at the next opening, no attempt used
  /// (the path of a lost condition, reason ``StopReason/windowClosed``). The run of a task that
  /// pauses (``ConditionLossPolicy/pause(max:)``) is frozen instead, and thawed once one of its
  /// windows is open again (and its other conditions hold), unless its `max` runs out first.
  mutating func stopRunsPastTheirWindow(now: WallInstant, _ effects: inout Effects) {
    for (token, closes) in windowStops where closes <= now {
      windowStops[token] = nil
      guard let id = liveRuns[token], entries[id]?.phase.token == token else { continue }
      conditionLost(token, of: id, reason: .windowClosed, now: now, &effects)
    }
  }

  /// Whether a run is paused because its window closed (each dispatch may thaw it).
  var hasRunsPausedForTheirWindow: Bool {
    runPauses.values.contains { $0.reason == .windowClosed }
  }

  /// When a window next opens, after `now`, of the runs paused because theirs closed: a wake to
  /// thaw them (one whose window is open already waits for its other conditions, which wake the
  /// machine themselves).
  func nextOpeningForPausedRuns(after now: WallInstant) -> WallInstant? {
    runPauses.compactMap { token, pause -> WallInstant? in
      guard pause.reason == .windowClosed, let id = liveRuns[token], let entry = entries[id]
      else { return nil }
      let opening = entry.row.constraints.windows.nextOpening(
        atOrAfter: now, in: settings.timeZone)
      return opening > now ? opening : nil
    }.min()
  }
}
