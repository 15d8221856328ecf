import Foundation
import TestSupport
import Testing

/// `backgrounder status` with the real binary and no daemon: which config problems it reports,
/// and that its quick start (``StatusFastStart``) leaves help and usage errors as they were.
@Suite(.blockingIO, .timeLimit(.minutes(3)))
struct StatusConfigTests {
  @Test("status exits 1 naming file, line and column of a TOML error inside a job table")
  func syntaxErrorInAJob() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    try workspace.writeConfig(
      jobs: """
        [[job]]
        id = "dev.e2e.broken"
        every = [ }
        """)
    let result = try await harness.cli("status", "--json", "--config", workspace.configPath)
    #expect(result.status == 1, "\(result)")
    #expect(result.stdout.isEmpty, "\(result)")
    #expect(
      result.stderr.contains("\(workspace.configPath):8:11: TOML syntax error"), "\(result)")
  }

  @Test("status exits 1 naming the key of a bad setting it needs")
  func badStorePath() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    try workspace.writeRawConfig("[store]\npath = 1\n")
    let result = try await harness.cli("status", "--json", "--config", workspace.configPath)
    #expect(result.status == 1, "\(result)")
    #expect(
      result.stderr.contains("\(workspace.configPath):2: store.path: expected a string"),
      "\(result)")
  }

  @Test("status does not decode the jobs: a job's bad value is doctor's to report")
  func badJobValue() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    try workspace.writeConfig(
      jobs: """
        [[job]]
        id = "dev.e2e.soon"
        command = ["/bin/true"]
        every = "soon"
        """)
    let status = try await harness.cli("status", "--json", "--config", workspace.configPath)
    #expect(status.status == 0, "\(status)")
    let document = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8))
    #expect((document as? [String: Any])?["tasks"] as? [Any] != nil, "\(status)")
    let doctor = try await harness.cli("doctor", "--config", workspace.configPath)
    #expect(doctor.status != 0, "\(doctor)")
    #expect((doctor.stdout + doctor.stderr).contains("job \"dev.e2e.soon\": every"), "\(doctor)")
  }

  /// Under a sanitizer the binary's own runtime starts threads (TSan's, LSan's at exit).
  static let unsanitized =
    dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") == nil
    && dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") == nil

  @Test(
    "a one-shot status that reads a store holding a job starts no thread",
    .enabled(if: unsanitized, "a sanitizer's runtime starts threads of its own"),
    .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"), "no strace"))
  func oneShotStatusWithAStoreStartsNoThread() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    try workspace.writeConfig(jobs: "")
    let scheduled = try await harness.cli(
      "schedule", "dev.e2e.stored", "--once", "--config", workspace.configPath, "--command",
      "/bin/true")
    #expect(scheduled.status == 0, "\(scheduled)")
    // Each thread (or process) started is a clone(2) or clone3(2) call: strace lists them.
    let (output, calls) = try await Self.tracedStatus(harness, tracing: "clone,clone3")
    #expect(output.contains("\"dev.e2e.stored\""), "the store was read: \(output)")
    let clones = calls.filter { $0.contains("clone") }
    #expect(clones.isEmpty, "threads started: \(clones)")
  }

  /// `status --json` of the harness's config run under strace, tracing `calls` (its `-e
  /// trace=`): the output and the trace's lines. Expects it to exit 0.
  private static func tracedStatus(_ harness: DaemonHarness, tracing calls: String) async throws
    -> (output: String, calls: [Substring])
  {
    let workspace = harness.workspace
    let trace = workspace.file("status.trace")
    let status = try DaemonChild(
      [
        "/usr/bin/strace", "-f", "-qq", "-s", "256", "-o", trace, "-e", "trace=\(calls)",
        harness.binary, "status", "--json", "--config", workspace.configPath,
      ], outputPath: workspace.file("status.out"), errorPath: workspace.file("status.err"))
    let exit = await status.waitForExit(timeout: .seconds(60))
    #expect(exit == 0, "\(status.errorOutput)")
    let lines = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
    return (status.output, lines)
  }

  @Test(
    "a one-shot status reads the network with no subscription and walks each sysfs path once",
    .enabled(if: unsanitized, "a sanitizer's runtime makes system calls of its own"),
    .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"), "no strace"))
  func oneShotStatusReadsTheNetworkCheaply() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    try workspace.writeConfig(jobs: "")
    let (output, calls) = try await Self.tracedStatus(
      harness, tracing: "setsockopt,open,openat,stat,lstat,newfstatat,statx,readlink,readlinkat")
    #expect(output.contains("\"network\""), "the network was read: \(output)")
    // One look needs no notification: no group joined, no socket filter for the kernel to
    // compile (the daemon's monitor has both).
    let subscribing = calls.filter {
      $0.contains("NETLINK_ADD_MEMBERSHIP") || $0.contains("SO_ATTACH_FILTER")
    }
    #expect(subscribing.isEmpty, "\(subscribing)")
    // Each link's facts are looked up from its directory, the path walked once: no path under
    // /sys/class/net is named by two calls (it was: `stat` and then `lstat` of each absent
    // entry, and every lookup walked the whole path again).
    let sysfsPaths = calls.compactMap { call -> String? in
      guard let start = call.range(of: "\"/sys/class/net/") else { return nil }
      return String(call[start.lowerBound...].dropFirst().prefix { $0 != "\"" })
    }
    #expect(!sysfsPaths.isEmpty, "no link's sysfs directory was opened: \(calls)")
    let repeated = Dictionary(grouping: sysfsPaths, by: { $0 }).filter { $0.value.count > 1 }
    #expect(repeated.isEmpty, "looked up more than once: \(repeated.keys.sorted())")
  }

  @Test("status --help and a usage error read as the whole command line's")
  func helpAndUsageErrors() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    let help = try await harness.cli("status", "--help")
    #expect(help.status == 0, "\(help)")
    #expect(help.stdout.contains("USAGE: backgrounder status"), "\(help)")
    let unknown = try await harness.cli("status", "--no-such-flag")
    #expect(unknown.status == 64, "\(unknown)")
    #expect(unknown.stderr.contains("Unknown option '--no-such-flag'"), "\(unknown)")
    #expect(unknown.stderr.contains("Usage: backgrounder status"), "\(unknown)")
  }
}
