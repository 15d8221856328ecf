import Foundation
import TestSupport
import Testing

@testable import Backgrounder

/// The times of every JSON document are written by ``ISO8601/string(_:)`` with integer
/// arithmetic; they must stay exactly what Foundation's format style writes.
@Suite("ISO 8601 times", .cpuBound)
struct ISO8601Tests {
  private static func foundation(_ date: Date) -> String {
    Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(date)
  }

  @Test("random times from 1970 to 9999, at nanosecond and millisecond precision, match Foundation")
  func randomTimesMatchFoundation() async {
    var generator = SystemRandomNumberGenerator()
    var mismatches: [String] = []
    for index in 0..<200_000 {
      // Half as the store writes them (nanoseconds since 1970, up to 2255), half on whole
      // milliseconds up to 9999.
      let date =
        index.isMultiple(of: 2)
        ? WallInstant(
          nanosecondsSince1970: Int64.random(in: 0..<9_000_000_000_000_000_000, using: &generator)
        ).date
        : Date(
          timeIntervalSince1970: Double(
            Int64.random(in: 0..<253_402_300_800_000, using: &generator)) / 1000)
      let ours = ISO8601.string(date)
      if ours != Self.foundation(date), mismatches.count < 5 {
        mismatches.append(
          "\(date.timeIntervalSinceReferenceDate): \(ours) vs \(Self.foundation(date))")
      }
    }
    #expect(mismatches.isEmpty, "\(mismatches)")
  }

  @Test("second, day, leap-day and year boundaries, and fractions next to them, match Foundation")
  func boundariesMatchFoundation() {
    let boundaries: [TimeInterval] = [
      0, 59, 60, 86_399, 86_400, 951_782_400, 951_868_800, 978_307_199, 978_307_200,
      1_709_164_800, 4_107_542_400, 253_402_300_799,
    ]
    for boundary in boundaries {
      for offset in [-1e-9, -1e-6, -0.0005, -0.001, 0, 1e-9, 1e-6, 0.0005, 0.001, 0.999, 0.9999999]
      {
        let date = Date(timeIntervalSince1970: boundary + offset)
        #expect(ISO8601.string(date) == Self.foundation(date), "\(boundary) + \(offset)")
      }
    }
  }

  @Test("times before 1970 and after 9999 are left to Foundation")
  func outOfRangeUsesFoundation() {
    for seconds: TimeInterval in [-1, -86_400.5, -62_135_596_800, 253_402_300_800, 1e12] {
      let date = Date(timeIntervalSince1970: seconds)
      #expect(ISO8601.string(date) == Self.foundation(date), "\(seconds)")
    }
  }
}
