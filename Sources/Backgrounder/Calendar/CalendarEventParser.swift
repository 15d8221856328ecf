import Foundation

/// Parses the systemd.time(7) calendar-event syntax, accepting what systemd 252's
/// `calendar_spec_from_string` accepts.
struct CalendarEventParser {
  private static let microsecondsPerSecond = 1_000_000
  private static let maximumComponents = 240
  private static let weekdayNames: [(name: String, number: Int)] = [
    ("monday", 0), ("mon", 0), ("tuesday", 1), ("tue", 1), ("wednesday", 2), ("wed", 2),
    ("thursday", 3), ("thu", 3), ("friday", 4), ("fri", 4), ("saturday", 5), ("sat", 5),
    ("sunday", 6), ("sun", 6),
  ]

  private let expression: String
  private var text: [UInt8] = []
  private var position = 0
  private var weekdayBits = 0
  private var years: [CalendarComponent]?
  private var months: [CalendarComponent]?
  private var days: [CalendarComponent]?
  private var endOfMonth = false
  private var hours: [CalendarComponent]?
  private var minutes: [CalendarComponent]?
  private var microseconds: [CalendarComponent]?
  private var zone = CalendarEvent.Zone.local

  init(_ expression: String) {
    self.expression = expression
  }

  mutating func parse() throws(CalendarEventError) -> CalendarEvent {
    let body = splitZone()
    guard !body.isEmpty else { throw failure("no date or time") }
    if !parseShorthand(body.lowercased()) {
      text = Array(body.utf8)
      try parseWeekdays()
      if try !parseDate() {
        try parseTime()
      }
      guard position == text.count else { throw failure("unexpected '\(rest)'") }
    }
    return try validated()
  }

  // MARK: Zone and shorthands

  /// Removes a trailing ` UTC` or ` ZONE` (a valid tz database name) and records it.
  private mutating func splitZone() -> String {
    if expression.utf8.count >= 4,
      expression.utf8.suffix(4).elementsEqual(" utc".utf8, by: caseless)
    {
      zone = .utc
      return String(decoding: expression.utf8.dropLast(4), as: UTF8.self)
    }
    if let space = expression.lastIndex(of: " ") {
      let name = String(expression[expression.index(after: space)...])
      if CalendarTimeZones.isValidName(name), let named = CalendarTimeZone(identifier: name) {
        zone = .named(named)
        return String(expression[..<space])
      }
    }
    return expression
  }

  private func caseless(_ a: UInt8, _ b: UInt8) -> Bool {
    (a >= 65 && a <= 90 ? a + 32 : a) == b
  }

  private mutating func parseShorthand(_ name: String) -> Bool {
    let zero = [CalendarComponent(start: 0)]
    let midnight = { (parser: inout CalendarEventParser) in
      parser.hours = zero
      parser.minutes = zero
      parser.microseconds = zero
    }
    switch name {
    case "minutely":
      microseconds = zero
    case "hourly":
      minutes = zero
      microseconds = zero
    case "daily":
      midnight(&self)
    case "weekly":
      weekdayBits = 1
      midnight(&self)
    case "monthly":
      days = [CalendarComponent(start: 1)]
      midnight(&self)
    case "annually", "yearly", "anually":
      months = [CalendarComponent(start: 1)]
      days = [CalendarComponent(start: 1)]
      midnight(&self)
    case "quarterly":
      months = [1, 4, 7, 10].map { CalendarComponent(start: $0) }
      days = [CalendarComponent(start: 1)]
      midnight(&self)
    case "biannually", "bi-annually", "semiannually", "semi-annually":
      months = [1, 7].map { CalendarComponent(start: $0) }
      days = [CalendarComponent(start: 1)]
      midnight(&self)
    default:
      return false
    }
    return true
  }

  // MARK: Weekdays

