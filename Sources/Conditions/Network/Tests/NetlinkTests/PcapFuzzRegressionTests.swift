import Netlink
import Testing

/// Captures that once crashed the FuzzCapture target (`Fixtures/fuzz/FuzzCapture/`).
@Suite struct PcapFuzzRegressionTests {
  @Test("a pcapng timestamp too large for microseconds is an error naming it, not a trap")
  func timestampOverflowIsAnError() throws {
    let path = FixtureFiles.directory + "/../fuzz/FuzzCapture/timestamp-overflow.pcapng"
    #expect {
      _ = try PcapReader.records(atPath: path)
    } throws: { error in
      "\(error)".contains("timestamp")
    }
  }
}
