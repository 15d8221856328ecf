import Foundation
import TestSupport
import Testing

@testable import Backgrounder

/// Our calendar events against systemd's own implementation (`systemd-analyze calendar`, which
/// `.ci/install-deps` installs): the same rejections, normalized forms and elapses over a
/// generated corpus of expressions × base times × time zones.
@Suite("Calendar events match systemd-analyze", .cpuBound)
struct CalendarDifferentialTests {
  static let iterations = 5
  static let seed: UInt64 = 0x2026_1126

  @Test("every corpus case: same rejection, normalized form and next 5 elapses as systemd")
  func corpusMatchesSystemd() async throws {
    try #require(
      SystemdAnalyzeCalendar.isAvailable,
      "\(SystemdAnalyzeCalendar.path) is needed (Debian's systemd; .ci/install-deps)")
    var cases = 0
    var mismatches: [String] = []
    for group in CalendarCorpus.groups(seed: Self.seed) {
      let theirs = try SystemdAnalyzeCalendar.answers(
        group.expressions, zone: group.zone, baseSeconds: group.baseSeconds,
        iterations: Self.iterations)
      let localZone = try #require(CalendarTimeZone(identifier: group.zone))
      for expression in group.expressions {
        cases += 1
        let ours = Self.answer(expression, group: group, localZone: localZone)
        if ours != theirs[expression] {
          mismatches.append(
            "TZ=\(group.zone) systemd-analyze calendar --iterations=\(Self.iterations) "
              + "--base-time=@\(group.baseSeconds) '\(expression)'\n"
              + "  systemd: \(theirs[expression].map(String.init(describing:)) ?? "nothing")\n"
              + "  ours:    \(ours)")
        }
      }
    }
    #expect(cases >= 2000, "only \(cases) cases")
    let report = mismatches.prefix(20).joined(separator: "\n")
    #expect(mismatches.isEmpty, "\(mismatches.count) of \(cases) cases differ:\n\(report)")
  }

  private static func answer(
    _ expression: String, group: CalendarCorpus.Group, localZone: CalendarTimeZone
  ) -> SystemdAnalyzeCalendar.Answer {
    guard let event = try? CalendarEvent(expression) else { return .rejected }
    var base = WallInstant(nanosecondsSince1970: group.baseSeconds * 1_000_000_000)
    var elapses: [Int64] = []
    while elapses.count < iterations {
      switch event.next(after: base, localZone: localZone) {
      case .elapse(let next):
        elapses.append(next.nanosecondsSince1970.floorDivided(by: 1_000_000_000))
        base = next
      case .never:
        return .accepted(normalized: event.normalized, elapses: elapses)
      case .unresolved:
        return .unresolved
      }
    }
    return .accepted(normalized: event.normalized, elapses: elapses)
  }
}
