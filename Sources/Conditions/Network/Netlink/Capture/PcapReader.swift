import SystemCalls
import SystemPackage

#if canImport(Glibc)
  import Glibc
#endif

/// Reads LINKTYPE_NETLINK captures: pcapng (as written by ``PcapWriter``, tshark or dumpcap)
/// and classic pcap (older ``PcapWriter`` files, `tcpdump -i nlmon0`).
public enum PcapReader {
  /// The largest capture read (64 MiB: hours of a busy link's rtnetlink traffic).
  public static let maximumFileBytes = 64 << 20

  /// Reads every record of the file at `path`, which must be a regular file (a FIFO, a device
  /// or a directory is refused, never waited on) of at most ``maximumFileBytes``.
  public static func records(atPath path: String) throws(PcapError) -> [PcapRecord] {
    let bytes: [UInt8]
    do {
      bytes = try readWholeFile(FilePath(path))
    } catch {
      throw PcapError("cannot read \(path): \(error)")
    }
    return try records(in: bytes)
  }

  /// Decodes every record of a pcap or pcapng file held in memory.
  public static func records(in bytes: [UInt8]) throws(PcapError) -> [PcapRecord] {
    if bytes.count >= 4, bytes[...].loadUInt32(at: 0) == PcapFormat.blockSectionHeader {
      return try PcapngReader.records(in: bytes)
    }
    guard bytes.count >= PcapFormat.fileHeaderSize else {
      throw PcapError("file header truncated: \(bytes.count) of 24 bytes")
    }
    let rawMagic = bytes[...].loadUInt32(at: 0)
    let swapped: Bool
    let nanoseconds: Bool
    switch rawMagic {
    case PcapFormat.magicMicroseconds: (swapped, nanoseconds) = (false, false)
    case PcapFormat.magicNanoseconds: (swapped, nanoseconds) = (false, true)
    case PcapFormat.magicMicroseconds.byteSwapped: (swapped, nanoseconds) = (true, false)
    case PcapFormat.magicNanoseconds.byteSwapped: (swapped, nanoseconds) = (true, true)
    default:
      throw PcapError("not a pcap file (magic 0x\(String(rawMagic, radix: 16)))")
    }
    let field = { (offset: Int) -> UInt32 in
      let value = bytes[...].loadUInt32(at: offset)
      return swapped ? value.byteSwapped : value
    }
    let linkType = field(20) & 0x0FFF_FFFF
    guard linkType == PcapFormat.linkTypeNetlink else {
      throw PcapError("link type \(linkType), expected 253 (LINKTYPE_NETLINK)")
    }
    var records: [PcapRecord] = []
    var offset = PcapFormat.fileHeaderSize
    while offset < bytes.count {
      let number = records.count + 1
      guard bytes.count - offset >= PcapFormat.recordHeaderSize else {
        throw PcapError("record \(number): header truncated at byte \(offset)")
      }
      let seconds = Int64(field(offset))
      let fraction = Int64(field(offset + 4))
      let captured = Int(field(offset + 8))
      offset += PcapFormat.recordHeaderSize
      guard captured <= Int(PcapFormat.snapLength) else {
        throw PcapError("record \(number): implausible length \(captured)")
      }
      guard captured <= bytes.count - offset else {
        throw PcapError(
          "record \(number): truncated, claims \(captured) bytes but \(bytes.count - offset) remain"
        )
      }
      guard captured >= PcapFormat.cookedHeaderSize else {
        throw PcapError("record \(number): \(captured) bytes, shorter than the cooked header")
      }
      let packet = bytes[offset..<offset + captured]
      offset += captured
      records.append(
        try decodeCooked(
          packet, number: number,
          timestamp: seconds * 1_000_000 + (nanoseconds ? fraction / 1000 : fraction)))
    }
    return records
  }

  static func decodeCooked(_ packet: ArraySlice<UInt8>, number: Int, timestamp: Int64)
    throws(PcapError) -> PcapRecord
  {
    let base = packet.startIndex
    let bigEndian16 = { (offset: Int) -> UInt16 in
      UInt16(packet[base + offset]) << 8 | UInt16(packet[base + offset + 1])
    }
    let packetType = bigEndian16(0)
    guard bigEndian16(2) == HardwareType.netlink else {
      throw PcapError("record \(number): cooked header type \(bigEndian16(2)), expected 824")
    }
    return PcapRecord(
      timestampMicroseconds: timestamp,
      direction: packetType == PcapFormat.packetTypeOutgoing ? .outgoing : .incoming,
      netlinkProtocol: bigEndian16(14),
      message: Array(packet.dropFirst(PcapFormat.cookedHeaderSize)))
  }

  private static func readWholeFile(_ path: FilePath) throws -> [UInt8] {
    // Non-blocking: opening a FIFO must not wait for a writer.
    let descriptor = try FileDescriptor.open(
      path, .readOnly, options: [.closeOnExec, .nonBlocking])
    return try descriptor.closeAfter {
      var info = stat()
      _ = try systemCall("fstat", path: path.string) { fstat(descriptor.rawValue, &info) }
      guard info.st_mode & S_IFMT == S_IFREG else {
        throw PcapError("not a regular file")
      }
      guard info.st_size <= maximumFileBytes else {
        throw PcapError("\(info.st_size) bytes, more than the \(maximumFileBytes) read")
      }
      var contents: [UInt8] = []
      var chunk = [UInt8](repeating: 0, count: 65_536)
      while true {
        let count = try chunk.withUnsafeMutableBytes { try descriptor.read(into: $0) }
        if count == 0 { return contents }
        guard contents.count + count <= maximumFileBytes else {
          throw PcapError("more than the \(maximumFileBytes) bytes read")
        }
        contents.append(contentsOf: chunk[0..<count])
      }
    }
  }

}
