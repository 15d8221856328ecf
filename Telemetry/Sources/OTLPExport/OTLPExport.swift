import CCurlPost
import OTLPEncoding

#if canImport(Glibc)
  import Glibc
#endif

/// `backgrounder-otlp-export BATCH.json`: sends the runs of one telemetry batch as spans, then
/// the daemon's metrics it carries, to an OpenTelemetry Collector over OTLP/HTTP (protobuf,
/// one POST each, libcurl), and exits 0 only when the collector accepted both (1: not
/// delivered, the daemon keeps the rows and retries; 2: bad input). No retry of its own and no
/// redirect followed: a collector's `Retry-After` goes to the batch's `retryAfterFile`, for the
/// daemon's backoff. Never prints a header value or the endpoint's query. The daemon starts it
/// as a contained child process; it is not meant to be run by hand.
@main
enum OTLPExport {
  /// How long one request may take before it counts as not delivered.
  static let timeoutSeconds = 20

  static func main() {
    let arguments = CommandLine.arguments
    guard arguments.count == 2 else { fail(2, "usage: backgrounder-otlp-export BATCH.json") }
    let batch: ExportBatch
    do {
      batch = try ExportBatch(json: try readFile(arguments[1]))
    } catch {
      fail(2, "cannot read \(arguments[1]): \(error)")
    }
    let secure = batch.endpoint.hasPrefix("https://")
    guard secure || batch.endpoint.hasPrefix("http://") else {
      fail(2, "otlp-endpoint: expected an http:// or https:// address")
    }
    guard !EndpointText.hasCredentials(batch.endpoint) else {
      fail(2, "otlp-endpoint: credentials in the address are refused (use headers-file)")
    }
    guard bg_post_init() == 0 else { fail(1, "cannot initialise libcurl") }
    let resource = OTLPRequests.resource(hostName: hostName())
    var random = SystemRandomNumberGenerator()
    let headers = batch.headers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
    let session = Session(batch: batch, secure: secure, headers: headers)
    if !batch.runs.isEmpty {
      let body = OTLPRequests.traces(batch.spans(using: &random), resource: resource)
      session.post(body, to: batch.tracesURL)
      print("exported \(batch.runs.count) span(s) to \(EndpointText.redacted(batch.tracesURL))")
    }
    let metrics = MetricSamples(prometheusText: batch.metrics ?? "").metrics
    if !metrics.isEmpty {
      let body = OTLPRequests.metrics(metrics, time: now(), resource: resource)
      session.post(body, to: batch.metricsURL)
      let points = metrics.reduce(0) { $0 + $1.points.count }
      print("exported \(points) metric point(s) to \(EndpointText.redacted(batch.metricsURL))")
    }
    exit(0)
  }

  /// One batch's requests: the same headers, CA and protocol for each.
  struct Session {
    var batch: ExportBatch
    var secure: Bool
    var headers: [String]

    /// POSTs `body` to `url`; returns when the collector accepted it (2xx), else exits 1
    /// (recording a `Retry-After` first).
    func post(_ body: [UInt8], to url: String) {
      var response = bg_post_response()
      let shown = EndpointText.redacted(url)
      withCStrings(headers) { lines in
        body.withUnsafeBufferPointer { bytes in
          url.withCString { url in
            (secure ? "https" : "http").withCString { proto in
              withOptionalCString(batch.caFile) { caFile in
                var request = bg_post_request(
                  url: url, protocol: proto, body: bytes.baseAddress, body_length: bytes.count,
                  headers: lines.baseAddress, header_count: lines.count, ca_file: caFile,
                  timeout_seconds: timeoutSeconds)
                _ = bg_post(&request, &response)
              }
            }
          }
        }
      }
      guard response.curl_code == 0 else {
        let message = withUnsafeBytes(of: response.error) {
          String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
        }
        fail(1, "cannot export to \(shown): \(message)")
      }
      if (200..<300).contains(response.status) { return }
      if response.retry_after > 0, let path = batch.retryAfterFile {
        writeRetryAfter(response.retry_after, to: path)
      }
      var detail = ""
      if (300..<400).contains(response.status) {
        detail = " (a redirect: not followed; configure the collector's final address)"
      } else if response.retry_after > 0 {
        detail = " (Retry-After: \(response.retry_after) s)"
      }
      fail(1, "the collector at \(shown) answered HTTP \(response.status)\(detail)")
    }
  }

  struct ReadError: Error, CustomStringConvertible {
    var description: String
  }

  /// The contents of the regular file at `path` (at most 64 MiB).
  static func readFile(_ path: String) throws(ReadError) -> [UInt8] {
    let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
    guard descriptor >= 0 else { throw ReadError(description: String(cString: strerror(errno))) }
    defer { close(descriptor) }
    var info = stat()
    guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
      throw ReadError(description: "not a regular file")
    }
    let limit = 64 << 20
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while bytes.count <= limit {
      let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
      if count < 0, errno == EINTR { continue }
      guard count >= 0 else { throw ReadError(description: String(cString: strerror(errno))) }
      if count == 0 { return bytes }
      bytes += chunk[..<count]
    }
    throw ReadError(description: "larger than \(limit) bytes")
  }

  /// Writes `seconds` to `path` (0600, never through a symlink).
  static func writeRetryAfter(_ seconds: Int, to path: String) {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { return }
    defer { close(descriptor) }
    let text = Array("\(seconds)\n".utf8)
    _ = text.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
  }

  static func fail(_ status: Int32, _ message: String) -> Never {
    let line = Array((message + "\n").utf8)
    _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    exit(status)
  }

  static func hostName() -> String {
    var buffer = [UInt8](repeating: 0, count: 256)
    guard gethostname(&buffer, buffer.count - 1) == 0 else { return "unknown" }
    return String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self)
  }

  /// Now, in nanoseconds since 1970.
  static func now() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_REALTIME, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
  }
}

/// `strings` as an array of C strings, valid inside `body`.
func withCStrings<R>(
  _ strings: [String], _ body: (UnsafeBufferPointer<UnsafePointer<CChar>?>) -> R
) -> R {
  let copies = strings.map { strdup($0) }
  defer { for copy in copies { free(copy) } }
  let pointers = copies.map { UnsafePointer($0) }
  return pointers.withUnsafeBufferPointer(body)
}

func withOptionalCString<R>(_ string: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
  guard let string else { return body(nil) }
  return string.withCString(body)
}
