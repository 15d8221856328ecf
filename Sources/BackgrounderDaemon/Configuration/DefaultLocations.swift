import Foundation

/// Where Backgrounder keeps its files when the config does not say: system paths for root,
/// XDG base directories for everyone else. The control socket is never put in a shared
/// directory such as `/tmp`.
public struct DefaultLocations: Sendable, Equatable {
  /// The config file read when `--config` is not given.
  package var configPath: String
  /// The SQLite state file.
  package var storePath: String
  /// The daemon's control socket.
  package var controlSocketPath: String

  public init(configPath: String, storePath: String, controlSocketPath: String) {
    self.configPath = configPath
    self.storePath = storePath
    self.controlSocketPath = controlSocketPath
  }

  /// Locations for this process (its user id and environment). Reads the few variables it
  /// needs with `getenv`: `ProcessInfo`'s environment builds a dictionary of every variable
  /// (3 % of a `status --json`'s CPU, which asks up to three times).
  public static func current(userID: UInt32 = getuid()) -> DefaultLocations {
    current(userID: userID) { name in getenv(name).map { String(cString: $0) } }
  }

  /// Locations for a process with the given user id and environment.
  public static func current(userID: UInt32 = getuid(), environment: [String: String])
    -> DefaultLocations
  {
    current(userID: userID) { environment[$0] }
  }

  private static func current(userID: UInt32, variable environment: (String) -> String?)
    -> DefaultLocations
  {
    let runtimeDirectory = environment("RUNTIME_DIRECTORY").flatMap {
      $0.split(separator: ":").first
    }
    if userID == 0 {
      return DefaultLocations(
        configPath: "/etc/backgrounder/config.toml",
        storePath: "/var/lib/backgrounder/state.sqlite",
        controlSocketPath:
          "\(runtimeDirectory.map(String.init) ?? "/run/backgrounder")/control.sock"
      )
    }
    let home = environment("HOME") ?? homeDirectory(of: userID)
    let config = environment("XDG_CONFIG_HOME") ?? "\(home)/.config"
    let state = environment("XDG_STATE_HOME") ?? "\(home)/.local/state"
    // Never under /tmp: without a runtime directory the socket sits next to the store, in the
    // private state directory.
    let runtime =
      runtimeDirectory.map(String.init)
      ?? environment("XDG_RUNTIME_DIR").map { "\($0)/backgrounder" }
      ?? "\(state)/backgrounder"
    return DefaultLocations(
      configPath: "\(config)/backgrounder/config.toml",
      storePath: "\(state)/backgrounder/state.sqlite",
      controlSocketPath: "\(runtime)/control.sock"
    )
  }

  /// The user's home directory from the password database (`HOME` unset, e.g. under a bare
  /// service manager); `/` when the user has no entry.
  static func homeDirectory(of userID: UInt32) -> String {
    guard let entry = getpwuid(userID), let directory = entry.pointee.pw_dir else { return "/" }
    return String(cString: directory)
  }
}
