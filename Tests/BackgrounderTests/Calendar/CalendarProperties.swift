import Foundation
import TestSupport
import Testing

@testable import Backgrounder

/// Properties of every elapse, over generated expressions, base times and zones.
@Suite("Calendar event properties", .cpuBound)
struct CalendarProperties {
  private static let zones = CalendarCorpus.zones.compactMap({ CalendarTimeZone(identifier: $0) })

  @Test("next(t) > t, elapses strictly increase, and next(e - 1µs) = e for every elapse e")
  func elapsesIncreaseAndAreFixedPoints() async throws {
    var random = SplitMix64(seed: 0x0062_6B67)
    var checked = 0
    var failures: [String] = []
    while checked < 3000 {
      guard let event = try? CalendarEvent(CalendarExpressionGenerator.make(&random)) else {
        continue
      }
      checked += 1
      let zone = Self.zones[random.next(in: 0...Self.zones.count - 1)]
      let base = WallInstant(
        nanosecondsSince1970: Int64(random.next(in: 0...2_000_000_000)) * 1_000_000_000
          + Int64(random.next(in: 0...999_999_999)))
      var previous = base
      for elapse in event.elapses(after: base, count: 4, localZone: zone) {
        let oneMicrosecondBefore = elapse.advanced(by: .microseconds(-1))
        if elapse <= previous
          || event.nextElapse(after: oneMicrosecondBefore, localZone: zone) != elapse
        {
          failures.append("\(event.normalized) in \(zone.identifier) after \(base): \(elapse)")
        }
        previous = elapse
      }
    }
    #expect(failures.isEmpty, "\(failures.prefix(10))")
  }
}
