import BackgrounderDaemon
import Foundation

/// A scratch root for `doctor` tests of one job key: an empty sysfs, and a config of one `once`
/// job per value.
struct DoctorJobFindings {
  let root: String

  /// Makes `/tmp/PREFIX-UUID` with an empty `sys/class/power_supply`.
  init(prefix: String) throws {
    root =
      FileManager.default.temporaryDirectory
      .appendingPathComponent("\(prefix)-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(
      atPath: "\(root)/sys/class/power_supply", withIntermediateDirectories: true)
  }

  func remove() { try? FileManager.default.removeItem(atPath: root) }

  /// Runs `doctor` on a config with a job `dev.example.NAME` with `key = "VALUE"` for each
  /// entry of `values`; returns, per name, the first finding about that job that names `key`.
  func findings(key: String, values: [String: String]) throws -> [String: DoctorFinding] {
    let config =
      "[store]\npath = \"\(root)/state/state.sqlite\"\n"
      + values.keys.sorted().map { name in
        """
        [[job]]
        id = "dev.example.\(name)"
        command = ["true"]
        once = true
        \(key) = "\(values[name]!)"

        """
      }.joined()
    try config.write(toFile: "\(root)/config.toml", atomically: true, encoding: .utf8)
    let findings = Doctor(
      configPath: "\(root)/config.toml", sysfsRoot: "\(root)/sys", searchPath: "/usr/bin:/bin",
      unitPaths: []
    ).run()
    return values.keys.reduce(into: [:]) { found, name in
      found[name] = findings.first {
        $0.subject == "job dev.example.\(name)" && $0.message.contains(key)
      }
    }
  }
}
