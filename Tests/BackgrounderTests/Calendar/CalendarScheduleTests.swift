import Foundation
import Testing

@testable import Backgrounder

/// The calendar decisions of the dispatcher as a pure function of (last elapse, now): what a
/// stopped daemon catches up, where a window holds a run, what a wall-clock step changes.
@Suite("Calendar schedules")
struct CalendarScheduleTests {
  private static let berlin = CalendarTimeZone(identifier: "Europe/Berlin")!

  private static func at(_ text: String) -> WallInstant {
    WallInstant(ISO8601DateFormatter().date(from: text)!)
  }

  private static func schedule(
    _ expressions: [String], windows: [String] = [], randomDelay: Duration = .zero,
    catchUp: Bool = true
  ) throws -> CalendarSchedule {
    CalendarSchedule(
      events: try expressions.map(CalendarEvent.init), localZone: berlin,
      windows: try windows.map(TimeWindow.init), randomDelay: randomDelay,
      splay: .fixed(machineId: "m", jobId: "dev.example.job"), catchUp: catchUp)
  }

  @Test("a calendar job is due at its elapse, not before")
  func dueAtItsElapse() throws {
    let schedule = try Self.schedule(["*-*-* 02:00"])
    let due = try #require(schedule.due(lastElapse: nil, now: Self.at("2024-05-06T12:00:00Z")))
    #expect(due.startAt == Self.at("2024-05-07T00:00:00Z"))  // 02:00 CEST
    #expect(!due.isCatchUp && due.heldFrom == nil)
  }

  @Test("after a stop over several elapses, catch-up gives exactly one run, then the calendar")
  func catchUpGivesOneRun() throws {
    let schedule = try Self.schedule(["*-*-* 02:00", "*-*-* 14:00"])
    let last = Self.at("2024-05-06T00:00:00Z")  // ran for Mon 02:00
    let now = Self.at("2024-05-09T09:00:00Z")  // started again Thu 11:00, 6 elapses later
    let first = try #require(schedule.due(lastElapse: last, now: now))
    #expect(first.isCatchUp && first.startAt == now)
    #expect(first.elapse == Self.at("2024-05-09T00:00:00Z"))
    // It ran: the next is the calendar's, not a second catch-up.
    let second = try #require(schedule.due(lastElapse: first.elapse, now: now))
    #expect(!second.isCatchUp && second.startAt == Self.at("2024-05-09T12:00:00Z"))
    // Without catch-up, the missed elapses are skipped.
    let skipping = try Self.schedule(["*-*-* 02:00", "*-*-* 14:00"], catchUp: false)
    #expect(
      skipping.due(lastElapse: last, now: now)?.startAt == Self.at("2024-05-09T12:00:00Z"))
  }

  @Test("a wall-clock step back does not run an elapse twice; a step forward catches up once")
  func wallClockSteps() throws {
    let schedule = try Self.schedule(["*:00/30"])
    let last = Self.at("2024-05-06T10:00:00Z")
    let planned = try #require(schedule.due(lastElapse: last, now: Self.at("2024-05-06T10:05:00Z")))
    #expect(planned.startAt == Self.at("2024-05-06T10:30:00Z"))
    // The clock is set back an hour: the same elapse is still the next one.
    let back = schedule.due(lastElapse: last, now: Self.at("2024-05-06T09:05:00Z"))
    #expect(back?.elapse == planned.elapse && back?.isCatchUp == false)
    // Set forward three hours: one catch-up run.
    let forward = schedule.due(lastElapse: last, now: Self.at("2024-05-06T13:05:00Z"))
    #expect(forward?.isCatchUp == true && forward?.elapse == Self.at("2024-05-06T13:00:00Z"))
  }

  @Test("a window holds a due run and releases it when it opens")
  func windowHoldsAndReleases() throws {
    let schedule = try Self.schedule(["*-*-* 12:00"], windows: ["22:00-06:00"])
    let due = try #require(schedule.due(lastElapse: nil, now: Self.at("2024-05-06T08:00:00Z")))
    #expect(due.heldFrom == Self.at("2024-05-06T10:00:00Z"))  // 12:00 CEST
    #expect(due.startAt == Self.at("2024-05-06T20:00:00Z"))  // 22:00 CEST
    #expect(schedule.windowCloses(after: due.startAt) == Self.at("2024-05-07T04:00:00Z"))
  }

  @Test("a window never lets a run start outside it; splay stays within random-delay")
  func windowsAndSplayProperties() throws {
    var random = SplitMix64(seed: 0x5CED)
    var failures: [String] = []
    let windowTexts = ["22:00-06:00", "Sat,Sun 08:00-20:00", "Mon..Fri 12:00-13:00", "02:00-03:00"]
    for _ in 0..<400 {
      guard let event = try? CalendarEvent(CalendarExpressionGenerator.make(&random)) else {
        continue
      }
      let windows = try (0..<random.next(in: 0...2)).map { _ in
        try TimeWindow(windowTexts[random.next(in: 0...windowTexts.count - 1)])
      }
      let delay = Duration.seconds(random.next(in: 0...3600))
      let schedule = CalendarSchedule(
        events: [event], localZone: Self.berlin, windows: windows, randomDelay: delay,
        splay: .perElapse(seed: random.next(), jobId: "j"), catchUp: random.chance(50))
      let now = WallInstant(
        nanosecondsSince1970: Int64(random.next(in: 1_600_000_000...1_900_000_000)) * 1_000_000_000)
      let last = random.chance(50) ? nil : now.advanced(by: .seconds(-random.next(in: 0...900_000)))
      guard let due = schedule.due(lastElapse: last, now: now) else { continue }
      if !schedule.allowsStart(at: due.startAt) || due.startAt < now {
        failures.append("\(event) \(windows) last \(String(describing: last)) now \(now): \(due)")
      }
      if !due.isCatchUp && due.heldFrom == nil
        && (due.startAt < due.elapse || due.startAt > due.elapse.advanced(by: delay))
      {
        failures.append("splay outside [0, \(delay)]: \(due)")
      }
      if due.isCatchUp && (due.elapse > now || (last.map { due.elapse <= $0 } ?? true)) {
        failures.append("catch-up of an elapse not missed: \(due)")
      }
    }
    #expect(failures.isEmpty, "\(failures.prefix(5))")
  }

  @Test("a fixed splay is the same across restarts; a per-elapse one differs between elapses")
  func splayChoices() throws {
    let event = try CalendarEvent("daily")
    let fixed = { (machine: String) in
      CalendarSchedule(
        events: [event], randomDelay: .seconds(3600),
        splay: .fixed(machineId: machine, jobId: "dev.example.upload"))
    }
    let elapses = [Self.at("2024-05-06T00:00:00Z"), Self.at("2024-05-07T00:00:00Z")]
    // "Restarts": schedules built anew from the same machine id.
    #expect(fixed("a").delay(for: elapses[0]) == fixed("a").delay(for: elapses[1]))
    #expect(fixed("a").delay(for: elapses[0]) != fixed("b").delay(for: elapses[0]))
    let perElapse = CalendarSchedule(
      events: [event], randomDelay: .seconds(3600), splay: .perElapse(seed: 42, jobId: "j"))
    #expect(perElapse.delay(for: elapses[0]) != perElapse.delay(for: elapses[1]))
  }
}
