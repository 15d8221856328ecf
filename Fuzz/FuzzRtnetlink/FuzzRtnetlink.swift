import Netlink
import Reachability

/// libFuzzer entry: the input is one rtnetlink datagram (any number of messages), fed through
/// the path of a live datagram: `NetlinkFraming`, `RtnetlinkParser`, the reachability model.
/// The link-facts comment makes the replay use recorded facts rather than read sysfs.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRtnetlink(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let record = PcapRecord(
    timestampMicroseconds: 0, direction: .incoming,
    message: Array(UnsafeBufferPointer(start: data, count: size)),
    comments: [LinkFactsComment.encode(name: "eth0", facts: .none)])
  _ = ReachabilityReplay.replay(records: [record], configuration: ReachabilityConfiguration())
  return 0
}
