import Foundation
import GRDB
import Testing

@testable import Backgrounder

/// The `calendar` column: lines of `key value` (migration `calendar-as-lines`), and the JSON of
/// the stores written before it.
@Suite(.timeLimit(.minutes(3)))
struct CalendarColumnTests {
  static let schedules: [CalendarSchedule] = [
    CalendarSchedule(events: [try! CalendarEvent("daily")], localZone: .utc),
    CalendarSchedule(
      events: [
        try! CalendarEvent("Mon..Fri 09:30"), try! CalendarEvent("*-*-1 00:00 Europe/Paris"),
      ],
      localZone: .utc,
      windows: [try! TimeWindow("22:00-06:00"), try! TimeWindow("Sat,Sun 08:00-20:00")],
      randomDelay: .seconds(1800), splay: .fixed(machineId: "0123abcd", jobId: "dev.example.a"),
      catchUp: false),
    CalendarSchedule(
      events: [try! CalendarEvent("hourly")], localZone: .utc, randomDelay: .nanoseconds(7),
      splay: .perElapse(seed: .max, jobId: "line\nbreak \\n and backslash\\")),
    CalendarSchedule(
      events: [], localZone: .utc, splay: .fixed(machineId: "a\\nb\n", jobId: "")),
  ]

  @Test("a schedule reads back as it was written", arguments: schedules)
  func roundTrip(schedule: CalendarSchedule) throws {
    let text = TaskRow.encode(schedule)
    #expect(!text.hasPrefix("{"))
    #expect(TaskRow.decodeCalendar(text) == schedule)
  }

  @Test(
    "a calendar column that is not whole is refused",
    arguments: [
      "", "event daily", "event daily\nrandom-delay 0\njob a",
      "random-delay 0\njob a\ncatch-up true",
      "random-delay 0\nsplay-seed 1\nfixed-machine-id m\njob a\ncatch-up true",
      "event not a calendar\nrandom-delay 0\nsplay-seed 1\njob a\ncatch-up true",
      "random-delay x\nsplay-seed 1\njob a\ncatch-up true",
      "random-delay 0\nsplay-seed 1\njob a\ncatch-up true\ncolour blue",
      "random-delay 0\nsplay-seed 1\njob a\ncatch-up yes", "{\"events\":[]}",
    ])
  func incomplete(text: String) {
    #expect(TaskRow.decodeCalendar(text) == nil)
  }

  @Test("a store whose calendars are JSON is read, and its migration rewrites them as lines")
  func jsonIsMigrated() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("store.sqlite").path
    let job = try TaskId("dev.example.calendar-json")
    let first = Backgrounder(storePath: path)
    try first.register(job) { nil }
    try await first.start()
    let request = WorkRequest.Periodic(
      taskId: job, calendar: CalendarSchedule(events: [try CalendarEvent("*-*-* 23:00")]))
    let outcome = await first.schedule(request)
    #expect(outcome == .scheduled)
    await first.shutdown()

    // The column as the daemon wrote it before the migration, which is not applied yet.
    let json =
      #"{"events":["*-*-* 23:00:00"],"randomDelay":0,"splaySeed":5,"jobId":"j","#
      + #""catchUp":true,"windows":["22:00-06:00"]}"#
    let queue = try DatabaseQueue(path: path)
    try await queue.write { db in
      try db.execute(
        sql: "UPDATE task SET calendar = ? WHERE id = ?", arguments: [json, job.rawValue])
      try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'calendar-as-lines'")
    }
    let expected = CalendarSchedule(
      events: [try CalendarEvent("*-*-* 23:00:00")], localZone: .utc,
      windows: [try TimeWindow("22:00-06:00")], splay: .perElapse(seed: 5, jobId: "j"))
    #expect(TaskRow.decodeCalendar(json) == expected)
    // A reader (the CLI during an upgrade, before the daemon restarts) reads it as it is.
    #expect(try TaskStoreReader(path: path).task(job) != nil)

    let second = Backgrounder(storePath: path)
    try second.register(job) { nil }
    try await second.start()
    await second.shutdown()
    let text = try await queue.read { db in
      try String.fetchOne(
        db, sql: "SELECT calendar FROM task WHERE id = ?", arguments: [job.rawValue])
    }
    try queue.close()
    let lines = try #require(text)
    #expect(!lines.hasPrefix("{"))
    #expect(TaskRow.decodeCalendar(lines) == expected)
  }
}
