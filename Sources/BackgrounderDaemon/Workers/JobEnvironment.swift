/// The environment a job's command gets.
///
/// By default a clean one: the daemon's variables on the allow-list below, then the job's
/// `environment`, then `BACKGROUNDER_*`. With `inherit-environment = true` the daemon's whole
/// environment instead of the allow-list — still without what belongs to the service manager's
/// conversation with the daemon itself.
package enum JobEnvironment {
  /// Daemon variables a job gets by default: identity, locale, time zone, temp directory,
  /// terminal-free basics, and where the user's session lives.
  package static let allowedNames: Set<String> = [
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TMPDIR",
    "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME",
  ]

  /// Variables never passed on, even with `inherit-environment = true`: the systemd notify,
  /// watchdog and socket-activation protocol and the per-invocation credentials.
  package static func isDaemonPrivate(_ name: String) -> Bool {
    ["NOTIFY_SOCKET", "INVOCATION_ID", "CREDENTIALS_DIRECTORY", "MAINPID", "SYSTEMD_EXEC_PID"]
      .contains(name) || name.hasPrefix("WATCHDOG_") || name.hasPrefix("LISTEN_")
  }

  /// The environment for a job run: `daemon` filtered (allow-list, or everything but the
  /// daemon-private names when `inherit`), overlaid with `job` and then `backgrounder`. A run
  /// as another `user` gets that user's variables (``RunIdentity/environment(runtimeRoot:)``)
  /// instead of the daemon's `HOME`, `USER`, `XDG_*` and the like.
  package static func build(
    daemon: [String: String], inherit: Bool, job: [String: String],
    backgrounder: [String: String], user: [String: String]? = nil
  ) -> [String: String] {
    var result = daemon.filter { name, _ in
      !isDaemonPrivate(name)
        && (inherit || allowedNames.contains(name) || name.hasPrefix("LC_"))
        && (user == nil || !RunIdentity.sessionVariables.contains(name))
    }
    if let user { result.merge(user) { $1 } }
    result.merge(job) { $1 }
    result.merge(backgrounder) { $1 }
    return result
  }
}
