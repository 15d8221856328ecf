/// Random calendar expressions from the systemd.time(7) grammar, mostly valid, some with a
/// value out of range or a malformed part.
enum CalendarExpressionGenerator {
  private static let dayNames = [
    ["Mon", "Monday", "mon"], ["Tue", "Tuesday", "TUE"], ["Wed", "Wednesday", "wed"],
    ["Thu", "Thursday", "thu"], ["Fri", "Friday", "FRI"], ["Sat", "Saturday", "sat"],
    ["Sun", "Sunday", "sun"],
  ]
  private static let zoneSuffixes = [
    " UTC", " utc", " Europe/Berlin", " America/New_York", " Australia/Lord_Howe",
    " Asia/Kolkata", " Nowhere/City",
  ]

  static func make(_ random: inout SplitMix64) -> String {
    var parts: [String] = []
    if random.chance(30) { parts.append(weekdays(&random)) }
    if random.chance(70) { parts.append(date(&random)) }
    if random.chance(85) || parts.isEmpty { parts.append(time(&random)) }
    var text = parts.joined(separator: " ")
    if random.chance(20) { text += zoneSuffixes[random.next(in: 0...zoneSuffixes.count - 1)] }
    return text
  }

  private static func weekdays(_ random: inout SplitMix64) -> String {
    (0..<random.next(in: 1...3)).map { _ in
      let first = random.next(in: 0...6)
      let name = { (day: Int, random: inout SplitMix64) in dayNames[day][random.next(in: 0...2)] }
      guard random.chance(40) else { return name(first, &random) }
      let last = random.chance(90) ? random.next(in: first...6) : random.next(in: 0...6)
      return name(first, &random) + (random.chance(80) ? ".." : "-") + name(last, &random)
    }.joined(separator: ",")
  }

  private static func date(_ random: inout SplitMix64) -> String {
    let month = chain(&random, range: 1...12, outOfRange: 13)
    let separator = random.chance(15) ? "~" : "-"
    let day = chain(&random, range: 1...(separator == "~" ? 28 : 31), outOfRange: 32)
    guard random.chance(50) else { return "\(month)\(separator)\(day)" }
    let year = chain(&random, range: 2023...2030, outOfRange: 2200, star: 70)
    return "\(year)-\(month)\(separator)\(day)"
  }

  private static func time(_ random: inout SplitMix64) -> String {
    let hour = chain(&random, range: 0...23, outOfRange: 24, star: 30)
    let minute = chain(&random, range: 0...59, outOfRange: 60, star: 25)
    guard random.chance(40) else { return "\(hour):\(minute)" }
    let second =
      random.chance(30)
      ? "*" : chain(&random, range: 0...59, outOfRange: 60, star: 0, fraction: random.chance(40))
    return "\(hour):\(minute):\(second)"
  }

  /// `*`, or 1–3 comma-separated values, ranges, repetitions; 3% of values out of range.
  private static func chain(
    _ random: inout SplitMix64, range: ClosedRange<Int>, outOfRange: Int, star: Int = 50,
    fraction: Bool = false
  ) -> String {
    if random.chance(star) { return "*" }
    func value(_ random: inout SplitMix64, in range: ClosedRange<Int>) -> String {
      let number = random.chance(3) ? outOfRange : random.next(in: range)
      guard fraction, random.chance(50) else { return String(number) }
      return "\(number).\(random.next(in: 0...999))"
    }
    return (0..<random.next(in: 1...3)).map { _ in
      let start = value(&random, in: range)
      let startNumber = Int(Double(start) ?? 0)
      var text = start
      if random.chance(30) {
        text += ".." + value(&random, in: min(startNumber, range.upperBound)...range.upperBound)
      }
      if random.chance(30) {
        text += "/" + value(&random, in: 1...max(1, (range.upperBound - range.lowerBound) / 2))
      }
      return text
    }.joined(separator: ",")
  }
}
