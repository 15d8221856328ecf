import BackgrounderDaemon
import Foundation
import Testing

/// `doctor` on `requires-reachable`: a host that does not resolve is a problem; a name in
/// `/etc/hosts` and an address are fine.
@Suite struct DoctorDestinationTests {
  @Test func reportsAHostThatDoesNotResolve() throws {
    let root = FileManager.default.temporaryDirectory
      .appendingPathComponent("doctor-reach-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(
      atPath: "\(root)/sys/class/power_supply", withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: root) }
    let destinations = [
      "name": "localhost:22", "address": "[::1]:445", "nowhere": "nowhere.invalid:445",
    ]
    let config =
      "[store]\npath = \"\(root)/state/state.sqlite\"\n"
      + destinations.keys.sorted().map { name in
        """
        [[job]]
        id = "dev.example.\(name)"
        command = ["true"]
        once = true
        requires-reachable = "\(destinations[name]!)"

        """
      }.joined()
    try config.write(toFile: "\(root)/config.toml", atomically: true, encoding: .utf8)
    let findings = Doctor(
      configPath: "\(root)/config.toml", sysfsRoot: "\(root)/sys", searchPath: "/usr/bin:/bin",
      unitPaths: []
    ).run()
    func finding(_ name: String) -> DoctorFinding? {
      findings.first {
        $0.subject == "job dev.example.\(name)" && $0.message.contains("requires-reachable")
      }
    }
    #expect(finding("nowhere")?.severity == .problem)
    #expect(finding("nowhere")?.message.contains("nowhere.invalid does not resolve") == true)
    #expect(finding("name")?.severity == .ok)
    #expect(finding("address")?.severity == .ok)
  }
}
