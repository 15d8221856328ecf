import Glibc
import Locking
import SystemCalls
import SystemPackage

/// Writes netlink messages as a pcapng file (one LINKTYPE_NETLINK interface, enhanced packet
/// blocks with direction flags and optional comments), readable by `tshark -r FILE -V`.
/// Each packet is flushed to the file as it is written, so a killed process leaves a valid file.
/// The file is created 0600 (`O_CREAT | O_EXCL | O_NOFOLLOW`): captures describe the machine's
/// network.
public final class PcapWriter: Sendable {
  private let descriptor: Lock<FileDescriptor?>

  /// Creates the file at `path` (mode 0600) and writes the section header and the interface
  /// description. An existing file is refused (``PcapWriterError/exists``) unless
  /// `replacingExisting`: then it must be a regular file of this process's user (never a
  /// symlink), and is made 0600 and truncated.
  public init(path: String, replacingExisting: Bool = false) throws {
    let file = try Self.create(path, replacingExisting: replacingExisting)
    var header = Self.block(
      type: PcapFormat.blockSectionHeader,
      body: Self.sectionHeaderBody(),
      options: [(PcapFormat.optionUserApplication, Array("backgrounder".utf8))])
    var interfaceBody: [UInt8] = []
    interfaceBody.appendHostOrder(UInt16(PcapFormat.linkTypeNetlink))
    interfaceBody.appendHostOrder(UInt16(0))
    interfaceBody.appendHostOrder(PcapFormat.snapLength)
    header += Self.block(
      type: PcapFormat.blockInterfaceDescription, body: interfaceBody,
      options: [
        (PcapFormat.optionInterfaceName, Array("nlmon-route".utf8)),
        (PcapFormat.optionTimestampResolution, [6]),  // microseconds
      ])
    do {
      _ = try file.writeAll(header)
    } catch {
      try? file.close()
      throw error
    }
    descriptor = Lock(file)
  }

  private static func create(_ path: String, replacingExisting: Bool) throws -> FileDescriptor {
    do {
      return try FileDescriptor.open(
        FilePath(path), .writeOnly, options: [.create, .exclusiveCreate, .noFollow, .closeOnExec],
        permissions: [.ownerReadWrite])
    } catch Errno.fileExists where replacingExisting {
      // Non-blocking: a FIFO planted at the path must not hold the open.
      let file = try FileDescriptor.open(
        FilePath(path), .writeOnly, options: [.noFollow, .closeOnExec, .nonBlocking])
      do {
        var info = stat()
        _ = try systemCall("fstat", path: path) { fstat(file.rawValue, &info) }
        guard info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid() else {
          throw PcapWriterError.notOurs(path: path, owner: info.st_uid, mode: info.st_mode & 0o7777)
        }
        _ = try systemCall("fchmod", path: path) { fchmod(file.rawValue, 0o600) }
        _ = try systemCall("ftruncate", path: path) { ftruncate(file.rawValue, 0) }
        return file
      } catch {
        try? file.close()
        throw error
      }
    } catch Errno.fileExists {
      throw PcapWriterError.exists(path: path)
    }
  }

  /// Appends one packet; the timestamp defaults to the current wall-clock time. `comments`
  /// become `opt_comment` options (tshark shows them as packet comments).
  public func write(
    _ message: some Collection<UInt8>, direction: PcapRecord.Direction,
    timestampMicroseconds: Int64 = PcapWriter.now(), comments: [String] = []
  ) throws {
    let captured = min(message.count, Int(PcapFormat.snapLength) - PcapFormat.cookedHeaderSize)
    var body: [UInt8] = []
    body.reserveCapacity(20 + PcapFormat.cookedHeaderSize + captured + 3)
    body.appendHostOrder(UInt32(0))  // interface id
    body.appendHostOrder(UInt32(truncatingIfNeeded: UInt64(timestampMicroseconds) >> 32))
    body.appendHostOrder(UInt32(truncatingIfNeeded: UInt64(timestampMicroseconds)))
    body.appendHostOrder(UInt32(PcapFormat.cookedHeaderSize + captured))
    body.appendHostOrder(UInt32(PcapFormat.cookedHeaderSize + message.count))
    let packetType =
      direction == .outgoing ? PcapFormat.packetTypeOutgoing : PcapFormat.packetTypeHost
    body.append(contentsOf: [UInt8(packetType >> 8), UInt8(packetType & 0xFF)])
    body.append(contentsOf: [
      UInt8(HardwareType.netlink >> 8), UInt8(HardwareType.netlink & 0xFF),
    ])
    // Address length 0, an empty 8-byte address, protocol 0 (NETLINK_ROUTE).
    body.append(contentsOf: [UInt8](repeating: 0, count: 12))
    body.append(contentsOf: message.prefix(captured))
    var flags: [UInt8] = []
    flags.appendHostOrder(UInt32(direction == .outgoing ? 2 : 1))  // outbound / inbound
    let options =
      comments.map { (PcapFormat.optionComment, Array($0.utf8)) }
      + [(PcapFormat.optionPacketFlags, flags)]
    let block = Self.block(type: PcapFormat.blockEnhancedPacket, body: body, options: options)
    try descriptor.withLock { file in
      guard let file else { throw Errno.badFileDescriptor }
      _ = try file.writeAll(block)
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

  private static func sectionHeaderBody() -> [UInt8] {
    var body: [UInt8] = []
    body.appendHostOrder(PcapFormat.byteOrderMagic)
    body.appendHostOrder(UInt16(1))
    body.appendHostOrder(UInt16(0))
    body.appendHostOrder(Int64(-1))  // section length unknown
    return body
  }

  /// A block: type, total length, `body` padded to 4 bytes, options, total length again.
  private static func block(type: UInt32, body: [UInt8], options: [(UInt16, [UInt8])])
    -> [UInt8]
  {
    var content = body
    content += [UInt8](repeating: 0, count: NetlinkFraming.alignedLength(body.count) - body.count)
    for (code, value) in options {
      content.appendHostOrder(code)
      content.appendHostOrder(UInt16(value.count))
      content += value
      content += [UInt8](
        repeating: 0, count: NetlinkFraming.alignedLength(value.count) - value.count)
    }
    if !options.isEmpty {
      content.appendHostOrder(PcapFormat.optionEnd)
      content.appendHostOrder(UInt16(0))
    }
    let total = UInt32(content.count + 12)
    var bytes: [UInt8] = []
    bytes.reserveCapacity(Int(total))
    bytes.appendHostOrder(type)
    bytes.appendHostOrder(total)
    bytes += content
    bytes.appendHostOrder(total)
    return bytes
  }
}

/// Why a capture file was not written.
public enum PcapWriterError: Error, Equatable, CustomStringConvertible {
  /// Something exists at the path and replacing was not asked for.
  case exists(path: String)
  /// What exists at the path is not a regular file of this user.
  case notOurs(path: String, owner: uid_t, mode: mode_t)

  public var description: String {
    switch self {
    case .exists(let path): "\(path) exists (pass --force to replace it)"
    case .notOurs(let path, let owner, let mode):
      "refusing to replace \(path): it is not a regular file of uid \(geteuid()) (owner uid "
        + "\(owner), mode 0\(String(mode, radix: 8)))"
    }
  }
}
