import TOML

/// A parsed document as text in the canonical form `Fixtures/toml/tomllib-canonical.py` prints
/// for Python's tomllib (see that script): equal text means equal typed value trees.
enum CanonicalForm {
  static func text(of table: TOMLTable) -> String {
    let members = table.entries.map { (hex(Array($0.key.utf8)), text(of: $0.node.value)) }
      .sorted { $0.0 < $1.0 }
      .map { "\"\($0.0)\":\($0.1)" }
    return "{" + members.joined(separator: ",") + "}"
  }

  static func text(of value: TOMLValue) -> String {
    switch value {
    case .table(let table): text(of: table)
    case .array(let elements):
      "[" + elements.map { text(of: $0.value) }.joined(separator: ",") + "]"
    case .string(let string): "\"s:\(hex(Array(string.utf8)))\""
    case .integer(let integer): "\"i:\(integer)\""
    case .float(let float) where float.isNaN: "\"f:nan\""
    case .float(let float): "\"f:\(padded(String(float.bitPattern, radix: 16), 16))\""
    case .boolean(let boolean): "\"b:\(boolean)\""
    case .dateTime(let dateTime): "\"\(text(of: dateTime))\""
    }
  }

  private static func text(of value: TOMLDateTime) -> String {
    let date = value.date.map {
      padded(String($0.year), 4) + "-" + padded(String($0.month), 2) + "-"
        + padded(String($0.day), 2)
    }
    let time = value.time.map {
      padded(String($0.hour), 2) + ":" + padded(String($0.minute), 2) + ":"
        + padded(String($0.second), 2) + "." + padded(String($0.nanosecond / 1000), 6)
    }
    switch value.kind {
    case .offsetDateTime:
      let minutes = value.offsetMinutes ?? 0
      return "odt:\(date ?? "")T\(time ?? "")" + (minutes < 0 ? "-" : "+")
        + padded(String(abs(minutes) / 60), 2) + ":" + padded(String(abs(minutes) % 60), 2)
    case .localDateTime: return "ldt:\(date ?? "")T\(time ?? "")"
    case .localDate: return "ld:\(date ?? "")"
    case .localTime: return "lt:\(time ?? "")"
    }
  }

  private static func hex(_ bytes: [UInt8]) -> String {
    bytes.map { padded(String($0, radix: 16), 2) }.joined()
  }

  private static func padded(_ text: String, _ width: Int) -> String {
    String(repeating: "0", count: max(0, width - text.count)) + text
  }
}
