/// How a run's bytes were counted.
public enum ByteAccounting: String, Hashable, Sendable, Codable {
  /// The primary link's interface counters over the run: approximate, other traffic on the
  /// link (other runs, other programs) counts too.
  case link
  /// The run's own packets, counted by the kernel on the run's cgroup v2 (a `cgroup_skb`
  /// program at its ingress and egress): exact for the run, IP headers included.
  case cgroup
}

/// A run's bytes sent and received, split by whether the link they crossed was metered.
public struct RunNetworkBytes: Hashable, Sendable, Codable {
  /// Bytes sent, on any link.
  public var sent: Int64
  /// Bytes received, on any link.
  public var received: Int64
  /// Of ``sent``, those sent while the primary link was metered.
  public var meteredSent: Int64
  /// Of ``received``, those received while the primary link was metered.
  public var meteredReceived: Int64
  /// How they were counted.
  public var accounting: ByteAccounting

  /// Creates a count.
  public init(
    sent: Int64 = 0, received: Int64 = 0, meteredSent: Int64 = 0, meteredReceived: Int64 = 0,
    accounting: ByteAccounting
  ) {
    self.sent = sent
    self.received = received
    self.meteredSent = meteredSent
    self.meteredReceived = meteredReceived
    self.accounting = accounting
  }

  /// Sent and received.
  public var bytes: Int64 { sent + received }
  /// Sent and received on metered links.
  public var meteredBytes: Int64 { meteredSent + meteredReceived }
}

/// Counts a run's bytes from the primary link's interface counters (``ByteAccounting/link``),
/// read at the run's start, at each change of primary link, at its end, and — while a
/// budgeted run is on a metered link — at most once a second. Each reading closes a segment:
/// the counters' growth since the segment began is added, as metered when the segment's link
/// was. A counter that went down (the link was recreated) adds its new value.
public struct LinkByteMeter: Hashable, Sendable {
  /// One link's counters at one reading.
  public struct Reading: Hashable, Sendable {
    /// The interface read.
    public var interface: String
    /// Whether it was metered from the previous reading on.
    public var metered: Bool
    /// Bytes received since the link was created.
    public var received: UInt64
    /// Bytes sent since the link was created.
    public var sent: UInt64

    /// Creates a reading.
    public init(interface: String, metered: Bool, received: UInt64, sent: UInt64) {
      self.interface = interface
      self.metered = metered
      self.received = received
      self.sent = sent
    }
  }

  /// The counts so far.
  public private(set) var bytes = RunNetworkBytes(accounting: .link)
  /// Where the current segment began; nil without a primary link.
  public private(set) var segmentStart: Reading?

  /// A meter whose first segment starts at `start` (nil: no primary link at the start).
  public init(start: Reading?) {
    segmentStart = start
  }

  /// Closes the current segment with `end` (the same interface read again) and starts the
  /// next at `next` (the same reading when the link did not change; the new primary link's
  /// reading, or nil for none, when it did).
  public mutating func advance(end: Reading?, next: Reading?) {
    if let start = segmentStart, let end, end.interface == start.interface {
      let received = Int64(clamping: Self.growth(from: start.received, to: end.received))
      let sent = Int64(clamping: Self.growth(from: start.sent, to: end.sent))
      bytes.received += received
      bytes.sent += sent
      if start.metered {
        bytes.meteredReceived += received
        bytes.meteredSent += sent
      }
    }
    segmentStart = next
  }

  private static func growth(from start: UInt64, to end: UInt64) -> UInt64 {
    end >= start ? end - start : end
  }
}