  private mutating func parseWeekdays() throws(CalendarEventError) {
    var rangeStart = -1
    var first = true
    while true {
      guard let (length, number) = matchWeekday() else {
        if first { return }
        throw failure("expected a weekday at '\(rest)'")
      }
      guard [0, .minus, .dot, .comma, .space].contains(byte(at: position + length)) else {
        throw failure("unknown weekday at '\(rest)'")
      }
      weekdayBits |= 1 << number
      if rangeStart >= 0 {
        guard rangeStart <= number else {
          throw failure("weekday range '\(rest)' runs backwards")
        }
        for day in rangeStart + 1..<max(number, rangeStart + 1) { weekdayBits |= 1 << day }
      }
      position += length
      switch byte(at: position) {
      case 0:
        return
      case .space:
        skipSpaces()
        return
      case .dot:
        guard rangeStart < 0, byte(at: position + 1) == .dot else {
          throw failure("bad weekday range at '\(rest)'")
        }
        rangeStart = number
        position += 2
      case .minus:
        guard rangeStart < 0 else { throw failure("bad weekday range at '\(rest)'") }
        rangeStart = number
        position += 1
      default:
        rangeStart = -1
        position += 1
      }
      if [0, .space].contains(byte(at: position)) {
        skipSpaces()
        guard rangeStart < 0 else { throw failure("open weekday range") }
        return
      }
      first = false
    }
  }

  private func matchWeekday() -> (length: Int, number: Int)? {
    for (name, number) in Self.weekdayNames {
      let end = position + name.utf8.count
      guard end <= text.count,
        text[position..<end].elementsEqual(name.utf8, by: caseless)
      else { continue }
      return (name.utf8.count, number)
    }
    return nil
  }

  // MARK: Date and time

  /// Parses `[YEAR-]MONTH-DAY` (or `~DAY`) or `@EPOCH`; false when the text is a time.
  private mutating func parseDate() throws(CalendarEventError) -> Bool {
    guard position < text.count else { return false }
    if text[position] == UInt8(ascii: "@") {
      try parseEpoch()
      return true
    }
    let start = position
    let first = try parseChain(microseconds: false)
    if [0, .colon].contains(byte(at: position)) {
      position = start
      return false
    }
    try expectDateSeparator()
    let second = try parseChain(microseconds: false)
    if [0, .space].contains(byte(at: position)) {
      skipSpaces()
      months = first
      days = second
      return false
    }
    guard !endOfMonth else { throw failure("'~' must come before the day at '\(rest)'") }
    try expectDateSeparator()
    let third = try parseChain(microseconds: false)
    guard [0, .space].contains(byte(at: position)) else {
      throw failure("unexpected '\(rest)' after the date")
    }
    skipSpaces()
    years = first
    months = second
    days = third
    return false
  }

  private mutating func expectDateSeparator() throws(CalendarEventError) {
    switch byte(at: position) {
    case .tilde: endOfMonth = true
    case .minus: break
    default: throw failure("expected '-' or '~' at '\(rest)'")
    }
    position += 1
  }

  private mutating func parseEpoch() throws(CalendarEventError) {
    position += 1
    let digits = text[position...].prefix { $0 >= .zero && $0 <= .nine }
    guard !digits.isEmpty, let seconds = Int(String(decoding: digits, as: UTF8.self)),
      seconds <= Int(Int64.max / 1_000_000)
    else { throw failure("bad @EPOCH at '\(rest)'") }
    position += digits.count
    let civil = CivilTime(utcSeconds: Int64(seconds))
    years = [CalendarComponent(start: civil.year)]
    months = [CalendarComponent(start: civil.month0 + 1)]
    days = [CalendarComponent(start: civil.day)]
    hours = [CalendarComponent(start: civil.hour)]
    minutes = [CalendarComponent(start: civil.minute)]
    microseconds = [CalendarComponent(start: civil.second * Self.microsecondsPerSecond)]
    zone = .utc
  }

