import PowerSource

/// libFuzzer entry: the input is one `NETLINK_KOBJECT_UEVENT` datagram. A parsed kernel uevent
/// must keep every field it was given: the parser may refuse input, never drop part of it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzUevent(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let bytes = UnsafeBufferPointer(start: data, count: size)
  guard case .kernel(let event) = try? UeventParser.parse(bytes) else { return 0 }
  let fields = bytes.split(separator: 0)
  precondition(event.properties.count == fields.count - 1, "a uevent field was dropped")
  _ = event.subsystem
  return 0
}
