import Foundation
import Testing

@testable import Backgrounder
@testable import BackgrounderCLI

/// How `status` words a job held by its time window.
@Suite struct WindowStatusTextTests {
  @Test("a window wait reads as the weekday and time it opens")
  func windowWaitReadsAsOpening() {
    let opens = Date(timeIntervalSince1970: 1_700_000_000)
    let text = TaskStatusText.waitingFor(
      [.waitingForWindow(opens: opens)], now: opens.addingTimeInterval(-3600))
    let local = CalendarTimeFormat.weekdayAndTime(
      WallInstant(opens), in: CalendarTimeZones.local())
    #expect(text == "window opens \(local)")
    #expect(text.wholeMatch(of: /window opens (Mon|Tue|Wed|Thu|Fri|Sat|Sun) \d\d:\d\d/) != nil)
  }
}
