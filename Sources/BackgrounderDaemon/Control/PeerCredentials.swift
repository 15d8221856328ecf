import SystemCalls

#if canImport(Glibc)
  import Glibc
#endif

/// `SO_PEERCRED` checks on control connections, in both directions: the daemon serves only its
/// own user and root; a client talks only to a daemon running as its own user or root.
struct PeerCredentials: Equatable {
  var pid: pid_t
  var uid: uid_t

  /// The credentials of the process at the other end of `connection`.
  static func of(_ connection: Int32) throws(SystemCallError) -> PeerCredentials {
    var record = UcredRecord()
    var length = socklen_t(MemoryLayout<UcredRecord>.size)
    _ = try systemCall("getsockopt SO_PEERCRED") {
      getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &record, &length)
    }
    guard length == socklen_t(MemoryLayout<UcredRecord>.size) else {
      throw SystemCallError("getsockopt SO_PEERCRED", errno: .invalidArgument)
    }
    return PeerCredentials(pid: record.pid, uid: record.uid)
  }

  /// Whether this peer is `ownUserID` or root.
  func isTrusted(ownUserID: uid_t = geteuid()) -> Bool {
    uid == 0 || uid == ownUserID
  }
}

/// Linux's `struct ucred` (pid, uid, gid: three 32-bit fields), which Glibc's module does not
/// export without `_GNU_SOURCE`; `of(_:)` checks the length the kernel returns.
private struct UcredRecord {
  var pid: pid_t = 0
  var uid: uid_t = 0
  var gid: gid_t = 0
}
