import ArgumentParser
import BackgrounderDaemon

/// `--config FILE`, shared by every verb that touches the store or the daemon.
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

  /// The parsed configuration, or a `ValidationError`-style failure naming file, line and key.
  func load() throws -> DaemonConfiguration {
    do {
      return try ConfigurationLoader.load(path: path)
    } catch {
      throw CLIError(error.description)
    }
  }
}
