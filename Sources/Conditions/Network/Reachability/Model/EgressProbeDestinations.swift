import Glibc

/// The destinations whose route decides where traffic leaves: one IPv4 and one IPv6 address.
/// Asking the kernel for their route is a routing-table lookup only; no packet is sent.
public struct EgressProbeDestinations: Sendable, Equatable {
  /// Four bytes; `8.8.8.8` unless configured.
  public var ipv4: [UInt8]
  /// Sixteen bytes; `2001:4860:4860::8888` unless configured.
  public var ipv6: [UInt8]

  /// The well-known public resolvers: a destination every default route covers.
  public init() {
    ipv4 = [8, 8, 8, 8]
    ipv6 = [0x20, 0x01, 0x48, 0x60, 0x48, 0x60] + [UInt8](repeating: 0, count: 8) + [0x88, 0x88]
  }

  /// The well-known destinations, replaced per family by the first address of that family in
  /// `addresses` (IPv4 or IPv6 literals, e.g. a connectivity-check host's address). Throws
  /// ``InvalidProbeDestination`` naming an entry that is not an IP address.
  public init(addresses: [String]) throws(InvalidProbeDestination) {
    self.init()
    var seen: Set<Int> = []
    for text in addresses {
      guard let bytes = Self.parse(text) else { throw InvalidProbeDestination(text: text) }
      guard seen.insert(bytes.count).inserted else { continue }
      if bytes.count == 4 { ipv4 = bytes } else { ipv6 = bytes }
    }
  }

  /// The destination of `family` (`AF_INET` or `AF_INET6`).
  public func destination(family: UInt8) -> [UInt8] { family == 2 ? ipv4 : ipv6 }

  private static func parse(_ text: String) -> [UInt8]? {
    var buffer = [UInt8](repeating: 0, count: 16)
    if inet_pton(AF_INET, text, &buffer) == 1 { return Array(buffer.prefix(4)) }
    if inet_pton(AF_INET6, text, &buffer) == 1 { return buffer }
    return nil
  }
}

/// A configured egress probe destination is not an IPv4 or IPv6 address.
public struct InvalidProbeDestination: Error, Sendable, Equatable, CustomStringConvertible {
  /// The offending entry.
  public var text: String

  /// A one-line explanation.
  public var description: String {
    "egress probe destination \"\(text)\" is not an IPv4 or IPv6 address"
  }
}
