/// A `requiredReachable` destination read from its text: `host:port`, `192.0.2.7:445` or
/// `[2001:db8::7]:445` (an IPv6 address in brackets). Pure parsing: resolving the host is the
/// platform source's work.
public struct Destination: Hashable, Sendable {
  /// The host name or address, without brackets.
  public var host: String
  /// The TCP port, 1–65535.
  public var port: UInt16

  /// Creates a destination.
  public init(host: String, port: UInt16) {
    self.host = host
    self.port = port
  }

  /// The destination `text` names, or what is wrong with it.
  public static func parse(_ text: String) -> Result<Destination, DestinationSyntaxError> {
    let host: Substring
    let portText: Substring
    if text.hasPrefix("[") {
      guard let close = text.firstIndex(of: "]"),
        text[text.index(after: close)...].hasPrefix(":")
      else { return .failure(DestinationSyntaxError("write an IPv6 address as [address]:port")) }
      host = text[text.index(after: text.startIndex)..<close]
      portText = text[text.index(close, offsetBy: 2)...]
      guard host.contains(":") else {
        return .failure(DestinationSyntaxError("only an IPv6 address goes in brackets"))
      }
    } else {
      guard let colon = text.lastIndex(of: ":") else {
        return .failure(DestinationSyntaxError("must be host:port, got \"\(text)\""))
      }
      host = text[..<colon]
      portText = text[text.index(after: colon)...]
      if host.contains(":") {
        return .failure(DestinationSyntaxError("write an IPv6 address as [address]:port"))
      }
    }
    guard !host.isEmpty else { return .failure(DestinationSyntaxError("the host is empty")) }
    if host.contains(where: { $0.isWhitespace || $0 == "\0" || $0 == "/" }) {
      return .failure(DestinationSyntaxError("the host \"\(host)\" is not a name or an address"))
    }
    guard let port = UInt16(portText), port > 0 else {
      return .failure(DestinationSyntaxError("the port must be 1–65535, got \"\(portText)\""))
    }
    return .success(Destination(host: String(host), port: port))
  }
}

/// What is wrong with the text of a destination.
public struct DestinationSyntaxError: Error, Hashable, Sendable {
  /// For humans.
  public let message: String

  init(_ message: String) {
    self.message = message
  }
}
