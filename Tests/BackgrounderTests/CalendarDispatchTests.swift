import Backgrounder
import BackgrounderTesting
import Foundation
import Testing

/// Calendar-scheduled periodic work and time windows through the runtime, with the manual
/// clock (it starts at Tue 2023-11-14 22:13:20 UTC; every zone here is UTC).
@Suite(.stopsRuntimes, .timeLimit(.minutes(3))) struct CalendarDispatchTests {
  /// `*-*-* 23:00` is 2,800 s after the harness's start.
  static let elevenPM = 2800.0

  static func calendar(_ expression: String, catchUp: Bool = true) -> CalendarSchedule {
    CalendarSchedule(events: [try! CalendarEvent(expression)], localZone: .utc, catchUp: catchUp)
  }

  @Test("a calendar job runs at its elapse and not before, then waits for the next one")
  func runsAtElapse() async throws {
    let job = id("test.calendar.elapse")
    let worker = RecordingWorker()
    let h = try await Harness.start(workers: [job: worker])
    #expect(
      await h.backgrounder.schedule(
        WorkRequest.Periodic(taskId: job, calendar: Self.calendar("*-*-* 23:00"))) == .scheduled)
    #expect(
      h.task(job)?.pendingPredicates == [.waitingForEarliestBeginDate(at: h.at(Self.elevenPM))])
    await h.clock.waitForSleepers(until: h.at(Self.elevenPM))
    h.clock.advance(to: WallInstant(h.at(Self.elevenPM - 1)))
    await h.clock.waitForSleepers(until: h.at(Self.elevenPM))
    #expect(worker.invocations == 0)

    h.clock.advance(to: WallInstant(h.at(Self.elevenPM)))
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(worker.contexts.map(\.startedAt) == [h.at(Self.elevenPM)])
    let tomorrow = h.at(Self.elevenPM + 86_400)
    await h.clock.waitForSleepers(until: tomorrow)
    #expect(h.task(job)?.nextRunHint == tomorrow)
    #expect(worker.invocations == 1)
  }

  @Test("the next run is the elapse plus the job's splay, fixed by machine and job")
  func nextRunIncludesSplay() async throws {
    let job = id("test.calendar.splay")
    let worker = RecordingWorker()
    let h = try await Harness.start(workers: [job: worker])
    let calendar = CalendarSchedule(
      events: [try CalendarEvent("*-*-* 23:00")], localZone: .utc, randomDelay: .seconds(1800),
      splay: .fixed(machineId: "0123456789abcdef0123456789abcdef", jobId: job.rawValue))
    _ = await h.backgrounder.schedule(WorkRequest.Periodic(taskId: job, calendar: calendar))
    let elapse = WallInstant(h.at(Self.elevenPM))
    let splay = RandomDelay.fixed(
      machineId: "0123456789abcdef0123456789abcdef", jobId: job.rawValue,
      maximum: .seconds(1800))
    #expect(splay > .zero)
    let startAt = elapse.advanced(by: splay)
    let start = startAt.date
    #expect(h.task(job)?.nextRunHint == start)
    #expect(try await h.status(job)?.nextRun == start)
    await h.clock.waitForSleepers(until: start)
    h.clock.advance(to: startAt)
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(worker.contexts.map(\.startedAt) == [start])
  }

  @Test("a window holds a due job and releases it when the window opens")
  func windowHoldsAndReleases() async throws {
    let job = id("test.calendar.window")
    let worker = RecordingWorker()
    let h = try await Harness.start(workers: [job: worker])
    let windows = [try TimeWindow("23:00-23:30")]
    #expect(
      await h.backgrounder.schedule(
        WorkRequest.OneTime(taskId: job, constraints: WorkConstraints(windows: windows)))
        == .scheduled)
    await h.clock.waitForSleepers(until: h.at(Self.elevenPM))
    #expect(worker.invocations == 0)
    let task = h.task(job)
    #expect(task?.pendingPredicates == [.waitingForWindow(opens: h.at(Self.elevenPM))])
    #expect(task?.nextRunHint == h.at(Self.elevenPM))

    h.clock.advance(to: WallInstant(h.at(Self.elevenPM)))
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(worker.contexts.map(\.startedAt) == [h.at(Self.elevenPM)])
  }

  @Test("a run still going when its window closes is stopped and retried in the next window")
  func windowEndStop() async throws {
    let job = id("test.calendar.window-stop")
    let worker = BlockingWorker()
    let h = try await Harness.start(workers: [job: worker])
    let constraints = WorkConstraints(windows: [try TimeWindow("22:00-23:00")], windowEnd: .stop)
    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: job, constraints: constraints, budget: .seconds(7200)))
    await worker.waitUntilInvoked()
    await h.clock.waitForSleepers(until: h.at(Self.elevenPM))
    h.clock.advance(to: WallInstant(h.at(Self.elevenPM)))
    await h.waitFor(job) {
      if case .workStopped(_, .windowClosed) = $0 { true } else { false }
    }
    #expect(worker.stopReasons == [.windowClosed])
    let tomorrow = h.at(Self.elevenPM + 23 * 3600)
    await h.clock.waitForSleepers(until: tomorrow)
    let task = h.task(job)
    #expect(task?.attempt == 0)
    #expect(task?.lastResult == .retry)
    #expect(task?.pendingPredicates == [.waitingForWindow(opens: tomorrow)])
    #expect(worker.invocations == 1)
  }

  @Test(
    "elapses missed while stopped give exactly one run at start with catch-up, none without",
    arguments: [true, false])
  func catchUp(_ catchUp: Bool) async throws {
    let job = id("test.calendar.catchup")
    let clock = ManualClock()
    let directory = temporaryDirectory()
    let first = try await Harness.start(
      workers: [job: RecordingWorker()], directory: directory, clock: clock)
    _ = await first.backgrounder.schedule(
      WorkRequest.Periodic(
        taskId: job, calendar: Self.calendar("*-*-* *:00:00", catchUp: catchUp)))
    await first.driver.flush()
    await first.stop(removeFiles: false)

    // Stopped over five hourly elapses (23:00 … 03:00).
    clock.advance(by: .seconds(5 * 3600))
    let worker = RecordingWorker()
    let h = try await Harness.start(workers: [job: worker], directory: directory, clock: clock)
    let nextHour = first.at(Self.elevenPM + 5 * 3600)
    if catchUp { await h.waitFor(job) { $0.isWorkCompleted } }
    await h.clock.waitForSleepers(until: nextHour)
    #expect(worker.invocations == (catchUp ? 1 : 0))
    #expect(h.task(job)?.nextRunHint == nextHour)

    h.clock.advance(to: WallInstant(nextHour))
    await h.waitFor(job, count: catchUp ? 2 : 1) { $0.isWorkCompleted }
    #expect(worker.contexts.last?.startedAt == nextHour)
  }

  @Test("a wall-clock step re-plans: without catch-up the elapses stepped over are skipped")
  func clockStepReplans() async throws {
    let job = id("test.calendar.step")
    let worker = RecordingWorker()
    let h = try await Harness.start(workers: [job: worker], watchesClockChanges: true)
    _ = await h.backgrounder.schedule(
      WorkRequest.Periodic(
        taskId: job, calendar: Self.calendar("*-*-* *:00:00", catchUp: false)))
    await h.clock.waitForSleepers(until: h.at(Self.elevenPM))

    // Stepped over 23:00, 00:00 and 01:00 (to 01:13:20): the next run is 02:00.
    h.clock.jump(by: .seconds(3 * 3600))
    let twoAM = h.at(Self.elevenPM + 3 * 3600)
    await h.clock.waitForSleepers(until: twoAM)
    #expect(worker.invocations == 0)
    #expect(h.task(job)?.nextRunHint == twoAM)
    h.clock.advance(to: WallInstant(twoAM))
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(worker.invocations == 1)
  }

  /// The clock's steps counted at once, their stream elements never sent: the runtime as it is
  /// between a step and the arrival of its element.
  private struct StepsNotYetDelivered: ClockChangeSource {
    let clock: ManualClock
    func clockChanges() -> AsyncStream<Void> { AsyncStream { _ in } }
    var changeCount: UInt64 { clock.changeCount }
  }

  /// Seen once in CI under load: a step of the dispatcher between a wall-clock step and the
  /// handling of its element (here, a request scheduled) took the stepped-over 23:00 for an
  /// overdue elapse and ran it, though the job has no catch-up.
  @Test("a wall-clock step is applied before anything else looks at the time")
  func clockStepAppliesBeforeItsElement() async throws {
    let job = id("test.calendar.step-early")
    let other = id("test.calendar.step-other")
    let worker = RecordingWorker()
    let clock = ManualClock()
    let h = try await Harness.start(
      workers: [job: worker, other: RecordingWorker()], clock: clock,
      clockChanges: StepsNotYetDelivered(clock: clock))
    _ = await h.backgrounder.schedule(
      WorkRequest.Periodic(
        taskId: job, calendar: Self.calendar("*-*-* *:00:00", catchUp: false)))
    await h.clock.waitForSleepers(until: h.at(Self.elevenPM))
    h.clock.jump(by: .seconds(3 * 3600))
    _ = await h.backgrounder.schedule(WorkRequest.OneTime(taskId: other))
    await h.waitFor(other) { $0.isWorkCompleted }
    let twoAM = h.at(Self.elevenPM + 3 * 3600)
    await h.clock.waitForSleepers(until: twoAM)
    #expect(worker.invocations == 0)
    #expect(h.task(job)?.nextRunHint == twoAM)
  }

  @Test("with catch-up, a wall-clock step over several elapses gives one run")
  func clockStepCatchesUpOnce() async throws {
    let job = id("test.calendar.step-catchup")
    let worker = RecordingWorker()
    let h = try await Harness.start(workers: [job: worker], watchesClockChanges: true)
    _ = await h.backgrounder.schedule(
      WorkRequest.Periodic(taskId: job, calendar: Self.calendar("*-*-* *:00:00")))
    await h.clock.waitForSleepers(until: h.at(Self.elevenPM))
    h.clock.jump(by: .seconds(3 * 3600))
    await h.waitFor(job) { $0.isWorkCompleted }
    let twoAM = h.at(Self.elevenPM + 3 * 3600)
    await h.clock.waitForSleepers(until: twoAM)
    #expect(worker.invocations == 1)
  }

  @Test("a calendar request without an event is rejected")
  func emptyCalendarRejected() async throws {
    let job = id("test.calendar.empty")
    let h = try await Harness.start(workers: [job: RecordingWorker()])
    #expect(
      await h.backgrounder.schedule(
        WorkRequest.Periodic(taskId: job, calendar: CalendarSchedule(events: [])))
        == .rejected(.invalidCalendar))
  }
}
