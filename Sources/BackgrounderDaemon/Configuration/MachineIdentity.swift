import Foundation
import SystemCalls

/// This machine's id (`/etc/machine-id`), which fixes each job's `fixed-random-delay` so that a
/// fleet spreads and each box keeps its slot.
public enum MachineIdentity {
  /// Where systemd keeps the machine id.
  public static let defaultPath = "/etc/machine-id"

  /// Why the machine id cannot be used.
  package struct Unavailable: Error, Equatable, CustomStringConvertible {
    /// The file read.
    package var path: String
    /// What is wrong with it.
    package var reason: String

    /// The whole explanation, naming the key that needs it.
    package var description: String {
      "`fixed-random-delay` needs this machine's id, but \(path) \(reason)"
    }
  }

  /// The id in `path`: its first line, 32 hexadecimal digits as machine-id(5) has them.
  package static func read(path: String = defaultPath) throws(Unavailable) -> String {
    let data: [UInt8]
    do {
      // A regular file only: a FIFO there is refused, never waited on.
      data = try readSmallFile(path, limit: 4096)
    } catch {
      throw Unavailable(path: path, reason: "cannot be read (\(error.reason))")
    }
    let line = String(decoding: data, as: UTF8.self).split(separator: "\n").first ?? ""
    let id = line.trimmingCharacters(in: .whitespaces).lowercased()
    guard id.count == 32, id.allSatisfy(\.isHexDigit) else {
      throw Unavailable(path: path, reason: "does not hold a machine id (32 hexadecimal digits)")
    }
    return id
  }
}
