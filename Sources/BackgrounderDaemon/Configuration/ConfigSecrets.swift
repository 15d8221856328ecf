import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Secrets in the config file: which keys hold them, and whether the file lets other users read
/// them. A config with secrets must be `0600` (owned by the daemon's user) or `0640` with the
/// daemon's group; `doctor` reports anything else as a problem, the daemon logs it at start.
/// Secrets can stay out of the config instead: `environment-file` (or systemd credentials).
enum ConfigSecrets {
  /// The secret-bearing keys `configuration` sets, in the words of a message:
  /// `job "dev.backup" environment`, `[telemetry] headers`.
  static func keys(in configuration: DaemonConfiguration) -> [String] {
    var keys = configuration.jobs.filter { !$0.environment.isEmpty }.map {
      "job \"\($0.id)\" environment"
    }
    if let telemetry = configuration.telemetry {
      if !telemetry.headers.isEmpty { keys.append("[telemetry] headers") }
      if let url = URLComponents(string: telemetry.endpoint), url.user != nil || url.password != nil
      {
        keys.append("[telemetry] otlp-endpoint (user:password@)")
      }
    }
    return keys
  }

  /// Why the file with `owner`, `group` and `mode` lets other users read it, or nil when only
  /// the daemon's user (`user`, or root) and group (`userGroup`) can.
  static func exposure(owner: uid_t, group: gid_t, mode: mode_t, user: uid_t, userGroup: gid_t)
    -> String?
  {
    let octal = PrivateDirectoryError.octal(mode)
    if mode & 0o004 != 0 { return "mode \(octal) (readable by other users)" }
    if mode & 0o040 != 0, group != userGroup {
      return "mode \(octal) (readable by the members of group \(group))"
    }
    if owner != user, owner != 0 {
      return "owned by uid \(owner) (mode \(octal)), not by the daemon's user \(user) or root"
    }
    return nil
  }

  /// The problem of the config at `path` holding `configuration`'s secrets where others can
  /// read them, naming the file, its mode and the keys; nil when it holds none or is private.
  static func problem(path: String, configuration: DaemonConfiguration) -> String? {
    let keys = keys(in: configuration)
    guard !keys.isEmpty else { return nil }
    var info = stat()
    guard stat(path, &info) == 0,
      let exposure = exposure(
        owner: info.st_uid, group: info.st_gid, mode: info.st_mode, user: geteuid(),
        userGroup: getegid())
    else { return nil }
    return "\(path) is \(exposure) and holds secrets: \(keys.joined(separator: ", ")); "
      + "run `chmod 0600 \(path)` (or 0640 with the daemon's group), "
      + "or move them to an environment-file"
  }
}
