/// `localtime_r` and `mktime` over a Foundation `CalendarTimeZone` (or `gmtime`/`timegm` for UTC),
/// reproducing glibc's choices where local time is not one-to-one: a time in a
/// spring-forward gap is read with the offset before the gap (so it lands that much later), a
/// time that happens twice takes the offset of the previous conversion (glibc's
/// `localtime_offset`), unless the fields ask for standard or daylight time.
struct LocalTimeConverter {
  private let zone: CalendarTimeZone?
  /// The UTC offset glibc's `mktime` guesses first: that of its previous answer.
  private var offsetGuess: Int

  init(zone: CalendarTimeZone?, near seconds: Int64) {
    self.zone = zone
    self.offsetGuess = 0
    self.offsetGuess = offset(at: seconds)
  }

  /// The fields of `seconds` in this zone (`localtime_r`).
  func fields(at seconds: Int64) -> CivilTime {
    var fields = CivilTime(utcSeconds: seconds + Int64(offset(at: seconds)))
    if let zone {
      fields.isDST = zone.isDaylightSavingTime(atSeconds: seconds) ? 1 : 0
    }
    return fields
  }

  /// The instant of `fields`, which are normalized to that instant's (`mktime`). As glibc
  /// does, seconds outside 0–59 are clamped for finding the offset and the rest added after,
  /// so `01:59:69` on a fall-back night is 10 s after 01:59:59 daylight time (01:00:09).
  mutating func instant(normalizing fields: inout CivilTime) -> Int64 {
    let clampedSecond = min(max(fields.second, 0), 59)
    var clamped = fields
    clamped.second = clampedSecond
    let local = clamped.secondsAsUTC
    guard zone != nil else {
      fields = CivilTime(utcSeconds: fields.secondsAsUTC)
      return fields.secondsAsUTC
    }
    var seconds = resolve(local: local)
    if fields.isDST >= 0, isDST(seconds) != (fields.isDST != 0) {
      seconds = neighbourWithDST(fields.isDST != 0, of: seconds, local: local) ?? seconds
    }
    offsetGuess = Int(local - seconds)
    seconds += Int64(fields.second - clampedSecond)
    fields = self.fields(at: seconds)
    return seconds
  }

  private func resolve(local: Int64) -> Int64 {
    let first = local - Int64(offsetGuess)
    let firstOffset = offset(at: first)
    if firstOffset == offsetGuess { return first }
    let second = local - Int64(firstOffset)
    let secondOffset = offset(at: second)
    if secondOffset == firstOffset { return second }
    let third = local - Int64(secondOffset)
    if offset(at: third) == secondOffset { return third }
    // A gap: read the fields with the offset before it, which lands after it. (glibc's choice
    // also depends on its previous guess; where winter is marked "daylight" time, as in
    // Europe/Dublin, it sometimes lands before the gap instead: not modelled.)
    return local - Int64(min(firstOffset, secondOffset))
  }

  /// glibc's search for a nearby instant with the requested `tm_isdst`, whose offset then reads
  /// the fields.
  private func neighbourWithDST(_ wanted: Bool, of seconds: Int64, local: Int64) -> Int64? {
    let stride: Int64 = 601_200
    let bound: Int64 = 536_454_000 / 2 + stride
    var delta = stride
    while delta < bound {
      for direction: Int64 in [-1, 1] {
        let other = seconds + delta * direction
        if isDST(other) == wanted { return local - Int64(offset(at: other)) }
      }
      delta += stride
    }
    return nil
  }

  private func offset(at seconds: Int64) -> Int {
    zone?.offset(atSeconds: seconds) ?? 0
  }

  private func isDST(_ seconds: Int64) -> Bool {
    zone?.isDaylightSavingTime(atSeconds: seconds) ?? false
  }
}

extension CalendarTimeZone {
  /// The instant of a local wall-clock time in this zone, as `mktime` reads it (a time in a
  /// gap moves past it, as in ``CalendarEvent`` elapses).
  public func instant(
    year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int
  ) -> WallInstant {
    let fields = CivilTime(
      year: year, month0: month - 1, day: day, hour: hour, minute: minute, second: second)
    var converter = LocalTimeConverter(zone: self, near: fields.secondsAsUTC)
    var normalized = fields
    let seconds = converter.instant(normalizing: &normalized)
    return WallInstant(nanosecondsSince1970: seconds * 1_000_000_000)
  }
}
