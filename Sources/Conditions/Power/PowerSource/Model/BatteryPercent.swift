/// Combines several batteries into one percent, the way UPower does.
enum BatteryPercent {
  /// Energy-weighted when every readable battery has `energy_now`/`energy_full`, else
  /// charge-weighted when every one has `charge_now`/`charge_full`, else the mean of the
  /// per-battery percents (`capacity`, or a ratio when `capacity` is missing).
  /// `nil` when no battery is readable. Rounded to 0.1, clamped to 0…100.
  static func combined(_ batteries: [ParsedSupply]) -> Double? {
    let readable = batteries.filter { single($0) != nil }
    guard !readable.isEmpty else { return nil }
    let value: Double
    if let energy = weighted(readable, \.energyNow, \.energyFull) {
      value = energy
    } else if let charge = weighted(readable, \.chargeNow, \.chargeFull) {
      value = charge
    } else {
      let percents = readable.compactMap(single)
      value = percents.reduce(0, +) / Double(percents.count)
    }
    return (min(max(value, 0), 100) * 10).rounded() / 10
  }

  /// One battery's percent: `capacity`, else the energy ratio, else the charge ratio.
  static func single(_ battery: ParsedSupply) -> Double? {
    if let capacity = battery.capacity { return Double(capacity) }
    if let ratio = ratio(battery.energyNow, battery.energyFull) { return ratio }
    return ratio(battery.chargeNow, battery.chargeFull)
  }

  private static func weighted(
    _ batteries: [ParsedSupply], _ now: KeyPath<ParsedSupply, Int64?>,
    _ full: KeyPath<ParsedSupply, Int64?>
  ) -> Double? {
    var sumNow = 0.0
    var sumFull = 0.0
    for battery in batteries {
      guard let current = battery[keyPath: now], let total = battery[keyPath: full], total > 0
      else { return nil }
      sumNow += Double(current)
      sumFull += Double(total)
    }
    return sumNow / sumFull * 100
  }

  private static func ratio(_ now: Int64?, _ full: Int64?) -> Double? {
    guard let now, let full, full > 0 else { return nil }
    return Double(now) / Double(full) * 100
  }
}
