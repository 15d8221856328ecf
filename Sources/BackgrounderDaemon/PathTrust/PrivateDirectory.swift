import SystemCalls
import SystemPackage

#if canImport(Glibc)
  import Glibc
#endif

/// A directory that holds private files (the store, its lock, the control socket): created
/// `0700` when missing, and refused when it or any of its ancestors is something other people
/// could tamper with (see ``PathTrustRule``): owned by an unexpected user, writable by group or
/// others, or not a directory at all (the final component is never a symlink).
package struct PrivateDirectory: Sendable, Equatable {
  /// The directory path.
  package let path: String

  /// Ensures the directory that contains `file` is private; see ``prepare(_:owners:)``.
  @discardableResult
  package static func prepare(containing file: String, owners: Owners = .ownUser)
    throws(PrivateDirectoryError) -> PrivateDirectory
  {
    try prepare(parent(of: file), owners: owners)
  }

  /// Creates `path` (and missing parents) with mode `0700`, or checks an existing one: it must
  /// be a real directory, owned by one of `owners`, not writable by group or others, reached
  /// through trusted ancestors only.
  @discardableResult
  package static func prepare(_ path: String, owners: Owners = .ownUser)
    throws(PrivateDirectoryError) -> PrivateDirectory
  {
    _ = try TrustedDirectory.open(path, creating: true, owners: owners)
    return PrivateDirectory(path: path)
  }

  /// Checks an existing directory and its ancestors without creating anything (what a client
  /// does before it trusts a socket in it).
  package static func check(_ path: String, owners: Owners) throws(PrivateDirectoryError) {
    _ = try TrustedDirectory.open(path, creating: false, owners: owners)
  }

  /// The directory part of `file` (`.` for a bare name).
  static func parent(of file: String) -> String {
    guard let slash = file.lastIndex(of: "/") else { return "." }
    let parent = String(file[..<slash])
    return parent.isEmpty ? "/" : parent
  }

  /// Who may own a private directory.
  package struct Owners: Sendable, Equatable, CustomStringConvertible {
    /// The accepted user ids.
    package var userIDs: Set<uid_t>

    package init(userIDs: Set<uid_t>) {
      self.userIDs = userIDs
    }

    /// The effective user of this process only (what a daemon creates and binds in).
    package static var ownUser: Owners { Owners(userIDs: [geteuid()]) }

    /// This process's user or root (what a client accepts: a root daemon serves everyone).
    package static var ownUserOrRoot: Owners { Owners(userIDs: [geteuid(), 0]) }

    func allows(_ uid: uid_t) -> Bool { userIDs.contains(uid) }

    package var description: String {
      userIDs.sorted().map { "uid \($0)" }.joined(separator: " or ")
    }
  }
}

/// Why a private directory (or a file in it) cannot be used: the path-trust code's one error
/// type. The description names the path, its owner and mode.
package enum PrivateDirectoryError: Error, Equatable, CustomStringConvertible {
  /// The directory is owned by a user we do not trust.
  case untrustedOwner(path: String, owner: uid_t, mode: mode_t, expected: PrivateDirectory.Owners)
  /// Group or others may create, replace or delete files in it.
  case writableByOthers(path: String, owner: uid_t, mode: mode_t)
  /// The path exists but is not a directory (a symlink is not followed).
  case notADirectory(path: String, owner: uid_t, mode: mode_t)
  /// A file we read or write is a symlink, FIFO, device or directory (`mode`: its `st_mode`,
  /// type bits included).
  case notARegularFile(path: String, owner: uid_t, mode: mode_t)
  /// A file read whole is larger than the most it may have.
  case tooLarge(path: String, limit: Int)
  /// A system call failed (its ``SystemCallError/path`` names what it was about).
  case system(SystemCallError)

  package var description: String {
    switch self {
    case .untrustedOwner(let path, let owner, let mode, let expected):
      "refusing to use \(path): it is owned by uid \(owner) (mode \(Self.octal(mode))), "
        + "expected \(expected)"
    case .writableByOthers(let path, let owner, let mode):
      "refusing to use \(path): it is writable by group or others (owner uid \(owner), "
        + "mode \(Self.octal(mode))); run `chmod go-w \(path)`"
    case .notADirectory(let path, let owner, let mode):
      "refusing to use \(path): it is not a directory (owner uid \(owner), "
        + "mode \(Self.octal(mode)))"
    case .notARegularFile(let path, let owner, let mode):
      "refusing to use \(path): it is \(fileKind(mode: mode)), not a regular file "
        + "(owner uid \(owner), mode \(Self.octal(mode)))"
    case .tooLarge(let path, let limit):
      "refusing to read \(path): it is larger than \(limit) bytes"
    case .system(let failure): "\(failure)"
    }
  }

  static func octal(_ mode: mode_t) -> String {
    "0" + String(mode & 0o7777, radix: 8)
  }
}
