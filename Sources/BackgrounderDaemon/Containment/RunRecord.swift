import Foundation
import SystemCalls
import SystemPackage

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
/// example `state.sqlite.runs/`), 0700 / 0600, created and read relative to the pinned store
/// directory (``TrustedDirectory``): a record is never read from, nor written to, a directory
/// someone else could swap.
struct RunRegistry: Sendable {
  /// The largest record read; a record is a few hundred bytes.
  static let maximumRecordBytes = 65_536

  let directory: TrustedDirectory

  /// The registry of the store at `storePath`; creates the directory (0700) under the store's
  /// trusted directory.
  init(storePath: String) throws {
    let (store, name) = try TrustedDirectory.open(containing: storePath, creating: true)
    directory = try store.subdirectory(name + ".runs")
  }

  /// Writes the record of run `runID`, once per run (a new file: `O_EXCL`). It is written in
  /// place, not to a temporary file renamed over it: nothing is synced (a record is for a
  /// daemon killed, not for a machine that lost power, after which no run is left), and a
  /// record cut short by a kill between its open and its one `write` is unreadable, which
  /// ``all()`` removes, as it removes a temporary file left by an older daemon.
  func save(_ record: RunRecord, runID: String) throws {
    let data = try JSONEncoder().encode(record)
    let name = runID + ".json"
    let descriptor = try directory.openFile(name, flags: O_WRONLY | O_CREAT | O_EXCL)
    let written = data.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    let writeFailure = SystemCallError.current("write")  // read before close changes it
    close(descriptor)
    guard written == data.count else {
      unlinkat(directory.descriptor, name, 0)
      throw SystemCallError(
        writeFailure.operation, path: directory.display(name),
        errno: written < 0 ? writeFailure.errno : Errno(rawValue: ENOSPC))
    }
  }

  func remove(runID: String) {
    unlinkat(directory.descriptor, runID + ".json", 0)
  }

  /// Every record left in the directory, with its run id; unreadable files are removed.
  func all() -> [(runID: String, record: RunRecord)] {
    let names =
      (try? FileManager.default.contentsOfDirectory(atPath: directory.pinnedPath(""))) ?? []
    return names.compactMap { name in
      guard name.hasSuffix(".json") else {
        if name.hasSuffix(".tmp") { unlinkat(directory.descriptor, name, 0) }
        return nil
      }
      let runID = String(name.dropLast(5))
      guard
        let data = try? BoundedFile.read(
          name, in: directory, limit: Self.maximumRecordBytes),
        let record = try? JSONDecoder().decode(RunRecord.self, from: Data(data))
      else {
        unlinkat(directory.descriptor, name, 0)
        return nil
      }
      return (runID, record)
    }
  }
}