  private mutating func parseTime() throws(CalendarEventError) {
    let zero = [CalendarComponent(start: 0)]
    guard position < text.count else {
      hours = zero
      minutes = zero
      microseconds = zero
      return
    }
    let hour = try parseChain(microseconds: false)
    guard byte(at: position) == .colon else { throw failure("expected ':' at '\(rest)'") }
    position += 1
    let minute = try parseChain(microseconds: false)
    hours = hour
    minutes = minute
    guard position < text.count else {
      microseconds = zero
      return
    }
    guard byte(at: position) == .colon else { throw failure("expected ':' at '\(rest)'") }
    position += 1
    microseconds = try parseChain(microseconds: true)
  }

  // MARK: Components

  /// `*` (nil; for seconds `0/1`) or a comma list of components.
  private mutating func parseChain(
    microseconds usec: Bool
  ) throws(CalendarEventError) -> [CalendarComponent]? {
    if byte(at: position) == .star {
      position += 1
      return usec ? [CalendarComponent(start: 0, repetition: Self.microsecondsPerSecond)] : nil
    }
    var chain: [CalendarComponent] = []
    while true {
      guard chain.count <= Self.maximumComponents else {
        throw failure("more than \(Self.maximumComponents) values in one field")
      }
      chain.append(try parseComponent(microseconds: usec))
      guard byte(at: position) == .comma else { return chain }
      position += 1
    }
  }

  private mutating func parseComponent(
    microseconds usec: Bool
  ) throws(CalendarEventError) -> CalendarComponent {
    let start = try parseDecimal(microseconds: usec)
    var component = CalendarComponent(start: start)
    if byte(at: position) == .dot && byte(at: position + 1) == .dot {
      position += 2
      component.stop = try parseDecimal(microseconds: usec)
      component.repetition = usec ? Self.microsecondsPerSecond : 1
    }
    if byte(at: position) == .slash {
      position += 1
      component.repetition = try parseDecimal(microseconds: usec)
      guard component.repetition > 0 else { throw failure("a repetition of 0") }
    } else if usec && component.stop >= 0
      && component.start + component.repetition > component.stop
    {
      throw failure("a range of seconds shorter than a second needs a '/' step")
    }
    guard [0, .space, .comma, .minus, .tilde, .colon].contains(byte(at: position)) else {
      throw failure("unexpected '\(rest)'")
    }
    return component
  }

  /// A decimal number; for seconds with an optional fraction (rounded to microseconds).
  private mutating func parseDecimal(microseconds usec: Bool) throws(CalendarEventError) -> Int {
    let digits = text[position...].prefix { $0 >= .zero && $0 <= .nine }
    guard !digits.isEmpty else { throw failure("expected a number at '\(rest)'") }
    guard let parsed = UInt64(String(decoding: digits, as: UTF8.self)) else {
      throw failure("number too large at '\(rest)'")
    }
    position += digits.count
    var value = parsed
    if usec {
      let (scaled, overflow) = value.multipliedReportingOverflow(by: 1_000_000)
      guard !overflow else { throw failure("number too large") }
      value = scaled
      if byte(at: position) == .dot && byte(at: position + 1) != .dot {
        position += 1
        value += try parseFraction()
      }
    }
    guard value <= UInt64(Int32.max) else { throw failure("number too large") }
    return Int(value)
  }

  /// Six digits of a fraction, rounded on the seventh; further digits are ignored.
  private mutating func parseFraction() throws(CalendarEventError) -> UInt64 {
    var value: UInt64 = 0
    for index in 0..<6 {
      let digit = byte(at: position)
      guard digit >= .zero && digit <= .nine else {
        guard index > 0 else { throw failure("expected a digit at '\(rest)'") }
        for _ in index..<6 { value *= 10 }
        break
      }
      value = value * 10 + UInt64(digit - .zero)
      position += 1
    }
    if byte(at: position) >= UInt8(ascii: "5") && byte(at: position) <= .nine { value += 1 }
    while byte(at: position) >= .zero && byte(at: position) <= .nine { position += 1 }
    return value
  }

