extension CalendarEvent {
  private static let weekdayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]

  /// The normalized form, as systemd prints it (`Mon..Fri *-*-* 02:00:00 Europe/Berlin`).
  public var normalized: String {
    var text = ""
    if let weekdays {
      text += Self.format(weekdays: weekdays) + " "
    }
    text += Self.format(years, width: 4) + "-" + Self.format(months, width: 2)
    text += (endOfMonth ? "~" : "-") + Self.format(days, width: 2) + " "
    text += Self.format(hours, width: 2) + ":" + Self.format(minutes, width: 2) + ":"
    text += Self.formatSeconds(microseconds)
    switch zone {
    case .local: break
    case .utc: text += " UTC"
    case .named(let zone): text += " " + zone.identifier
    }
    return text
  }

  private static func format(weekdays: UInt8) -> String {
    var text = ""
    var runStart = -1
    func closeRun(before day: Int) {
      if day > runStart + 1 {
        text += (day > runStart + 2 ? ".." : ",") + weekdayNames[day - 1]
      }
    }
    for day in 0..<7 {
      if weekdays & (1 << day) != 0 {
        if runStart < 0 {
          text += (text.isEmpty ? "" : ",") + weekdayNames[day]
          runStart = day
        }
      } else if runStart >= 0 {
        closeRun(before: day)
        runStart = -1
      }
    }
    if runStart >= 0 { closeRun(before: 7) }
    return text
  }

  private static func format(_ chain: [CalendarComponent]?, width: Int) -> String {
    guard let chain else { return "*" }
    return chain.map { component in
      var text = padded(component.start, width)
      if component.stop > 0 { text += ".." + padded(component.stop, width) }
      if component.repetition > 0 && !(component.stop > 0 && component.repetition == 1) {
        text += "/\(component.repetition)"
      }
      return text
    }.joined(separator: ",")
  }

  private static func formatSeconds(_ chain: [CalendarComponent]) -> String {
    let second = 1_000_000
    if chain == [CalendarComponent(start: 0, repetition: second)] { return "*" }
    return chain.map { component in
      var text = padded(component.start / second, 2) + fraction(component.start)
      if component.stop > 0 { text += ".." + padded(component.stop / second, 2) }
      text += fraction(component.stop)
      if component.repetition > 0 && !(component.stop > 0 && component.repetition == second) {
        text += "/\(component.repetition / second)"
      }
      text += fraction(component.repetition)
      return text
    }.joined(separator: ",")
  }

  private static func fraction(_ microseconds: Int) -> String {
    let part = microseconds % 1_000_000
    return part > 0 ? "." + padded(part, 6) : ""
  }

  private static func padded(_ value: Int, _ width: Int) -> String {
    let digits = String(value)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
  }
}
