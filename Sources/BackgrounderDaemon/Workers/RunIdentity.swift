import Foundation

/// The user (and group) a job's runs execute as: its `user` key (optional `group`) resolved
/// against the password and group databases. A daemon running as root switches to it through
/// ``switchArguments`` (supplementary groups as `initgroups` gives them, then the group, then
/// the user); the run's record, output and cgroup stay the daemon's.
package struct RunIdentity: Sendable, Equatable {
  /// The user's name in the password database.
  package var userName: String
  package var userID: uid_t
  /// The group the run gets: the job's `group`, else the user's primary group.
  package var groupID: gid_t
  /// The user's groups, as `initgroups(userName, groupID)` would set them.
  package var supplementaryGroups: [gid_t]
  package var home: String
  package var shell: String

  /// The identity of `user` (a name, or a numeric id with a password entry) with `group` (a
  /// name or a numeric id of the group database; the user's primary group when nil), or what
  /// is wrong (a user or group that does not exist, named).
  package static func resolve(user: String, group: String?) -> Result<RunIdentity, RunIdentityError>
  {
    guard let entry = passwordEntry(user) else {
      return .failure(RunIdentityError(key: "user", "user \"\(user)\" does not exist"))
    }
    var identity = entry
    if let group {
      guard let groupID = groupID(group) else {
        return .failure(RunIdentityError(key: "group", "group \"\(group)\" does not exist"))
      }
      identity.groupID = groupID
    }
    identity.supplementaryGroups = groupList(user: identity.userName, group: identity.groupID)
    return .success(identity)
  }

  /// `HOME`, `USER`, `LOGNAME` and `SHELL` from the password entry, and
  /// `XDG_RUNTIME_DIR=/run/user/UID` when that directory exists (`runtimeRoot`: `/run/user`).
  package func environment(runtimeRoot: String = "/run/user") -> [String: String] {
    var variables = ["HOME": home, "USER": userName, "LOGNAME": userName, "SHELL": shell]
    var isDirectory: ObjCBool = false
    let runtime = "\(runtimeRoot)/\(userID)"
    if FileManager.default.fileExists(atPath: runtime, isDirectory: &isDirectory),
      isDirectory.boolValue
    {
      variables["XDG_RUNTIME_DIR"] = runtime
    }
    return variables
  }

  /// util-linux's `setpriv`, which every Debian and Ubuntu system has (util-linux is
  /// Essential).
  package static let setprivPath = "/usr/bin/setpriv"

  /// The argv prefix that runs what follows it as this identity: `setpriv` sets the
  /// supplementary groups, then the real, effective and saved group, then the user.
  ///
  /// Why not the spawn library's `userID`/`groupID`/`supplementaryGroups`: for those it forks
  /// with a raw `clone3` and calls glibc's `setgroups` in the child, which first waits for
  /// every thread the parent had to acknowledge the change. A thread that was being created at
  /// the clone never does, and the child waits forever before its exec (seen in the test
  /// suite; RunAsUserTests races it). `posix_spawn` with an exec of `setpriv` has no such
  /// window: the new image is single-threaded when it switches.
  package var switchArguments: [String] {
    let groups =
      supplementaryGroups.isEmpty
      ? "--clear-groups" : "--groups=" + supplementaryGroups.map(String.init).joined(separator: ",")
    return [Self.setprivPath, "--reuid=\(userID)", "--regid=\(groupID)", groups, "--"]
  }

  /// The user the daemon runs as (its effective uid), which decides whether it may switch
  /// users; a test sets another for the checks of a non-root daemon.
  @TaskLocal package static var daemonUserID: uid_t = geteuid()

  /// The variables of the daemon's own session that name another user's places: dropped from a
  /// run that switches user (the run gets its own ``environment(runtimeRoot:)``).
  static let sessionVariables: Set<String> = [
    "HOME", "USER", "LOGNAME", "SHELL", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
    "XDG_STATE_HOME", "XDG_CACHE_HOME",
  ]

  /// What is wrong with `user`/`group` for a daemon running as `daemonUserID`, or nil: a user
  /// or group that does not exist, or (a daemon not running as root) a user or group other
  /// than the daemon's own, which it has no right to switch to.
  package static func problem(
    user: String?, group: String?, daemonUserID: uid_t = RunIdentity.daemonUserID,
    daemonGroupID: gid_t = getegid()
  ) -> (key: String, message: String)? {
    guard let user else {
      return group == nil ? nil : ("group", "needs `user`: a run's group goes with its user")
    }
    let identity: RunIdentity
    switch resolve(user: user, group: group) {
    case .success(let resolved): identity = resolved
    case .failure(let error):
      return (error.key, error.message)
    }
    guard daemonUserID != 0 else { return nil }
    if identity.userID != daemonUserID {
      return (
        "user",
        "the daemon runs as uid \(daemonUserID), not root: it cannot run jobs as \"\(user)\" "
          + "(uid \(identity.userID)); run it as root, or leave the key out"
      )
    }
    if group != nil, identity.groupID != daemonGroupID {
      return (
        "group",
        "the daemon runs as gid \(daemonGroupID), not root: it cannot run jobs in group "
          + "\"\(group ?? "")\" (gid \(identity.groupID)); leave the key out"
      )
    }
    return nil
  }

  private static func passwordEntry(_ user: String) -> RunIdentity? {
    guard !user.isEmpty, !user.utf8.contains(0) else { return nil }
    var entry = passwd()
    var result: UnsafeMutablePointer<passwd>?
    var buffer = [CChar](repeating: 0, count: 16_384)
    var status = getpwnam_r(user, &entry, &buffer, buffer.count, &result)
    if status == 0, result == nil, let id = uid_t(user) {
      status = getpwuid_r(id, &entry, &buffer, buffer.count, &result)
    }
    guard status == 0, result != nil else { return nil }
    return RunIdentity(
      userName: String(cString: entry.pw_name), userID: entry.pw_uid, groupID: entry.pw_gid,
      supplementaryGroups: [], home: entry.pw_dir.map { String(cString: $0) } ?? "/",
      shell: entry.pw_shell.map { String(cString: $0) } ?? "/bin/sh")
  }

  private static func groupID(_ name: String) -> gid_t? {
    guard !name.isEmpty, !name.utf8.contains(0) else { return nil }
    var entry = group()
    var result: UnsafeMutablePointer<group>?
    var buffer = [CChar](repeating: 0, count: 65_536)
    var status = getgrnam_r(name, &entry, &buffer, buffer.count, &result)
    if status == 0, result == nil, let id = gid_t(name) {
      status = getgrgid_r(id, &entry, &buffer, buffer.count, &result)
    }
    guard status == 0, result != nil else { return nil }
    return entry.gr_gid
  }

  /// The groups `initgroups(user, group)` sets: `group` and every group listing `user`.
  private static func groupList(user: String, group: gid_t) -> [gid_t] {
    var count: Int32 = 64
    while true {
      var groups = [gid_t](repeating: 0, count: Int(count))
      let wanted = count
      if getgrouplist(user, group, &groups, &count) >= 0 {
        return Array(groups.prefix(Int(count)))
      }
      // Too small: `count` now holds the number needed.
      if count <= wanted { count = wanted * 2 }
    }
  }
}

/// A job's `user` or `group` that cannot be used, in words naming it.
package struct RunIdentityError: Error, CustomStringConvertible, Equatable {
  /// The job key at fault: `user` or `group`.
  package var key: String
  package var message: String
  init(key: String, _ message: String) {
    self.key = key
    self.message = message
  }
  package var description: String { message }
}