  // MARK: Normalization and validity

  private func validated() throws(CalendarEventError) -> CalendarEvent {
    let weekdays: UInt8? = weekdayBits <= 0 || weekdayBits >= 127 ? nil : UInt8(weekdayBits)
    let years = years.map { chain in chain.map(Self.fixYear).normalizedChain() }
    let event = CalendarEvent(
      weekdays: weekdays, years: years, months: months?.normalizedChain(),
      days: days?.normalizedChain(), endOfMonth: endOfMonth && days != nil,
      hours: hours?.normalizedChain(), minutes: minutes?.normalizedChain(),
      microseconds: (microseconds ?? [CalendarComponent(start: 0)]).normalizedChain(),
      zone: zone)
    let checks: [(String, [CalendarComponent]?, ClosedRange<Int>, Bool)] = [
      ("year", event.years, 1970...2199, false),
      ("month", event.months, 1...12, false),
      ("day", event.days, 1...31, event.endOfMonth),
      ("hour", event.hours, 0...23, false),
      ("minute", event.minutes, 0...59, false),
      ("second", event.microseconds, 0...(60 * Self.microsecondsPerSecond - 1), false),
    ]
    for (field, chain, range, fromEnd) in checks
    where !(chain ?? []).isValid(from: range.lowerBound, to: range.upperBound, endOfMonth: fromEnd)
    {
      throw failure("the \(field) is out of range")
    }
    // Stricter than systemd: a job due every microsecond runs back to back at best.
    if let fast = event.microseconds.first(where: {
      $0.repetition > 0 && $0.repetition < CalendarEvent.shortestRepetition
    }) {
      throw failure(
        "a repetition of \(Self.seconds(fast.repetition))s in the seconds is shorter than 1s, "
          + "the shortest allowed")
    }
    return event
  }

  /// `microseconds` as seconds with the fraction it has (`0.000001`, `0.5`).
  private static func seconds(_ microseconds: Int) -> String {
    let fraction = String(microseconds % microsecondsPerSecond)
    let digits = String(repeating: "0", count: 6 - fraction.count) + fraction
    let trimmed = digits.reversed().drop { $0 == "0" }.reversed()
    return "\(microseconds / microsecondsPerSecond)" + (trimmed.isEmpty ? "" : "." + trimmed)
  }

  /// Two-digit years: 0–69 are 2000–2069, 70–99 are 1970–1999.
  private static func fixYear(_ component: CalendarComponent) -> CalendarComponent {
    func fix(_ year: Int) -> Int {
      switch year {
      case 0..<70: year + 2000
      case 70..<100: year + 1900
      default: year
      }
    }
    var component = component
    component.start = fix(component.start)
    component.stop = fix(component.stop)
    return component
  }

  // MARK: Helpers

  private func byte(at index: Int) -> UInt8 { index < text.count ? text[index] : 0 }

  private var rest: String { String(decoding: text[min(position, text.count)...], as: UTF8.self) }

  private mutating func skipSpaces() {
    while byte(at: position) == .space { position += 1 }
  }

  private func failure(_ reason: String) -> CalendarEventError {
    CalendarEventError(expression: expression, reason: reason)
  }
}

extension UInt8 {
  fileprivate static let space = UInt8(ascii: " ")
  fileprivate static let dot = UInt8(ascii: ".")
  fileprivate static let comma = UInt8(ascii: ",")
  fileprivate static let minus = UInt8(ascii: "-")
  fileprivate static let colon = UInt8(ascii: ":")
  fileprivate static let tilde = UInt8(ascii: "~")
  fileprivate static let slash = UInt8(ascii: "/")
  fileprivate static let star = UInt8(ascii: "*")
  fileprivate static let zero = UInt8(ascii: "0")
  fileprivate static let nine = UInt8(ascii: "9")
}
