import ArgumentParser
import BackgrounderDaemon
import Foundation

/// `--config FILE`, taken by every verb (`calendar` accepts it but reads no config).
struct ConfigOption: ParsableArguments {
  @Option(
    name: .long,
    help: ArgumentHelp(
      "The config file.",
      discussion: "Default: /etc/backgrounder/config.toml for root, "
        + "$XDG_CONFIG_HOME/backgrounder/config.toml otherwise.",
      valueName: "file"))
  var config: String?

  /// The path to read: `--config` or the default location.
  var path: String { Self.path(config) }

  /// The path to read for `--config` `config` (nil: not given): it, or the default location.
  static func path(_ config: String?) -> String {
    config ?? DefaultLocations.current().configPath
  }

  /// The configuration when one applies: the `--config` file (which must load), else the default
  /// file if it exists, else nil (read-only verbs then use the default locations). Without
  /// `decodingJobs` the jobs are left out (see ``ConfigurationLoader``).
  func loadIfPresent(decodingJobs: Bool = true) throws -> DaemonConfiguration? {
    if config == nil, !FileManager.default.fileExists(atPath: path) { return nil }
    return try load(decodingJobs: decodingJobs)
  }

  /// The parsed configuration, or a failure naming file, line and key.
  func load(decodingJobs: Bool = true) throws -> DaemonConfiguration {
    try Self.load(config, decodingJobs: decodingJobs)
  }

  /// ``load(decodingJobs:)`` for `--config` `config` (nil: not given).
  static func load(_ config: String?, decodingJobs: Bool = true) throws -> DaemonConfiguration {
    do {
      return try ConfigurationLoader.load(path: path(config), decodingJobs: decodingJobs)
    } catch {
      throw OperatorError(error.description)
    }
  }
}
