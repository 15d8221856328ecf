/// The opt-in connectivity probe's target: `[network] connectivity-check = { url = "http://…",
/// expect = "…" }`. Plain HTTP only: a captive portal must be able to intercept the request,
/// and no TLS library is needed.
public struct ConnectivityCheck: Sendable, Equatable {
  /// Why a check could not be created.
  public struct InvalidURL: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong with the URL.
    public var description: String
  }

  /// The URL as configured.
  public let url: String
  /// Text the answer's body must contain (empty: any 2xx answer, e.g. `204 No Content`).
  public let expect: String
  /// Host name or IP literal (IPv6 without brackets).
  public let host: String
  /// TCP port (default 80).
  public let port: UInt16
  /// Path and query, starting with `/`.
  public let path: String

  /// Parses `url` (`http://HOST[:PORT][/PATH]`). Throws ``InvalidURL`` naming the problem.
  public init(url: String, expect: String) throws(InvalidURL) {
    let scheme = "http://"
    guard url.lowercased().hasPrefix(scheme) else {
      throw InvalidURL(
        description: "\"\(url)\": only http:// URLs can be probed (a portal must intercept it)")
    }
    let rest = url.dropFirst(scheme.count)
    let authority = rest.prefix { $0 != "/" && $0 != "?" }
    let pathPart = rest.dropFirst(authority.count)
    var host = Substring(authority)
    var port: UInt16 = 80
    if host.hasPrefix("[") {
      guard let close = host.firstIndex(of: "]") else {
        throw InvalidURL(description: "\"\(url)\": unclosed [ in the host")
      }
      let after = host[host.index(after: close)...]
      host = host[host.index(after: host.startIndex)..<close]
      if !after.isEmpty {
        guard after.hasPrefix(":"), let value = UInt16(after.dropFirst()), value > 0 else {
          throw InvalidURL(description: "\"\(url)\": bad port")
        }
        port = value
      }
    } else if let colon = host.firstIndex(of: ":") {
      guard let value = UInt16(host[host.index(after: colon)...]), value > 0 else {
        throw InvalidURL(description: "\"\(url)\": bad port")
      }
      port = value
      host = host[..<colon]
    }
    guard !host.isEmpty, !host.contains("@"),
      host.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "/" })
    else {
      throw InvalidURL(description: "\"\(url)\": missing or invalid host")
    }
    guard !pathPart.contains(where: { $0.isWhitespace || $0.isNewline }) else {
      throw InvalidURL(description: "\"\(url)\": whitespace in the path")
    }
    self.url = url
    self.expect = expect
    self.host = String(host)
    self.port = port
    path = pathPart.isEmpty ? "/" : (pathPart.hasPrefix("/") ? String(pathPart) : "/" + pathPart)
  }
}
