import OTLPEncoding
import Testing

/// The batch file as the daemon writes it (TelemetryBatchFile), read without Foundation.
@Suite("Export batch")
struct ExportBatchTests {
  @Test("a batch reads back exactly: nanosecond times beyond 2^53, escapes, nulls")
  func batch() throws {
    let text = #"""
      {"caFile":"/etc/ca.pem","dropped":2,"endpoint":"https://c:4318",
       "headers":{"authorization":"Bearer \"x\"\\"},"metrics":"a 1\n",
       "retryAfterFile":"/s.retry-after","runs":[
       {"attempt":3,"conditions":["network=any","ssids=caf\u00e9 \ud83d\ude00"],"end":1700000001123456789,
        "job":"dev.example.ok","outcome":"failure","reason":null,"start":1700000000123456789,
        "waitedSeconds":1.5}]}
      """#
    let batch = try ExportBatch(json: Array(text.utf8))
    #expect(batch.endpoint == "https://c:4318")
    #expect(batch.headers == ["authorization": #"Bearer "x"\"#])
    #expect(batch.caFile == "/etc/ca.pem")
    #expect(batch.retryAfterFile == "/s.retry-after")
    #expect(batch.dropped == 2)
    #expect(batch.metrics == "a 1\n")
    let run = try #require(batch.runs.first)
    #expect(run.start == 1_700_000_000_123_456_789)
    #expect(run.end == 1_700_000_001_123_456_789)
    #expect(run.attempt == 3)
    #expect(run.reason == nil)
    #expect(run.conditions == ["network=any", "ssids=café 😀"])
    #expect(run.waitedSeconds == 1.5)
    #expect(batch.tracesURL == "https://c:4318/v1/traces")
  }

  @Test("a run's counted bytes become backgrounder.network.* span attributes; none without")
  func networkBytesAttributes() throws {
    let text = #"""
      {"endpoint":"https://c:4318","runs":[
       {"attempt":0,"conditions":[],"end":2000,"job":"dev.example.up","outcome":"success",
        "start":1000,"bytesSent":612345,"bytesReceived":3100,"meteredBytesSent":600000,
        "meteredBytesReceived":3000,"accounting":"link"},
       {"attempt":0,"conditions":[],"end":4000,"job":"dev.example.up","outcome":"success",
        "start":3000}]}
      """#
    let batch = try ExportBatch(json: Array(text.utf8))
    #expect(
      batch.runs.first?.network
        == ExportBatch.Network(
          sent: 612_345, received: 3_100, meteredSent: 600_000, meteredReceived: 3_000,
          accounting: "link"))
    var random = SystemRandomNumberGenerator()
    let spans = batch.spans(using: &random)
    try #require(spans.count == 2)
    func attributes(_ span: OTLPRequests.Span) -> [String: AttributeValue] {
      Dictionary(span.attributes.map { ($0.0, $0.1) }, uniquingKeysWith: { first, _ in first })
    }
    let counted = attributes(spans[0])
    #expect(counted["backgrounder.network.bytes_sent"] == .int(612_345))
    #expect(counted["backgrounder.network.bytes_received"] == .int(3_100))
    #expect(counted["backgrounder.network.metered_bytes"] == .int(603_000))
    #expect(counted["backgrounder.network.accounting"] == .string("link"))
    #expect(
      !attributes(spans[1]).keys.contains { $0.hasPrefix("backgrounder.network.") },
      "a run without counted bytes has no network attributes")
  }

  @Test("malformed JSON and missing fields are errors")
  func malformed() {
    for text in [
      "", "{", #"{"endpoint":"x",}"#, #"{"endpoint":"x"} x"#, "{\"endpoint\":\"a\u{1}\"}",
      #"{"headers":{}}"#, #"{"endpoint":"x","runs":[{"job":"a"}]}"#,
      #"{"endpoint":"x","runs":[{"job":"a","attempt":0,"outcome":"success","start":1,"end":2,"#
        + #""bytesSent":1,"bytesReceived":2}]}"#,
      String(repeating: "[", count: 100) + String(repeating: "]", count: 100),
    ] {
      #expect(throws: ExportBatch.FormatError.self, "\(text)") {
        try ExportBatch(json: Array(text.utf8))
      }
    }
  }
}
