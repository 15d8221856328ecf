import Foundation
import Testing

@testable import Backgrounder

/// ``HumanText/duration(seconds:)`` under 10 s rounds as integers; it must say what
/// `String(format:)` said (`%.2f s` under a second, `%.1f s` without a trailing `.0` under ten).
@Suite struct HumanTextDurationTests {
  static func formatted(_ seconds: Double) -> String {
    let sign = seconds < 0 ? "-" : ""
    let magnitude = abs(seconds)
    if magnitude < 1 { return sign + String(format: "%.2f s", magnitude) }
    let text = String(format: "%.1f", magnitude)
    return sign + (text.hasSuffix(".0") ? String(text.dropLast(2)) : text) + " s"
  }

  @Test("under ten seconds, the same text as String(format:)")
  func sameAsFormat() {
    var generator = SplitMix64(seed: 35)
    var values: [Double] = [
      0, 0.004, 0.005, 0.0051, 0.015, 0.125, 0.994, 0.995, 0.999, 1, 1.04, 1.05, 2.25, 9.94, 9.96,
    ]
    values += (0..<10_000).map { Double($0) / 1000 }
    values += (0..<10_000).map { _ in Double.random(in: 0..<10, using: &generator) }
    var differences: [String] = []
    for value in values + values.map({ -$0 }) where value != 0 || value.sign == .plus {
      let ours = HumanText.duration(seconds: value)
      let theirs = Self.formatted(value)
      if ours != theirs { differences.append("\(value): \(ours) vs \(theirs)") }
    }
    #expect(differences.isEmpty, "\(differences.count): \(differences.prefix(10))")
    #expect(HumanText.duration(seconds: 0.03) == "0.03 s")
    #expect(HumanText.duration(seconds: 2) == "2 s")
    #expect(HumanText.duration(seconds: 2.25) == "2.2 s", "an exact tie rounds to even")
    #expect(HumanText.duration(seconds: 0.015) == "0.01 s", "0.015 is stored as 0.01499…")
    #expect(HumanText.duration(seconds: 9.96) == "10 s")
  }
}
