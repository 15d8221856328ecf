import Netlink
import Reachability

/// libFuzzer entry: the input is a capture file (pcap or pcapng), read as `status --replay`
/// reads one; what decodes is replayed through the reachability model. Sysfs is pointed at a
/// directory that does not exist, so links without recorded facts count as virtual.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCapture(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  guard let records = try? PcapReader.records(in: bytes) else { return 0 }
  _ = ReachabilityReplay.replay(
    records: records,
    configuration: ReachabilityConfiguration(sysfsRoot: "/nonexistent/backgrounder-fuzz"))
  return 0
}
