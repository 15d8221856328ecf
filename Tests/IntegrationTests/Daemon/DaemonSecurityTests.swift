import Foundation
import TestSupport
import Testing

/// Whether the tests can act as a second user (root, with util-linux's `setpriv`).
private let canSwitchUser =
  geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")

/// The daemon-hardening integration tests run one at a time: together they start dozens of
/// processes, which would starve the timing-sensitive tests running beside them.
@Suite(.blockingIO, .serialized) enum DaemonHardeningTests {}

extension DaemonHardeningTests {
  /// Private files and an unhijackable control socket, checked with the real binary and a
  /// second user (uid 65534 through `setpriv`).
  @Suite(.timeLimit(.minutes(2)))
  struct DaemonSecurityTests {
    static let otherUser: uid_t = 65534

    /// `arguments` run as uid/gid 65534 with no supplementary groups.
    static func asOtherUser(_ arguments: [String]) -> [String] {
      ["/usr/bin/setpriv", "--reuid=\(otherUser)", "--regid=\(otherUser)", "--clear-groups", "--"]
        + arguments
    }

    /// Runs `arguments` to completion (at most 30 s) and returns its exit status and output.
    static func run(_ arguments: [String], in workspace: DaemonWorkspace) async throws -> (
      Int32, String
    ) {
      let child = try DaemonChild(
        arguments, outputPath: workspace.file("run-\(UUID().uuidString).log"))
      guard let status = await child.waitForExit(timeout: .seconds(30)) else {
        child.terminate()
        throw DaemonHarnessError("`\(arguments.joined(separator: " "))` hung")
      }
      return (status, child.output)
    }

    static func mode(_ path: String) -> mode_t? {
      var status = stat()
      guard lstat(path, &status) == 0 else { return nil }
      return status.st_mode & 0o7777
    }

    @Test(
      "store, WAL, SHM and locks are 0600 in a 0700 directory; another user reads nothing",
      .enabled(if: canSwitchUser, "needs root and setpriv to act as a second user"))
    func storeFilesArePrivate() async throws {
      let workspace = try DaemonWorkspace()
      defer { workspace.remove() }
      let harness = try DaemonHarness(workspace: workspace)
      defer { harness.cleanUp() }
      let state = workspace.file("state")
      let store = state + "/state.sqlite"
      try workspace.writeRawConfig(
        """
        [store]
        path = "\(store)"
        [control]
        socket = "\(workspace.file("run"))/control.sock"

        \(daemonShellJob(id: "dev.e2e.secret", script: "true", schedule: "once = true\ndelay = \"1h\"", extra: "environment = { TOKEN = \"hunter2\" }"))
        """)
      _ = try harness.startDaemon()
      _ = try await harness.waitForTask("dev.e2e.secret", "in the store") { _ in true }
      #expect(Self.mode(state) == 0o700)
      #expect(Self.mode(workspace.file("run")) == 0o700)
      #expect(Self.mode(workspace.file("run") + "/control.sock") == 0o600)
      for file in [store, store + "-wal", store + "-shm", store + ".lock", store + ".start.lock"] {
        #expect(Self.mode(file) == 0o600, "\(file)")
      }
      // Even with the directory opened up, the files themselves stay closed.
      #expect(chmod(state, 0o711) == 0)
      for file in [store, store + "-wal"] {
        let (status, output) = try await Self.run(
          Self.asOtherUser(["/bin/cat", file]), in: workspace)
        #expect(status != 0, "uid 65534 read \(file): \(output)")
        #expect(!output.contains("hunter2"))
      }
    }

    @Test("offline edits create the store 0600 in a new 0700 directory")
    func offlineEditsArePrivate() async throws {
      let workspace = try DaemonWorkspace()
      defer { workspace.remove() }
      let harness = try DaemonHarness(workspace: workspace)
      let store = workspace.file("new/dir/state.sqlite")
      try workspace.writeRawConfig(
        """
        [store]
        path = "\(store)"
        [control]
        socket = "\(workspace.socketPath)"
        """)
      let schedule = try await harness.cli(
        "schedule", "dev.e2e.offline", "--once", "--config", workspace.configPath, "--command",
        "/bin/true")
      #expect(schedule.status == 0, "\(schedule)")
      #expect(Self.mode(workspace.file("new")) == 0o700)
      #expect(Self.mode(workspace.file("new/dir")) == 0o700)
      for file in [store, store + ".lock", store + ".start.lock", store + ".edit.lock"] {
        #expect(Self.mode(file) == 0o600, "\(file)")
      }
    }

