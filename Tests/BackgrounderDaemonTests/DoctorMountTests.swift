import BackgrounderDaemon
import Foundation
import Testing

/// `doctor` on `requires-mount`: a path that does not exist, a symbolic link, a directory that
/// is not mounted, and a mount point (`/proc`, always mounted here).
@Suite struct DoctorMountTests {
  @Test func checksEachRequiresMountPath() throws {
    let scratch = try DoctorJobFindings(prefix: "doctor-mount")
    defer { scratch.remove() }
    let root = scratch.root
    try FileManager.default.createDirectory(
      atPath: "\(root)/plain", withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(
      atPath: "\(root)/link", withDestinationPath: "/proc")
    let finding = try scratch.findings(
      key: "requires-mount",
      values: [
        "missing": "\(root)/missing", "link": "\(root)/link", "plain": "\(root)/plain",
        "proc": "/proc",
      ])
    #expect(finding["missing"]?.severity == .note)
    #expect(finding["missing"]?.message.contains("does not exist") == true)
    #expect(finding["link"]?.severity == .problem)
    #expect(finding["link"]?.message.contains("symbolic link") == true)
    #expect(finding["plain"]?.severity == .ok)
    #expect(finding["plain"]?.message.contains("is not mounted now") == true)
    #expect(finding["proc"]?.message == "requires-mount /proc is mounted")
  }
}
