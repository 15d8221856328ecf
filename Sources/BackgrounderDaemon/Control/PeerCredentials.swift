#if canImport(Glibc)
  import Glibc
#endif

/// `SO_PEERCRED` check for control connections: the daemon's own user and root only.
enum PeerCredentials {
  /// Why the peer on `connection` may not talk to us, or nil when it may.
  static func refusal(for connection: Int32, ownUserID: uid_t = getuid()) -> String? {
    var credentials = PeerCredentialsRecord()
    var length = socklen_t(MemoryLayout<PeerCredentialsRecord>.size)
    guard getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else {
      return "cannot read peer credentials (errno \(errno))"
    }
    if credentials.uid == 0 || credentials.uid == ownUserID { return nil }
    return "uid \(credentials.uid) may not control a daemon running as uid \(ownUserID)"
  }
}

/// Linux's `struct ucred`, which Glibc's module does not export without `_GNU_SOURCE`.
private struct PeerCredentialsRecord {
  var pid: pid_t = 0
  var uid: uid_t = 0
  var gid: gid_t = 0
}
