@testable import BackgrounderDaemon

/// One `[[job]]` (the command `restic backup`, every hour, `id`) with `jobKeys` added, parsed as
/// `jobs.toml`: for the tests of a job key's values and errors.
func parseJob(id: String, _ jobKeys: String) throws(ConfigurationError) -> JobDefinition? {
  let text = """
    [[job]]
    id = "\(id)"
    command = ["restic", "backup"]
    every = "1h"
    \(jobKeys)
    """
  let locations = DefaultLocations(
    configPath: "/cfg/config.toml", storePath: "/state/default.sqlite",
    controlSocketPath: "/run/test/control.sock")
  return try ConfigurationLoader.parse(text, path: "jobs.toml", locations: locations).jobs.first
}
