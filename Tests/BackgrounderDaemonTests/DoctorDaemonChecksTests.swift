import BackgrounderDaemon
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `doctor` finds what would make `backgrounder run` fail: socket path and directory, store
/// ownership, commands relative to `working-directory`, metrics directory, environment names.
@Suite final class DoctorDaemonChecksTests {
  private let root: String

  init() throws {
    root = "/tmp/bgdoc-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
    try FileManager.default.createDirectory(
      atPath: root, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
  }

  deinit {
    try? FileManager.default.removeItem(atPath: root)
  }

  private func problems(_ config: String) throws -> [String] {
    let path = root + "/config.toml"
    try config.replacingOccurrences(of: "ROOT", with: root)
      .write(toFile: path, atomically: true, encoding: .utf8)
    return Doctor(configPath: path, searchPath: "/usr/bin:/bin", unitPaths: []).run()
      .filter { $0.severity == .problem }.map(\.description)
  }

  @Test func aCgroupRootThatIsAPlainDirectoryIsAProblem() throws {
    var doctor = Doctor(configPath: root + "/none.toml", unitPaths: [])
    doctor.cgroupRoot = root
    let findings = doctor.run().filter { $0.subject == "cgroup" }
    #expect(findings.count == 1)
    #expect(findings.first?.severity == .problem)
    #expect(findings.first?.description.contains("not on a cgroup2 file system") == true)
  }

  @Test("a control socket path longer than sun_path is a problem naming its length")
  func socketPathTooLong() throws {
    let long = String(repeating: "s", count: 120)
    let found = try problems(
      """
      [store]
      path = "ROOT/state.sqlite"
      [control]
      socket = "ROOT/\(long).sock"
      """)
    #expect(
      found.contains { $0.contains("control socket:") && $0.contains("at most 107") }, "\(found)")
  }

  @Test("a control socket in a world-writable directory or over a regular file is a problem")
  func socketDirectoryAndExistingFile() throws {
    let shared = root + "/shared"
    try FileManager.default.createDirectory(
      atPath: shared, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o777])
    chmod(shared, 0o777)
    try "x".write(toFile: root + "/file", atomically: true, encoding: .utf8)
    let inShared = try problems(
      "[store]\npath = \"ROOT/state.sqlite\"\n[control]\nsocket = \"ROOT/shared/c.sock\"\n")
    #expect(inShared.contains { $0.contains("writable by group or others") }, "\(inShared)")
    let overFile = try problems(
      "[store]\npath = \"ROOT/state.sqlite\"\n[control]\nsocket = \"ROOT/file\"\n")
    #expect(overFile.contains { $0.contains("exists and is not a socket") }, "\(overFile)")
  }

  @Test("a store owned by another uid is a problem", .enabled(if: getuid() == 0, "needs root"))
  func storeOfAnotherUser() throws {
    let store = root + "/state.sqlite"
    _ = FileManager.default.createFile(atPath: store, contents: Data())
    chown(store, 65_534, 65_534)
    let found = try problems("[store]\npath = \"ROOT/state.sqlite\"\n")
    #expect(found.contains { $0.contains("owned by uid 65534") }, "\(found)")
  }

  @Test("a relative command is resolved in the job's working-directory")
  func relativeCommandInWorkingDirectory() throws {
    let bin = root + "/work/bin"
    try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
    _ = FileManager.default.createFile(
      atPath: bin + "/tool", contents: Data("#!/bin/sh\n".utf8),
      attributes: [.posixPermissions: 0o755])
    let jobs = """
      [store]
      path = "ROOT/state.sqlite"
      [control]
      socket = "ROOT/c.sock"
      [[job]]
      id = "dev.doctor.found"
      command = ["bin/tool"]
      once = true
      working-directory = "ROOT/work"
      [[job]]
      id = "dev.doctor.missing"
      command = ["bin/tool"]
      once = true
      working-directory = "ROOT"
      """
    let found = try problems(jobs)
    #expect(!found.contains { $0.contains("dev.doctor.found") }, "\(found)")
    #expect(found.contains { $0.contains("job dev.doctor.missing: command bin/tool") }, "\(found)")
  }

  @Test("an invalid environment name and a missing metrics directory are problems")
  func environmentNamesAndMetricsDirectory() throws {
    let found = try problems(
      """
      [store]
      path = "ROOT/state.sqlite"
      [control]
      socket = "ROOT/c.sock"
      [metrics]
      file = "ROOT/missing/backgrounder.prom"
      [[job]]
      id = "dev.doctor.env"
      command = ["/bin/true"]
      once = true
      environment = { "BAD-NAME" = "x", GOOD_NAME = "y" }
      """)
    #expect(found.contains { $0.contains("environment name \"BAD-NAME\"") }, "\(found)")
    #expect(!found.contains { $0.contains("GOOD_NAME") }, "\(found)")
    #expect(found.contains { $0.contains("metrics:") && $0.contains("missing") }, "\(found)")
  }
}

@Suite struct SystemdUnitTests {
  @Test(arguments: [false, true])
  func unitsAreHardened(user: Bool) {
    let unit = SystemdUnits.service(user: user, executable: "/usr/local/bin/backgrounder")
    let lines = Set(unit.split(separator: "\n").map(String.init))
    for line in [
      "Type=notify", "UMask=0077", "RuntimeDirectory=backgrounder", "RuntimeDirectoryMode=0700",
      "Delegate=yes", "KillMode=mixed", "WatchdogSec=\(SystemdUnits.watchdogSeconds)s",
    ] {
      #expect(lines.contains(line), "\(line) missing from:\n\(unit)")
    }
    #expect(lines.contains("#LoadCredential=backup.env:/etc/backgrounder/secrets/backup.env"))
    #expect(lines.contains("StateDirectory=backgrounder") == !user)
    #expect(lines.contains("StateDirectoryMode=0700") == !user)
  }

  @Test(
    "systemd-analyze verify accepts the units",
    .enabled(
      if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze"),
      "systemd-analyze is not installed (apt systemd)"),
    arguments: [false, true])
  func systemdAnalyzeVerify(user: Bool) async throws {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("unit-\(UUID().uuidString)")
    try FileManager.default.createDirectory(
      at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("backgrounder.service").path
    try SystemdUnits.service(user: user, executable: "/bin/true")
      .write(toFile: path, atomically: true, encoding: .utf8)
    let outputPath = directory.appendingPathComponent("verify.out").path
    _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
    let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/systemd-analyze")
    process.arguments = ["verify", "--man=no"] + (user ? ["--user"] : []) + [path]
    // A user manager needs a runtime directory; the test has no login session.
    process.environment = ProcessInfo.processInfo.environment.merging(
      ["XDG_RUNTIME_DIR": directory.path]) { $1 }
    process.standardError = output
    process.standardOutput = output
    let status = try await withCheckedThrowingContinuation {
      (done: CheckedContinuation<Int32, any Error>) in
      process.terminationHandler = { done.resume(returning: $0.terminationStatus) }
      do {
        try process.run()
      } catch {
        done.resume(throwing: error)
      }
    }
    try output.close()
    let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
    #expect(status == 0, "\(text)")
    #expect(!text.contains("backgrounder.service"), "\(text)")
  }
}
