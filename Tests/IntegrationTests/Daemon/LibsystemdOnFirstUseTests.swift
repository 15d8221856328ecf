import Foundation
import TestSupport
import Testing

/// libsystemd is opened on first use, not linked (`Sources/CSystemdBus/loader.c`): a one-shot
/// command does not pay for loading it and its six libraries, and a machine where it cannot be
/// opened gets a `doctor` problem that says so instead of a binary that does not start.
@Suite(.blockingIO, .timeLimit(.minutes(2)))
struct LibsystemdOnFirstUseTests {
  @Test func theBinaryDoesNotNeedLibsystemdToStart() throws {
    let readelf = Process()
    readelf.executableURL = URL(fileURLWithPath: "/usr/bin/readelf")
    readelf.arguments = ["-d", try DaemonBinary.path()]
    let pipe = Pipe()
    readelf.standardOutput = pipe
    try readelf.run()
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    readelf.waitUntilExit()
    let needed = output.split(separator: "\n").filter { $0.contains("(NEEDED)") }
    #expect(needed.contains { $0.contains("libc.so") }, "\(output)")
    #expect(!needed.contains { $0.contains("libsystemd") }, "\(needed)")
  }

  @Test(
    .enabled(if: PrivateBus.isAvailable, "needs dbus-daemon, dbus-send and python3-dbusmock"))
  func withoutLibsystemdDoctorSaysSoAndNetworkManagerIsNotAsked() async throws {
    let bus = try PrivateBus()
    defer { bus.close() }
    try bus.startNetworkManager()
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    try workspace.writeConfig(jobs: "")
    // A file by libsystemd's soname that is no library: the loader finds it first and fails.
    let libraries = workspace.file("libraries")
    try FileManager.default.createDirectory(atPath: libraries, withIntermediateDirectories: true)
    #expect(
      FileManager.default.createFile(atPath: libraries + "/libsystemd.so.0", contents: Data()))
    func doctor(_ name: String, _ environment: [String: String]) async throws -> (
      status: Int32?, output: String
    ) {
      let child = try DaemonChild(
        [try DaemonBinary.path(), "doctor", "--config", workspace.configPath],
        outputPath: workspace.file("\(name).out"),
        environment: environment.merging(["DBUS_SYSTEM_BUS_ADDRESS": bus.address]) { a, _ in a })
      let status = await child.waitForExit(timeout: .seconds(30))
      return (status, child.output)
    }
    let withLibrary = try await doctor("with", [:])
    #expect(withLibrary.output.contains("networkmanager: answers"), "\(withLibrary.output)")
    #expect(!withLibrary.output.contains("libsystemd"), "\(withLibrary.output)")

    let without = try await doctor("without", ["LD_LIBRARY_PATH": libraries])
    #expect(
      without.output.contains(
        "problem: libsystemd: cannot be opened (\(libraries)/libsystemd.so.0: file too short)"),
      "\(without.output)")
    #expect(without.output.contains("networkmanager: not on the system bus"), "\(without.output)")
    #expect(without.status == 1)
  }
}
