import Glibc
import SystemCalls

/// Reads ``LinkFacts`` from `ROOT/class/net/IF/{uevent,device,device/driver,wireless}`.
public struct SysfsLinkFactsReader: Sendable {
  /// The sysfs root, `/sys` on a real system, a fixture tree in tests.
  public var root: String

  /// Creates a reader over the sysfs tree at `root`.
  public init(root: String) { self.root = root }

  /// Facts about the interface `name`, plus warnings about odd values that were ignored.
  public func facts(forInterface name: String) -> (facts: LinkFacts, warnings: [String]) {
    guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else {
      return (.none, ["interface name \"\(name)\" cannot be looked up in sysfs"])
    }
    let directory = "\(root)/class/net/\(name)"
    var warnings: [String] = []
    var facts = LinkFacts()
    // The path is walked once; each fact is then looked up from the link's directory (a
    // one-shot `status` spent about a tenth of its CPU walking sysfs paths, issue #35).
    let link = open(directory, SystemCalls.openPath | O_DIRECTORY | O_CLOEXEC)
    guard link >= 0 else { return (facts, warnings) }
    defer { close(link) }
    if let uevent = try? readSmallFile("uevent", relativeTo: link, limit: 16_384) {
      if let text = String(validating: uevent, as: UTF8.self) {
        facts.deviceType = Self.deviceType(inUevent: text, warnings: &warnings, path: directory)
      } else {
        warnings.append("\(directory)/uevent is not UTF-8; ignored")
      }
    }
    facts.hasDevice = exists("device", in: link)
    facts.isWireless = exists("wireless", in: link) || exists("phy80211", in: link)
    if let target = readLink("device/driver", in: link) {
      let base = target.split(separator: "/").last.map(String.init)
      if let base, !base.isEmpty {
        facts.driver = base
      } else {
        warnings.append("\(directory)/device/driver points to \"\(target)\"; ignored")
      }
    }
    return (facts, warnings)
  }

  static func deviceType(inUevent text: String, warnings: inout [String], path: String)
    -> String?
  {
    for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix("DEVTYPE=") {
      let raw = line.dropFirst("DEVTYPE=".count)
      let value = String(
        raw.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
      if value.isEmpty || !value.allSatisfy({ $0.isASCII && !$0.isWhitespace }) {
        warnings.append("\(path)/uevent has an odd DEVTYPE \"\(value)\"; ignored")
        return nil
      }
      return value.lowercased()
    }
    return nil
  }

  /// Whether `directory` has an entry `name`, a symlink whose target is missing included.
  private func exists(_ name: String, in directory: Int32) -> Bool {
    var info = stat()
    return fstatat(directory, name, &info, AT_SYMLINK_NOFOLLOW) == 0
  }

  private func readLink(_ name: String, in directory: Int32) -> String? {
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = readlinkat(directory, name, &buffer, buffer.count - 1)
    guard count > 0 else { return nil }
    return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }
}
