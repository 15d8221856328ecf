/// What a ``PowerProbe`` has done, for logs, metrics and tests.
public struct PowerProbeCounters: Sendable, Equatable {
  /// Full reads of the sysfs tree (start, uevents, overflow, battery timer).
  public var reads = 0
  /// Reads caused by the slow battery timer.
  public var timerReads = 0
  /// Uevent datagrams received.
  public var uevents = 0
  /// Kernel uevents with `SUBSYSTEM=power_supply` (each triggers a re-read).
  public var powerSupplyUevents = 0
  /// Kernel uevents for other subsystems (ignored).
  public var otherUevents = 0
  /// Messages in udev's `libudev` format (skipped).
  public var udevMessages = 0
  /// Datagrams that were not valid uevents (logged and skipped).
  public var malformedUevents = 0
  /// Lost-message reports from the source (each triggers a re-read).
  public var overflows = 0
  /// Published status changes (the first status counts).
  public var published = 0

  /// All zero.
  public init() {}
}
