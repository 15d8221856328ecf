/// One kernel uevent: `ACTION@DEVPATH\0KEY=VALUE\0…` as sent on `NETLINK_KOBJECT_UEVENT`.
public struct Uevent: Sendable, Equatable {
  /// `add`, `remove`, `change`, `online`, `offline`, `move`, `bind`, `unbind`.
  public var action: String
  /// The device path from the header, e.g. `/devices/…/power_supply/AC`.
  public var devpath: String
  /// The `KEY=VALUE` fields, in order.
  public var properties: [(key: String, value: String)]

  /// Creates a uevent from its parts.
  public init(action: String, devpath: String, properties: [(key: String, value: String)]) {
    self.action = action
    self.devpath = devpath
    self.properties = properties
  }

  /// The value of the first property named `key`.
  public subscript(key: String) -> String? {
    properties.first { $0.key == key }?.value
  }

  /// The `SUBSYSTEM` property (`power_supply`, `net`, …).
  public var subsystem: String? { self["SUBSYSTEM"] }

  /// Compares action, devpath and properties in order.
  public static func == (lhs: Uevent, rhs: Uevent) -> Bool {
    lhs.action == rhs.action && lhs.devpath == rhs.devpath
      && lhs.properties.elementsEqual(rhs.properties) { $0.key == $1.key && $0.value == $1.value }
  }

  /// The wire form: header and each `KEY=VALUE`, each followed by a NUL byte.
  public var bytes: [UInt8] {
    var out = Array("\(action)@\(devpath)".utf8) + [0]
    for property in properties {
      out += Array("\(property.key)=\(property.value)".utf8) + [0]
    }
    return out
  }
}

/// What one `NETLINK_KOBJECT_UEVENT` datagram turned out to be.
public enum UeventMessage: Sendable, Equatable {
  /// A kernel uevent.
  case kernel(Uevent)
  /// A message in udev's `libudev` monitor format (sent by udevd to group 2); not ours to read.
  case udevMonitor
}

/// Why a datagram is not a valid kernel uevent.
public enum UeventParseError: Error, Equatable, CustomStringConvertible {
  /// The datagram has no bytes.
  case empty
  /// The NUL-separated field at this index (0 = header) is not valid UTF-8.
  case invalidUTF8(field: Int)
  /// The first field is not `ACTION@DEVPATH` with both parts non-empty.
  case malformedHeader(String)
  /// A field after the header has no `=` or an empty key.
  case malformedField(index: Int, String)

  /// A message naming what was wrong.
  public var description: String {
    switch self {
    case .empty: "empty uevent datagram"
    case .invalidUTF8(let field): "uevent field \(field) is not UTF-8"
    case .malformedHeader(let header): "uevent header is not ACTION@DEVPATH: \"\(header)\""
    case .malformedField(let index, let field):
      "uevent field \(index) is not KEY=VALUE: \"\(field)\""
    }
  }
}

/// Parses `NETLINK_KOBJECT_UEVENT` datagrams.
public enum UeventParser {
  /// The 8-byte prefix of udev's monitor messages: `libudev\0`.
  static let udevPrefix: [UInt8] = Array("libudev".utf8) + [0]

  /// Parses one datagram. A trailing NUL is optional; empty fields (double NUL) are skipped.
  public static func parse(_ bytes: some Collection<UInt8>) throws(UeventParseError)
    -> UeventMessage
  {
    let bytes = Array(bytes)
    guard !bytes.isEmpty else { throw .empty }
    if bytes.starts(with: udevPrefix) { return .udevMonitor }
    var fields: [String] = []
    for (index, chunk) in bytes.split(separator: 0).enumerated() {
      guard let field = String(validating: chunk, as: UTF8.self) else {
        throw .invalidUTF8(field: index)
      }
      fields.append(field)
    }
    guard let header = fields.first else { throw .empty }
    guard let at = header.firstIndex(of: "@"), at != header.startIndex,
      header.index(after: at) != header.endIndex
    else { throw .malformedHeader(header) }
    var properties: [(key: String, value: String)] = []
    for (index, field) in fields.dropFirst().enumerated() {
      guard let equals = field.firstIndex(of: "="), equals != field.startIndex else {
        throw .malformedField(index: index + 1, field)
      }
      properties.append(
        (String(field[..<equals]), String(field[field.index(after: equals)...])))
    }
    return .kernel(
      Uevent(
        action: String(header[..<at]), devpath: String(header[header.index(after: at)...]),
        properties: properties))
  }
}
