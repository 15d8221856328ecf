import Backgrounder
import EventLoops
import Foundation
import Locking
import Logging
import SystemCalls

/// `wake-system = true`: one `CLOCK_REALTIME_ALARM` timer (``WakeAlarmTimer``), armed for the
/// earliest next run of the `wake-system` jobs (``WakeAlarmPlan``) so that a suspended machine
/// wakes for it, and re-armed when that changes (a run ends, a job is added, changed or
/// removed: every runtime event, and every config applied). Its expiry only wakes the machine
/// and re-arms it: the runtime re-evaluates due times on the resume itself. Served by the
/// daemon's event loop: no thread, and no system call while nothing changes. Without
/// `CAP_WAKE_ALARM` the refusal is logged once and the jobs run at the next wake.
final class WakeAlarms: @unchecked Sendable {
  // @unchecked: every mutable property is used on the event loop's thread only.
  private let runtime: Backgrounder
  private let eventLoop: EventLoop
  private let logger: Logger
  private var wakeJobs: Set<String> = []
  private var timer: WakeAlarmTimer?
  private var registration: EventLoop.Registration?
  private var armedFor: Date?
  private var refused = false
  /// Whether a job sets `wake-system`: without one, the runtime's events are not delivered
  /// here at all (each was a hop to the event loop, every run: issue #35).
  private let anyWakeJob = Lock(false)
  /// What `status` shows: see ``availability``.
  private let shown = Lock<(availability: String, reason: String?)>(("unused", nil))

  init(runtime: Backgrounder, eventLoop: EventLoop, logger: Logger) {
    self.runtime = runtime
    self.eventLoop = eventLoop
    self.logger = logger
  }

  /// For `status`: `unused` (no `wake-system` job), `unknown` (no alarm needed yet),
  /// `available` (an alarm timer was created) or `unavailable` (with the reason).
  var availability: (availability: String, reason: String?) { shown.withLock { $0 } }

  /// Follows the runtime's events until it shuts down.
  func start() {
    let events = runtime.events(bufferingPolicy: .bufferingNewest(1)) { [weak self] _ in
      self?.anyWakeJob.withLock { $0 } ?? false
    }
    Task {
      for await _ in events { eventLoop.execute { self.update() } }
    }
  }

  /// The jobs of `configuration` that set `wake-system` (after it was applied).
  func configure(_ jobs: [JobDefinition]) {
    let wakeJobs = Set(jobs.filter(\.wakeSystem).map(\.id))
    anyWakeJob.withLock { $0 = !wakeJobs.isEmpty }
    eventLoop.execute {
      self.wakeJobs = wakeJobs
      self.shown.withLock { shown in
        if shown.availability == "unused" || shown.availability == "unknown" {
          shown = (wakeJobs.isEmpty ? "unused" : "unknown", nil)
        }
      }
      self.update()
    }
  }

  /// Stops watching the timer (on the event loop, soon).
  func stopSoon() {
    eventLoop.execute { self.closeTimer() }
  }

  /// Arms the timer for the next alarm; with none, closes it (a disarmed alarm timerfd still
  /// shows its old expiry in `/proc/PID/fdinfo`, and a timer not needed is not kept).
  private func update() {
    guard !wakeJobs.isEmpty || timer != nil else { return }
    let alarm = WakeAlarmPlan.alarm(for: runtime.scheduled(), wakeJobs: wakeJobs, now: Date())
    guard let alarm else {
      closeTimer()
      return
    }
    guard alarm != armedFor, let timer = timerCreatedOnce() else { return }
    do {
      try timer.arm(at: alarm)
      armedFor = alarm
      logger.info(
        "wake alarm armed", metadata: ["at": "\(ISO8601DateFormatter().string(from: alarm))"])
    } catch {
      logger.warning("cannot arm the wake alarm", metadata: ["error": "\(error)"])
    }
  }

  private func closeTimer() {
    if let registration { eventLoop.deregister(registration) }
    registration = nil
    timer = nil
    armedFor = nil
  }

  private func timerCreatedOnce() -> WakeAlarmTimer? {
    if let timer { return timer }
    guard !refused else { return nil }
    do {
      let timer = try WakeAlarmTimer()
      registration = try eventLoop.register(timer.descriptor, interest: .readable) { _ in
        timer.acknowledge()
        self.armedFor = nil
        self.update()
      }
      self.timer = timer
      shown.withLock { $0 = ("available", nil) }
      return timer
    } catch {
      refused = true
      shown.withLock { $0 = ("unavailable", WakeAlarmRefusal.explain(error)) }
      logger.warning(
        "wake-system jobs cannot wake the machine: their runs wait for the next wake",
        metadata: ["reason": "\(WakeAlarmRefusal.explain(error))"])
      return nil
    }
  }
}

/// Why a wake alarm cannot be armed, in words.
enum WakeAlarmRefusal {
  static func explain(_ error: any Error) -> String {
    if let error = error as? SystemCallError, error.errno.rawValue == EPERM {
      return "\(error) (needs CAP_WAKE_ALARM, which the system unit grants)"
    }
    return "\(error)"
  }
}
