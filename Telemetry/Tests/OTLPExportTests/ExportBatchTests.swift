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

  @Test("malformed JSON and missing fields are errors")
  func malformed() {
    for text in [
      "", "{", #"{"endpoint":"x",}"#, #"{"endpoint":"x"} x"#, "{\"endpoint\":\"a\u{1}\"}",
      #"{"headers":{}}"#, #"{"endpoint":"x","runs":[{"job":"a"}]}"#,
      String(repeating: "[", count: 100) + String(repeating: "]", count: 100),
    ] {
      #expect(throws: ExportBatch.FormatError.self, "\(text)") {
        try ExportBatch(json: Array(text.utf8))
      }
    }
  }
}
