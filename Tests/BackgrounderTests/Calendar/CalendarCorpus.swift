/// The differential corpus: expressions (hand-picked for every syntax element, plus generated
/// from a seeded grammar, valid and not) × base times (DST transitions, month ends, leap days,
/// seeded random) × time zones.
struct CalendarCorpus {
  /// One group: every expression at one base time in one zone (one `systemd-analyze` run).
  struct Group {
    var zone: String
    var baseSeconds: Int64
    var expressions: [String]
  }

  static let zones = ["UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe"]

  /// Every syntax element of systemd.time(7) at least once, with DST-sensitive times.
  static let handPicked = [
    "Mon..Fri *-*-* 02:00", "Sat,Sun 08..20:00", "mon,wed,fri 12:00", "Monday-Wednesday 1:2:3",
    "Tue..Thu,Sat *-*-1..7 03:00", "*:30", "02:30", "*-*-* 02:30", "*:00/20", "02:00/20",
    "02..03:10", "*:10/15", "02:15", "01:30", "01:45,15", "*:0/15:0.5", "*:*:0/7.5",
    "*-*-* *:*:59.5", "00:00:1.5..10/2.25", "12:00:00.000001", "*-*~1", "*-*~01..03/2",
    "*-02~1", "*-02~03", "*-*~07/2", "*-*-31", "*-*-30 23:59", "*-02-29", "*-02-28,29 12:00",
    "2024-02-29", "2100-02-29", "2025-*-* 00:00", "2024..2026-12-31 23:59:59", "*/2-01-01",
    "2024/2-*-01", "12-01-01", "70-01-01", "*-1/3-1", "*-01..12/4-15 6:00", "*-*-1/10 00:00",
    "minutely", "hourly", "daily", "weekly", "monthly", "quarterly", "semiannually",
    "semi-annually", "biannually", "yearly", "annually", "anually", "WEEKLY", "Daily UTC",
    "*-*-* 02:30 Europe/Berlin", "*-*-* 02:30 America/New_York", "02:15 Australia/Lord_Howe",
    "Mon *-*-* 00:00:00 UTC", "12:00 utc", "*-*-* 00:00 Asia/Kolkata", "@1234567890",
    "@1900000000", "Fri *-*-13 13:13", "Sun *-*-25..31 04:00", "*-*-* 1,2,3:0,30",
    "*:*", "*:*:*", "*-*-*", "Mon", "tuesday", "*-*-* 23:59:59.999999",
    // Rejected by systemd.
    "", " daily", "daily ", "mon,fri,,", "Sat..Mon", "Mon..", "Mon Tue", "2024-*-~7",
    "*~02/2", "*:*:*/10", "*:0/0", "*-*-* 24:00", "*-13-01", "*-*-32", "*:60", "*:*:60",
    "2200-01-01", "1969-01-01", "Mon *-*-* 00:00:00 Foo/Bar", "12:00 UTC ", "02",
    "*:*:59.9999999", "1.5:00", "*-*-* 12:00 Europe//Berlin", "Funday", "*-*-1..", "12:00:",
    "*-*-* 12:00 /etc/passwd", "*-*-0", "*-*~0", "*-*~29", "00:00:00..",
  ]

  /// In every group: second repetitions that overflow the minute, which on a fall-back night
  /// depend on glibc's normalization of out-of-range seconds (found by seed 17).
  static let everywhere = ["*:*:4.49/13", "*:59:50/7"]

  /// Base times in seconds: each zone's 2024 DST transitions (minutes and hours either side),
  /// month ends, leap days, and seeded random times 1995–2060.
  static func baseTimes(zone: String, random: inout SplitMix64) -> [Int64] {
    let transitions: [String: [Int64]] = [
      "Europe/Berlin": [1_711_846_800, 1_729_990_800],
      "America/New_York": [1_710_054_000, 1_730_613_600],
      "Australia/Lord_Howe": [1_712_417_400, 1_728_142_200],
      "UTC": [1_711_846_800],
    ]
    var bases: [Int64] = []
    for transition in transitions[zone] ?? [] {
      bases += [-7200, -3000, -1, 0, 1800, 3599].map { transition + $0 }
    }
    // 2023-02-28, 2024-02-28, 2024-12-31, 2099-12-31 and 2100-02-28 around 22:00 UTC.
    bases += [1_677_621_600, 1_709_157_600, 1_735_682_400, 4_102_351_200, 4_107_448_800]
    for _ in 0..<3 { bases.append(Int64(random.next(in: 788_918_400...2_840_140_800))) }
    return bases
  }

  /// The groups: every zone × its base times, each with the hand-picked expressions in one
  /// of the zones and generated ones everywhere.
  static func groups(seed: UInt64) -> [Group] {
    var random = SplitMix64(seed: seed)
    var groups: [Group] = []
    for (zoneIndex, zone) in zones.enumerated() {
      for (baseIndex, base) in baseTimes(zone: zone, random: &random).enumerated() {
        var expressions = everywhere + ((baseIndex + zoneIndex).isMultiple(of: 3) ? handPicked : [])
        for _ in 0..<12 { expressions.append(CalendarExpressionGenerator.make(&random)) }
        groups.append(
          Group(zone: zone, baseSeconds: base, expressions: Array(Set(expressions)).sorted()))
      }
    }
    return groups
  }
}

/// A small seeded generator (SplitMix64), so a failing case can be reproduced.
struct SplitMix64: RandomNumberGenerator {
  private var state: UInt64

  init(seed: UInt64) { state = seed }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  mutating func next(in range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }

  mutating func chance(_ percent: Int) -> Bool { next(in: 1...100) <= percent }
}
