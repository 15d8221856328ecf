import Foundation
import Reachability
import Testing

@testable import NetworkHints

/// `[network] connectivity-check` URLs and how an HTTP answer maps to connectivity.
@Suite struct ConnectivityCheckTests {
  @Test func parsesHostPortAndPath() throws {
    let check = try ConnectivityCheck(url: "http://example.net:8080/generate_204?x=1", expect: "")
    #expect(check.host == "example.net")
    #expect(check.port == 8080)
    #expect(check.path == "/generate_204?x=1")
    let bare = try ConnectivityCheck(url: "HTTP://192.0.2.254", expect: "ok")
    #expect(bare.port == 80)
    #expect(bare.path == "/")
    let v6 = try ConnectivityCheck(url: "http://[2001:db8::1]:81/c", expect: "")
    #expect(v6.host == "2001:db8::1")
    #expect(v6.port == 81)
  }

  @Test(arguments: [
    ("https://example.net/", "only http://"),
    ("ftp://example.net/", "only http://"),
    ("http:///path", "missing or invalid host"),
    ("http://example.net:0/", "bad port"),
    ("http://example.net:http/", "bad port"),
    ("http://user@example.net/", "missing or invalid host"),
    ("http://[2001:db8::1/", "unclosed ["),
    ("http://example.net/a b", "whitespace"),
  ])
  func rejectsBadURLsSayingWhy(_ url: String, _ problem: String) {
    #expect {
      try ConnectivityCheck(url: url, expect: "")
    } throws: { error in
      "\(error)".contains(problem) && "\(error)".contains(url)
    }
  }

  static func response(_ head: String, _ body: String = "") -> [UInt8] {
    Array((head.replacingOccurrences(of: "\n", with: "\r\n") + "\r\n" + body).utf8)
  }

  @Test func expectedBodyIsFull() {
    let answer = Self.response("HTTP/1.1 200 OK\nContent-Length: 15\n", "backgrounder-ok")
    #expect(HTTPProbe.classify(answer, expect: "backgrounder-ok") == .full)
  }

  @Test func noContentIsFullWhenNothingIsExpected() {
    #expect(HTTPProbe.classify(Self.response("HTTP/1.1 204 No Content\n"), expect: "") == .full)
  }

  @Test func redirectIsAPortal() {
    let answer = Self.response("HTTP/1.1 302 Found\nLocation: http://login.hotel/\n")
    #expect(HTTPProbe.classify(answer, expect: "") == .portal)
  }

  @Test func wrongBodyIsAPortal() {
    let answer = Self.response("HTTP/1.1 200 OK\n", "<html>Please log in</html>")
    #expect(HTTPProbe.classify(answer, expect: "backgrounder-ok") == .portal)
  }

  @Test func networkAuthenticationRequiredIsAPortal() {
    let answer = Self.response("HTTP/1.1 511 Network Authentication Required\n")
    #expect(HTTPProbe.classify(answer, expect: "") == .portal)
  }

  @Test func chunkedBodyIsDecodedBeforeMatching() {
    let answer = Self.response(
      "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n", "6\r\nbackgr\r\n9\r\nounder-ok\r\n0\r\n\r\n")
    #expect(HTTPProbe.classify(answer, expect: "backgrounder-ok") == .full)
  }

  @Test func truncatedHeadersAreLimited() {
    #expect(HTTPProbe.classify(Array("HTTP/1.1 200 OK\r\nConte".utf8), expect: "") == .limited)
  }

  @Test func garbageIsAPortal() {
    #expect(HTTPProbe.classify(Self.response("SSH-2.0-OpenSSH\n"), expect: "") == .portal)
  }
}
