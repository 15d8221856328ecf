import Backgrounder

extension JobRequests {
  /// The splay seed of this daemon process, for the jobs it schedules (or reschedules when
  /// their definition changes): each elapse gets its own random delay. The seed is stored with
  /// the job, so a restart or reload does not move a planned run.
  static let splaySeed = UInt64.random(in: .min ... .max)
  /// The machine's local zone, read once.
  static let localZone = CalendarTimeZones.local()

  /// The calendar schedule of a `calendar` job.
  static func calendar(
    _ expressions: [String], _ job: JobDefinition, machineIdPath: String
  ) throws -> CalendarSchedule {
    let events = try expressions.map { expression throws(CalendarEventError) in
      try CalendarEvent(expression)
    }
    let timing = job.timing ?? JobTiming()
    let splay: CalendarSchedule.Splay
    if timing.fixedRandomDelay {
      do {
        splay = .fixed(machineId: try MachineIdentity.read(path: machineIdPath), jobId: job.id)
      } catch {
        throw InvalidJobDefinition(key: "fixed-random-delay", message: error.description)
      }
    } else {
      splay = .perElapse(seed: splaySeed, jobId: job.id)
    }
    return CalendarSchedule(
      events: events, localZone: localZone, randomDelay: timing.randomDelay, splay: splay,
      catchUp: timing.catchUp)
  }
}

/// The rules of a job's time keys.
enum JobTimingValidation {
  /// The first rule `job`'s windows, splay or catch-up break, or nil.
  static func problem(with job: JobDefinition) -> (key: String, message: String)? {
    guard let timing = job.timing else { return nil }
    for window in timing.windows {
      do {
        _ = try TimeWindow(window)
      } catch {
        return ("window", "invalid window '\(window)': \(error.reason)")
      }
    }
    if timing.windowEnd == .stop && timing.windows.isEmpty {
      return ("window-end", "only jobs with a `window` take `window-end`")
    }
    if timing.randomDelay < .zero { return ("random-delay", "must not be negative") }
    let isCalendar = if case .calendar = job.schedule { true } else { false }
    if !isCalendar && (timing.randomDelay > .zero || timing.fixedRandomDelay || !timing.catchUp) {
      return ("random-delay", "only calendar jobs (`calendar = \"…\"`) take a splay or catch-up")
    }
    return nil
  }
}
