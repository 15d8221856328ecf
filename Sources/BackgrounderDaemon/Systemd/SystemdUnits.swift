/// The systemd unit files Backgrounder ships, generated so that they always match the binary's
/// flags (`backgrounder unit [--user]` prints them; `doctor` compares installed copies).
public enum SystemdUnits {
  /// The unit for `systemctl` (`--user` when `user` is true), running `executable`.
  public static func service(user: Bool, executable: String) -> String {
    let configPath = user ? "%E/backgrounder/config.toml" : "/etc/backgrounder/config.toml"
    let stateLine = user ? "" : "StateDirectory=backgrounder\n"
    let wantedBy = user ? "default.target" : "multi-user.target"
    let hardening =
      user
      ? ""
      : """
      NoNewPrivileges=yes
      ProtectSystem=full

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
      WatchdogSec=60s
      TimeoutStopSec=15s
      KillMode=mixed
      RuntimeDirectory=backgrounder
      RuntimeDirectoryMode=0700
      \(stateLine)\(hardening)
      [Install]
      WantedBy=\(wantedBy)

      """
  }

  /// Where `systemctl` looks for the unit by default.
  public static func installPath(user: Bool, home: String) -> String {
    user
      ? "\(home)/.config/systemd/user/backgrounder.service"
      : "/etc/systemd/system/backgrounder.service"
  }
}
