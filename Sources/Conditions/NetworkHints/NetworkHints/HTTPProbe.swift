import Glibc
import Reachability
import SystemCalls
import SystemPackage

/// One blocking HTTP/1.1 GET for the connectivity probe, bound to an interface
/// (`SO_BINDTODEVICE`). Its answer decides connectivity: the expected body → `full`; a
/// redirect, another status or a wrong body → `portal`; no answer → `limited`.
///
/// The whole exchange — resolving aside: connect, request and answer, over every address
/// tried — has one deadline, `timeoutMilliseconds` after the start: an answer not complete by
/// then (a server dripping a byte now and then) is `limited`.
enum HTTPProbe {
  /// The largest answer read; portals' login pages are small, and only a prefix matters.
  static let maximumResponseBytes = 65_536

  /// Performs the request. `interface`: bind to it (`nil`: any route).
  static func run(_ check: ConnectivityCheck, interface: String?, timeoutMilliseconds: Int32)
    -> Connectivity
  {
    let deadline = Deadline(afterMilliseconds: timeoutMilliseconds)
    guard let response = fetch(check, interface: interface, deadline: deadline) else {
      return .limited
    }
    return classify(response, expect: check.expect)
  }

  /// The connectivity an HTTP answer means.
  static func classify(_ response: [UInt8], expect: String) -> Connectivity {
    guard let headerEnd = find([13, 10, 13, 10], in: response) else { return .limited }
    let head = String(decoding: response[..<headerEnd], as: UTF8.self)
    let lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
    let statusParts = lines.first?.split(separator: " ") ?? []
    guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."),
      let code = Int(statusParts[1])
    else { return .portal }
    guard (200..<300).contains(code) else { return .portal }
    var body = Array(response[(headerEnd + 4)...])
    let chunked = lines.dropFirst().contains {
      $0.lowercased().hasPrefix("transfer-encoding:") && $0.lowercased().contains("chunked")
    }
    if chunked { body = dechunk(body) }
    if expect.isEmpty { return .full }
    return find(Array(expect.utf8), in: body) != nil ? .full : .portal
  }

  private static func fetch(_ check: ConnectivityCheck, interface: String?, deadline: Deadline)
    -> [UInt8]?
  {
    for address in resolve(check.host, port: check.port) {
      let descriptor = socket(
        Int32(address.family),
        Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
          | Int32(SOCK_NONBLOCK.rawValue), 0)
      guard descriptor >= 0 else { continue }
      defer { close(descriptor) }
      if let interface {
        let bound = interface.withCString {
          setsockopt(descriptor, SOL_SOCKET, SO_BINDTODEVICE, $0, socklen_t(strlen($0) + 1))
        }
        // Binding needs CAP_NET_RAW on older kernels: unprivileged, follow the routes instead.
        guard bound == 0 || SystemCallError.current("setsockopt").errno == .notPermitted else {
          continue
        }
      }
      guard connectWaiting(descriptor, address.bytes, deadline: deadline) else { continue }
      let hostHeader = check.host.contains(":") ? "[\(check.host)]" : check.host
      let portSuffix = check.port == 80 ? "" : ":\(check.port)"
      let request = Array(
        ("GET \(check.path) HTTP/1.1\r\nHost: \(hostHeader)\(portSuffix)\r\n"
          + "User-Agent: backgrounder-connectivity-check\r\nAccept: */*\r\n"
          + "Cache-Control: no-cache\r\nConnection: close\r\n\r\n").utf8)
      guard sendAll(descriptor, request, deadline: deadline) else { continue }
      return receiveAll(descriptor, deadline: deadline)
    }
    return nil
  }

  private struct Address {
    var family: sa_family_t
    var bytes: [UInt8]
  }

  private static func resolve(_ host: String, port: UInt16) -> [Address] {
    var hints = addrinfo()
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    hints.ai_flags = AI_NUMERICSERV
    var list: UnsafeMutablePointer<addrinfo>?
    guard getaddrinfo(host, String(port), &hints, &list) == 0 else { return [] }
    defer { freeaddrinfo(list) }
    var addresses: [Address] = []
    var entry = list
    while let current = entry {
      if let raw = current.pointee.ai_addr {
        let bytes = UnsafeRawBufferPointer(start: raw, count: Int(current.pointee.ai_addrlen))
        addresses.append(Address(family: raw.pointee.sa_family, bytes: Array(bytes)))
      }
      entry = current.pointee.ai_next
    }
    return addresses
  }

