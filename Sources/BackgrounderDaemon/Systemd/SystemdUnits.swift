import Foundation

/// The systemd unit files Backgrounder ships, generated so that they always match the binary's
/// flags (`backgrounder unit [--user]` prints them; `doctor` compares installed copies).
package enum SystemdUnits {
  /// `WatchdogSec=` of the units: the daemon pings every half of it while its dispatch loop
  /// makes progress, so a hung loop is restarted within 60–90 s.
  package static let watchdogSeconds = 60

  /// The unit for `systemctl` (`--user` when `user` is true), running `executable`.
  ///
  /// Both units: `Type=notify` (READY=1 once the store is open, the control socket listens and
  /// the network and power states are known), `UMask=0077` (every file the daemon creates is
  /// private), a `0700` runtime directory for the control socket, and `Delegate=yes` with
  /// `KillMode=mixed`: each job run gets its own cgroup below the daemon's, and on stop the
  /// daemon cancels its jobs before systemd kills what is left. The system unit also keeps
  /// its store in `StateDirectory=` (`/var/lib/backgrounder`, mode `0700`) and is granted
  /// `CAP_WAKE_ALARM` (`wake-system` jobs wake a suspended machine). A commented
  /// `LoadCredential=` shows where jobs' secrets go (`environment-file`).
  /// `configPath`: the config file ExecStart passes to `run` (made absolute against the working
  /// directory, quoted for systemd); nil for the default location of a system or user unit.
  package static func service(user: Bool, executable: String, configPath: String? = nil) -> String {
    let configPath =
      configPath.map { execArgument(absolute($0)) }
      ?? (user ? "%E/backgrounder/config.toml" : "/etc/backgrounder/config.toml")
    let wantedBy = user ? "default.target" : "multi-user.target"
    let system =
      user
      ? ""
      : """
      StateDirectory=backgrounder
      StateDirectoryMode=0700
      NoNewPrivileges=yes
      ProtectSystem=full
      AmbientCapabilities=CAP_WAKE_ALARM

      """
    return """
      [Unit]
      Description=Backgrounder: run jobs when the network and power allow
      Documentation=man:backgrounder(1)
      After=network.target

      [Service]
      Type=notify
      NotifyAccess=main
      ExecStart=\(executable) run --config \(configPath)
      ExecReload=/bin/kill -HUP $MAINPID
      Restart=on-failure
      RestartSec=5s
      WatchdogSec=\(watchdogSeconds)s
      TimeoutStopSec=15s
      KillMode=mixed
      Delegate=yes
      UMask=0077
      RuntimeDirectory=backgrounder
      RuntimeDirectoryMode=0700
      # Secrets for jobs, readable by this service only: a credential, then in the config
      # environment-file = "${CREDENTIALS_DIRECTORY}/backup.env" (man backgrounder).
      #LoadCredential=backup.env:/etc/backgrounder/secrets/backup.env
      \(system)
      [Install]
      WantedBy=\(wantedBy)

      """
  }

  /// Where `systemctl` looks for the unit by default.
  package static func installPath(user: Bool, home: String) -> String {
    user
      ? "\(home)/.config/systemd/user/backgrounder.service"
      : "/etc/systemd/system/backgrounder.service"
  }

  /// `path` against the working directory when relative.
  private static func absolute(_ path: String) -> String {
    if path.hasPrefix("/") { return path }
    let directory = FileManager.default.currentDirectoryPath
    return directory.hasSuffix("/") ? directory + path : directory + "/" + path
  }

  /// One ExecStart argument as systemd reads it (systemd.service(5), "Command lines"): `%`
  /// doubled (no specifier expansion), quoted with `\\` and `"` escaped when it holds a blank,
  /// a quote or a backslash.
  static func execArgument(_ text: String) -> String {
    let unspecified = text.replacingOccurrences(of: "%", with: "%%")
    guard unspecified.contains(where: { $0.isWhitespace || $0 == "\"" || $0 == "'" || $0 == "\\" })
    else { return unspecified }
    let escaped = unspecified.replacingOccurrences(of: "\\", with: "\\\\")
      .replacingOccurrences(of: "\"", with: "\\\"")
    return "\"\(escaped)\""
  }
}
