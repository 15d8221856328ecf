import BackgrounderDaemon
import Foundation
import TestSupport
import Testing

/// Whether the tests can act as a second user (root, with util-linux's `setpriv`).
private let canSwitchUser =
  geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")

extension DaemonHardeningTests {
  /// The whole-path rule against a second user (uid 65534 through `setpriv`), with the real
  /// binary: stores, metrics, captures, replays and `doctor`.
  @Suite(.timeLimit(.minutes(3)))
  struct DaemonPathTrustTests {
    typealias Security = DaemonSecurityTests

    /// Every file under `directory`, recursively.
    static func files(under directory: String) -> [String] {
      let enumerator = FileManager.default.enumerator(atPath: directory)
      return (enumerator?.allObjects as? [String] ?? []).map { directory + "/" + $0 }
    }

    /// Loops `renameat2(a, b, RENAME_EXCHANGE)` until `stop` exists, or its parent (the test
    /// process) is gone, or 5 minutes have passed: a test process that crashed left two of them
    /// spinning for an hour, taking a core and a half from the CI steps after it.
    static let exchanger = #"""
      import ctypes, os, sys, time
      libc = ctypes.CDLL(None, use_errno=True)
      a, b, stop = (p.encode() for p in sys.argv[1:4])
      parent, deadline = os.getppid(), time.monotonic() + 300
      swaps = tries = 0
      while not os.path.exists(stop):
          if libc.renameat2(-100, a, -100, b, 2) == 0:
              swaps += 1
          tries += 1
          if tries % 1000 == 0 and (os.getppid() != parent or time.monotonic() > deadline):
              break
      print("swaps", swaps, flush=True)
      """#

    @Test(
      "a store under a directory another user owns is refused on every try of a swap race",
      .enabled(if: canSwitchUser, "needs root and setpriv to act as a second user"))
    func storeUnderAnotherUsersDirectoryIsRefusedWhileTheyRace() async throws {
      let workspace = try DaemonWorkspace()
      defer { workspace.remove() }
      let harness = try DaemonHarness(workspace: workspace)
      defer { harness.cleanUp() }
      let pub = workspace.file("pub")
      #expect(mkdir(pub, 0o755) == 0 && chmod(pub, 0o1777) == 0)
      let base = pub + "/rootbg"
      let marker = workspace.file("pwned")
      let pwn = workspace.file("pwn.sh")
      try "#!/bin/sh\ntouch \(marker)\n".write(toFile: pwn, atomically: false, encoding: .utf8)
      #expect(chmod(pwn, 0o755) == 0)
      // The other user's preparation: its directory, and a store of its own built offline
      // with a job that would run pwn.sh. Root's own `state` directory (0700, as a first run
      // made it) is what a check of the last directory alone saw.
      let (made, madeOutput) = try await Security.run(
        Security.asOtherUser(["/bin/mkdir", "-m", "0755", base, base + "/evil"]), in: workspace)
      try #require(made == 0, "\(madeOutput)")
      #expect(mkdir(base + "/state", 0o700) == 0)
      let evilConfig = base + "/evil.toml"
      let (wrote, wroteOutput) = try await Security.run(
        Security.asOtherUser([
          "/bin/sh", "-c",
          "printf '[store]\\npath = \"\(base)/evil/state.sqlite\"\\n[control]\\nsocket = "
            + "\"\(base)/evil/control.sock\"\\n' > \(evilConfig)",
        ]), in: workspace)
      try #require(wrote == 0, "\(wroteOutput)")
      let (built, builtOutput) = try await Security.run(
        Security.asOtherUser([
          harness.binary, "schedule", "dev.evil.root", "--once", "--config", evilConfig,
          "--command", pwn,
        ]), in: workspace)
      try #require(built == 0, "uid 65534 could not build its store: \(builtOutput)")
      try workspace.writeRawConfig(
        """
        [store]
        path = "\(base)/state/state.sqlite"
        [control]
        socket = "\(workspace.file("run"))/control.sock"
        """)
      // The race: `state` and `evil` swapped as fast as the other user can.
      let stop = workspace.file("stop")
      let racer = try DaemonChild(
        Security.asOtherUser([
          "/usr/bin/python3", "-c", Self.exchanger, base + "/state", base + "/evil", stop,
        ]), outputPath: workspace.file("racer.log"))
      defer {
        _ = FileManager.default.createFile(atPath: stop, contents: nil)
        racer.terminate()
      }
      for attempt in 0..<20 {
        let edit = try await harness.cli(
          "schedule", "dev.e2e.legit", "--once", "--config", workspace.configPath, "--command",
          "/bin/true")
        #expect(edit.status != 0, "attempt \(attempt): \(edit)")
        #expect(edit.stderr.contains("\(base): it is owned by uid 65534"), "\(edit)")
        if attempt % 5 == 0 {
          let daemon = try harness.startDaemon()
          let status = await daemon.waitForExit(timeout: .seconds(30))
          #expect(status != nil && status != 0, "run was not refused: \(daemon.output)")
        }
      }
      _ = FileManager.default.createFile(atPath: stop, contents: nil)
      _ = await racer.waitForExit(timeout: testEventTimeout)
      #expect(racer.output.contains("swaps"), "the race ran: \(racer.output)")
      #expect(!FileManager.default.fileExists(atPath: marker), "pwn.sh ran as root")
      for file in Self.files(under: base) {
        var info = stat()
        #expect(lstat(file, &info) == 0)
        guard info.st_mode & S_IFMT != S_IFDIR else { continue }
        #expect(info.st_uid == 65534, "root wrote \(file)")
        let bytes = FileManager.default.contents(atPath: file) ?? Data()
        #expect(bytes.range(of: Data("dev.e2e.legit".utf8)) == nil, "root's task is in \(file)")
      }
    }

    @Test("a store path that is itself a symlink is refused; nothing is written at its target")
    func storePathThatIsASymlinkIsRefused() async throws {
      let workspace = try DaemonWorkspace()
      defer { workspace.remove() }
      let harness = try DaemonHarness(workspace: workspace)
      defer { harness.cleanUp() }
      let target = workspace.file("elsewhere")
      #expect(mkdir(target, 0o755) == 0)
      #expect(symlink(target + "/state.sqlite", workspace.storePath) == 0)
      try workspace.writeRawConfig(
        """
        [store]
        path = "\(workspace.storePath)"
        [control]
        socket = "\(workspace.socketPath)"
        """)
      let edit = try await harness.cli(
        "schedule", "dev.e2e.x", "--once", "--config", workspace.configPath, "--command",
        "/bin/true")
      #expect(edit.status != 0, "\(edit)")
      #expect(
        edit.stderr.contains("\(workspace.storePath): it is a symlink, not a regular file"),
        "\(edit)")
      #expect(try FileManager.default.contentsOfDirectory(atPath: target).isEmpty)
    }

    @Test(
      "a store of another user is refused; one of ours left 0666 is made 0600 before SQLite opens it",
      .enabled(if: canSwitchUser, "needs root and setpriv to act as a second user"))
    func aForeignOrWideOpenStoreIsNeverUsedAsIs() async throws {
      let workspace = try DaemonWorkspace()
      defer { workspace.remove() }
      let harness = try DaemonHarness(workspace: workspace)
      try workspace.writeRawConfig(
        """
        [store]
        path = "\(workspace.storePath)"
        [control]
        socket = "\(workspace.socketPath)"
        """)
      let arguments = [
        "schedule", "dev.e2e.wide", "--once", "--config", workspace.configPath, "--command",
        "/bin/true",
      ]
      #expect(FileManager.default.createFile(atPath: workspace.storePath, contents: nil))
      #expect(chmod(workspace.storePath, 0o666) == 0)
      #expect(chown(workspace.storePath, 65534, 65534) == 0)
      let foreign = try await harness.cli(arguments)
      #expect(foreign.status != 0, "\(foreign)")
      #expect(foreign.stderr.contains("owned by uid 65534 (mode 0666)"), "\(foreign)")
      #expect(!FileManager.default.fileExists(atPath: workspace.storePath + "-wal"))

      #expect(chown(workspace.storePath, 0, 0) == 0)
      let edit = try await harness.cli(arguments)
      #expect(edit.status == 0, "\(edit)")
      #expect(Security.mode(workspace.storePath) == 0o600)
    }

    @Test(
      "a metrics directory swapped for a symlink by its parent's owner is refused; doctor says so",
      .enabled(if: canSwitchUser, "needs root and setpriv to act as a second user"))
    func metricsDirectorySwappedByItsParentsOwnerIsRefused() async throws {
      let workspace = try DaemonWorkspace()
      defer { workspace.remove() }
      let harness = try DaemonHarness(workspace: workspace)
      let parent = workspace.file("prometheus")
      #expect(mkdir(parent, 0o755) == 0 && chown(parent, 65534, 65534) == 0)
      #expect(mkdir(parent + "/textfile", 0o755) == 0)
      // A root-only file the swapped directory points at.
      let secrets = workspace.file("secrets")
      #expect(mkdir(secrets, 0o700) == 0)
      try "root only\n".write(
        toFile: secrets + "/backgrounder.prom", atomically: false, encoding: .utf8)
      #expect(chmod(secrets + "/backgrounder.prom", 0o600) == 0)
      let (swapped, output) = try await Security.run(
        Security.asOtherUser([
          "/bin/sh", "-c",
          "mv \(parent)/textfile \(parent)/old && ln -s \(secrets) \(parent)/textfile",
        ]), in: workspace)
      try #require(swapped == 0, "\(output)")
      let metrics = MetricsFile(path: parent + "/textfile/backgrounder.prom")
      metrics.setNetwork(reachable: true, metered: false)
      let error = #expect(throws: (any Error).self) { try metrics.write() }
      #expect("\(error.map { "\($0)" } ?? "")".contains("\(parent): it is owned by uid 65534"))
      #expect(Security.mode(secrets + "/backgrounder.prom") == 0o600)
      #expect(
        try String(contentsOfFile: secrets + "/backgrounder.prom", encoding: .utf8) == "root only\n"
      )

      try workspace.writeRawConfig(
        """
        [store]
        path = "\(workspace.storePath)"
        [control]
        socket = "\(workspace.socketPath)"
        [metrics]
        file = "\(parent)/textfile/backgrounder.prom"
        """)
      let doctor = try await harness.cli("doctor", "--config", workspace.configPath)
      #expect(doctor.status != 0, "\(doctor)")
      #expect(doctor.stdout.contains("owned by uid 65534"), "\(doctor)")
    }

    @Test(
      "capture --output creates 0600, refuses an existing file, and --force only a file of ours",
      .enabled(if: canSwitchUser, "needs root and setpriv to act as a second user"))
    func captureOutputIsPrivateAndNeverAnotherUsersFile() async throws {
      let workspace = try DaemonWorkspace()
      defer { workspace.remove() }
      let harness = try DaemonHarness(workspace: workspace)
      let existing = workspace.file("existing.pcapng")
      try "old\n".write(toFile: existing, atomically: false, encoding: .utf8)
      #expect(chmod(existing, 0o644) == 0)
      let refused = try await harness.cli("capture", "--output", existing, "--duration", "100ms")
      #expect(refused.status != 0 && refused.stderr.contains("exists"), "\(refused)")
      #expect(try String(contentsOfFile: existing, encoding: .utf8) == "old\n")
      let forced = try await harness.cli(
        "capture", "--output", existing, "--duration", "100ms", "--force")
      #expect(forced.status == 0, "\(forced)")
      #expect(Security.mode(existing) == 0o600)

      // Another user's 0666 file in a sticky directory: never written, even with --force.
      let shared = workspace.file("shared")
      #expect(mkdir(shared, 0o755) == 0 && chmod(shared, 0o1777) == 0)
      let planted = shared + "/capture.pcapng"
      let (made, output) = try await Security.run(
        Security.asOtherUser(["/bin/sh", "-c", "umask 0; echo theirs > \(planted)"]),
        in: workspace)
      try #require(made == 0, "\(output)")
      let foreign = try await harness.cli(
        "capture", "--output", planted, "--duration", "100ms", "--force")
      #expect(foreign.status != 0 && foreign.stderr.contains("owner uid 65534"), "\(foreign)")
      #expect(try String(contentsOfFile: planted, encoding: .utf8) == "theirs\n")
    }

    @Test("status --replay refuses a FIFO, /dev/zero and a sparse 4 GB file without reading them")
    func replayRefusesWhatIsNotACaptureFile() async throws {
      let workspace = try DaemonWorkspace()
      defer { workspace.remove() }
      let harness = try DaemonHarness(workspace: workspace)
      let fifo = workspace.file("fifo")
      #expect(mkfifo(fifo, 0o600) == 0)
      let sparse = workspace.file("sparse")
      #expect(FileManager.default.createFile(atPath: sparse, contents: nil))
      #expect(truncate(sparse, 4 << 30) == 0)
      for (path, reason) in [
        (fifo, "not a regular file"), ("/dev/zero", "not a regular file"), (sparse, "more than"),
      ] {
        let replay = try await harness.cli("status", "--replay", path)
        #expect(replay.status != 0, "\(replay)")
        #expect(replay.stderr.contains(path) && replay.stderr.contains(reason), "\(replay)")
      }
    }

    @Test("doctor on relative paths ends and reports what run does")
    func doctorWithRelativePathsEnds() async throws {
      let workspace = try DaemonWorkspace()
      defer { workspace.remove() }
      let harness = try DaemonHarness(workspace: workspace)
      try workspace.writeRawConfig(
        """
        [store]
        path = "state.sqlite"
        [control]
        socket = "run/control.sock"
        """)
      let (status, output) = try await Security.run(
        [
          "/bin/sh", "-c",
          "cd \(workspace.directory) && exec \(harness.binary) doctor --config config.toml",
        ], in: workspace)
      #expect(output.contains("state.sqlite will be created"), "\(status): \(output)")
      #expect(output.contains("run/control.sock can be bound"), "\(status): \(output)")
    }

    @Test(
      "doctor names an unsafe ancestor of the store that run then refuses",
      .enabled(if: canSwitchUser, "needs root and setpriv to act as a second user"))
    func doctorReportsAnUnsafeAncestorBeforeRunRefusesIt() async throws {
      let workspace = try DaemonWorkspace()
      defer { workspace.remove() }
      let harness = try DaemonHarness(workspace: workspace)
      defer { harness.cleanUp() }
      let theirs = workspace.file("theirs")
      #expect(mkdir(theirs, 0o755) == 0 && chown(theirs, 65534, 65534) == 0)
      try workspace.writeRawConfig(
        """
        [store]
        path = "\(theirs)/state/state.sqlite"
        [control]
        socket = "\(workspace.socketPath)"
        """)
      let doctor = try await harness.cli("doctor", "--config", workspace.configPath)
      #expect(doctor.status != 0, "\(doctor)")
      #expect(doctor.stdout.contains("\(theirs): it is owned by uid 65534"), "\(doctor)")
      let daemon = try harness.startDaemon()
      let status = await daemon.waitForExit(timeout: .seconds(30))
      #expect(status != nil && status != 0, "\(daemon.output)")
      #expect(daemon.output.contains("\(theirs): it is owned by uid 65534"), "\(daemon.output)")
      #expect(!FileManager.default.fileExists(atPath: theirs + "/state"))
    }

    @Test("an abstract control socket name is refused by the config; run never binds it")
    func abstractSocketNameIsRefused() async throws {
      let workspace = try DaemonWorkspace()
      defer { workspace.remove() }
      let harness = try DaemonHarness(workspace: workspace)
      defer { harness.cleanUp() }
      try workspace.writeRawConfig(
        """
        [store]
        path = "\(workspace.storePath)"
        [control]
        socket = "@backgrounder-test"
        """)
      let daemon = try harness.startDaemon()
      let status = await daemon.waitForExit(timeout: .seconds(30))
      #expect(status != nil && status != 0, "\(daemon.output)")
      #expect(daemon.output.contains("abstract socket names"), "\(daemon.output)")
      #expect(!FileManager.default.fileExists(atPath: workspace.storePath))
    }
  }
}
