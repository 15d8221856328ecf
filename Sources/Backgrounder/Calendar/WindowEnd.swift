/// What happens to a run still going when the window it started in closes (`window-end`).
public enum WindowEnd: String, Hashable, Sendable, Codable, CaseIterable {
  /// It runs on to its end.
  case `continue`
  /// It is stopped (``StopReason/windowClosed``) and retried at the next opening, no attempt
  /// used; a task that pauses (``ConditionLossPolicy/pause(max:)``) is paused instead, and
  /// thawed at the next opening unless its `max` runs out first.
  case stop
}

extension TimeWindow: Codable {
  /// Decodes the window from its text (`Sat,Sun 08:00-20:00`).
  public init(from decoder: any Decoder) throws {
    let text = try decoder.singleValueContainer().decode(String.self)
    self = try TimeWindow(text)
  }

  /// Encodes the window as its normal form.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(description)
  }
}

extension [TimeWindow] {
  /// Whether a run may start at `instant`: inside one of the windows, or there are none.
  func allowStart(at instant: WallInstant, in zone: CalendarTimeZone) -> Bool {
    isEmpty || contains { $0.contains(instant, in: zone) }
  }

  /// The first instant at or after `instant` inside one of the windows (`instant` without
  /// windows).
  func nextOpening(atOrAfter instant: WallInstant, in zone: CalendarTimeZone) -> WallInstant {
    map { $0.nextOpening(atOrAfter: instant, in: zone) }.min() ?? instant
  }

  /// When the windows that contain `instant` close (the latest of them), or nil.
  func closing(after instant: WallInstant, in zone: CalendarTimeZone) -> WallInstant? {
    compactMap { $0.closing(after: instant, in: zone) }.max()
  }
}
