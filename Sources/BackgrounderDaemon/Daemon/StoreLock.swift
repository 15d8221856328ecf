import Foundation

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
/// The files are created `0600` (never through a symlink) in a ``PrivateDirectory``.
public final class StoreLock: Sendable {
  private let descriptors: [Int32]

  private init(descriptors: [Int32]) {
    self.descriptors = descriptors
  }

  /// The daemon's lock: prepares the store's private directory (creating it `0700`), makes
  /// existing store files private, announces itself on `<store>.start.lock` (waiting while
  /// another daemon starts) and takes `<store>.lock` exclusively, waiting up to `editWait` for
  /// the CLI edit in progress. Nil when another daemon holds it.
  public convenience init?(storePath: String, editWait: Duration = .seconds(10)) throws {
    try PrivateDirectory.prepare(containing: storePath)
    PrivateFiles.restrict([storePath, storePath + "-wal", storePath + "-shm"])
    let starting = try Self.open(storePath + ".start.lock")
    defer { close(starting) }  // released once this daemon holds the store or gives up
    while flock(starting, LOCK_EX) != 0 {
      guard errno == EINTR else {
        throw OperatorError(
          "cannot lock \(storePath).start.lock: \(String(cString: strerror(errno)))")
      }
    }
    let fd = try Self.open(storePath + ".lock")
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
    self.init(descriptors: [fd])
  }

  /// A CLI edit's locks when no daemon answers: `<store>.lock` shared (refused when a daemon
  /// holds it), then `<store>.edit.lock` exclusively, waiting up to `wait` for other edits.
  /// Throws ``DaemonHoldsStore`` when a daemon holds the store or starts before the edit
  /// begins: the caller then sends its request to that daemon.
  public static func editing(storePath: String, wait: Duration = .seconds(60)) async throws
    -> StoreLock
  {
    try PrivateDirectory.prepare(containing: storePath)
    let daemonLock = try open(storePath + ".lock")
    guard flock(daemonLock, LOCK_SH | LOCK_NB) == 0 else {
      close(daemonLock)
      throw DaemonHoldsStore(storePath: storePath)
    }
    let starting: Int32
    let editLock: Int32
    do {
      starting = try open(storePath + ".start.lock")
    } catch {
      close(daemonLock)
      throw error
    }
    do {
      editLock = try open(storePath + ".edit.lock")
    } catch {
      close(starting)
      close(daemonLock)
      throw error
    }
    let lock = StoreLock(descriptors: [daemonLock, starting, editLock])
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

  private static func open(_ path: String) throws -> Int32 {
    let fd = Glibc.open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
    guard fd >= 0 else {
      throw OperatorError("cannot open \(path): \(String(cString: strerror(errno)))")
    }
    return fd
  }
}

/// A daemon holds the store's lock (it may be starting, or listening on another socket).
public struct DaemonHoldsStore: Error, CustomStringConvertible {
  /// The store it holds.
  public var storePath: String

  public var description: String {
    "a backgrounder daemon holds \(storePath) but does not answer on its control socket; "
      + "it may be starting, or using another config"
  }
}