  private static func connectWaiting(
    _ descriptor: Int32, _ address: [UInt8], deadline: Deadline
  ) -> Bool {
    let result = address.withUnsafeBytes {
      connect(
        descriptor, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t($0.count))
    }
    if result == 0 { return true }
    guard SystemCallError.current("connect").errno == .nowInProgress,
      wait(descriptor, events: POLLOUT, deadline: deadline)
    else {
      return false
    }
    var failure: Int32 = 0
    var length = socklen_t(MemoryLayout<Int32>.size)
    getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &failure, &length)
    return failure == 0
  }

  private static func sendAll(_ descriptor: Int32, _ bytes: [UInt8], deadline: Deadline) -> Bool {
    var offset = 0
    while offset < bytes.count {
      let sent: Int?
      do {
        sent = try nonBlockingSystemCall("send") {
          bytes[offset...].withUnsafeBytes {
            send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
          }
        }
      } catch {
        return false
      }
      guard let sent else {
        guard wait(descriptor, events: POLLOUT, deadline: deadline) else { return false }
        continue
      }
      guard sent > 0 else { return false }
      offset += sent
    }
    return true
  }

  /// Reads until the peer closes or the limit; `nil` when nothing came or the deadline passed
  /// first.
  private static func receiveAll(_ descriptor: Int32, deadline: Deadline) -> [UInt8]? {
    var response: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 16_384)
    while response.count < maximumResponseBytes {
      let received: Int?
      do {
        received = try nonBlockingSystemCall("recv") { recv(descriptor, &buffer, buffer.count, 0) }
      } catch {
        break
      }
      guard let received else {
        guard wait(descriptor, events: POLLIN, deadline: deadline) else { return nil }
        continue
      }
      guard received > 0 else { break }  // the peer closed
      response += buffer[0..<received]
    }
    return response.isEmpty ? nil : response
  }

  /// Waits for `events` until the deadline; false when it passed first.
  private static func wait(_ descriptor: Int32, events: Int32, deadline: Deadline) -> Bool {
    var entry = pollfd(fd: descriptor, events: Int16(events), revents: 0)
    guard deadline.remainingMilliseconds > 0 else { return false }
    // An interrupted poll is retried with the time then left (0 once passed: returns at once).
    let ready = try? systemCall("poll") { poll(&entry, 1, deadline.remainingMilliseconds) }
    return (ready ?? 0) > 0
  }

  /// A point on the monotonic clock.
  struct Deadline {
    let instant: ContinuousClock.Instant

    init(afterMilliseconds milliseconds: Int32) {
      instant = .now.advanced(by: .milliseconds(milliseconds))
    }

    /// Milliseconds left, rounded up (0 once passed).
    var remainingMilliseconds: Int32 {
      let left = ContinuousClock.now.duration(to: instant)
      guard left > .zero else { return 0 }
      let (seconds, attoseconds) = left.components
      return Int32(
        clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }
  }

  private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
    guard !needle.isEmpty, haystack.count >= needle.count else { return nil }
    for start in 0...(haystack.count - needle.count)
    where haystack[start..<(start + needle.count)].elementsEqual(needle) {
      return start
    }
    return nil
  }

  /// Decodes `Transfer-Encoding: chunked`; stops at the first malformed chunk.
  private static func dechunk(_ body: [UInt8]) -> [UInt8] {
    var output: [UInt8] = []
    var offset = 0
    while let lineEnd = find([13, 10], in: Array(body[offset...])) {
      let sizeText = String(decoding: body[offset..<(offset + lineEnd)], as: UTF8.self)
      guard let size = Int(sizeText.split(separator: ";").first ?? "", radix: 16), size > 0 else {
        break
      }
      let start = offset + lineEnd + 2
      guard start + size <= body.count else {
        output += body[start...]
        break
      }
      output += body[start..<(start + size)]
      offset = start + size + 2
      guard offset < body.count else { break }
    }
    return output
  }
}
