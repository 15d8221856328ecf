import Netlink

/// Feeds a LINKTYPE_NETLINK capture (pcapng or pcap) through the same model as the live
/// monitor. The model answers where traffic leaves (rules, tables, nexthop objects); the kernel
/// lookups a live capture holds are skipped. Sysfs facts come from the capture's
/// ``LinkFactsComment``s when it has any (then nothing is read from sysfs), else from the
/// configuration's `sysfsRoot`.
public enum ReachabilityReplay {
  /// One published status, stamped with the capture time of the datagram that caused it.
  public struct Step: Sendable, Equatable {
    /// Capture time in microseconds since the Unix epoch.
    public var timestampMicroseconds: Int64
    /// The status after that datagram.
    public var status: NetworkStatus
  }

  /// What a replay produced.
  public struct Result: Sendable, Equatable {
    /// Every status change along the way, as `status --watch` would have printed it.
    public var steps: [Step]
    /// The state after the whole capture.
    public var finalStatus: NetworkStatus
    /// Warnings (malformed messages, odd sysfs values), in order.
    public var warnings: [String]
  }

  /// Replays the capture at `path`. Throws ``Netlink/PcapError`` when the file is unreadable.
  public static func replay(pcapAt path: String, configuration: ReachabilityConfiguration)
    throws -> Result
  {
    try replay(records: PcapReader.records(atPath: path), configuration: configuration)
  }

  /// Replays already-decoded capture records.
  public static func replay(records: [PcapRecord], configuration: ReachabilityConfiguration)
    -> Result
  {
    let recordsFacts = records.contains { record in
      record.comments.contains { LinkFactsComment.decode($0) != nil }
    }
    var engine = ReachabilityEngine(
      configuration: configuration, live: false, factsSource: recordsFacts ? .recorded([:]) : nil)
    var steps: [Step] = []
    var warnings: [String] = []
    for record in records where record.netlinkProtocol == 0 {
      for case let (name, facts)? in record.comments.map(LinkFactsComment.decode) {
        engine.recordFacts(facts, forInterface: name)
      }
      warnings += engine.ingest(datagram: record.message).warnings
      if let status = engine.takePublishableStatus() {
        steps.append(Step(timestampMicroseconds: record.timestampMicroseconds, status: status))
      }
    }
    return Result(steps: steps, finalStatus: engine.status, warnings: warnings)
  }
}
