import Foundation
import TOML

/// Reads and validates a TOML config file (see `Fixtures/config/example.toml` and the config
/// reference in docs/daemon.md). Every problem is reported with file, line and key.
public enum ConfigurationLoader {
  /// The most problems one error reports (the rest are counted): enough for a file's typos,
  /// few enough to read.
  package static let problemLimit = 20

  /// Reads the file at `path`. With `decodingJobs` false the `[[job]]` tables are parsed (a
  /// TOML error in them is still an error) but not decoded: `jobs` stays empty and a job's bad
  /// value goes unreported (what `status` reads, which needs no job).
  package static func load(
    path: String, locations: DefaultLocations = .current(), decodingJobs: Bool = true
  ) throws(ConfigurationError) -> DaemonConfiguration {
    let contents: [UInt8]
    do {
      contents = try ConfigFileReader.contents(of: path)
    } catch {
      throw ConfigurationError(file: path, line: nil, key: nil, message: error.description)
    }
    return try parse(
      contents: contents, path: path, locations: locations, decodingJobs: decodingJobs)
  }

  /// Parses config text; `path` is used for error messages and relative paths only.
  public static func parse(
    _ text: String, path: String, locations: DefaultLocations = .current()
  ) throws(ConfigurationError) -> DaemonConfiguration {
    try parse(contents: Array(text.utf8), path: path, locations: locations)
  }

  /// Parses the bytes of a config file, which must be UTF-8; `path` is used for error messages
  /// and relative paths only. `decodingJobs`: as in ``load(path:locations:decodingJobs:)``.
  public static func parse(
    contents: [UInt8], path: String, locations: DefaultLocations = .current(),
    decodingJobs: Bool = true
  ) throws(ConfigurationError) -> DaemonConfiguration {
    let document: TOMLTable
    do {
      document = try TOMLTable(parsing: contents)
    } catch {
      throw ConfigurationError(
        file: path, line: error.position.line, column: error.position.column, key: nil,
        message: "TOML syntax error: \(error.message)")
    }
    let problems = ConfigurationProblems(limit: problemLimit)
    let root = TableReader(table: document, path: "", file: path, problems: problems)
    problems.collect { () throws(ConfigurationError) in
      try root.rejectUnknownKeys([
        "store", "network", "control", "metrics", "daemon", "job", "notify", "telemetry",
      ])
    }

    var configuration = DaemonConfiguration(sourcePath: path, locations: locations)
    // Each table is read on its own: a bad value ends its table's reading, not the file's.
    problems.collect { () throws(ConfigurationError) in
      if let store = try root.table("store") {
        try store.rejectUnknownKeys(["path"])
        if let storePath = try store.string("path") { configuration.storePath = storePath }
      }
    }
    problems.collect { () throws(ConfigurationError) in
      if let network = try root.table("network") {
        try network.rejectUnknownKeys(NetworkSettingsReader.keys)
        configuration.meteredInterfaces = try network.stringArray("metered") ?? []
        configuration.unmeteredInterfaces = try network.stringArray("unmetered") ?? []
        try NetworkSettingsReader.read(network, into: &configuration)
      }
    }
    problems.collect { () throws(ConfigurationError) in
      if let control = try root.table("control") {
        try control.rejectUnknownKeys(["socket"])
        if let socket = try control.string("socket") {
          // An abstract name has no owner and no mode: any user can bind it first.
          guard !socket.hasPrefix("@") else {
            throw control.error(
              "socket",
              "abstract socket names (\"\(socket)\") are refused: any user could bind one "
                + "first; use a path in a private directory")
          }
          configuration.controlSocketPath = socket
        }
      }
    }
    problems.collect { () throws(ConfigurationError) in
      if let metrics = try root.table("metrics") {
        try metrics.rejectUnknownKeys(["file"])
        configuration.metricsFile = try metrics.string("file")
      }
    }
    problems.collect { () throws(ConfigurationError) in
      if let notify = try root.table("notify") {
        configuration.desktopNotices = try NotifySettings.desktop(notify)
      }
    }
    problems.collect { () throws(ConfigurationError) in
      if let telemetry = try root.table("telemetry") {
        configuration.telemetry = try TelemetrySettingsReader.read(telemetry)
      }
    }
    problems.collect { () throws(ConfigurationError) in
      if let daemon = try root.table("daemon") {
        try daemon.rejectUnknownKeys(
          ["max-concurrent", StartSplayKey.key] + JobAlertsReader.daemonKeys)
        if let splay = try StartSplayKey.read(daemon) { configuration.startSplay = splay }
        configuration.alertDefaults = try JobAlertsReader.read(daemon, jobTable: false)
        if let limit = try daemon.int("max-concurrent", in: 1...64) {
          configuration.maxConcurrentJobs = limit
        }
      }
    }
    let jobs = problems.collect { () throws(ConfigurationError) in try root.tables("job") } ?? []
    guard decodingJobs else {
      try problems.throwIfAny()
      return configuration
    }
    var seen: [String: Int] = [:]
    seen.reserveCapacity(jobs.count)
    configuration.jobs.reserveCapacity(jobs.count)
    for job in jobs where !problems.isFull {
      problems.collect { () throws(ConfigurationError) in
        let definition = try JobReader.read(job)
        if let first = seen[definition.id] {
          throw job.error(
            "id", "duplicate job id \"\(definition.id)\" (first defined on line \(first))")
        }
        seen[definition.id] = job.table.position.line
        configuration.jobs.append(definition)
        if let digest = JobDigest.of(job.table) { configuration.jobDigests[definition.id] = digest }
        let alerts = try JobAlertsReader.read(job, jobTable: true)
        if !alerts.isEmpty { configuration.alerts[definition.id] = alerts }
      }
    }
    try problems.throwIfAny()
    return configuration
  }
}
