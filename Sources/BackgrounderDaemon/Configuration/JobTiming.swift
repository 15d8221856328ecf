import Backgrounder

/// A job's time keys besides its schedule: the windows any job may have (`window`,
/// `window-end`) and a calendar job's splay and catch-up (`random-delay`,
/// `fixed-random-delay`, `catch-up`).
package struct JobTiming: Sendable, Equatable, Codable {
  /// `window = "22:00-06:00"` or a list, in normal form: a due run starts only inside one.
  package var windows: [String] = []
  /// `window-end`: what happens to a run still going when its window closes.
  package var windowEnd: CalendarSettings.WindowEnd = .continue
  /// `random-delay = "30m"`: each elapse is delayed by up to this much.
  package var randomDelay: Duration = .zero
  /// `fixed-random-delay = true`: that delay is fixed by `/etc/machine-id` and the job id.
  package var fixedRandomDelay = false
  /// `catch-up = false`: an elapse missed while not running is skipped, not run once.
  package var catchUp = true

  /// The defaults: no window, no splay, catch-up.
  package init() {}

  /// The time keys of `settings`.
  init(_ settings: CalendarSettings) {
    windows = settings.windows.map(\.description)
    windowEnd = settings.windowEnd
    randomDelay = settings.randomDelay
    fixedRandomDelay = settings.fixedRandomDelay
    catchUp = settings.catchUp
  }

  /// The windows as the runtime's constraint.
  var timeWindows: [TimeWindow] { windows.compactMap { try? TimeWindow($0) } }

  /// `window-end` as the runtime's constraint.
  var runtimeWindowEnd: WindowEnd { windowEnd == .stop ? .stop : .continue }
}

extension CalendarSettings.WindowEnd: Codable {}
