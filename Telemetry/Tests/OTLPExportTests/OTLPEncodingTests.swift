import OTLPEncoding
import Testing

/// The protobuf encoder against bytes the official bindings produce (PyPI opentelemetry-proto,
/// `SerializeToString()` of the same messages; the script is in the comments), and the
/// Prometheus text reader. Tests/telemetry/run.sh decodes real exports with those bindings too.
@Suite("OTLP encoding")
struct OTLPEncodingTests {
  private static let resource = OTLPRequests.resource(hostName: "h")

  @Test("varints: 7-bit groups, least significant first; a negative int64 takes ten bytes")
  func varints() {
    var writer = ProtobufWriter()
    writer.int(1, 300)
    #expect(writer.bytes == [0x08, 0xAC, 0x02])
    writer = ProtobufWriter()
    writer.int(3, -1)
    #expect(writer.bytes == [0x18] + Array(repeating: 0xFF, count: 9) + [0x01])
    writer = ProtobufWriter()
    writer.fixed64(7, 0x0102_0304_0506_0708)
    #expect(writer.bytes == [0x39, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01])
  }

  // python3: ExportTraceServiceRequest with one span: trace_id bytes(range(1,17)), span_id
  // bytes(range(17,25)), kind 1, the attributes below, status message + code 2.
  @Test("a span encodes as the official bindings encode it")
  func span() {
    let span = OTLPRequests.Span(
      traceID: Array(1...16), spanID: Array(17...24), name: "backgrounder.run",
      start: 1_700_000_000_000_000_000, end: 1_700_000_001_500_000_000,
      attributes: [
        ("backgrounder.job", .string("dev.example.fail")),
        ("backgrounder.attempt", .int(0)),
        ("backgrounder.reason", .string("exit status 3")),
        ("backgrounder.conditions", .strings(["network=any", "charging"])),
        ("backgrounder.waited_seconds", .double(2.5)),
        ("backgrounder.telemetry.dropped", .int(-1)),
      ], ok: false, statusMessage: "exit status 3")
    let expected =
      "0a9e030a320a1e0a0c736572766963652e6e616d65120e0a0c6261636b67726f756e6465720a100a09686f73"
      + "742e6e616d6512030a016812e7020a0e0a0c6261636b67726f756e64657212d4020a100102030405060708"
      + "090a0b0c0d0e0f10120811121314151617182a106261636b67726f756e6465722e72756e30013900002a36"
      + "fe9c971741002f928ffe9c97174a260a106261636b67726f756e6465722e6a6f6212120a106465762e6578"
      + "616d706c652e6661696c4a1a0a146261636b67726f756e6465722e617474656d7074120218004a260a1362"
      + "61636b67726f756e6465722e726561736f6e120f0a0d657869742073746174757320334a380a176261636b"
      + "67726f756e6465722e636f6e646974696f6e73121d2a1b0a0d0a0b6e6574776f726b3d616e790a0a0a0863"
      + "68617267696e674a280a1b6261636b67726f756e6465722e7761697465645f7365636f6e64731209210000"
      + "0000000004404a2d0a1e6261636b67726f756e6465722e74656c656d657472792e64726f70706564120b18"
      + "ffffffffffffffffff017a11120d657869742073746174757320331802"
    #expect(hex(OTLPRequests.traces([span], resource: Self.resource)) == expected)
  }

  // python3: ExportMetricsServiceRequest: backgrounder_results (sum, cumulative, monotonic,
  // description "Run results.", points job=a 2.0 and job=b 1.0) and backgrounder_job_stale
  // (gauge, job=a 0.0), all at 1700000002000000000.
  @Test("Prometheus text becomes a monotonic sum per counter and a gauge otherwise")
  func metrics() {
    let text = """
      # HELP backgrounder_results_total Run results.
      # TYPE backgrounder_results_total counter
      backgrounder_results_total{job="a"} 2
      backgrounder_results_total{job="b"} 1
      # TYPE backgrounder_job_stale gauge
      backgrounder_job_stale{job="a"} 0
      not a sample
      """
    let metrics = MetricSamples(prometheusText: text).metrics
    #expect(metrics.map(\.name) == ["backgrounder_results", "backgrounder_job_stale"])
    let expected =
      "0aef010a320a1e0a0c736572766963652e6e616d65120e0a0c6261636b67726f756e6465720a100a09686f73"
      + "742e6e616d6512030a016812b8010a0e0a0c6261636b67726f756e646572126a0a146261636b67726f756e"
      + "6465725f726573756c7473120c52756e20726573756c74732e3a440a1e1900945fadfe9c97172100000000"
      + "000000403a0a0a036a6f6212030a01610a1e1900945fadfe9c971721000000000000f03f3a0a0a036a6f62"
      + "12030a016210021801123a0a166261636b67726f756e6465725f6a6f625f7374616c652a200a1e1900945f"
      + "adfe9c97172100000000000000003a0a0a036a6f6212030a0161"
    let bytes = OTLPRequests.metrics(
      metrics, time: 1_700_000_002_000_000_000, resource: Self.resource)
    #expect(hex(bytes) == expected)
  }

  @Test("credentials in the endpoint are found; a query is not shown")
  func endpointText() {
    #expect(EndpointText.hasCredentials("https://user:secret@collector:4318"))
    #expect(EndpointText.hasCredentials("http://token@collector"))
    #expect(!EndpointText.hasCredentials("https://collector:4318/v1?to=a@b"))
    #expect(EndpointText.redacted("https://c/v1/traces?key=secret") == "https://c/v1/traces?…")
    #expect(EndpointText.redacted("https://c/v1/traces") == "https://c/v1/traces")
  }

  private func hex(_ bytes: [UInt8]) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
  }
}
