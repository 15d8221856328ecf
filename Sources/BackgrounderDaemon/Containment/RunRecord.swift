import Foundation
import Locking
import SystemCalls
import SystemPackage

/// What identifies the processes of a live run, kept in a private file while it runs
/// (``RunRegistry``) so that a daemon restarted after `kill -9` can end what is left of it.
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

/// The records of the runs going now, next to the store: slots of ``slotBytes`` in one file,
/// `<store path>.runs/live` (for example `state.sqlite.runs/live`), in a 0700 directory, 0600,
/// opened relative to the pinned store directory (``TrustedDirectory``): a record is never read
/// from, nor written to, a directory someone else could swap.
///
/// A run's record is one `pwrite` of its slot when its leader started, and one byte written
/// when it ends: no file is created, renamed or unlinked per run (issue #35). Nothing is synced:
/// a record is for a daemon killed, not for a machine that lost power, after which no run is
/// left. A `pwrite` to the page cache is whole or not at all for a killed writer; a slot that
/// does not decode is cleared. Records of an older daemon, one file per run
/// (`<run id>.json`), are still read and removed.
final class RunRegistry: Sendable {
  /// One record's slot: the run id, a newline, the record's JSON, zeros. A record is a few
  /// hundred bytes; a cgroup path can be longer, up to what fits.
  static let slotBytes = 4096
  /// The file of slots.
  static let fileName = "live"
  /// The largest file of an older daemon's record read.
  static let maximumRecordBytes = 65_536
  /// The largest file of slots read (4,096 runs going at once).
  static let maximumFileBytes = 4096 * slotBytes

  private struct Slots {
    var byRun: [String: Int] = [:]
    var free: [Int] = []
    var count = 0
  }

  let directory: TrustedDirectory
  private let descriptor: Int32
  private let slots = Lock(Slots())

  /// The registry of the store at `storePath`; creates the directory (0700) under the store's
  /// trusted directory, and the file of slots (0600; an existing one must be our own regular
  /// file).
  init(storePath: String) throws {
    let (store, name) = try TrustedDirectory.open(containing: storePath, creating: true)
    directory = try store.subdirectory(name + ".runs")
    try directory.restrictFile(Self.fileName)
    descriptor = try directory.openFile(Self.fileName, flags: O_RDWR | O_CREAT)
  }

  deinit {
    close(descriptor)
  }

  /// Writes the record of run `runID` into a free slot.
  func save(_ record: RunRecord, runID: String) throws {
    let json = try JSONEncoder().encode(record)
    var bytes = Array(runID.utf8)
    guard !bytes.contains(UInt8(ascii: "\n")), !bytes.contains(0),
      bytes.count + 1 + json.count < Self.slotBytes
    else {
      throw SystemCallError(
        "pwrite", path: directory.display(Self.fileName), errno: Errno(rawValue: EMSGSIZE))
    }
    bytes.append(UInt8(ascii: "\n"))
    bytes.append(contentsOf: json)
    bytes.append(contentsOf: repeatElement(0, count: Self.slotBytes - bytes.count))
    let slot = slots.withLock { slots in
      let slot = slots.free.popLast() ?? slots.count
      if slot == slots.count { slots.count += 1 }
      slots.byRun[runID] = slot
      return slot
    }
    let written = bytes.withUnsafeBytes {
      pwrite(descriptor, $0.baseAddress, $0.count, off_t(slot * Self.slotBytes))
    }
    guard written == Self.slotBytes else {
      let failure = SystemCallError.current("pwrite")
      remove(runID: runID)
      throw SystemCallError(
        failure.operation, path: directory.display(Self.fileName),
        errno: written < 0 ? failure.errno : Errno(rawValue: ENOSPC))
    }
  }

  /// Clears the record of run `runID` (its slot's first byte), or removes an older daemon's
  /// record file of it.
  func remove(runID: String) {
    guard
      let slot = slots.withLock({ slots -> Int? in
        guard let slot = slots.byRun.removeValue(forKey: runID) else { return nil }
        slots.free.append(slot)
        return slot
      })
    else {
      unlinkat(directory.descriptor, runID + ".json", 0)
      return
    }
    var zero: UInt8 = 0
    _ = pwrite(descriptor, &zero, 1, off_t(slot * Self.slotBytes))
  }

  /// Every record left, with its run id: the slots in use (which this registry then counts as
  /// its own, for ``remove(runID:)``) and an older daemon's record files. Slots and files that
  /// do not decode are cleared.
  func all() -> [(runID: String, record: RunRecord)] {
    var found: [(runID: String, record: RunRecord)] = []
    let contents =
      (try? BoundedFile.read(
        Self.fileName, in: directory, limit: Self.maximumFileBytes)) ?? []
    var slot = 0
    while slot * Self.slotBytes < contents.count {
      let start = slot * Self.slotBytes
      let bytes = contents[start..<min(start + Self.slotBytes, contents.count)]
      defer { slot += 1 }
      guard let first = bytes.first, first != 0 else { continue }
      let used = bytes.prefix { $0 != 0 }
      if let newline = used.firstIndex(of: UInt8(ascii: "\n")),
        let record = try? JSONDecoder().decode(
          RunRecord.self, from: Data(used[(newline + 1)...]))
      {
        let runID = String(decoding: used[..<newline], as: UTF8.self)
        slots.withLock { $0.byRun[runID] = slot }
        found.append((runID, record))
      } else {
        var zero: UInt8 = 0
        _ = pwrite(descriptor, &zero, 1, off_t(start))
      }
    }
    slots.withLock { slots in
      slots.count = max(slots.count, slot)
      let used = Set(slots.byRun.values)
      slots.free = (0..<slots.count).filter { !used.contains($0) }.reversed()
    }
    let names =
      (try? FileManager.default.contentsOfDirectory(atPath: directory.pinnedPath(""))) ?? []
    for name in names where name != Self.fileName {
      guard name.hasSuffix(".json") else {
        if name.hasSuffix(".tmp") { unlinkat(directory.descriptor, name, 0) }
        continue
      }
      guard
        let data = try? BoundedFile.read(
          name, in: directory, limit: Self.maximumRecordBytes),
        let record = try? JSONDecoder().decode(RunRecord.self, from: Data(data))
      else {
        unlinkat(directory.descriptor, name, 0)
        continue
      }
      found.append((String(name.dropLast(5)), record))
    }
    return found
  }
}
