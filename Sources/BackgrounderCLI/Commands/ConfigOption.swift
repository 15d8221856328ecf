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
  var path: String { config ?? DefaultLocations.current().configPath }

  /// The configuration when one applies: the `--config` file (which must load), else the default
  /// file if it exists, else nil (read-only verbs then use the default locations). Without
  /// `decodingJobs` the jobs are left out (see ``ConfigurationLoader``).
  func loadIfPresent(decodingJobs: Bool = true) throws -> DaemonConfiguration? {
    if config == nil, !FileManager.default.fileExists(atPath: path) { return nil }
    return try load(decodingJobs: decodingJobs)
  }

  /// The parsed configuration, or a failure naming file, line and key.
  func load(decodingJobs: Bool = true) throws -> DaemonConfiguration {
    do {
      return try ConfigurationLoader.load(path: path, decodingJobs: decodingJobs)
    } catch {
      throw OperatorError(error.description)
    }
  }
}
