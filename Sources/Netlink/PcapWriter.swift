import Glibc
import Synchronization
import SystemPackage

/// Writes netlink messages as a LINKTYPE_NETLINK pcap file readable by `tshark -r FILE -V`.
/// Each record is flushed to the file as it is written, so a killed process leaves a valid file.
public final class PcapWriter: Sendable {
  private let descriptor: Mutex<FileDescriptor?>

  /// Creates (or truncates) the file at `path` and writes the pcap file header.
  public init(path: String) throws {
    let file = try FileDescriptor.open(
      FilePath(path), .writeOnly, options: [.create, .truncate],
      permissions: [.ownerReadWrite, .groupRead, .otherRead])
    var header: [UInt8] = []
    header.appendHostOrder(PcapFormat.magicMicroseconds)
    header.appendHostOrder(UInt16(2))
    header.appendHostOrder(UInt16(4))
    header.appendHostOrder(Int32(0))
    header.appendHostOrder(UInt32(0))
    header.appendHostOrder(PcapFormat.snapLength)
    header.appendHostOrder(PcapFormat.linkTypeNetlink)
    do {
      _ = try file.writeAll(header)
    } catch {
      try? file.close()
      throw error
    }
    descriptor = Mutex(file)
  }

  /// Appends one record; the timestamp defaults to the current wall-clock time.
  public func write(
    _ message: some Collection<UInt8>, direction: PcapRecord.Direction,
    timestampMicroseconds: Int64 = PcapWriter.now()
  ) throws {
    let captured = min(message.count, Int(PcapFormat.snapLength) - PcapFormat.cookedHeaderSize)
    var record: [UInt8] = []
    record.reserveCapacity(PcapFormat.recordHeaderSize + PcapFormat.cookedHeaderSize + captured)
    record.appendHostOrder(UInt32(truncatingIfNeeded: timestampMicroseconds / 1_000_000))
    record.appendHostOrder(UInt32(truncatingIfNeeded: timestampMicroseconds % 1_000_000))
    record.appendHostOrder(UInt32(PcapFormat.cookedHeaderSize + captured))
    record.appendHostOrder(UInt32(PcapFormat.cookedHeaderSize + message.count))
    let packetType =
      direction == .outgoing ? PcapFormat.packetTypeOutgoing : PcapFormat.packetTypeHost
    record.append(contentsOf: [UInt8(packetType >> 8), UInt8(packetType & 0xFF)])
    record.append(contentsOf: [
      UInt8(HardwareType.netlink >> 8), UInt8(HardwareType.netlink & 0xFF),
    ])
    // Address length 0, an empty 8-byte address, protocol 0 (NETLINK_ROUTE).
    record.append(contentsOf: [UInt8](repeating: 0, count: 12))
    record.append(contentsOf: message.prefix(captured))
    try descriptor.withLock { file in
      guard let file else { throw Errno.badFileDescriptor }
      _ = try file.writeAll(record)
    }
  }

  /// Closes the file; later writes throw.
  public func close() throws {
    try descriptor.withLock { file in
      defer { file = nil }
      try file?.close()
    }
  }

  deinit {
    descriptor.withLock { file in try? file?.close() }
  }

  /// The current wall-clock time in microseconds since the Unix epoch.
  public static func now() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_REALTIME, &time)
    return Int64(time.tv_sec) * 1_000_000 + Int64(time.tv_nsec) / 1000
  }
}
