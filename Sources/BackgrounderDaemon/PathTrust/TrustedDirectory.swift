import SystemCalls
import SystemPackage

#if canImport(Glibc)
  import Glibc
#endif

/// A directory reached by ``PathTrustRule`` and pinned by a descriptor: the path is walked from
/// `/` one component at a time with `openat(O_PATH | O_NOFOLLOW)`, each step checked on the
/// descriptor just opened (`fstat`), so what was checked is what is used. Files are then
/// created and opened relative to the descriptor: renaming a directory of the path after the
/// walk changes nothing.
///
/// Symlinks among the ancestors are followed when they pass the rule themselves (owned by root
/// or an accepted user, in a trusted directory), at most 32 of them; the final component is
/// never a symlink. A relative path is taken from the working directory, whose own path is
/// checked the same way.
package final class TrustedDirectory: Sendable {
  /// The path as given.
  package let path: String
  /// An `O_PATH` descriptor of the directory, open as long as this object lives.
  let descriptor: Int32

  private init(path: String, descriptor: Int32) {
    self.path = path
    self.descriptor = descriptor
  }

  deinit { close(descriptor) }

  /// Walks `path` under the whole-path rule and pins its final directory. `creating`: missing
  /// components are created `0700` (and then checked like the others).
  package static func open(
    _ path: String, creating: Bool, owners: PrivateDirectory.Owners = .ownUser
  ) throws(PrivateDirectoryError) -> TrustedDirectory {
    let rule = PathTrustRule(owners: owners)
    var walk = try Walk(rule: rule, creating: creating)
    defer { walk.closeAll() }
    try walk.follow(try absolute(path))
    let final = walk.stack.removeLast()
    if let problem = rule.problem(final: final.status, at: final.path) {
      close(final.descriptor)
      throw problem
    }
    return TrustedDirectory(path: path, descriptor: final.descriptor)
  }

  /// What ``inspect(_:owners:)`` found.
  package enum Inspection: Sendable, Equatable {
    /// The directory exists and passes the rule.
    case exists
    /// This component (and what follows it) is missing; every ancestor before it passes the
    /// rule, so ``open(_:creating:owners:)`` with `creating` would create it.
    case missing(String)
  }

  /// Walks `path` like ``open(_:creating:owners:)`` without creating anything (what `doctor`
  /// does): throws the problem the walk would refuse with.
  package static func inspect(_ path: String, owners: PrivateDirectory.Owners = .ownUser)
    throws(PrivateDirectoryError) -> Inspection
  {
    do throws(PrivateDirectoryError) {
      _ = try open(path, creating: false, owners: owners)
      return .exists
    } catch .system(let failure)
      where failure.operation == "open" && failure.errno == .noSuchFileOrDirectory
      && failure.path?.hasPrefix("/") == true
    {
      let missing = failure.path ?? path
      // Its directory passed the walk; an entry created in it must be safe from others too.
      let parent = PrivateDirectory.parent(of: missing)
      let status = try SystemCall.status(at: AT_FDCWD, parent, path: parent)
      if status.isWritableByOthers && !status.isSticky {
        throw .writableByOthers(path: parent, owner: status.owner, mode: status.permissions)
      }
      return .missing(missing)
    }
  }

  /// The directory of `file` pinned, and the file's name in it.
  package static func open(
    containing file: String, creating: Bool, owners: PrivateDirectory.Owners = .ownUser
  ) throws(PrivateDirectoryError) -> (directory: TrustedDirectory, name: String) {
    let name = file.split(separator: "/").last.map(String.init) ?? ""
    guard !name.isEmpty, name != ".", name != ".." else {
      throw .system(SystemCallError("open", path: file, errno: .isDirectory))
    }
    let directory = try open(PrivateDirectory.parent(of: file), creating: creating, owners: owners)
    return (directory, name)
  }

  /// A path that names `name` in this directory whatever happens to the directory's own path
  /// (`/proc/self/fd/N/name`), valid while this object lives.
  package func pinnedPath(_ name: String) -> String {
    "/proc/self/fd/\(descriptor)/\(name)"
  }

  /// The status of `name` in this directory without following a symlink; nil when missing.
  func status(of name: String) throws(PrivateDirectoryError) -> FileStatus? {
    do throws(PrivateDirectoryError) {
      return try SystemCall.status(at: descriptor, name, path: display(name))
    } catch .system(let failure) where failure.errno == .noSuchFileOrDirectory {
      return nil
    }
  }

  /// Opens `name` in this directory, never through a symlink (`O_NOFOLLOW | O_CLOEXEC` are
  /// added); created with `mode` when `flags` has `O_CREAT`.
  func openFile(_ name: String, flags: Int32, mode: mode_t = 0o600)
    throws(PrivateDirectoryError) -> Int32
  {
    try SystemCall.retrying("open", display(name)) {
      openat(descriptor, name, flags | O_NOFOLLOW | O_CLOEXEC, mode)
    }
  }

  /// `name` as a private file of ours: a missing one is left missing; an existing one must be
  /// a regular file (not a symlink, FIFO or device) owned by this process's user, and is made
  /// `0600`.
  func restrictFile(_ name: String) throws(PrivateDirectoryError) {
    guard let status = try status(of: name) else { return }
    guard status.isRegularFile else {
      throw .notARegularFile(path: display(name), owner: status.owner, mode: status.mode)
    }
    guard status.owner == geteuid() else {
      throw .untrustedOwner(
        path: display(name), owner: status.owner, mode: status.permissions, expected: .ownUser)
    }
    guard status.permissions & 0o077 != 0 else { return }
    let fd = try openFile(name, flags: O_RDONLY | O_NONBLOCK)
    defer { close(fd) }
    try SystemCall.retrying("chmod", display(name)) { fchmod(fd, 0o600) }
  }

  /// The subdirectory `name`, created `mode` when missing, checked like the final directory of
  /// a walk (owned by `owners`, not writable by others) and pinned.
  func subdirectory(
    _ name: String, mode: mode_t = 0o700, owners: PrivateDirectory.Owners = .ownUser
  ) throws(PrivateDirectoryError) -> TrustedDirectory {
    let path = display(name)
    do throws(PrivateDirectoryError) {
      try SystemCall.retrying("mkdir", path) { mkdirat(descriptor, name, mode) }
    } catch .system(let failure) where failure.errno == .fileExists {}
    let fd = try SystemCall.retrying("open", path) {
      openat(descriptor, name, SystemCalls.openPath | O_NOFOLLOW | O_CLOEXEC)
    }
    do throws(PrivateDirectoryError) {
      let status = try SystemCall.status(at: fd, "", path: path)
      if let problem = PathTrustRule(owners: owners).problem(final: status, at: path) {
        throw problem
      }
    } catch {
      close(fd)
      throw error
    }
    return TrustedDirectory(path: path, descriptor: fd)
  }

  /// `name` in this directory as a path, for messages.
  func display(_ name: String) -> String {
    path.hasSuffix("/") ? path + name : path + "/" + name
  }

  /// `path` made absolute against the working directory.
  private static func absolute(_ path: String) throws(PrivateDirectoryError) -> String {
    guard !path.isEmpty else {
      throw .system(SystemCallError("open", path: path, errno: .noSuchFileOrDirectory))
    }
    if path.hasPrefix("/") { return path }
    guard let cwd = getcwd(nil, 0) else {
      throw .system(.current("getcwd", path: path))
    }
    defer { free(cwd) }
    return String(cString: cwd) + "/" + path
  }

  /// The walk in progress: the descriptors of the directories entered so far.
  private struct Walk {
    struct Entry {
      var descriptor: Int32
      var status: FileStatus
      var path: String
    }

    let rule: PathTrustRule
    let creating: Bool
    var stack: [Entry] = []
    var symlinksFollowed = 0

    init(rule: PathTrustRule, creating: Bool) throws(PrivateDirectoryError) {
      self.rule = rule
      self.creating = creating
      try enterRoot()
    }

    mutating func closeAll() {
      for entry in stack { close(entry.descriptor) }
      stack.removeAll()
    }

    private mutating func enterRoot() throws(PrivateDirectoryError) {
      closeAll()
      let fd = try SystemCall.retrying("open", "/") {
        Glibc.open("/", SystemCalls.openPath | O_DIRECTORY | O_CLOEXEC)
      }
      stack.append(Entry(descriptor: fd, status: FileStatus(owner: 0, mode: 0), path: "/"))
      do throws(PrivateDirectoryError) {
        stack[0].status = try SystemCall.status(at: fd, "", path: "/")
        if let problem = rule.problem(entering: stack[0].status, at: "/", from: nil, at: "") {
          throw problem
        }
      } catch {
        closeAll()
        throw error
      }
    }

    /// Walks the components of the absolute `path` from `/`.
    mutating func follow(_ path: String) throws(PrivateDirectoryError) {
      // Pending components, the next one last.
      var pending = path.split(separator: "/").map(String.init).reversed() as [String]
      while let name = pending.popLast() {
        if name == "." { continue }
        if name == ".." {
          if stack.count > 1 { close(stack.removeLast().descriptor) }
          continue
        }
        let parent = stack[stack.count - 1]
        let childPath = parent.path == "/" ? "/" + name : parent.path + "/" + name
        let fd = try openComponent(name, in: parent.descriptor, path: childPath)
        let status: FileStatus
        do throws(PrivateDirectoryError) {
          status = try SystemCall.status(at: fd, "", path: childPath)
          if let problem = rule.problem(
            entering: status, at: childPath, from: parent.status, at: parent.path)
          {
            throw problem
          }
        } catch {
          close(fd)
          throw error
        }
        if status.isSymlink {
          defer { close(fd) }
          guard !pending.isEmpty else {
            throw .notADirectory(path: childPath, owner: status.owner, mode: status.permissions)
          }
          symlinksFollowed += 1
          guard symlinksFollowed <= 32 else {
            throw .system(SystemCallError("resolve", path: path, errno: .tooManySymbolicLinkLevels))
          }
          let target = try SystemCall.readLink(at: fd, "", path: childPath)
          if target.hasPrefix("/") { try enterRoot() }
          pending += target.split(separator: "/").map(String.init).reversed()
          continue
        }
        guard status.isDirectory else {
          close(fd)
          throw .notADirectory(path: childPath, owner: status.owner, mode: status.permissions)
        }
        stack.append(Entry(descriptor: fd, status: status, path: childPath))
      }
    }

    /// Opens one component (`O_PATH | O_NOFOLLOW`), first creating it `0700` when missing and
    /// the walk creates.
    private func openComponent(_ name: String, in directory: Int32, path: String)
      throws(PrivateDirectoryError) -> Int32
    {
      let open = { () throws(PrivateDirectoryError) -> Int32 in
        try SystemCall.retrying("open", path) {
          openat(directory, name, SystemCalls.openPath | O_NOFOLLOW | O_CLOEXEC)
        }
      }
      do throws(PrivateDirectoryError) {
        return try open()
      } catch .system(let failure) where failure.errno == .noSuchFileOrDirectory && creating {
        do throws(PrivateDirectoryError) {
          try SystemCall.retrying("mkdir", path) { mkdirat(directory, name, 0o700) }
        } catch .system(let failure) where failure.errno == .fileExists {}
        return try open()
      }
    }
  }
}
