import SystemCalls
import SystemPackage

#if canImport(Glibc)
  import Glibc
#endif

/// How the path-trust code calls the kernel: through ``SystemCalls/systemCall(_:path:_:)``, with
/// `-1` turned into a ``PrivateDirectoryError/system(_:)`` that names the operation and the
/// path it was about.
enum SystemCall {
  /// `AT_EMPTY_PATH`: `fstatat` on the descriptor itself.
  static let emptyPath: Int32 = 0x1000

  /// ``SystemCalls/systemCall(_:path:_:)`` (interrupted calls retried there), its failure named with
  /// `path`.
  @discardableResult
  static func retrying<Result: FixedWidthInteger>(
    _ operation: String, _ path: String, _ body: () -> Result
  ) throws(PrivateDirectoryError) -> Result {
    do {
      return try systemCall(operation, path: path, body)
    } catch {
      throw .system(error)
    }
  }

  /// `fstatat(directory, name, AT_SYMLINK_NOFOLLOW)` (`name` empty: the descriptor itself).
  static func status(at directory: Int32, _ name: String, path: String)
    throws(PrivateDirectoryError) -> FileStatus
  {
    var info = stat()
    let flags = AT_SYMLINK_NOFOLLOW | (name.isEmpty ? emptyPath : 0)
    try retrying("stat", path) { fstatat(directory, name, &info, flags) }
    return FileStatus(info)
  }

  /// The target of the symlink `name` in `directory`.
  static func readLink(at directory: Int32, _ name: String, path: String)
    throws(PrivateDirectoryError) -> String
  {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let length = try retrying("readlink", path) {
      readlinkat(directory, name, &buffer, buffer.count - 1)
    }
    return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }
}

/// What the trust rules need of a `stat`: owner, type and permission bits, identity.
struct FileStatus: Sendable, Equatable {
  var owner: uid_t
  /// `st_mode`: type and permission bits.
  var mode: mode_t
  var device: UInt64
  var inode: UInt64

  init(owner: uid_t, mode: mode_t, device: UInt64 = 0, inode: UInt64 = 0) {
    self.owner = owner
    self.mode = mode
    self.device = device
    self.inode = inode
  }

  init(_ info: stat) {
    self.init(
      owner: info.st_uid, mode: info.st_mode, device: UInt64(info.st_dev),
      inode: UInt64(info.st_ino))
  }

  var permissions: mode_t { mode & 0o7777 }
  var isDirectory: Bool { mode & S_IFMT == S_IFDIR }
  var isSymlink: Bool { mode & S_IFMT == S_IFLNK }
  var isRegularFile: Bool { mode & S_IFMT == S_IFREG }
  /// Group or others may create, rename or delete entries (if it is a directory).
  var isWritableByOthers: Bool { mode & 0o022 != 0 }
  var isSticky: Bool { mode & S_ISVTX != 0 }
}
