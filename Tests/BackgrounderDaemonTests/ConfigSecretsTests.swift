import Foundation
import Testing

@testable import BackgrounderDaemon

#if canImport(Glibc)
  import Glibc
#endif

/// Secrets in the config (issue 40, finding 2): `doctor` reports a config others can read when
/// it holds secrets; `environment-file` keeps them out of it, trusted like the store path.
@Suite struct ConfigSecretsTests {
  /// A private directory in /tmp with a config holding a job's `environment`.
  private struct Scene {
    let root: String
    var configPath: String { root + "/config.toml" }

    init(jobExtra: String = "environment = { AWS_SECRET_ACCESS_KEY = \"wJalrXUtnFEMI\" }") throws {
      root = FileManager.default.temporaryDirectory.path + "/secrets-\(UUID().uuidString)"
      try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false)
      chmod(root, 0o755)
      try FileManager.default.createDirectory(
        atPath: root + "/sys/class/power_supply", withIntermediateDirectories: true)
      try """
      [store]
      path = "\(root)/state/state.sqlite"
      [[job]]
      id = "dev.backup"
      command = ["true"]
      once = true
      \(jobExtra)
      """.write(toFile: configPath, atomically: false, encoding: .utf8)
    }

    func doctor() -> [DoctorFinding] {
      Doctor(
        configPath: configPath, sysfsRoot: root + "/sys", searchPath: "/usr/bin:/bin",
        unitPaths: []
      ).run()
    }

    func write(_ name: String, _ text: String, mode: mode_t) throws -> String {
      let path = root + "/" + name
      try text.write(toFile: path, atomically: false, encoding: .utf8)
      chmod(path, mode)
      return path
    }

    func remove() { try? FileManager.default.removeItem(atPath: root) }
  }

  @Test func doctorReportsAReadableConfigWithSecretsNamingFileModeAndKey() throws {
    let scene = try Scene()
    defer { scene.remove() }
    chmod(scene.configPath, 0o644)
    let problems = scene.doctor().filter { $0.severity == .problem && $0.subject == "config" }
    #expect(
      problems.map(\.message).contains {
        $0.hasPrefix(
          "\(scene.configPath) is mode 0644 (readable by other users) and holds secrets: "
            + "job \"dev.backup\" environment")
      }, "\(problems)")

    chmod(scene.configPath, 0o600)
    let after = scene.doctor().filter { $0.severity == .problem && $0.subject == "config" }
    #expect(after.isEmpty, "\(after)")
  }

  @Test func aReadableConfigWithoutSecretsIsFine() throws {
    let scene = try Scene(jobExtra: "")
    defer { scene.remove() }
    chmod(scene.configPath, 0o644)
    #expect(!scene.doctor().contains { $0.severity == .problem && $0.subject == "config" })
  }

  @Test func whoMayReadTheFile() {
    let me: uid_t = 1000
    let group: gid_t = 1000
    func exposure(_ owner: uid_t, _ fileGroup: gid_t, _ mode: mode_t) -> String? {
      ConfigSecrets.exposure(owner: owner, group: fileGroup, mode: mode, user: me, userGroup: group)
    }
    #expect(exposure(me, group, 0o600) == nil)
    #expect(exposure(0, group, 0o640) == nil, "0640 root:<the daemon's group>")
    #expect(exposure(me, 27, 0o640) == "mode 0640 (readable by the members of group 27)")
    #expect(exposure(me, group, 0o604) == "mode 0604 (readable by other users)")
    #expect(exposure(1001, group, 0o600)?.hasPrefix("owned by uid 1001") == true)
  }

  @Test func environmentFileIsReadAndParsed() throws {
    let scene = try Scene(jobExtra: "")
    defer { scene.remove() }
    let path = try scene.write(
      "backup.env",
      """
      # the backup bucket's key
      AWS_ACCESS_KEY_ID=AKIAEXAMPLE
        AWS_SECRET_ACCESS_KEY = "wJalr Xut=nFEMI"\r
      ; quoted once only
      NOTE='it''s'

      """, mode: 0o600)
    let variables = try EnvironmentFile.read(path, environment: [:])
    #expect(
      variables == [
        "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalr Xut=nFEMI",
        "NOTE": "it''s",
      ])
    // Under the unit's credentials directory.
    let credential = try EnvironmentFile.read(
      "${CREDENTIALS_DIRECTORY}/backup.env", environment: ["CREDENTIALS_DIRECTORY": scene.root])
    #expect(credential == variables)
    #expect(throws: EnvironmentFile.Failure.self) {
      try EnvironmentFile.read("${CREDENTIALS_DIRECTORY}/backup.env", environment: [:])
    }
    // A bad line names the file and line, not the value.
    let bad = try scene.write("bad.env", "TOKEN=secret-value\nnot a pair\n", mode: 0o600)
    let error = #expect(throws: EnvironmentFile.Failure.self) {
      try EnvironmentFile.read(bad, environment: [:])
    }
    #expect(error?.description == "environment-file \(bad), line 2: expected NAME=value")
  }

  @Test func anEnvironmentFileOthersCouldChangeOrReadIsRefused() throws {
    let scene = try Scene(jobExtra: "")
    defer { scene.remove() }
    let shared = try scene.write("shared.env", "TOKEN=x\n", mode: 0o620)
    let writable = #expect(throws: EnvironmentFile.Failure.self) {
      try EnvironmentFile.read(shared, environment: [:])
    }
    #expect(
      writable?.description.contains("refusing to use \(shared): it is writable by group or others")
        == true, "\(String(describing: writable))")

    let target = try scene.write("real.env", "TOKEN=x\n", mode: 0o600)
    let link = scene.root + "/link.env"
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
    let symlink = #expect(throws: EnvironmentFile.Failure.self) {
      try EnvironmentFile.read(link, environment: [:])
    }
    #expect(
      symlink?.description.contains("refusing to use \(link): it is not a regular file") == true,
      "\(String(describing: symlink))")

    let readable = try scene.write("readable.env", "TOKEN=x\n", mode: 0o644)
    let world = #expect(throws: EnvironmentFile.Failure.self) {
      try EnvironmentFile.read(readable, environment: [:])
    }
    #expect(world?.description.contains("readable by other users (mode 0644)") == true)

    // In a directory others may write to: the whole-path rule refuses it.
    let open = scene.root + "/open"
    try FileManager.default.createDirectory(atPath: open, withIntermediateDirectories: false)
    chmod(open, 0o777)
    let inOpen = try scene.write("open/token.env", "TOKEN=x\n", mode: 0o600)
    let directory = #expect(throws: EnvironmentFile.Failure.self) {
      try EnvironmentFile.read(inOpen, environment: [:])
    }
    #expect(directory?.description.contains("writable by group or others") == true)
  }

  @Test func theConfigTakesAnAbsoluteOrCredentialPathOnly() throws {
    func load(_ value: String) throws -> DaemonConfiguration {
      try ConfigurationLoader.parse(
        """
        [[job]]
        id = "dev.backup"
        command = ["true"]
        once = true
        environment-file = "\(value)"
        """, path: "/etc/backgrounder/config.toml")
    }
    #expect(try load("/etc/backgrounder/backup.env").jobs.first?.environmentFile != nil)
    #expect(try load("${CREDENTIALS_DIRECTORY}/backup.env").jobs.first?.environmentFile != nil)
    for bad in ["backup.env", "${HOME}/backup.env", "${CREDENTIALS_DIRECTORY}/"] {
      let error = #expect(throws: ConfigurationError.self) { try load(bad) }
      #expect(error?.description.contains("environment-file") == true, "\(bad)")
    }
  }
}
