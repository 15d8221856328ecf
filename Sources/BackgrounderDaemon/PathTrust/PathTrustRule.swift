#if canImport(Glibc)
  import Glibc
#endif

/// The whole-path rule, decided on `stat` results only (no system calls): like OpenSSH's
/// `StrictModes` and systemd's `chase()`, a path is trusted only when nobody but root and the
/// accepted owners could have changed what any of its components names.
///
/// - Every ancestor (and every symlink followed on the way) is owned by root, this process's
///   user or one of the accepted owners.
/// - No ancestor is writable by group or others — except a sticky one (`/tmp`), where only an
///   entry's owner may rename or delete it: there the next component must be owned by one of
///   those users.
/// - The final directory is a real directory (not a symlink), owned by one of the accepted
///   owners, not writable by group or others.
struct PathTrustRule: Sendable, Equatable {
  /// Who may own the final directory.
  var owners: PrivateDirectory.Owners
  /// Who may own an ancestor: root, this process's user and `owners`.
  var ancestorOwners: Set<uid_t>

  init(owners: PrivateDirectory.Owners, processUser: uid_t = geteuid()) {
    self.owners = owners
    ancestorOwners = owners.userIDs.union([0, processUser])
  }

  /// Why `child` (at `childPath`) may not be entered from `directory` (at `directoryPath`),
  /// or nil when it may. `directory` nil: `child` is `/`.
  func problem(
    entering child: FileStatus, at childPath: String, from directory: FileStatus?,
    at directoryPath: String
  ) -> PrivateDirectoryError? {
    if let directory, directory.isWritableByOthers, !directory.isSticky {
      return .writableByOthers(
        path: directoryPath, owner: directory.owner, mode: directory.permissions)
    }
    guard ancestorOwners.contains(child.owner) else {
      return .untrustedOwner(
        path: childPath, owner: child.owner, mode: child.permissions,
        expected: PrivateDirectory.Owners(userIDs: ancestorOwners))
    }
    return nil
  }

  /// Why the directory reached at the end of the walk may not be used, or nil when it may.
  func problem(final status: FileStatus, at path: String) -> PrivateDirectoryError? {
    guard status.isDirectory else {
      return .notADirectory(path: path, owner: status.owner, mode: status.permissions)
    }
    guard owners.allows(status.owner) else {
      return .untrustedOwner(
        path: path, owner: status.owner, mode: status.permissions, expected: owners)
    }
    guard !status.isWritableByOthers else {
      return .writableByOthers(path: path, owner: status.owner, mode: status.permissions)
    }
    return nil
  }
}
