import Foundation
import Glibc

/// What `stat(2)` says about a path, enough to tell that the file changed since: device,
/// inode, size, and the modification and status-change times. A file rewritten in place keeps
/// its inode, but its size or times change with every write, except for writes within one tick
/// of the file system's clock: see ``changedRecently(before:)``.
struct FileFingerprint: Equatable {
  /// No file at the path (or it cannot be examined: reading it would fail the same way).
  static let missing = FileFingerprint(
    device: 0, inode: 0, size: -1, modified: timespec(), changed: timespec())

  private var device: UInt64
  private var inode: UInt64
  private var size: Int64
  private var modified: timespec
  private var changed: timespec

  private init(device: UInt64, inode: UInt64, size: Int64, modified: timespec, changed: timespec) {
    self.device = device
    self.inode = inode
    self.size = size
    self.modified = modified
    self.changed = changed
  }

  /// The fingerprint of the file at `path`, following symbolic links unless `followLinks` is
  /// false (then the link itself).
  init(of path: String, followLinks: Bool = true) {
    var status = stat()
    guard (followLinks ? stat(path, &status) : lstat(path, &status)) == 0 else {
      self = .missing
      return
    }
    self.init(
      device: UInt64(status.st_dev), inode: UInt64(status.st_ino), size: Int64(status.st_size),
      modified: status.st_mtim, changed: status.st_ctim)
  }

  /// Whether a file exists at the path.
  var exists: Bool { self != .missing }

  /// Whether the file's status last changed less than ``settleTime`` before `date`. File
  /// systems take their timestamps from a clock that ticks coarsely (jiffies; one or two
  /// seconds on some), so a write in the same tick as a read before it can leave size and times
  /// as they were: what was read then is trusted only once the file is older than that.
  func changedRecently(before date: Date) -> Bool {
    guard exists else { return false }
    let changedAt = Double(changed.tv_sec) + Double(changed.tv_nsec) / 1e9
    return date.timeIntervalSince1970 - changedAt < Self.settleTime
  }

  /// How old a file's last change must be for its fingerprint to cover every write (FAT's
  /// two-second timestamps are the coarsest in use).
  static let settleTime: TimeInterval = 2

  static func == (lhs: FileFingerprint, rhs: FileFingerprint) -> Bool {
    lhs.device == rhs.device && lhs.inode == rhs.inode && lhs.size == rhs.size
      && lhs.modified.tv_sec == rhs.modified.tv_sec && lhs.modified.tv_nsec == rhs.modified.tv_nsec
      && lhs.changed.tv_sec == rhs.changed.tv_sec && lhs.changed.tv_nsec == rhs.changed.tv_nsec
  }
}

/// Which file is at a path: its device and inode (`nil` when there is none).
struct FileIdentity: Equatable {
  private var device: UInt64
  private var inode: UInt64

  /// The identity of the file at `path` (symbolic links followed); nil when `stat(2)` fails.
  init?(of path: String) {
    var status = stat()
    guard stat(path, &status) == 0 else { return nil }
    device = UInt64(status.st_dev)
    inode = UInt64(status.st_ino)
  }
}