    @Test(
      "a socket directory planted by another user gets no request; the CLI names the owner",
      .enabled(if: canSwitchUser, "needs root and setpriv to act as a second user"))
    func plantedDirectoryIsRefused() async throws {
      let workspace = try DaemonWorkspace()
      defer { workspace.remove() }
      let harness = try DaemonHarness(workspace: workspace)
      defer { harness.cleanUp() }
      let shared = workspace.file("shared")
      #expect(mkdir(shared, 0o755) == 0 && chmod(shared, 0o1777) == 0)
      let planted = shared + "/bg"
      let (made, output) = try await Self.run(
        Self.asOtherUser(["/bin/mkdir", "-m", "0777", planted]), in: workspace)
      try #require(made == 0, "uid 65534 could not plant \(planted): \(output)")
      try workspace.writeRawConfig(
        """
        [store]
        path = "\(workspace.storePath)"
        [control]
        socket = "\(planted)/control.sock"
        """)
      let schedule = try await harness.cli(
        "schedule", "dev.e2e.secret", "--once", "--env", "TOKEN=hunter2", "--config",
        workspace.configPath, "--command", "/bin/true")
      #expect(schedule.status != 0, "\(schedule)")
      #expect(schedule.stderr.contains("owned by uid 65534"), "\(schedule)")
      #expect(!FileManager.default.fileExists(atPath: workspace.storePath), "fell back to offline")

      let daemon = try harness.startDaemon()
      let status = await daemon.waitForExit(timeout: .seconds(30))
      #expect(status != nil && status != 0, "run: \(daemon.output)")
      #expect(daemon.output.contains("owned by uid 65534"), "\(daemon.output)")
      #expect(try FileManager.default.contentsOfDirectory(atPath: planted).isEmpty)
    }

    @Test(
      "a socket served by another user gets no request; the CLI names the user",
      .enabled(if: canSwitchUser, "needs root and setpriv to act as a second user"))
    func socketOfAnotherUserIsRefused() async throws {
      let workspace = try DaemonWorkspace()
      defer { workspace.remove() }
      let harness = try DaemonHarness(workspace: workspace)
      defer { harness.cleanUp() }
      // The other user's own daemon, in a directory of its own.
      let other = workspace.file("other")
      #expect(mkdir(other, 0o700) == 0 && chown(other, Self.otherUser, Self.otherUser) == 0)
      let socket = other + "/control.sock"
      try """
      [store]
      path = "\(other)/state.sqlite"
      [control]
      socket = "\(socket)"
      """.write(toFile: other + "/config.toml", atomically: false, encoding: .utf8)
      let otherDaemon = try DaemonChild(
        Self.asOtherUser([harness.binary, "run", "--config", other + "/config.toml"]),
        outputPath: workspace.file("other-daemon.log"))
      defer { otherDaemon.terminate() }
      try await daemonEventually("the other user's socket", describe: otherDaemon.output) {
        Self.mode(socket) != nil ? true : nil
      }
      // Now the directory looks trustworthy (root's, not writable by others); only the peer's
      // credentials tell.
      #expect(chown(other, 0, 0) == 0 && chmod(other, 0o755) == 0)
      try workspace.writeRawConfig(
        """
        [store]
        path = "\(workspace.storePath)"
        [control]
        socket = "\(socket)"
        """)
      let schedule = try await harness.cli(
        "schedule", "dev.e2e.secret", "--once", "--env", "TOKEN=hunter2", "--config",
        workspace.configPath, "--command", "/bin/true")
      #expect(schedule.status != 0, "\(schedule)")
      #expect(schedule.stderr.contains("served by uid 65534"), "\(schedule)")
      #expect(!FileManager.default.fileExists(atPath: workspace.storePath), "fell back to offline")
      #expect(!otherDaemon.output.contains("hunter2"))
    }

    @Test("a regular file named as the socket is left untouched and run exits non-zero")
    func regularFileAtSocketPathIsUntouched() async throws {
      let workspace = try DaemonWorkspace()
      defer { workspace.remove() }
      let harness = try DaemonHarness(workspace: workspace)
      defer { harness.cleanUp() }
      let precious = workspace.file("precious.txt")
      try "keep me\n".write(toFile: precious, atomically: false, encoding: .utf8)
      try workspace.writeRawConfig(
        """
        [store]
        path = "\(workspace.storePath)"
        [control]
        socket = "\(precious)"
        """)
      let daemon = try harness.startDaemon()
      let status = await daemon.waitForExit(timeout: .seconds(30))
      #expect(status != nil && status != 0, "run: \(daemon.output)")
      #expect(daemon.output.contains("is not a socket"), "\(daemon.output)")
      #expect(try String(contentsOfFile: precious, encoding: .utf8) == "keep me\n")
    }
  }
}
