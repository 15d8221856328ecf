import Testing

@testable import BackgrounderCLI

@Suite struct NetworkTimestampTests {
  @Test func formatsMicrosecondsInUTC() {
    #expect(NetworkTimestamp.rfc3339(microseconds: 0) == "1970-01-01T00:00:00.000000Z")
    #expect(
      NetworkTimestamp.rfc3339(microseconds: 1_738_324_800_123_456)
        == "2025-01-31T12:00:00.123456Z")
    #expect(NetworkTimestamp.rfc3339(microseconds: -1) == "1969-12-31T23:59:59.999999Z")
    #expect(
      NetworkTimestamp.rfc3339(microseconds: 951_782_400_000_007) == "2000-02-29T00:00:00.000007Z")
  }

  /// The formatter keeps the date and time of the last second: it must notice a new second.
  @Test func reusedFormatterFollowsSecondsMinutesAndDays() {
    var formatter = NetworkTimestamp.Formatter()
    let times: [(Int64, String)] = [
      (1_738_367_999_999_998, "2025-01-31T23:59:59.999998Z"),
      (1_738_367_999_999_999, "2025-01-31T23:59:59.999999Z"),
      (1_738_368_000_000_000, "2025-02-01T00:00:00.000000Z"),
      (1_738_368_060_500_000, "2025-02-01T00:01:00.500000Z"),
      (1_738_367_999_000_001, "2025-01-31T23:59:59.000001Z"),
    ]
    for (microseconds, text) in times {
      var bytes: [UInt8] = []
      formatter.append(microseconds: microseconds, to: &bytes)
      #expect(String(decoding: bytes, as: UTF8.self) == text)
    }
  }
}
