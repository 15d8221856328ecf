import CSystemShims
import Foundation
import Logging
import SystemCalls
import SystemPackage

/// A writable cgroup v2 subtree in which every run gets its own cgroup (`<root>/runs/<run id>`),
/// ended with `cgroup.kill` — which also reaches processes that left the run's session with
/// `setsid`.
///
/// The root is verified before anything is created or signalled in it: reached under the
/// whole-path rule (``TrustedDirectory``), owned by the daemon's user (delegated to it), and on
/// a cgroup2 file system (`fstatfs` magic) — so `cgroup.procs` is the kernel's list, never a
/// file someone else wrote. `runs` and each run's cgroup are created with `mkdirat` under the
/// pinned descriptor.
package struct RunCgroups: Sendable {
  /// `CGROUP2_SUPER_MAGIC` from `<linux/magic.h>`.
  static let cgroup2Magic = 0x6367_7270

  /// The directory holding one cgroup per run.
  package let runsDirectory: String
  private let runs: TrustedDirectory

  /// Uses `root` (a cgroup v2 directory this process may write) for run cgroups; creates
  /// `root/runs`. When `root` is the daemon's own cgroup, call `adopt(root:)` instead so the
  /// daemon leaves it first (the "no internal processes" rule). Throws when `root` is not a
  /// cgroup2 directory of the daemon's user reached through trusted directories only.
  package init(root: String) throws {
    try self.init(verified: try Self.verify(root))
  }

  private init(verified root: TrustedDirectory) throws {
    runs = try root.subdirectory("runs", mode: 0o755)
    runsDirectory = runs.path
    Self.enableControllers(in: root.path)
    Self.enableControllers(in: runsDirectory)
  }

  /// The controllers a run's priority uses (`cpu.weight`, `io.weight`, `memory.max`), enabled
  /// for the children of `directory` one by one: one that was not delegated is left out.
  private static func enableControllers(in directory: String) {
    for controller in ["cpu", "io", "memory"] {
      try? write("+" + controller, to: directory + "/cgroup.subtree_control")
    }
  }

  /// `root` pinned, once it passed the whole-path rule and is on cgroup2.
  static func verify(_ root: String) throws -> TrustedDirectory {
    let directory = try TrustedDirectory.open(root, creating: false, owners: .ownUser)
    let type: Int
    do {
      type = try systemCall("statfs") { csystem_filesystem_type(directory.descriptor) }
    } catch {
      throw SystemCallError("statfs", path: root, errno: error.errno)
    }
    guard type == cgroup2Magic else {
      throw OperatorError(
        "\(root) is not on a cgroup2 file system (file system magic 0x"
          + String(type, radix: 16) + ")")
    }
    return directory
  }

  /// The daemon's own cgroup when it was delegated to it (systemd `Delegate=yes` marks it with
  /// the `trusted.delegate` / `user.delegate` attribute; with `DelegateSubgroup=daemon` its
  /// parent), or `$BACKGROUNDER_CGROUP` when set:
  /// the daemon moves itself into `<root>/daemon` and runs go to `<root>/runs/<id>`. Nil (runs
  /// contained by process group only) when neither is available; the reason is logged.
  package static func delegated(logger: Logger) -> RunCgroups? {
    let explicit = ProcessInfo.processInfo.environment["BACKGROUNDER_CGROUP"]
    guard var root = explicit ?? ownCgroupDirectory() else {
      logger.info("no cgroup v2 hierarchy: runs are contained by process group only")
      return nil
    }
    // systemd's `DelegateSubgroup=daemon` starts the daemon in `<delegated>/daemon` already.
    let parent = (root as NSString).deletingLastPathComponent
    if explicit == nil, (root as NSString).lastPathComponent == "daemon", isDelegated(parent) {
      root = parent
    }
    guard explicit != nil || isDelegated(root) else {
      logger.info(
        "own cgroup is not delegated (systemd Delegate=yes): runs are contained by process group only",
        metadata: ["cgroup": "\(root)"])
      return nil
    }
    do {
      return try adopt(root: root)
    } catch {
      logger.warning(
        "cannot use the cgroup; runs are contained by process group only",
        metadata: ["cgroup": "\(root)", "error": "\(error)"])
      return nil
    }
  }

  /// Moves this process into `root/daemon` when it lives in `root` itself, then uses `root`.
  static func adopt(root: String) throws -> RunCgroups {
    let verified = try verify(root)
    if ownCgroupDirectory() == root {
      let daemon = try verified.subdirectory("daemon", mode: 0o755)
      let fd = try daemon.openFile("cgroup.procs", flags: O_WRONLY)
      defer { close(fd) }
      let text = "\(getpid())"
      guard text.withCString({ Foundation.write(fd, $0, strlen($0)) }) >= 0 else {
        throw SystemCallError.current("write", path: daemon.path + "/cgroup.procs")
      }
    }
    return try RunCgroups(verified: verified)
  }

  /// Creates the cgroup of run `id` (`mkdirat` under the pinned `runs` directory) and returns
  /// its directory.
  func create(runID: String) throws -> String {
    try runs.subdirectory(runID, mode: 0o755).path
  }

  /// Run cgroups left behind (for example by a daemon killed with SIGKILL).
  func existingRuns() -> [String] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: runsDirectory)) ?? []
    return names.map { runsDirectory + "/" + $0 }.filter { Self.isCgroup($0) }
  }

  /// The pids in cgroup `directory` (empty when it is gone).
  static func processes(in directory: String) -> [pid_t] {
    let text = (try? String(contentsOfFile: directory + "/cgroup.procs", encoding: .utf8)) ?? ""
    return text.split(separator: "\n").compactMap { pid_t($0) }
  }

  /// Sends SIGKILL to every process in cgroup `directory` and its descendants.
  static func kill(_ directory: String) {
    try? write("1", to: directory + "/cgroup.kill")
  }

  /// Freezes (`frozen`) or thaws every process in cgroup `directory` and its descendants
  /// (`cgroup.freeze`); throws when the file cannot be written.
  static func freeze(_ directory: String, _ frozen: Bool) throws {
    try write(frozen ? "1" : "0", to: directory + "/cgroup.freeze")
  }

  /// Removes the (empty) cgroup `directory`; false while processes remain.
  @discardableResult
  static func remove(_ directory: String) -> Bool {
    do {
      _ = try systemCall("rmdir", path: directory) { rmdir(directory) }
      return true
    } catch {
      return error.errno == .noSuchFileOrDirectory
    }
  }

  static func isCgroup(_ directory: String) -> Bool {
    FileManager.default.fileExists(atPath: directory + "/cgroup.procs")
  }

  /// The cgroup v2 directory of this process: the `0::PATH` line of `/proc/self/cgroup` under
  /// the cgroup2 mount point from `/proc/self/mountinfo`.
  static func ownCgroupDirectory() -> String? {
    guard
      let membership = try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8),
      let line = membership.split(separator: "\n").first(where: { $0.hasPrefix("0::") }),
      let mounts = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)
    else { return nil }
    let path = String(line.dropFirst(3))
    for mount in mounts.split(separator: "\n") {
      // "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS… - FSTYPE SOURCE SUPER"
      let halves = mount.components(separatedBy: " - ")
      let fields = halves[0].split(separator: " ")
      guard halves.count == 2, halves[1].hasPrefix("cgroup2 "), fields.count >= 5,
        fields[3] == "/"
      else { continue }
      let directory = String(fields[4]) + (path == "/" ? "" : path)
      if access(directory + "/cgroup.procs", W_OK) == 0 { return directory }
    }
    return nil
  }

  private static func isDelegated(_ directory: String) -> Bool {
    ["trusted.delegate", "user.delegate"].contains { name in
      var value = [UInt8](repeating: 0, count: 8)
      let length = csystem_getxattr(directory, name, &value, UInt(value.count))
      return length > 0 && value[0] == UInt8(ascii: "1")
    }
  }

  static func write(_ text: String, to path: String) throws {
    let descriptor = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
    guard descriptor >= 0 else {
      throw SystemCallError.current("open", path: path)
    }
    defer { close(descriptor) }
    let written = text.withCString { Foundation.write(descriptor, $0, strlen($0)) }
    if written < 0 {
      throw SystemCallError.current("write", path: path)
    }
  }
}
