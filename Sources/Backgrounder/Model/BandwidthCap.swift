/// A task's egress bandwidth cap (``WorkConstraints/bandwidth``): a rate on any network, a rate
/// while the primary link is metered (instead of the other then), and whether the work must
/// wait rather than run uncapped. Rates are bits per second, decimal units as `tc` counts them
/// (`kbit` = 1,000 bit/s).
///
/// The runtime does not shape traffic itself: it tells each run the cap for the network it
/// starts on (``WorkContext/bandwidth``). The daemon's command runs are shaped in the kernel to
/// it (`bandwidth = "2Mbit"` in a `[[job]]`); work done in the process paces itself, or declines
/// the start (``WorkContext/declineStart(reason:)``) when the cap is ``required`` and it cannot
/// keep to it.
public struct BandwidthCap: Hashable, Sendable, Codable {
  /// The cap in bits per second, on any link; nil: none (unless metered).
  public var rate: UInt64?
  /// The cap in bits per second while the primary link is metered; nil: ``rate``.
  public var meteredRate: UInt64?
  /// The work waits while a cap it has cannot be enforced.
  public var required = false

  /// Creates a cap.
  public init(rate: UInt64? = nil, meteredRate: UInt64? = nil, required: Bool = false) {
    self.rate = rate
    self.meteredRate = meteredRate
    self.required = required
  }

  /// The cap for a run starting on a network that is `metered` or not; nil: not capped.
  public func rate(metered: Bool) -> UInt64? {
    metered ? (meteredRate ?? rate) : rate
  }
}
