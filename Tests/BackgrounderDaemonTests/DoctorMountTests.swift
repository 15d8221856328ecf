import BackgrounderDaemon
import Foundation
import Testing

/// `doctor` on `requires-mount`: a path that does not exist, a symbolic link, a directory that
/// is not mounted, and a mount point (`/proc`, always mounted here).
@Suite struct DoctorMountTests {
  @Test func checksEachRequiresMountPath() throws {
    let root = FileManager.default.temporaryDirectory
      .appendingPathComponent("doctor-mount-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(
      atPath: "\(root)/sys/class/power_supply", withIntermediateDirectories: true)
    try FileManager.default.createDirectory(
      atPath: "\(root)/plain", withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(
      atPath: "\(root)/link", withDestinationPath: "/proc")
    defer { try? FileManager.default.removeItem(atPath: root) }
    let paths = [
      "missing": "\(root)/missing", "link": "\(root)/link", "plain": "\(root)/plain",
      "proc": "/proc",
    ]
    let config =
      "[store]\npath = \"\(root)/state/state.sqlite\"\n"
      + paths.keys.sorted().map { name in
        """
        [[job]]
        id = "dev.example.\(name)"
        command = ["true"]
        once = true
        requires-mount = "\(paths[name]!)"

        """
      }.joined()
    try config.write(toFile: "\(root)/config.toml", atomically: true, encoding: .utf8)
    let findings = Doctor(
      configPath: "\(root)/config.toml", sysfsRoot: "\(root)/sys", searchPath: "/usr/bin:/bin",
      unitPaths: []
    ).run()
    func finding(_ name: String) -> DoctorFinding? {
      findings.first {
        $0.subject == "job dev.example.\(name)" && $0.message.contains("requires-mount")
      }
    }
    #expect(finding("missing")?.severity == .note)
    #expect(finding("missing")?.message.contains("does not exist") == true)
    #expect(finding("link")?.severity == .problem)
    #expect(finding("link")?.message.contains("symbolic link") == true)
    #expect(finding("plain")?.severity == .ok)
    #expect(finding("plain")?.message.contains("is not mounted now") == true)
    #expect(finding("proc")?.message == "requires-mount /proc is mounted")
  }
}
