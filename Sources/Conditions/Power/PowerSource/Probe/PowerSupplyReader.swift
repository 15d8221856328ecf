import Glibc
import SystemCalls
import SystemPackage

/// Reads `ROOT/class/power_supply/*` into ``PowerSupplySnapshot`` values.
///
/// A missing `class/power_supply` directory means "no supplies" (desktops, VMs, containers).
/// Entries whose names start with `.` and entries that are not directories are skipped. A
/// missing attribute file is simply absent; one that exists but cannot be read (sysfs answers
/// `EIO`/`ENODATA` for some absent batteries) is recorded in ``PowerSupplySnapshot/unreadable``.
public struct PowerSupplyReader: Sendable {
  /// The sysfs mount point (`/sys`, or a fixture tree).
  public var sysfsRoot: String

  /// The directory that is listed: `sysfsRoot/class/power_supply`.
  public var classDirectory: String { sysfsRoot + "/class/power_supply" }

  /// Creates a reader for the given sysfs root.
  public init(sysfsRoot: String = "/sys") {
    self.sysfsRoot = sysfsRoot
  }

  /// Reads every supply, sorted by name.
  /// - Throws: ``PowerSupplyReaderError`` when the class directory exists but cannot be listed.
  public func read() throws(PowerSupplyReaderError) -> [PowerSupplySnapshot] {
    try supplyNames().map(readSupply)
  }

  /// Reads the attributes of one supply directory.
  public func readSupply(named name: String) -> PowerSupplySnapshot {
    var snapshot = PowerSupplySnapshot(name: name, attributes: [:])
    for attribute in PowerSupplySnapshot.attributeNames {
      switch Self.readSmallFile(classDirectory + "/" + name + "/" + attribute) {
      case .success(let text): snapshot.attributes[attribute] = text
      case .failure(.missing): break
      case .failure(.unreadable(let reason)): snapshot.unreadable[attribute] = reason
      }
    }
    return snapshot
  }

  private func supplyNames() throws(PowerSupplyReaderError) -> [String] {
    guard let directory = opendir(classDirectory) else {
      let error = SystemCallError.current("opendir", path: classDirectory).errno
      if error == .noSuchFileOrDirectory || error == .notDirectory { return [] }
      throw .cannotList(path: classDirectory, error)
    }
    defer { closedir(directory) }
    var names: [String] = []
    while let entry = readdir(directory) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
      }
      guard !name.hasPrefix(".") else { continue }
      var info = stat()
      guard stat(classDirectory + "/" + name, &info) == 0, info.st_mode & S_IFMT == S_IFDIR
      else { continue }
      names.append(name)
    }
    return names.sorted()
  }

  private enum ReadFailure: Error {
    case missing
    case unreadable(String)
  }

  /// Reads up to 4 KiB of a sysfs attribute as UTF-8 (non-blocking: a FIFO planted under a
  /// `--sysfs-root` never holds the open or the read).
  private static func readSmallFile(_ path: String) -> Result<String, ReadFailure> {
    let descriptor: FileDescriptor
    do {
      descriptor = try FileDescriptor.open(
        FilePath(path), .readOnly, options: [.closeOnExec, .nonBlocking])
    } catch let error as Errno where error == .noSuchFileOrDirectory || error == .notDirectory {
      return .failure(.missing)
    } catch {
      return .failure(.unreadable(String(describing: error)))
    }
    defer { try? descriptor.close() }
    var buffer = [UInt8](repeating: 0, count: 4096)
    let count: Int
    do {
      count = try buffer.withUnsafeMutableBytes {
        try descriptor.read(into: $0, retryOnInterrupt: true)
      }
    } catch {
      return .failure(.unreadable(String(describing: error)))
    }
    guard let text = String(validating: buffer.prefix(count), as: UTF8.self) else {
      return .failure(.unreadable("not UTF-8"))
    }
    return .success(text)
  }
}

/// Why the power supply class directory could not be read.
public enum PowerSupplyReaderError: Error, Equatable, CustomStringConvertible {
  /// `opendir` failed for a reason other than "does not exist".
  case cannotList(path: String, Errno)

  /// A message naming the path and the error.
  public var description: String {
    switch self {
    case .cannotList(let path, let error): "cannot list \(path): \(error)"
    }
  }
}
