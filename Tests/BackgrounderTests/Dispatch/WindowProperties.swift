import Foundation
import Locking
import PropertyBased
import TestSupport
import Testing

@testable import Backgrounder

/// A window never lets a run start outside it, whatever the request kind (one-time, interval,
/// calendar), the windows, the retries and the steps of the clock.
@Suite(.cpuBound) struct WindowProperties {
  static let windowTexts = [
    "22:00-06:00", "Sat,Sun 08:00-20:00", "Mon..Fri 19:00-07:30", "01:00-01:10", "12:00-13:00",
    "Tue 23:30-00:30",
  ]

  /// Per step: which window set, which kind, how far the clock moves, the worker's result.
  static let histories = zip(
    Gen.int(in: 0...5), Gen.int(in: 0...2), Gen.int(in: 1...5000), Gen.int(in: 0...2)
  ).array(of: 1...60)

  @Test("no run starts outside its windows")
  func windowsHoldEveryStart() async {
    let total = Lock(0)
    await propertyCheck(count: 200, input: Self.histories) { steps in
      var machine = DispatchStateMachine(
        settings: DispatchSettings(concurrencyLimit: 4, minimumPeriodicInterval: .seconds(60)),
        registered: [], acceptsAnyTask: true, network: .unmetered, power: .externalPower,
        seed: 1)
      var now = WallInstant(nanosecondsSince1970: 1_700_000_000 * 1_000_000_000)
      var windows: [TaskId: [TimeWindow]] = [:]
      for (index, step) in steps.enumerated() {
        let (window, kind, seconds, result) = step
        let id = try! TaskId("test.window.t\(index % 4)")
        let constraints = WorkConstraints(
          windows: [try! TimeWindow(Self.windowTexts[window])], windowEnd: .stop)
        let request: WorkRequest =
          switch kind {
          case 0: .oneTime(.init(taskId: id, constraints: constraints, backoff: .linear()))
          case 1: .periodic(.init(taskId: id, constraints: constraints, interval: .seconds(600)))
          default:
            .periodic(
              .init(
                taskId: id, constraints: constraints,
                calendar: CalendarSchedule(
                  events: [try! CalendarEvent("*:0/20")], localZone: .utc)))
          }
        if index % 3 == 0 {
          _ = machine.schedule(
            TaskRow(request: request, input: Data(), now: now), policy: .replace, now: now)
          windows[id] = constraints.windows
        }
        now = now.advanced(by: .seconds(seconds))
        let (effects, _) = machine.dispatch(now: now)
        for ticket in effects.tickets {
          total.withLock { $0 += 1 }
          let allowed = windows[ticket.taskId] ?? []
          #expect(
            allowed.contains { $0.contains(now, in: .utc) },
            "\(ticket.taskId) started at \(now) outside \(allowed)")
          let ending: RunEnding =
            switch result {
            case 0: .finished(.success)
            case 1: .finished(.retry)
            default: .stopped(.windowClosed)
            }
          _ = machine.runEnded(ticket.token, ending: ending, abandoned: false, now: now)
        }
      }
    }
    // The histories do start runs (inside their windows).
    #expect(total.withLock { $0 } > 0)
  }
}
