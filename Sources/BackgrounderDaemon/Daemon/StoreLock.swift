import Foundation
import SystemCalls

#if canImport(Glibc)
  import Glibc
#endif

/// The advisory locks (`flock`) that keep one writer at a time on a store.
///
/// - `<store>.lock`: the daemon holds it exclusively for its lifetime; a CLI edit (no daemon)
///   holds it shared, so a busy exclusive lock always means a live daemon.
/// - `<store>.edit.lock`: CLI edits take it exclusively, one after another, waiting their turn.
/// - `<store>.start.lock`: a starting daemon holds it exclusively until it has `<store>.lock`.
///   CLI edits that have not begun editing see it and give way (``DaemonHoldsStore``), so a
///   stream of back-to-back edits cannot keep a starting daemon waiting: it waits for the one
///   edit in progress at most.
///
/// The store's directory is walked and pinned (``TrustedDirectory``: every ancestor trusted,
/// the directory private); the lock files are created `0600` relative to its descriptor (never
/// through a symlink), and the store is opened through ``storeOpenPath``. The store file and
/// its `-wal` / `-shm`, when they exist, must be regular files of ours (a symlink is refused)
/// and are made `0600`, so that SQLite gives new `-wal` / `-shm` files that mode too.
package final class StoreLock: Sendable {
  private let descriptors: [Int32]
  private let directory: TrustedDirectory
  private let name: String

  private init(descriptors: [Int32], directory: TrustedDirectory, name: String) {
    self.descriptors = descriptors
    self.directory = directory
    self.name = name
  }

  /// The path to open the store through: its name under the pinned directory's descriptor,
  /// valid as long as this lock lives.
  package var storeOpenPath: String { directory.pinnedPath(name) }

  /// Pins the store's directory and checks the store files (see ``StoreLock``).
  private static func pin(_ storePath: String) throws -> (TrustedDirectory, String) {
    let (directory, name) = try TrustedDirectory.open(containing: storePath, creating: true)
    for file in [name, name + "-wal", name + "-shm"] { try directory.restrictFile(file) }
    return (directory, name)
  }

  /// The daemon's lock: prepares the store's private directory (creating it `0700`), makes
  /// existing store files private, announces itself on `<store>.start.lock` (waiting while
  /// another daemon starts) and takes `<store>.lock` exclusively, waiting up to `editWait` for
  /// the CLI edit in progress. Nil when another daemon holds it.
  package convenience init?(storePath: String, editWait: Duration = .seconds(10)) throws {
    let (directory, name) = try Self.pin(storePath)
    let starting = try Self.open(name + ".start.lock", in: directory)
    defer { close(starting) }  // released once this daemon holds the store or gives up
    do {
      _ = try systemCall("flock") { flock(starting, LOCK_EX) }
    } catch {
      throw OperatorError("cannot lock \(storePath).start.lock: \(error.errno)")
    }
    let fd = try Self.open(name + ".lock", in: directory)
    let deadline = ContinuousClock.now.advanced(by: editWait)
    while flock(fd, LOCK_EX | LOCK_NB) != 0 {
      // Shared holders are CLI edits, which finish; an exclusive holder is another daemon.
      let daemonHolds = flock(fd, LOCK_SH | LOCK_NB) != 0
      flock(fd, LOCK_UN)
      if daemonHolds || ContinuousClock.now >= deadline {
        close(fd)
        return nil
      }
      usleep(10_000)
    }
    self.init(descriptors: [fd], directory: directory, name: name)
  }

  /// A CLI edit's locks when no daemon answers: `<store>.lock` shared (refused when a daemon
  /// holds it), then `<store>.edit.lock` exclusively, waiting up to `wait` for other edits.
  /// Throws ``DaemonHoldsStore`` when a daemon holds the store or starts before the edit
  /// begins: the caller then sends its request to that daemon.
  package static func editing(storePath: String, wait: Duration = .seconds(60)) async throws
    -> StoreLock
  {
    let (directory, name) = try pin(storePath)
    let daemonLock = try open(name + ".lock", in: directory)
    guard flock(daemonLock, LOCK_SH | LOCK_NB) == 0 else {
      close(daemonLock)
      throw DaemonHoldsStore(storePath: storePath)
    }
    let starting: Int32
    let editLock: Int32
    do {
      starting = try open(name + ".start.lock", in: directory)
    } catch {
      close(daemonLock)
      throw error
    }
    do {
      editLock = try open(name + ".edit.lock", in: directory)
    } catch {
      close(starting)
      close(daemonLock)
      throw error
    }
    let lock = StoreLock(
      descriptors: [daemonLock, starting, editLock], directory: directory, name: name)
    let deadline = ContinuousClock.now.advanced(by: wait)
    // Polls (a blocking flock could not give up at the deadline, nor see a daemon starting),
    // backing off so that many waiting commands do not keep the CPU busy.
    var pause = Duration.milliseconds(2)
    while true {
      guard !daemonStarting(starting) else { throw DaemonHoldsStore(storePath: storePath) }
      if flock(editLock, LOCK_EX | LOCK_NB) == 0 {
        // A daemon that announced itself while this edit waited goes first.
        guard !daemonStarting(starting) else { throw DaemonHoldsStore(storePath: storePath) }
        return lock
      }
      guard ContinuousClock.now < deadline else {
        throw OperatorError(
          "timed out after \(wait) waiting for another backgrounder command editing \(storePath)")
      }
      try await Task.sleep(for: pause)
      pause = min(pause * 2, .milliseconds(100))
    }
  }

  /// Whether a daemon holds `<store>.start.lock` (tested by taking it shared for an instant).
  private static func daemonStarting(_ starting: Int32) -> Bool {
    guard flock(starting, LOCK_SH | LOCK_NB) == 0 else { return true }
    flock(starting, LOCK_UN)
    return false
  }

  deinit {
    for fd in descriptors.reversed() { close(fd) }
  }

  private static func open(_ name: String, in directory: TrustedDirectory) throws -> Int32 {
    try directory.openFile(name, flags: O_RDWR | O_CREAT)
  }
}

/// A daemon holds the store's lock (it may be starting, or listening on another socket).
package struct DaemonHoldsStore: Error, CustomStringConvertible {
  /// The store it holds.
  package var storePath: String

  package var description: String {
    "a backgrounder daemon holds \(storePath) but does not answer on its control socket; "
      + "it may be starting, or using another config"
  }
}
