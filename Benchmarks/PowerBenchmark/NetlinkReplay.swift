import Foundation
import PowerSource

/// A real uevent socket and a user-space sender, both inside a private network namespace.
struct NetlinkReplay {
  let receiver: NetlinkUeventSocket
  let sender: Int32

  init(namespace: String) throws {
    let original = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)
    let target = open("/run/netns/" + namespace, O_RDONLY | O_CLOEXEC)
    defer {
      close(original)
      close(target)
    }
    guard original >= 0, target >= 0, Self.setns(target) == 0 else {
      throw ReplayError.namespace(errno)
    }
    defer { precondition(Self.setns(original) == 0, "cannot return to the original netns") }
    let raw = socket(AF_NETLINK, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 15)
    var address = Self.address(portID: 0, groups: 0)
    var length = socklen_t(address.count)
    guard raw >= 0,
      address.withUnsafeBytes({ bind(raw, Self.sockaddrPointer($0), length) }) == 0,
      address.withUnsafeMutableBytes({ getsockname(raw, Self.sockaddrPointer($0), &length) }) == 0
    else { throw ReplayError.socket(errno) }
    let portID = address.withUnsafeBytes { $0.load(fromByteOffset: 4, as: UInt32.self) }
    sender = raw
    // Filtered on power_supply in the kernel, as the daemon's socket is.
    receiver = try NetlinkUeventSocket(
      senderPolicy: .kernelAndPort(portID), subsystem: PowerProbe.subsystem)
  }

  /// Sends one datagram to multicast group 1.
  func send(_ bytes: [UInt8]) throws {
    let destination = Self.address(portID: 0, groups: NetlinkUeventSocket.kernelGroup)
    let sent = bytes.withUnsafeBytes { buffer in
      destination.withUnsafeBytes {
        sendto(
          sender, buffer.baseAddress, buffer.count, 0, Self.sockaddrPointer($0),
          socklen_t($0.count))
      }
    }
    guard sent == bytes.count else { throw ReplayError.socket(errno) }
  }

  /// `struct sockaddr_nl` as 12 bytes (family, pad, port ID, groups).
  static func address(portID: UInt32, groups: UInt32) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: 12)
    bytes.withUnsafeMutableBytes {
      $0.storeBytes(of: sa_family_t(AF_NETLINK), toByteOffset: 0, as: sa_family_t.self)
      $0.storeBytes(of: portID, toByteOffset: 4, as: UInt32.self)
      $0.storeBytes(of: groups, toByteOffset: 8, as: UInt32.self)
    }
    return bytes
  }

  private static func sockaddrPointer(_ bytes: UnsafeRawBufferPointer) -> UnsafePointer<sockaddr> {
    UnsafePointer(bytes.baseAddress!.assumingMemoryBound(to: sockaddr.self))
  }

  private static func sockaddrPointer(_ bytes: UnsafeMutableRawBufferPointer)
    -> UnsafeMutablePointer<sockaddr>
  {
    bytes.baseAddress!.assumingMemoryBound(to: sockaddr.self)
  }

  static func ip(_ arguments: [String]) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
    process.arguments = arguments
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw ReplayError.command(arguments) }
  }

  /// `setns(fd, CLONE_NEWNET)`, which Swift's Glibc module does not import.
  private static func setns(_ descriptor: Int32) -> Int32 {
    typealias Function = @convention(c) (Int32, Int32) -> Int32
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "setns") else { return -1 }
    return unsafeBitCast(symbol, to: Function.self)(descriptor, 0x4000_0000)
  }
}

enum ReplayError: Error {
  case namespace(Int32)
  case socket(Int32)
  case command([String])
}
