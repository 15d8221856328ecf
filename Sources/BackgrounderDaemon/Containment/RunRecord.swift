import Foundation

/// What identifies the processes of a live run, kept in a private file while it runs so that a
/// daemon restarted after `kill -9` can end what is left of it.
struct RunRecord: Sendable, Codable, Equatable {
  var jobID: String
  /// `/proc/sys/kernel/random/boot_id` when the run started: start times mean nothing across a
  /// reboot (and nothing survives one).
  var bootID: String
  /// The run's cgroup directory, when it has one.
  var cgroup: String?
  /// The run's process group (= the pid of its session leader), once it started.
  var processGroup: pid_t?
  /// The leader's start time (field 22 of `/proc/PID/stat`), so a reused pid is never hit.
  var leaderStartTime: UInt64?
}

/// The directory of run records next to the store: `<store path>.runs/<run id>.json` (for
/// example `state.sqlite.runs/`), 0700 / 0600.
struct RunRegistry: Sendable {
  let directory: String

  /// The registry of the store at `storePath`; creates the directory (0700).
  init(storePath: String) throws {
    directory = storePath + ".runs"
    if mkdir(directory, 0o700) != 0 && errno != EEXIST {
      throw ContainmentError("cannot create \(directory)", errno: errno)
    }
    var info = stat()
    guard lstat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR,
      info.st_uid == geteuid(), info.st_mode & 0o022 == 0
    else {
      throw ContainmentError(
        "\(directory) must be a directory owned by uid \(geteuid()) and not group/other-writable",
        errno: EPERM)
    }
  }

  func save(_ record: RunRecord, runID: String) throws {
    let data = try JSONEncoder().encode(record)
    let path = self.path(runID)
    let temporary = path + ".tmp"
    let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else {
      throw ContainmentError("cannot write \(temporary)", errno: errno)
    }
    let written = data.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    let code = errno
    close(descriptor)
    guard written == data.count, rename(temporary, path) == 0 else {
      unlink(temporary)
      throw ContainmentError("cannot write \(path)", errno: written < 0 ? code : errno)
    }
  }

  func remove(runID: String) {
    unlink(path(runID))
  }

  /// Every record left in the directory, with its run id; unreadable files are removed.
  func all() -> [(runID: String, record: RunRecord)] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    return names.compactMap { name in
      let path = directory + "/" + name
      guard name.hasSuffix(".json") else {
        if name.hasSuffix(".tmp") { unlink(path) }
        return nil
      }
      let runID = String(name.dropLast(5))
      guard let data = FileManager.default.contents(atPath: path),
        let record = try? JSONDecoder().decode(RunRecord.self, from: data)
      else {
        unlink(path)
        return nil
      }
      return (runID, record)
    }
  }

  private func path(_ runID: String) -> String { directory + "/" + runID + ".json" }
}
