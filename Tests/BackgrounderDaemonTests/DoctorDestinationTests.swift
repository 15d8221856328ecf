import BackgrounderDaemon
import Foundation
import Testing

/// `doctor` on `requires-reachable`: a host that does not resolve is a problem; a name in
/// `/etc/hosts` and an address are fine.
@Suite struct DoctorDestinationTests {
  @Test func reportsAHostThatDoesNotResolve() throws {
    let scratch = try DoctorJobFindings(prefix: "doctor-reach")
    defer { scratch.remove() }
    let finding = try scratch.findings(
      key: "requires-reachable",
      values: ["name": "localhost:22", "address": "[::1]:445", "nowhere": "nowhere.invalid:445"])
    #expect(finding["nowhere"]?.severity == .problem)
    #expect(finding["nowhere"]?.message.contains("nowhere.invalid does not resolve") == true)
    #expect(finding["name"]?.severity == .ok)
    #expect(finding["address"]?.severity == .ok)
  }
}
