#if canImport(Glibc)
  import Glibc
#endif

/// `SO_PEERCRED` checks on control connections, in both directions: the daemon serves only its
/// own user and root; a client talks only to a daemon running as its own user or root.
struct PeerCredentials: Equatable {
  var pid: pid_t
  var uid: uid_t

  /// The credentials of the process at the other end of `connection`.
  static func of(_ connection: Int32) -> PeerCredentials? {
    var record = UcredRecord()
    var length = socklen_t(MemoryLayout<UcredRecord>.size)
    guard getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &record, &length) == 0,
      length == socklen_t(MemoryLayout<UcredRecord>.size)
    else { return nil }
    return PeerCredentials(pid: record.pid, uid: record.uid)
  }

  /// Whether this peer is `ownUserID` or root.
  func isTrusted(ownUserID: uid_t = geteuid()) -> Bool {
    uid == 0 || uid == ownUserID
  }

  /// Why the client on `connection` may not talk to us, or nil when it may.
  static func refusal(for connection: Int32, ownUserID: uid_t = geteuid()) -> String? {
    guard let peer = of(connection) else {
      return "cannot read peer credentials (errno \(errno))"
    }
    if peer.isTrusted(ownUserID: ownUserID) { return nil }
    return "uid \(peer.uid) may not control a daemon running as uid \(ownUserID)"
  }
}

/// Linux's `struct ucred` (pid, uid, gid: three 32-bit fields), which Glibc's module does not
/// export without `_GNU_SOURCE`; `of(_:)` checks the length the kernel returns.
private struct UcredRecord {
  var pid: pid_t = 0
  var uid: uid_t = 0
  var gid: gid_t = 0
}
